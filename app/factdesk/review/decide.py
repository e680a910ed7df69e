"""Deciding on agents' proposals (issue 13, "Decisions"): accept, reject, edit-then-accept
and accept every clean proposal of a branch, each one commit on the curated branch through
the one write path (`gitwrite.commit_files`: the writer lock, the journal, the
compare-and-swap publish, recovery).

    review = Review(indexer)
    review.accept(["1a2b3c4d"], "checked against the incident log")
    review.reject(["5e6f7a8b"], "duplicate of an attested fact", paths=["kb/…/x.md"])
    review.accept_all_clean("agent/mindev.local-8ef0cd32", "nightly batch, all clean")

An **accept** commit keeps the agent as its author (the name and `<id>+<op>@…` e-mail of
the agent commit; for several proposals, those of the oldest, and they must all be one
agent's: a commit has one author) and the curator as committer. A **reject** commit
changes no file and is authored `curator+reject`. Both end in one trailer block:

    Factdesk-Action: accept
    Factdesk-Action-Id: <16 hex>
    Factdesk-Proposal: <full sha of each decided agent commit>
    Factdesk-Path: <each fact it decides>
    Factdesk-Override: R1, conflict            (only when the curator overrode)
    Factdesk-Edited: <each path the curator corrected before accepting>
    Factdesk-Reason: <the reason>

A decision decides every named path of every named proposal that changes it. The newest
decision in effect (not undone: `undo.replay`) on a (proposal, path) is its state.

What an accept refuses, with the rule named (`Refused.rule`), until the curator chooses:
- `R1`, `A1`, … — the version as accepted (with the edits) has an error its curated version
  does not have: accept with `override=True` (the codes are recorded) or reject;
- `conflict` (`ProposalConflict`) — the curated branch holds another version of the fact
  than the one the agent started from: reject (keep the curated one), `override=True`
  (take the proposed one over it) or `edits` (a merged version);
- `depends` — an earlier open proposal of the branch changed the fact first: "accept <sha>
  first" (or both together); a proposal is never applied with another one's changes
  silently;
- `decided` — already accepted (or rejected, for a reject); accepting a rejected one is
  allowed: the newer decision stands.

After the decision that leaves a branch wholly decided the review merge is recorded
(review/merge.py, docs/review.md).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from factdesk.corpus import githistory, gitrepo, gitreview
from factdesk.corpus.gitpaths import git_refuses
from factdesk.corpus.gitrepo import ZERO, Commit
from factdesk.curation import Conflict, Curation, Identity, Refused
from factdesk.curation.base import read_file
from factdesk.curation.changes import ChangeSet, FieldChange, Plan, inert, run_plan, short, with_op
from factdesk.curation.gittree import tree_entries
from factdesk.curation.gitwrite import FileChange, current_branch
from factdesk.curation.trust import REVIEW_ACTIONS, Decision, trusted_decisions
from factdesk.curation.undo import replay
from factdesk.index import review_reads
from factdesk.index.indexer import Indexer
from factdesk.model.enums import Severity
from factdesk.model.registry import Registry
from factdesk.review.carry import Carry, branch_id
from factdesk.review.clean import CleanSet, Verdict, clean_set, unwritable

_ID = re.compile(r"^[0-9a-f]{4,64}$")


class ProposalConflict(Conflict):
    """The curated branch changed a fact the proposal changes since the agent read it: the
    curator chooses (reject, override or edits). `paths`: the facts in conflict."""

    rule = "conflict"

    def __init__(self, message: str, paths: Sequence[str]) -> None:
        super().__init__(message)
        self.paths = tuple(paths)


@dataclass(frozen=True, slots=True)
class AgentCommit:
    """One agent commit as a decision reads it: the files a decision decides (path → blob
    before, blob after; None where absent) against its first parent — its facts under kb/
    and the files outside kb/ an agent may not write undecided (`files`: review/carry.py)
    — and the files that come over undecided (`others`: its private state, its own
    messages)."""

    sha: str
    parent: str
    author: Identity
    subject: str
    facts: dict[str, tuple[str | None, str | None]]
    others: tuple[str, ...]
    merge: bool = False
    #: the paths of `facts` outside kb/ (decided like facts, never checked as facts)
    files: frozenset[str] = frozenset()

    @classmethod
    def of(cls, commit: Commit, root: str, carry: Carry) -> AgentCommit:
        facts: dict[str, tuple[str | None, str | None]] = {}
        outside = []
        merge = len(commit.parents) > 1
        for c in commit.changes:
            if c.path.startswith(root + "/"):
                facts[c.path] = (_blob(c.old_blob), _blob(c.new_blob))
            else:
                outside.append((c.path, _blob(c.old_blob), _blob(c.new_blob)))
        decided, others = (carry.split(commit.sha, commit.email, outside) if outside and not merge
                           else ([], [p for p, _o, _n in outside]))
        facts.update({p: (o, n) for p, o, n in outside if p in decided})
        return cls(commit.sha, commit.parents[0] if commit.parents else ZERO,
                   Identity(commit.author, commit.email), commit.subject, facts, tuple(others),
                   merge=merge, files=frozenset(decided))

    def kb_facts(self, paths: Iterable[str] | None = None) -> list[str]:
        """Those of `paths` (default: all it decides) that are facts under kb/."""
        return [p for p in (self.facts if paths is None else paths) if p not in self.files]


def _path_rule(path: str) -> str:
    """`path` for a name that leaves its folder or is not UTF-8, `git_path` for one a git
    somewhere refuses (`.git` in any spelling, a Windows-only name)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "path"
    return "path" if any(p in ("", ".", "..") for p in path.split("/")) else "git_path"


def _blob(sha: str) -> str | None:
    return None if not sha or sha.strip("0") == "" else sha


def agent_key(identity: Identity) -> tuple[str, str]:
    """Who an agent is, whatever its `+op`: (name, e-mail without the token)."""
    local, at, domain = identity.email.partition("@")
    return identity.name, f"{local.split('+', 1)[0]}{at}{domain}".lower()


@dataclass
class Decided:
    """The decisions in effect on the curated branch (trusted, not undone), newest first."""

    decisions: list[Decision] = field(default_factory=list)
    #: agent sha → the decisions in effect that name it, newest first
    by_proposal: dict[str, list[Decision]] = field(default_factory=dict)
    #: every agent sha a trusted decision names, undone ones too (they reopen)
    named: set[str] = field(default_factory=set)

    def add(self, d: Decision) -> None:
        """Record `d` as the newest decision (after a commit, without reading history)."""
        self.decisions.insert(0, d)
        for sha in d.values("Factdesk-Proposal"):
            self.named.add(sha)
            self.by_proposal.setdefault(sha, []).insert(0, d)

    def of(self, sha: str, path: str) -> Decision | None:
        """The newest decision in effect that names `sha` and `path` (or no path: then it
        decides every fact of the proposal — review/status.py's rule, the same)."""
        for d in self.by_proposal.get(sha, ()):
            paths = d.values("Factdesk-Path")
            if not paths or inert(path) in paths or path in paths:
                return d
        return None

    def open_facts(self, agent: AgentCommit) -> list[str]:
        """Its facts no decision in effect decides."""
        return [p for p in agent.facts if self.of(agent.sha, p) is None]

    def is_open(self, agent: AgentCommit) -> bool:
        if agent.merge:
            return False
        if not agent.facts:
            return agent.sha not in self.by_proposal
        return bool(self.open_facts(agent))


def read_decided(repo: Path, tip: str, registry: Registry | None = None, *,
                 trusted: Sequence[Decision] | None = None) -> Decided:
    """The proposal decisions in effect on the first-parent line from `tip` (`trusted`:
    that line's trusted decisions, newest first, when the caller has them)."""
    if trusted is None:
        trusted = trusted_decisions(repo, tip, registry=registry) if tip != ZERO else []
    undo, _redo = replay(trusted)
    live = {r.action_id for r in undo if r.action in REVIEW_ACTIONS}
    out = Decided()
    for d in reversed(trusted):  # oldest first, so `add` leaves the newest in front
        if d.action in REVIEW_ACTIONS:
            out.named.update(d.values("Factdesk-Proposal"))
            if d.action_id in live:
                out.add(d)
    return out


def _review_change(cs: ChangeSet, merges: Sequence[str], warnings: Sequence[str], *,
                   proposals: Sequence[str] = (), left: Sequence[Verdict] = ()) -> ReviewChange:
    done = cs.committed
    if done is not None and warnings:
        done = dataclasses.replace(done, warnings=(*done.warnings, *warnings))
    return ReviewChange(**{f.name: getattr(cs, f.name) for f in dataclasses.fields(ChangeSet)
                           if f.name != "committed"}, committed=done, merges=tuple(merges),
                        proposals=tuple(proposals), left=tuple(left))


@dataclass(frozen=True, slots=True)
class ReviewChange(ChangeSet):
    """A decision's change set: the proposals it takes (their shas, in branch order), the
    review merges recorded right after it, and — for "accept all clean" — every open
    proposal it leaves open with why (`review.clean`)."""

    merges: tuple[str, ...] = ()
    proposals: tuple[str, ...] = ()
    left: tuple[Verdict, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {**ChangeSet.as_dict(self), "merges": list(self.merges),
                "proposals": list(self.proposals),
                "left": [{"id": v.sha, "kind": v.kind, "why": v.why} for v in self.left]}


class Review:
    """The decisions on agents' proposals over one corpus (module doc)."""

    def __init__(self, indexer: Indexer, curator: Identity | None = None, *,
                 update_index: bool = True, defer_index_sync: bool = False,
                 identity_file: Path | None = None,
                 merge_policy: Literal["branch", "prefix", "never"] = "branch") -> None:
        self.indexer = indexer
        self.repo = indexer.repo
        self.root = indexer.root
        #: the curator, undo and redo: the same as every curation action's
        self.curation = Curation(indexer, curator, update_index=update_index,
                                 defer_index_sync=defer_index_sync, identity_file=identity_file)
        #: when the review merge is recorded (review/merge.py): after the decision that
        #: leaves the whole branch decided, after each that completes a prefix, or never
        #: (on demand only: `merge_reviewed`)
        self.merge_policy = merge_policy
        #: (tip, its line's trusted decisions newest first), read last (`decided`)
        self._trusted: tuple[str, list[Decision]] | None = None

    @property
    def curator(self) -> Identity:
        return self.curation.curator

    # -- reading ---------------------------------------------------------------------------

    def proposal(self, ref: str) -> AgentCommit:
        """The agent commit `ref` names (a full or unique abbreviated sha), or Refused."""
        ref = ref.strip().lower()
        if not _ID.match(ref):
            raise Refused(f"{inert(ref)!s}: not a proposal id (a full or unique abbreviated sha "
                          "of an agent commit)", rule="id")
        sha = gitrepo.resolve_commit(self.repo, ref)
        commit = gitreview.one_commit(self.repo, sha) if sha else None
        if commit is None:
            raise Refused(f"{ref}: no commit, or more than one, starts with it; give more of "
                          "the sha", rule="id")
        if len(commit.parents) > 1:
            raise Refused(f"{ref}: a merge commit is not a proposal", rule="id")
        held = gitreview.agent_branches_with(self.repo, commit.sha)
        if not held:
            raise Refused(f"{ref}: not a commit of any agent/* branch", rule="id")
        with Carry(self.repo, ids=lambda _sha: {branch_id(b) for b in held}) as carry:
            return AgentCommit.of(commit, self.root, carry)

    def decided(self, tip: str | None = None) -> Decided:
        """The decisions in effect at `tip` (default: the curated tip). The trusted
        decisions are kept between calls: when the branch only grew on its first-parent
        line since, just the new commits are read (the whole line is 5,000 commits at
        100,000 facts: the cost of one decision otherwise)."""
        if tip is None:
            tip = current_branch(self.repo)[1]
        trusted: list[Decision] | None = None
        if self._trusted is not None:
            seen, known = self._trusted
            since = gitreview.first_parent_since(self.repo, seen, tip) if seen != ZERO else None
            if since == []:
                trusted = known
            elif since is not None:
                trusted = [*trusted_decisions(self.repo, f"{seen}..{tip}",
                                              registry=self.curation.registry), *known]
        if trusted is None:
            trusted = (trusted_decisions(self.repo, tip, registry=self.curation.registry)
                       if tip != ZERO else [])
        self._trusted = (tip, trusted)
        return read_decided(self.repo, tip, self.curation.registry, trusted=trusted)

    # -- deciding --------------------------------------------------------------------------

    def accept(self, ids: Iterable[str], reason: str, *, paths: Iterable[str] | None = None,
               override: bool = False, edits: Mapping[str, bytes] | None = None,
               preview: bool = False) -> ChangeSet:
        """Accept the proposals `ids` (their facts, or those of `paths`), edited by `edits`
        ({path: the curator's full new bytes}); one commit (module doc)."""
        _ref, tip = current_branch(self.repo)
        decided = self.decided(tip)
        agents = self._selected(ids, tip, decided)
        chosen = self._chosen(agents, paths)
        for a in agents:
            for p in chosen[a.sha]:
                if why := unwritable(p):
                    raise Refused(f"{a.sha[:12]} {inert(p)}: {why}; reject it (a reject "
                                  "records it)", rule=_path_rule(p))
        edits = dict(edits or {})
        for p in edits:
            if not any(p in chosen[a.sha] for a in agents):
                raise Refused(f"{inert(p)}: not a fact the accepted proposals change; an edit "
                              "corrects a proposed version", rule="edit")
            if not isinstance(edits[p], bytes):
                raise Refused(f"{inert(p)}: an edit is the file's full new bytes", rule="edit")
        for a in agents:
            for p in chosen[a.sha]:
                d = decided.of(a.sha, p)
                if d is not None and d.action == "accept":
                    raise Refused(f"{a.sha[:12]} {inert(p)}: already accepted by "
                                  f"{d.commit[:12]}", rule="decided")
            if not a.facts and decided.by_proposal.get(a.sha):
                raise Refused(f"{a.sha[:12]}: already decided by "
                              f"{decided.by_proposal[a.sha][0].commit[:12]}", rule="decided")
        authors = {agent_key(a.author) for a in agents}
        if len(authors) > 1:
            raise Refused("these proposals are by different agents; a commit has one author: "
                          "accept each agent's proposals on their own", rule="author")
        final, overridden = self._apply(agents, chosen, tip, decided, override, edits)
        changes, fields = self._changes(tip, final, edits)
        codes = self._refusals(changes, override, _creators(agents, chosen))
        over = sorted(set(codes)) + (["conflict"] if overridden else [])
        decided_paths = list(dict.fromkeys(p for a in agents for p in chosen[a.sha]))
        trailers = [("Proposal", a.sha) for a in agents] + [("Path", p) for p in decided_paths]
        if over:
            trailers.append(("Override", ", ".join(over)))
        trailers += [("Edited", p) for p in edits]
        plan = Plan("accept", self._subject("accept", agents, chosen, bool(edits)),
                    tuple(changes), tuple(fields), extra_trailers=tuple(trailers))
        return self._commit(plan, reason, tip, preview, author=agents[0].author,
                            agents=agents, decided=decided)

    def reject(self, ids: Iterable[str], reason: str, *, paths: Iterable[str] | None = None,
               preview: bool = False) -> ChangeSet:
        """Reject the proposals `ids` (their facts, or those of `paths`): one commit that
        changes no file, authored `curator+reject`; the curated versions stay."""
        _ref, tip = current_branch(self.repo)
        decided = self.decided(tip)
        agents = self._selected(ids, tip, decided)
        chosen = self._chosen(agents, paths)
        for a in agents:
            for p in chosen[a.sha]:
                d = decided.of(a.sha, p)
                if d is not None:
                    raise Refused(f"{a.sha[:12]} {inert(p)}: already {d.action}ed by "
                                  f"{d.commit[:12]}" + ("; undo that decision, or retract the "
                                                       "fact" if d.action == "accept" else ""),
                                  rule="decided")
            if not a.facts and decided.by_proposal.get(a.sha):
                raise Refused(f"{a.sha[:12]}: already decided by "
                              f"{decided.by_proposal[a.sha][0].commit[:12]}", rule="decided")
        decided_paths = list(dict.fromkeys(p for a in agents for p in chosen[a.sha]))
        trailers = [("Proposal", a.sha) for a in agents] + [("Path", p) for p in decided_paths]
        plan = Plan("reject", self._subject("reject", agents, chosen, False), (), (),
                    extra_trailers=tuple(trailers))
        author = None if preview else with_op(self.curator, "reject")
        return self._commit(plan, reason, tip, preview, author=author, agents=agents,
                            decided=decided)

    def accept_all_clean(self, branch: str, reason: str, *, preview: bool = False
                         ) -> ReviewChange:
        """Accept, in one commit, every clean open proposal of `branch` (`agent/x` or
        `origin/agent/x`): `review.clean`'s one definition, over the queue with its checks;
        the others stay open, each named with why in the result's `left`."""
        _ref, tip = current_branch(self.repo)
        branches = dict(gitreview.agent_branches(self.repo))
        if branch not in branches:
            raise Refused(f"{inert(branch)}: no such agent branch (known: "
                          f"{', '.join(sorted(branches)) or 'none'})", rule="branch")
        found = self.clean_set(branch)
        if not found.verdicts:
            raise Refused(f"{inert(branch)}: no open proposal with a fact to take", rule="empty")
        decided = self.decided(tip)
        with Carry(self.repo) as carry:
            commits = {c.sha: AgentCommit.of(c, self.root, carry) for c in
                       gitreview.range_commits(self.repo, f"{tip}..{branches[branch]}")}
        taken = [commits[sha] for sha in found.taken if sha in commits]
        left = list(found.left)
        left += [Verdict(sha, "conflict", "no longer on the branch as the queue read it")
                 for sha in found.taken if sha not in commits]
        agents, chosen, changes, fields, dropped = self._clean_commit(taken, found, tip)
        left += dropped
        if not agents:
            raise Refused(f"{inert(branch)}: none of its {len(found.verdicts)} open proposals is "
                          "clean (" + found.tally() + ")", rule="clean")
        decided_paths = list(dict.fromkeys(p for a in agents for p in chosen[a.sha]))
        trailers = [("Proposal", a.sha) for a in agents] + [("Path", p) for p in decided_paths]
        n = len(agents)
        subject = (f"accept: {n} clean proposal{'s' if n != 1 else ''} of {branch} "
                   f"({len(decided_paths)} fact{'s' if len(decided_paths) != 1 else ''})")
        plan = Plan("accept", subject, tuple(changes), tuple(fields),
                    extra_trailers=tuple(trailers))
        order = {sha: i for i, sha in enumerate(found.verdicts)}
        return self._commit(plan, reason, tip, preview, author=agents[0].author, agents=agents,
                            decided=decided, left=sorted(left, key=lambda v: order.get(v.sha, 0)))

    def clean_set(self, branch: str) -> CleanSet:
        """`review.clean.clean_set` of `branch` over the queue as git has it now, each open
        proposal checked as the queue's badges check it (`review.checks.check_all`)."""
        from factdesk.review.checks import check_all
        from factdesk.review.proposals import load_queue

        queue = load_queue(self.repo, branch=branch)
        checked = {p.sha: p for p in check_all(self.indexer, queue, only_open=True)}
        return clean_set(queue, branch, checked)

    def _clean_commit(self, taken: Sequence[AgentCommit], found: CleanSet, tip: str
                      ) -> tuple[list[AgentCommit], dict[str, list[str]], list[FileChange],
                                 list[FieldChange], list[Verdict]]:
        """The clean proposals as one commit's changes. Checked once more as a whole: one
        that brings an error only together with the others (each was checked with the
        versions before it) is left open, named, with every one building on it."""
        chosen = {a.sha: list(found.paths.get(a.sha, ())) for a in taken}
        at_tip = {p: e[1] for p, e in tree_entries(
            self.repo, tip, list(dict.fromkeys(p for a in taken for p in chosen[a.sha]))).items()}
        agents = list(taken)
        dropped: list[Verdict] = []
        for _round in range(8):
            final, skipped = self._apply_clean(agents, chosen, tip, at_tip)
            dropped += [Verdict(a.sha, "conflict", "does not apply on the curated branch without "
                                "the ones left open before it") for a in agents if a.sha in skipped]
            agents = [a for a in agents if a.sha not in skipped]
            changes, fields = self._changes(tip, final, {}, at_tip)
            if not agents:
                break
            bad = {p: c for p, c, _m in self._problems(changes, _creators(agents, chosen))}
            failed = [a for a in agents if any(p in bad for p in chosen[a.sha])]
            if not failed:
                break
            dropped += [Verdict(a.sha, "error", "✗ " + " ".join(sorted(
                {bad[p] for p in chosen[a.sha] if p in bad})) + ": an error only together with "
                "the others taken") for a in failed]
            agents = [a for a in agents if a not in failed]
        else:
            raise Refused("the clean set did not settle; accept the proposals one by one",
                          rule="clean")
        return agents, chosen, changes, fields, dropped

    def merge_reviewed(self, branch: str) -> str | None:
        """Record the review merge of `branch` (`agent/x`, `origin/agent/x`) up to its
        decided prefix now — a prefix that needs no decision (the agent's own messages and
        private state only) included; the merge commit, or None when there is nothing to
        record."""
        from factdesk.review.merge import record_merge

        branches = dict(gitreview.agent_branches(self.repo))
        if branch not in branches:
            raise Refused(f"{inert(branch)}: no such agent branch (known: "
                          f"{', '.join(sorted(branches)) or 'none'})", rule="branch")
        return record_merge(self, branch, branches[branch], self.decided(), undecided_only=True)

    def record_pending(self) -> tuple[list[str], list[str]]:
        """The review merges a crash lost (the decision's ref moved, the merge never came):
        recorded now, as the decision would have (`merge_policy`); run after recovery.
        Returns (merges, warnings)."""
        from factdesk.review.merge import record_after

        if self.merge_policy == "never":
            return [], []
        return record_after(self, self.decided())

    # -- the parts -------------------------------------------------------------------------

    def _selected(self, ids: Iterable[str], tip: str, decided: Decided) -> list[AgentCommit]:
        """The proposals `ids` name, in branch order (an ancestor before its descendants)."""
        agents: dict[str, AgentCommit] = {}
        for ref in ids:
            a = self.proposal(ref)
            if a.sha not in decided.named and gitrepo.is_ancestor(self.repo, a.sha, tip):
                raise Refused(f"{a.sha[:12]}: already on the curated branch (no decision names "
                              "it): not a proposal", rule="merged")
            agents[a.sha] = a
        if not agents:
            raise Refused("no proposal named", rule="id")
        if len(agents) == 1:
            return list(agents.values())
        order = {sha: i for i, sha in enumerate(githistory_topo(self.repo, list(agents)))}
        return sorted(agents.values(), key=lambda a: order.get(a.sha, 0))

    def _chosen(self, agents: Sequence[AgentCommit], paths: Iterable[str] | None
                ) -> dict[str, list[str]]:
        """sha → the facts of it the decision takes (all, or those of `paths`)."""
        if paths is None:
            return {a.sha: list(a.facts) for a in agents}
        # (a path as the queue shows it — inert, a non-UTF-8 byte as `\xNN` — names it too)
        shown = {inert(p): p for a in agents for p in a.facts}
        wanted = list(dict.fromkeys(p if any(p in a.facts for a in agents) else shown.get(p, p)
                                    for p in paths))
        for p in wanted:
            if not any(p in a.facts for a in agents):
                raise Refused(f"{inert(p)}: not a fact these proposals change", rule="path")
        return {a.sha: [p for p in a.facts if p in wanted] for a in agents}

    def _apply(self, agents: Sequence[AgentCommit], chosen: Mapping[str, list[str]], tip: str,
               decided: Decided, override: bool, edits: Mapping[str, bytes]
               ) -> tuple[dict[str, str | None], list[str]]:
        """path → the blob the decision leaves (each proposal's version applied in order);
        refused on an open dependency, ProposalConflict on a conflict not resolved by
        `override` or `edits`. Returns (final blobs, the paths overridden in conflict)."""
        paths = list(dict.fromkeys(p for a in agents for p in chosen[a.sha]))
        view: dict[str, str | None] = {p: e[1] for p, e in tree_entries(self.repo, tip, paths).items()}
        for p in paths:
            view.setdefault(p, None)
        selected = {a.sha for a in agents}
        conflicts: list[str] = []
        overridden: list[str] = []
        for a in agents:
            for p in chosen[a.sha]:
                old, new = a.facts[p]
                if view[p] in (old, new):
                    view[p] = new
                    continue
                base = githistory.merge_base(self.repo, tip, a.sha) or ZERO
                earlier = gitreview.touching(self.repo, a.parent if base == ZERO else
                                             f"{base}..{a.parent}", [p])
                waiting = [c for c in earlier if c not in selected and decided.of(c, p) is None
                           and c not in decided.named]
                if waiting:
                    raise Refused(f"{a.sha[:12]} changes {inert(p)} as {waiting[-1][:12]} left it, "
                                  f"which is still open: accept {waiting[0][:12]} first (or both "
                                  "together)", rule="depends")
                if p in edits:
                    view[p] = new  # (the edit replaces it below: the curator's merged version)
                elif override:
                    view[p] = new
                    overridden.append(p)
                else:
                    conflicts.append(p)
        if conflicts:
            names = ", ".join(inert(p) for p in dict.fromkeys(conflicts))
            raise ProposalConflict(
                f"the curated branch changed {names} since the agent read "
                f"{'it' if len(conflicts) == 1 else 'them'}: choose — reject (keep the curated "
                "version), override (take the proposed one over it) or edit a merged version",
                conflicts)
        return view, overridden

    def _apply_clean(self, agents: Sequence[AgentCommit], chosen: Mapping[str, list[str]],
                     tip: str, at_tip: Mapping[str, str] | None = None
                     ) -> tuple[dict[str, str | None], set[str]]:
        """Like `_apply` for a bulk accept: a proposal that does not apply cleanly on what
        the ones before it left is skipped (with every later one that builds on it)."""
        paths = list(dict.fromkeys(p for a in agents for p in chosen[a.sha]))
        if at_tip is None:
            at_tip = {p: e[1] for p, e in tree_entries(self.repo, tip, paths).items()}
        view: dict[str, str | None] = {p: at_tip.get(p) for p in paths}
        skipped: set[str] = set()
        for a in agents:
            if all(view[p] in a.facts[p] for p in chosen[a.sha]):
                for p in chosen[a.sha]:
                    view[p] = a.facts[p][1]
            else:
                skipped.add(a.sha)
        return view, skipped

    def _changes(self, tip: str, final: Mapping[str, str | None], edits: Mapping[str, bytes],
                 at_tip: Mapping[str, str] | None = None
                 ) -> tuple[list[FileChange], list[FieldChange]]:
        """The file changes that take the curated tip to `final` (blobs) with `edits` (bytes)."""
        if at_tip is None:
            at_tip = {p: e[1] for p, e in tree_entries(self.repo, tip, list(final)).items()}
        changes: list[FileChange] = []
        fields: list[FieldChange] = []
        with gitrepo.BlobReader(self.repo) as reader:
            for p, blob in final.items():
                new_blob: str | None
                if p in edits:
                    new: bytes | None = edits[p]
                    new_blob = gitrepo.blob_id(edits[p])
                else:
                    new_blob = blob
                    new = None
                if new_blob == at_tip.get(p):
                    continue
                if p not in edits and blob is not None:
                    new = reader.read(blob)
                    if new is None:
                        raise Refused(f"{inert(p)}: the proposed version is missing from git",
                                      rule="missing")
                old = read_file(self.repo, p)
                changes.append(FileChange(p, old, new))
                fields.append(FieldChange(p, "content", at_tip.get(p), new_blob))
        return changes, fields

    def _problems(self, changes: Sequence[FileChange],
                  creators: Mapping[str, str] | None = None) -> list[tuple[str, str, str]]:
        """(path, code, message) of each error a new version brings that its curated
        version does not have (same code and message): every check of `factdesk check`,
        as if accepted, with the decision's other versions (deletions too) in place —
        `index.review_reads.check_proposed`, the checks the queue's badges come from.
        `creators`: path → the agent e-mail of a fact the decision adds."""
        versions = {c.path: c.new for c in changes if c.path.startswith(self.root + "/")}
        refused = [(c.path, "git_path", f"git refuses this path: {why}")
                   for c in changes if (why := git_refuses(c.path))]
        checked = [p for p, data in versions.items() if data is not None]
        if not checked:
            return refused
        conn = self.indexer.connect(readonly=True)
        try:
            found = review_reads.check_proposed(conn, self.indexer.rule_setting(), versions,
                                                checked, dict(creators or {}))
            before = review_reads.indexed_problems(conn, checked)
        finally:
            conn.close()
        out = refused
        for path, version in found.items():
            had = {(f.code, f.message) for f in before.get(path, ())
                   if f.severity == Severity.ERROR}
            out += [(path, f.code, f.message) for f in version.problems
                    if f.severity == Severity.ERROR and (f.code, f.message) not in had]
        return out

    def _refusals(self, changes: Sequence[FileChange], override: bool,
                  creators: Mapping[str, str]) -> list[str]:
        """The codes of the errors accepting would bring; Refused naming the first unless
        `override` (then they are recorded)."""
        errors = self._problems(changes, creators)
        if never := [(p, m) for p, c, m in errors if c == "git_path"]:
            raise Refused("; ".join(f"{inert(p)}: {inert(m)}" for p, m in never[:5])
                          + "; no override: reject the proposal", rule="git_path")
        if errors and not override:
            first = errors[0]
            listing = "; ".join(f"{inert(p)}: [{c}] {inert(m)}" for p, c, m in errors[:5])
            more = f" (+{len(errors) - 5} more)" if len(errors) > 5 else ""
            raise Refused(f"accepting would bring {len(errors)} error"
                          f"{'s' if len(errors) != 1 else ''}: {listing}{more}; override with a "
                          "reason, edit the version, or reject it", rule=first[1])
        return [c for _p, c, _m in errors]

    def _subject(self, action: str, agents: Sequence[AgentCommit], chosen: Mapping[str, list[str]],
                 edited: bool) -> str:
        n_facts = len({p for a in agents for p in chosen[a.sha]})
        total = len({p for a in agents for p in a.facts})
        part = f" ({n_facts} of {total} facts)" if n_facts < total else ""
        what = "edited: " if edited else ""
        if len(agents) == 1:
            return short(f"{action}: {what}{inert(agents[0].subject)}{part}", 100)
        return short(f"{action}: {what}{len(agents)} proposals of {agents[0].author.name}{part}", 100)

    def _commit(self, plan: Plan, reason: str, tip: str, preview: bool, *,
                author: Identity | None, agents: Sequence[AgentCommit], decided: Decided,
                left: Sequence[Verdict] = ()) -> ReviewChange:
        cur = self.curation
        cs = run_plan(plan, reason, repo=self.repo, curator=None if preview else cur.curator,
                      indexer=cur.indexer if cur.update_index else None, expected_head=tip,
                      preview=preview, defer_sync=cur.defer_index_sync, author=author,
                      allow_empty=True)
        taken = [a.sha for a in agents]
        if preview or self.merge_policy == "never" or cs.commit is None:
            return _review_change(cs, (), (), proposals=taken, left=left)
        from factdesk.review.merge import record_after

        decided.add(Decision(cs.commit, cs.subject, plan.action, cs.action_id, None,
                             (author or cur.curator).email, cur.curator.email,
                             tuple((f"Factdesk-{k}", inert(v)) for k, v in plan.extra_trailers)))
        merges, warnings = record_after(self, decided)
        return _review_change(cs, merges, warnings, proposals=taken, left=left)


def _creators(agents: Sequence[AgentCommit], chosen: Mapping[str, list[str]]) -> dict[str, str]:
    """path → the e-mail of the agent whose proposal adds it (the claimant checks read it)."""
    return {p: a.author.email for a in agents for p in a.kb_facts(chosen[a.sha])
            if a.facts[p][0] is None}


def githistory_topo(repo: Path, shas: Sequence[str]) -> list[str]:
    """`shas` in topological order, oldest first."""
    return gitreview.topo_order(repo, shas)

