"""A proposal's status, read from the curators' decisions on the curated branch.

Only trusted decisions count (`curation.trust.trusted_decisions`: first-parent, not an
agent's commit, one well-formed trailer block), and only those still in effect: an
accept or reject that was undone (and not redone) decides nothing, so its proposal is
open again — even after the review merge made the agent commit reachable from the
curated branch. `curation.undo.replay` is the one reading of undo and redo.

Per fact: the newest decision in effect that names the proposal and the fact's path
(`Factdesk-Path`; a decision naming the proposal but no path of it decides all its
facts). Per proposal: every fact accepted → accepted; every fact rejected → rejected;
some accepted → partial (only some facts taken); otherwise open. A proposal with no fact
(the agent's own state only) takes the decision that names it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from factdesk.curation.changes import inert
from factdesk.curation.trust import REVIEW_ACTIONS, Decision
from factdesk.curation.undo import replay
from factdesk.review.model import Status

ACTION_STATUS: dict[str, Status] = {"accept": "accepted", "reject": "rejected"}


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the decisions in effect say about one agent commit."""

    #: (paths it names — empty: all —, accepted|rejected) per decision, oldest first
    steps: tuple[tuple[frozenset[str], Status], ...] = ()
    overridden: bool = False
    #: the decision commits, newest first
    decided_by: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Decisions:
    """The review decisions of a branch: those in effect by agent commit, and every agent
    commit any decision ever named (in effect or undone)."""

    verdicts: dict[str, Verdict]
    named: frozenset[str]


def in_effect(decisions: Sequence[Decision]) -> list[Decision]:
    """The accept and reject decisions still in effect (not undone, or redone), oldest
    first; `decisions` newest first, as `trusted_decisions` gives them."""
    undo, _ = replay(decisions)
    live = {rec.action_id for rec in undo if rec.action in REVIEW_ACTIONS}
    out = []
    seen: set[str] = set()
    for d in reversed(decisions):  # oldest first: the first commit with an id decides
        if d.action in REVIEW_ACTIONS and d.action_id in live and d.action_id not in seen:
            seen.add(d.action_id)
            out.append(d)
    return out


def read_decisions(decisions: Sequence[Decision]) -> Decisions:
    """Every agent commit's verdict from the decisions (newest first)."""
    named = frozenset(sha for d in decisions if d.action in REVIEW_ACTIONS
                      for sha in d.values("Factdesk-Proposal"))
    steps: dict[str, list[tuple[frozenset[str], Status]]] = {}
    over: dict[str, bool] = {}
    by: dict[str, list[str]] = {}
    for d in in_effect(decisions):  # oldest first: a later decision wins
        status = ACTION_STATUS[d.action]
        paths = frozenset(d.values("Factdesk-Path"))
        override = status == "accepted" and any(d.values("Factdesk-Override"))
        for sha in d.values("Factdesk-Proposal"):
            steps.setdefault(sha, []).append((paths, status))
            over[sha] = over.get(sha, False) or override
            by.setdefault(sha, []).insert(0, d.commit)
    verdicts = {sha: Verdict(tuple(s), over[sha], tuple(by[sha])) for sha, s in steps.items()}
    return Decisions(verdicts, named)


def fact_status(verdict: Verdict | None, path: str) -> Status:
    """One fact's status under a verdict: the newest decision naming it (or naming no
    path of its proposal, i.e. all of them)."""
    if verdict is None:
        return "open"
    for paths, status in reversed(verdict.steps):
        if not paths or path in paths or inert(path) in paths:  # (trailers hold it inert)
            return status
    return "open"


def proposal_status(verdict: Verdict | None, paths: Iterable[str]) -> Status:
    """The proposal's status from its facts' (the rule in the module doc); `paths`: its
    facts' paths."""
    if verdict is None or not verdict.steps:
        return "open"
    wanted = list(paths)
    if not wanted:  # the agent's own state only: the newest decision naming it
        return verdict.steps[-1][1]
    statuses = [fact_status(verdict, p) for p in wanted]
    if all(s == "accepted" for s in statuses):
        return "accepted"
    if all(s == "rejected" for s in statuses):
        return "rejected"
    if "accepted" in statuses:
        return "partial"
    return "open"
