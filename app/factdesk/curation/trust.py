"""Which commits are curators' decisions (issue 15 #2): the one rule undo, redo and
proposal review trust.

The threat (docs/reliability.md, "Trust in commit messages"): an agent can write anything
into a fact, a file name, a commit message and a commit's author and committer fields; its
commits reach the curated branch through review merges (or a fast-forward), and a second
curator's decisions arrive through sync. A commit is a curator's decision only if:

1. it is on the branch's own first-parent line from its tip (`git log --first-parent`): a
   commit reached only through a merge's second parent (an agent branch) never is — except
   through a **sync merge** (review/sync.py): a merge on that trusted line whose final
   trailer block is `Factdesk-Action: sync` with an action id, authored `+sync` and
   committed by no agent identity, joins another curator's line of the same branch, so
   its second parent's first-parent line (down to what its first parent already has) is
   read by the same rules, recursively, in its place just below the merge;
2. it is not a merge (factdesk never commits one);
3. neither its author nor its committer is an agent identity: an e-mail at
   `agents.knomit.io` (knomit's agent identities), or one the registry
   (`.factdesk/agents.yaml`) lists for an agent of a type other than `user`. The registry
   is in the corpus, so agents can edit it: it may only take trust away, never grant it;
4. its message ends in one trailer block (the last paragraph, every line `Token: value`)
   holding exactly one `Factdesk-Action` (a known action), one `Factdesk-Action-Id` (16
   hex digits) and, for undo and redo, exactly one `Factdesk-Reverts` (16 hex digits).
   Trailers anywhere else — a subject, the reason paragraph, a value factdesk wrote before
   values were made inert — are text, not decisions;
5. its author's knomit `+op` token names the same action (`ana+relabel@…` for relabel),
   as factdesk writes it (`changes.with_op`).

A decision on an agent's proposal (`accept`, `reject`; factdesk/review/) names the agent
commit(s) it decides in `Factdesk-Proposal` trailers (full shas, at least one). An accept
keeps the agent as its author (so history, claimant checks and track records keep
crediting the agent), so for an accept rules 3 and 5 read the committer alone: it must be
no agent identity. Review checks that the author is the named commits' author.

`arrivals` reads what a sync would bring onto the curated branch with the same rules
(review/sync.py's guard, issue 22 #2): each incoming first-parent commit (a trusted sync
merge's second-parent line in its place) is a decision, a sync merge, a review merge
(`is_review_merge`), an agent commit (none of those, and its author or committer is an
agent identity: never joined without a decision), or other (adopted and named).

What this cannot tell: an agent that fast-forwards the curated branch to commits whose
author and committer it forged as a curator's own, non-agent identity, or an accept (the
agent is its author by design) whose committer it forged as a curator's. Only the remote
can close that: protect the curated branch so that agents cannot push it
(docs/reliability.md, "What it cannot tell"). Merge agent work with a true merge
(knomit's consensus rule, FORMAT §5.2); signatures (informational in knomit) are not
verified, since verifying runs a program.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from factdesk.corpus import githistory, gitrepo
from factdesk.corpus.registry_io import load_registry
from factdesk.corpus.registry_trust import is_agent_identity
from factdesk.index import decision_log
from factdesk.model.registry import Registry, op_token

AGENT_DOMAIN = "agents.knomit.io"
#: the actions factdesk commits (an unknown one is not a decision)
ACTIONS = frozenset({"relabel", "edit", "attest", "move", "retract", "restore", "confirm",
                     "refute", "extend", "promote", "dismiss", "undo", "redo",
                     "register", "set-type", "retire", "add-type",  # (registry: issue 16)
                     "mark", "to-messages",  # (the message family: curation/messages_ops.py)
                     "accept", "reject"})  # (proposal review: factdesk/review/, issue 13)
#: the decisions on agents' proposals: an accept keeps the agent as the commit's author
#: (rule 3 and 5 read its committer only), each names the agent commit(s) it decides
REVIEW_ACTIONS = frozenset({"accept", "reject"})
_SHA = re.compile(r"^[0-9a-f]{40}$")
_ACTION_ID = re.compile(r"^[0-9a-f]{16}$")
#: the action of a sync merge: not a decision itself, it makes its second parent's line trusted
SYNC_ACTION = "sync"
#: the keys that must appear at most once in a decision's trailer block
_SINGLE = ("Factdesk-Action", "Factdesk-Action-Id", "Factdesk-Reverts")


@dataclass(frozen=True, slots=True)
class Decision:
    """A curator's action as its commit records it."""

    commit: str
    subject: str
    action: str
    action_id: str
    #: the action id an undo or redo reverts (None for other actions)
    reverts: str | None
    author: str
    committer: str
    #: every (token, value) line of the decision's trailer block, in order (proposal
    #: review reads `Factdesk-Proposal` and `Factdesk-Path` from it)
    trailers: tuple[tuple[str, str], ...] = ()

    def values(self, token: str) -> list[str]:
        """The values of every `token` trailer (`Factdesk-Proposal`: the agent commits)."""
        return [value.strip() for key, value in self.trailers if key == token]


def trailer_block(message: str) -> list[tuple[str, str]] | None:
    """The `(token, value)` lines of the message's final trailer block, else None (the one
    reader: `githistory.trailer_lines`)."""
    return githistory.trailer_lines(message)


def decision_in(message: str) -> tuple[str, str, str | None] | None:
    """(action, action id, reverted id) from the message's final trailer block, or None
    when it records no well-formed decision."""
    return _decision_of(trailer_block(message))


def _decision_of(block: Sequence[tuple[str, str]] | None) -> tuple[str, str, str | None] | None:
    if block is None:
        return None
    found: dict[str, list[str]] = {}
    for token, value in block:
        found.setdefault(token, []).append(value.strip())
    if any(len(found.get(k, ())) > 1 for k in _SINGLE):
        return None
    action = found.get("Factdesk-Action", [""])[0]
    action_id = found.get("Factdesk-Action-Id", [""])[0]
    reverts = found.get("Factdesk-Reverts", [None])[0]
    if action not in ACTIONS or not _ACTION_ID.match(action_id):
        return None
    if (action in ("undo", "redo")) != (reverts is not None):
        return None
    if reverts is not None and not _ACTION_ID.match(reverts):
        return None
    return action, action_id, reverts


def trusted_decisions(repo: Path, tip: str | None = None, *, registry: Registry | None = None
                      ) -> list[Decision]:
    """The curators' decisions on the first-parent line from `tip` (default: HEAD), newest
    first (the rules in the module doc), all of them: no depth cap (issue 23 #7; the commits
    are read through `index.decision_log`, which parses each once and reads only new ones).
    `registry`: the corpus's, read from the work tree if None. Empty on an empty branch.
    `tip` may be a range `old..new` (the decisions the line gained since `old`, when `old`
    is on it: review/decide.py keeps the rest)."""
    if tip is None:
        tip = gitrepo.head_sha(repo)
        if tip is None:
            return []
    registry = registry if registry is not None else load_registry(repo)
    return _decisions_on(repo, tip, (), registry, set())


def is_sync_merge(parents: tuple[str, ...], author: str, committer: str, message: str,
                  registry: Registry) -> bool:
    """Whether a merge commit on a trusted first-parent line is a curator's sync merge
    (rule 1): two parents, `Factdesk-Action: sync` and one action id in its final trailer
    block, author `+sync`, neither author nor committer an agent identity."""
    return _sync_merge(parents, author, committer, trailer_block(message), registry)


def _sync_merge(parents: tuple[str, ...], author: str, committer: str,
                block: Sequence[tuple[str, str]] | None, registry: Registry) -> bool:
    if len(parents) != 2 or is_agent_identity(committer, registry) or \
            is_agent_identity(author, registry) or op_token(author) != SYNC_ACTION:
        return False
    if block is None:
        return False
    actions = [v.strip() for k, v in block if k == "Factdesk-Action"]
    ids = [v.strip() for k, v in block if k == "Factdesk-Action-Id"]
    return actions == [SYNC_ACTION] and len(ids) == 1 and bool(_ACTION_ID.match(ids[0]))


def _decisions_on(repo: Path, tip: str, exclude: tuple[str, ...], registry: Registry,
                  seen: set[str]) -> list[Decision]:
    """The decisions on `tip`'s first-parent line (stopping at what `exclude` reaches), a
    trusted sync merge's second-parent line read in its place (rule 1). The verdicts are
    recomputed on each read from the cached, parsed commits: they depend on the registry
    and on where the sync merges sit."""
    decisions: list[Decision] = []
    for logged in decision_log.line(repo, tip, exclude):
        if logged.sha in seen:
            continue
        seen.add(logged.sha)
        if len(logged.parents) > 1:
            if _sync_merge(logged.parents, logged.author_email, logged.committer_email,
                           logged.trailers, registry):
                decisions += _decisions_on(repo, logged.parents[1], (*exclude, logged.parents[0]),
                                           registry, seen)
            continue
        decision = _decision(logged, registry)
        if decision is not None:
            decisions.append(decision)
    return decisions


def _decision(logged: githistory.LoggedCommit, registry: Registry) -> Decision | None:
    """The decision a non-merge commit of a trusted line records (rules 3 to 5), else None."""
    author, committer, block = logged.author_email, logged.committer_email, logged.trailers
    if len(logged.parents) > 1 or is_agent_identity(committer, registry) or block is None:
        return None
    found = _decision_of(block)
    if found is None:
        return None
    if found[0] in REVIEW_ACTIONS:
        named = [v.strip() for k, v in block if k == "Factdesk-Proposal"]
        if not named or not all(_SHA.match(v) for v in named):
            return None
        if found[0] == "reject" and (is_agent_identity(author, registry)
                                     or op_token(author) != "reject"):
            return None
    elif is_agent_identity(author, registry) or op_token(author) != found[0]:
        return None
    return Decision(logged.sha, logged.subject, found[0], found[1], found[2], author, committer,
                    block)


def is_review_merge(parents: tuple[str, ...], author: str, committer: str, message: str,
                    registry: Registry) -> bool:
    """Whether a merge commit is a curator's review merge (review/merge.py): two parents, a
    final trailer block naming one branch (`Factdesk-Review-Merge`), its second parent in
    full (`Factdesk-Reviewed-Up-To`) and one action id, no `Factdesk-Action`; author
    `+merge`, neither author nor committer an agent identity. (No decision: sync's guard
    lets it arrive, the decisions it records are the commits below it.)"""
    if len(parents) != 2 or is_agent_identity(committer, registry) or \
            is_agent_identity(author, registry) or op_token(author) != "merge":
        return False
    block = trailer_block(message)
    if block is None:
        return False
    found: dict[str, list[str]] = {}
    for token, value in block:
        found.setdefault(token, []).append(value.strip())
    ids = found.get("Factdesk-Action-Id", [])
    return (len(found.get("Factdesk-Review-Merge", [])) == 1 and "Factdesk-Action" not in found
            and found.get("Factdesk-Reviewed-Up-To") == [parents[1]]
            and len(ids) == 1 and bool(_ACTION_ID.match(ids[0])))


# ---------------------------------------------------------------------------------------------
# What arrives on the curated branch (review/sync.py's guard, issue 22 #2)

#: the kinds of an arriving commit: a curator's decision, sync merge or review merge arrive
#: as they are; an agent's commit never does without a decision; anything else (a hand
#: commit, a hosting site's merge) is adopted and named
DECISION, SYNC_MERGE, REVIEW_MERGE, AGENT, OTHER = (
    "decision", "sync-merge", "review-merge", "agent", "other")


@dataclass(frozen=True, slots=True)
class Arrival:
    """One commit that a join would bring onto the curated branch, and what it is."""

    commit: str
    subject: str
    author: str  #: e-mail
    committer: str  #: e-mail
    kind: str  #: DECISION, SYNC_MERGE, REVIEW_MERGE, AGENT or OTHER
    #: the commit of the incoming first-parent line that brings it: itself, or the trusted
    #: sync merge whose second-parent line holds it
    top: str
    #: the agent identity that makes it an AGENT commit (its author's, else its committer's)
    agent: str = ""


def arrivals(repo: Path, tip: str, have: str | None, *, registry: Registry | None = None
             ) -> list[Arrival]:
    """Every commit on `tip`'s first-parent line that `have` does not reach, newest first,
    each with its kind; a trusted sync merge's second-parent line (down to what its first
    parent has) is read in its place, just below it, as rule 1 reads it. A commit is AGENT
    when it is none of a trusted decision, sync merge or review merge and its author or its
    committer is an agent identity (`registry`: the work tree's when None)."""
    registry = registry if registry is not None else load_registry(repo)
    return _arrivals(repo, tip, (have,) if have else (), registry, None, set())


def _arrivals(repo: Path, tip: str, exclude: tuple[str, ...], registry: Registry,
              top: str | None, seen: set[str]) -> list[Arrival]:
    out: list[Arrival] = []
    for logged in githistory.decision_log(repo, tip, "", merges=True, exclude=exclude):
        if logged.sha in seen:
            continue
        seen.add(logged.sha)
        author, committer = logged.author_email, logged.committer_email
        below: list[Arrival] = []
        if len(logged.parents) > 1 and _sync_merge(logged.parents, author, committer,
                                                   logged.trailers, registry):
            kind = SYNC_MERGE
            below = _arrivals(repo, logged.parents[1], (*exclude, logged.parents[0]), registry,
                              top or logged.sha, seen)
        elif len(logged.parents) > 1 and is_review_merge(logged.parents, author, committer,
                                                         logged.message, registry):
            kind = REVIEW_MERGE
        elif len(logged.parents) == 1 and _decision(logged, registry) is not None:
            kind = DECISION
        else:
            kind = OTHER
        agent = ""
        if kind == OTHER:
            agent = next((e for e in (author, committer) if is_agent_identity(e, registry)), "")
            kind = AGENT if agent else OTHER
        out.append(Arrival(logged.sha, logged.subject, author, committer, kind,
                           top or logged.sha, agent))
        out += below
    return out
