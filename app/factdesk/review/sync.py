"""Sync with a shared remote: git is the distributed engine (issue 13, docs/review.md "Sync").

`sync(repo)`:

1. **fetch** every configured remote (`corpus.gitremote.fetch`: each branch into
   `refs/remotes/<remote>/*`, no tags; new `agent/*` branches appear there as proposals);
2. **join** the checked-out (curated) branch B with the sync remote's B, never rewriting a
   commit: nothing to do when ours has theirs; a **fast-forward** when we have nothing new;
   else a **true merge** commit — first parent ours, second theirs, committed by the
   curator (`Factdesk-Action: sync`, which the trust rule follows so that the other
   curator's decisions count: curation/trust.py rule 1) — built from `git merge-tree
   --write-tree` without touching the work tree or git's index, then published through the
   write protocol (`gitwrite.move_branch`: writer lock, compare-and-swap, only the files
   the merge changes are replaced, and only when they hold the committed version: the
   user's uncommitted work is never touched). If both sides changed the same fact (a
   `kb/` path that the merge would have to combine, or any path git cannot merge) since
   their merge base, **nothing changes** and `SyncConflict` names the facts and both
   sides' commits;
3. **push** B to the sync remote, never forced. When another curator pushed between our
   fetch and our push the push is rejected: fetch, join and push again (3 rounds).

The sync remote: `remote`, else B's configured upstream remote, else `origin`, else the
only remote. The remote's branch has B's name.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from factdesk.corpus import githistory, gitremote, gitrepo, gitreview
from factdesk.corpus.gitrepo import ZERO, GitError
from factdesk.curation import trust
from factdesk.curation.changes import inert, with_op
from factdesk.curation.gitwrite import (
    Conflict,
    CurationError,
    Identity,
    Refused,
    current_branch,
    merge_commit,
    move_branch,
)
from factdesk.curation.trust import AGENT, OTHER, SYNC_ACTION, Arrival
from factdesk.model.registry import agent_id_from_email

#: `progress(what, fraction)`: in words, and how far along the whole sync is (0.0 – 1.0)
Progress = Callable[[str, float], None]
#: the folder of the facts: a path here changed on both sides is a conflict, never combined
FACT_ROOT = "kb/"
ROUNDS = 3
#: what a join did, least to most
_KINDS = ("up-to-date", "ahead", "started", "fast-forward", "merged")
#: the name of a proposal branch made from an agent's e-mail (else `agent/incoming`)
_AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True, slots=True)
class FactConflict:
    """One path both sides changed since their merge base, with the newest commit on each
    side that changed it."""

    path: str
    ours: str | None  #: sha
    ours_said: str  #: "author: subject"
    theirs: str | None
    theirs_said: str


class SyncConflict(CurationError):
    """Both sides changed the same fact: nothing was merged, nothing changed."""

    def __init__(self, message: str, conflicts: tuple[FactConflict, ...], ours: str,
                 theirs: str, base: str | None) -> None:
        super().__init__(message)
        self.conflicts = conflicts
        self.ours = ours
        self.theirs = theirs
        self.base = base
        self.rule = "sync-conflict"

    @property
    def paths(self) -> list[str]:
        return [c.path for c in self.conflicts]


class AgentCommits(Refused):
    """The remote's curated branch holds agent commits that no curator decided (issue 22
    #2): nothing was joined, pushed or changed. `commits`: each one, newest first."""

    def __init__(self, message: str, commits: tuple[Arrival, ...], remote: str,
                 branch: str) -> None:
        super().__init__(message, rule="sync-agent-commits")
        self.commits = commits
        self.remote = remote
        self.branch = branch


@dataclass(frozen=True, slots=True)
class _Joined:
    """What one join did."""

    kind: str  #: one of _KINDS
    brought: int = 0
    merge: str | None = None
    #: non-agent commits that are no decision, sync merge or review merge, now on the branch
    adopted: tuple[Arrival, ...] = ()
    #: agent commits (and what came after them) taken in as proposals, not joined
    proposals: tuple[Arrival, ...] = ()
    proposal_branch: str | None = None


@dataclass(frozen=True, slots=True)
class SyncResult:
    branch: str
    remote: str | None  #: the remote joined and pushed to (None: no remote configured)
    fetched: tuple[gitremote.FetchResult, ...]
    #: "up-to-date", "ahead" (only ours has new commits), "fast-forward", "merged"
    joined: str
    before: str
    after: str
    #: commits that came onto the branch from the remote
    incoming: int
    merge: str | None = None  #: the merge commit, when one was made
    pushed: gitremote.PushResult | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)
    #: commits that arrived that are no curator's decision, sync merge or review merge and
    #: were made by no agent (a hand commit, a hosting site's merge), newest first
    adopted: tuple[Arrival, ...] = ()
    #: `as_proposals`: the commits of the remote's branch taken in as proposals on
    #: `proposal_branch` instead of being joined (the agent's, and every later one)
    proposals: tuple[Arrival, ...] = ()
    proposal_branch: str | None = None
    #: the local `agent/*` branches pushed (fast-forward only: issue 26), in name order
    agent_pushed: tuple[gitremote.PushResult, ...] = ()

    @property
    def agent_updates(self) -> list[gitremote.RefUpdate]:
        """The remote-tracking `agent/*` branches this fetch created or moved."""
        return [u for f in self.fetched for u in f.updated
                if u.ref.split("/", 3)[-1].startswith("agent/")]


def sync(repo: Path, *, remote: str | None = None, progress: Progress | None = None,
         curator: Identity | None = None, as_proposals: bool = False) -> SyncResult:
    """Fetch, join and push (module doc). Raises `Refused` (detached HEAD, a merge or rebase
    in progress, no such remote, the user's uncommitted work on a file the join changes),
    `AgentCommits` (the remote's branch holds agent commits no curator decided; with
    `as_proposals` they are taken in as proposals instead), `SyncConflict`, `GitError`
    (git's words: an unreachable remote, a refused URL)."""
    repo = Path(repo)
    say = progress or (lambda _w, _f: None)
    ref, start = current_branch(repo)  # (Refused: detached, merge or rebase in progress)
    branch = ref.removeprefix("refs/heads/")
    names = gitremote.remote_names(repo)
    target = _sync_remote(repo, branch, names, remote)
    warnings: list[str] = []
    fetched = _fetch_all(repo, names, target, remote is not None, say, warnings)
    if target is None:
        return SyncResult(branch, None, tuple(fetched), "up-to-date", start, start, 0,
                          warnings=(*warnings, "no remote is configured: nothing to join or push "
                                    "(add one with `git remote add origin URL`)"))
    joined, incoming, merge = "up-to-date", 0, None
    adopted: list[Arrival] = []
    queued = _Joined("up-to-date")
    pushed: gitremote.PushResult | None = None
    for round_ in range(ROUNDS):
        if round_:
            say(f"fetch {target} again", 0.6)
            fetched += gitremote.fetch(repo, target)
        done = _join(repo, target, branch, curator, say, as_proposals)
        incoming += done.brought
        merge = done.merge or merge
        joined = max(joined, done.kind, key=_KINDS.index)
        adopted += [a for a in done.adopted if a not in adopted]
        if done.proposals:
            queued = done
            warnings.append(
                f"not pushed: {target}/{branch} holds the agent commits now queued as proposals "
                f"on {done.proposal_branch}; decide them (the review merge joins them to "
                f"{branch}), then sync again")
            break
        say(f"push {branch} to {target}", 0.7)
        pushed = gitremote.push(repo, target, branch, progress=_scaled(say, 0.7, 0.3))
        if not pushed.rejected:
            break
    say("push agent branches", 0.95)
    agent_pushed = _push_agent_branches(repo, target, warnings)
    _, after = current_branch(repo)
    warnings += _fetch_warnings(repo, fetched, target, branch)
    if pushed is not None and pushed.rejected:
        warnings.append(f"{target} kept moving: {branch} was not pushed ({pushed.message}); "
                        "sync again")
    say("sync: done", 1.0)
    return SyncResult(branch, target, tuple(fetched), joined, start, after, incoming, merge,
                      pushed, tuple(warnings), tuple(adopted), queued.proposals,
                      queued.proposal_branch, tuple(agent_pushed))


def _push_agent_branches(repo: Path, target: str, warnings: list[str]
                         ) -> list[gitremote.PushResult]:
    """Push the local `agent/*` branches (those `factdesk mcp --agent` writes) that are
    ahead of the remote's, as of the fetch: a fast-forward only, never forced. One the
    remote has and ours does not contain is left alone: behind it (the agent wrote more
    elsewhere) silently, diverged from it named in `warnings`."""
    local = {ref.removeprefix("refs/heads/"): sha
             for ref, sha in githistory.agent_branch_refs(repo)
             if ref.startswith("refs/heads/agent/")}
    theirs = gitremote.tracking_refs(repo, target)
    ahead = []
    for name, sha in sorted(local.items()):
        remote_tip = theirs.get(f"refs/remotes/{target}/{name}")
        if remote_tip == sha or (remote_tip and gitrepo.is_ancestor(repo, sha, remote_tip)):
            continue
        if remote_tip and not gitrepo.is_ancestor(repo, remote_tip, sha):
            warnings.append(f"not pushed: {inert(name)} went another way than {target}'s "
                            f"{inert(name)} (at {remote_tip[:12]}, not in ours): a push would "
                            "not be a fast-forward, and factdesk never forces one; left as it "
                            "is")
            continue
        ahead.append(name)
    if not ahead:
        return []
    results = gitremote.push_branches(repo, target, ahead)
    warnings += [f"not pushed: {target} refused {inert(r.branch)} ({r.message})"
                 for r in results if r.rejected]
    return [r for r in results if not r.rejected]


def _scaled(say: Progress, start: float, span: float) -> Progress:
    return lambda what, f: say(what, start + span * f)


def _sync_remote(repo: Path, branch: str, names: list[str], asked: str | None) -> str | None:
    if asked is not None:
        if asked not in names:
            raise Refused(f"no remote named {asked!r} (configured: {', '.join(names) or 'none'})",
                          rule="sync")
        return asked
    if not names:
        return None
    upstream = githistory.config_get(repo, f"branch.{branch}.remote")
    if upstream in names:
        return upstream
    if "origin" in names:
        return "origin"
    if len(names) == 1:
        return names[0]
    raise Refused(f"{branch} has no upstream remote and there is no `origin`: name the remote "
                  f"to sync with ({', '.join(names)})", rule="sync")


def _fetch_all(repo: Path, names: list[str], target: str | None, only: bool, say: Progress,
               warnings: list[str]) -> list[gitremote.FetchResult]:
    """Every remote (only the target when one was named); a remote other than the target
    that cannot be reached is a warning, the target's failure stops the sync."""
    todo = [target] if only and target is not None else names
    out = []
    for i, name in enumerate(todo):
        try:
            out += gitremote.fetch(repo, name, progress=_scaled(say, 0.6 * i / len(todo),
                                                                0.6 / len(todo)))
        except GitError as exc:
            if name == target:
                raise
            warnings.append(f"could not fetch {name}: {exc}")
    return out


def _fetch_warnings(repo: Path, fetched: list[gitremote.FetchResult], target: str,
                    branch: str) -> list[str]:
    """What a fetch left out: each remote branch git could not store here (issue 22 #11);
    and each branch the remote rewrote (a forced push: what was on it is not any more)."""
    out: list[str] = []
    for f in fetched:
        for u in f.updated:
            if not u.forced or u.old is None or u.new is None:
                continue
            name = u.ref.removeprefix(f"refs/remotes/{f.remote}/")
            lost = gitremote.commits_between(repo, u.new, u.old)
            said = (f"{f.remote} rewrote {inert(name)} (a forced push): it was at {u.old[:12]}, "
                    f"now at {u.new[:12]}, which does not contain it ({lost} commit"
                    f"{'s' if lost != 1 else ''} no longer on it)")
            if f.remote == target and name == branch and gitrepo.is_ancestor(repo, u.old, "HEAD"):
                said += (f"; your {branch} keeps what it had, so the join brings those commits "
                         f"back to {target} unless you undo them")
            out.append(said)
        for b in f.skipped:
            said = (f"skipped {f.remote}'s branch {inert(b)} ({len(b.encode('utf-8', 'replace'))} "
                    f"bytes): git cannot store that name here; the other branches were "
                    f"fetched. Rename or delete it on {f.remote}")
            if said not in out:
                out.append(said)
    return out


def _join(repo: Path, target: str, branch: str, curator: Identity | None, say: Progress,
          as_proposals: bool) -> _Joined:
    """Bring the remote's branch into ours (retried when the branch moves under us: another
    factdesk action). The guard first (issue 22 #2): every commit that would arrive is
    classified (`trust.arrivals`); an agent commit that is no curator's decision stops the
    join (`AgentCommits`), or with `as_proposals` the remote's line from the oldest such
    commit on goes to a local `agent/<id>` branch and only what lies below it is joined (as
    it does without `as_proposals` once a local `agent/*` branch holds the remote's tip: the
    curator took them in already)."""
    for _ in range(ROUNDS):
        _, ours = current_branch(repo)
        theirs = gitremote.tracking_tip(repo, target, branch)
        if theirs is None and ours == ZERO:
            raise Refused(_nothing_to_start(repo, target, branch), rule="sync")
        if theirs is None or theirs == ours:
            return _Joined("up-to-date")
        if ours != ZERO and gitrepo.is_ancestor(repo, theirs, ours):
            return _Joined("ahead")
        try:
            if ours == ZERO:  # (an unborn branch starts from the remote's, as a clone would)
                say(f"start {branch} from {target}/{branch}", 0.62)
                _move(repo, theirs, ours, f"sync: start {branch} from {target}/{branch}",
                      curator, target, branch)
                return _Joined("started", _commit_count(repo, theirs))
            came = trust.arrivals(repo, theirs, ours)
            queued_before = bool(gitreview.agent_branches_with(repo, theirs, local_only=True))
            joined_tip, held = _guard(came, theirs, target, branch, as_proposals or queued_before)
            adopted = tuple(a for a in came if a.kind == OTHER and a not in held)
            done = _Joined("up-to-date")
            if joined_tip is not None and not gitrepo.is_ancestor(repo, joined_tip, ours):
                done = _join_to(repo, target, branch, ours, joined_tip, curator, say)
            if not held:
                return _Joined(done.kind, done.brought, done.merge, adopted)
            queued = _queue_as_proposals(repo, theirs, held)
            return _Joined(done.kind, done.brought, done.merge, adopted, held, queued)
        except Conflict as exc:
            if current_branch(repo)[1] != ours:
                continue  # the branch moved while we prepared: look again
            raise Refused(f"cannot bring {target}/{branch} into {branch}: {exc}. Nothing was "
                          "changed.", rule="sync") from exc
    raise Conflict(f"{branch} kept moving during the sync; nothing was changed: sync again")


def _join_to(repo: Path, target: str, branch: str, ours: str, theirs: str,
             curator: Identity | None, say: Progress) -> _Joined:
    if gitrepo.is_ancestor(repo, ours, theirs):
        say(f"fast-forward {branch} to {target}/{branch}", 0.62)
        brought = gitremote.commits_between(repo, ours, theirs)
        _move(repo, theirs, ours, f"sync: fast-forward {branch} to {target}/{branch}",
              curator, target, branch)
        return _Joined("fast-forward", brought)
    say(f"merge {target}/{branch} into {branch}", 0.62)
    made, brought = _merge(repo, target, branch, ours, theirs, curator)
    return _Joined("merged", brought, made)


def _guard(came: list[Arrival], theirs: str, target: str, branch: str, as_proposals: bool
           ) -> tuple[str | None, tuple[Arrival, ...]]:
    """(the tip to join, the arrivals held back as proposals). No agent commit: `theirs`,
    nothing held. Else `AgentCommits`, or with `as_proposals` the incoming first-parent
    commit just below the oldest one that is (or brings) an agent commit (None: there is
    none, nothing to join), and everything from that one on."""
    agents = [a for a in came if a.kind == AGENT]
    if not agents:
        return theirs, ()
    if not as_proposals:
        raise AgentCommits(_agent_message(agents, target, branch), tuple(agents), target, branch)
    tops = list(dict.fromkeys(a.top for a in came))  # the incoming first-parent line, newest first
    oldest = max(tops.index(a.top) for a in agents)
    held_tops = set(tops[:oldest + 1])
    below = tops[oldest + 1] if oldest + 1 < len(tops) else None
    return below, tuple(a for a in came if a.top in held_tops)


def _agent_message(agents: list[Arrival], target: str, branch: str) -> str:
    n = len(agents)
    lines = [f"{target}/{branch} holds {n} agent commit{'s' if n != 1 else ''} that no curator "
             f"decided; nothing was joined, pushed or changed:"]
    lines += [f"  {a.commit[:12]} {inert(a.agent)}: {inert(a.subject)}" for a in agents]
    lines.append(f"An agent's work reaches {branch} only through a decision. Take them in as "
                 "proposals (`factdesk sync --as-proposals`, or \"Take in as proposals\" in "
                 f"the window: they go to a local agent/<id> branch for review, {branch} stays "
                 f"as it is), or remove them from {target}'s {branch}. Agents push only their "
                 f"own agent/* branches: protect {branch} on the remote.")
    return "\n".join(lines)


def _queue_as_proposals(repo: Path, tip: str, held: tuple[Arrival, ...]) -> str:
    """Point a local `agent/<id>` branch at `tip` so that the held commits are proposals in
    the queue (REVQ reads every local `agent/*` branch); `<id>` is the oldest agent commit's
    agent id. An existing branch of that name is moved forward when `tip` contains it, kept
    when it contains `tip`, else `agent/<id>-<tip, 8 hex>` is used. Returns the name."""
    oldest = [a for a in held if a.kind == AGENT][-1]
    email = oldest.agent
    aid = agent_id_from_email(email) or email.partition("@")[0].partition("+")[0]
    if not _AGENT_ID.match(aid) or ".." in aid or aid.endswith((".lock", ".")):
        aid = "incoming"
    for name in (f"agent/{aid}", f"agent/{aid}-{tip[:8]}"):
        ref = f"refs/heads/{name}"
        now = gitrepo.resolve_commit(repo, ref)
        if now is not None and gitrepo.is_ancestor(repo, tip, now):
            return name
        if now is None or gitrepo.is_ancestor(repo, now, tip):
            gitreview.set_branch(repo, ref, tip, now, "factdesk sync: agent commits as proposals")
            return name
    raise Refused(f"cannot queue {tip[:12]} as proposals: agent/{aid} and agent/{aid}-{tip[:8]} "
                  "hold other commits", rule="sync")


def _nothing_to_start(repo: Path, target: str, branch: str) -> str:
    theirs = sorted(r.removeprefix(f"refs/remotes/{target}/") for r in gitremote.tracking_refs(
        repo, target) if not r.removeprefix(f"refs/remotes/{target}/").startswith("agent/"))
    listed = ", ".join(theirs[:8]) + (", …" if len(theirs) > 8 else "")
    return (f"{branch} has no commits yet and {target} has no branch named {branch}"
            + (f" (it has: {listed}); check out one of those (`git checkout {theirs[0]}`)"
               if theirs else " (it has no branches yet)")
            + " or make a first commit, then sync again. Nothing was changed.")


def _commit_count(repo: Path, tip: str) -> int:
    return gitreview.commit_count(repo, tip)


def _move(repo: Path, tip: str, ours: str, subject: str, curator: Identity | None, target: str,
          branch: str) -> None:
    who = curator or _curator(repo)
    try:
        move_branch(repo, tip, expected_head=ours, action_id=secrets.token_hex(8),
                    subject=subject, curator=who)
    except Refused as exc:
        raise Refused(f"cannot bring {target}/{branch} into {branch}: {exc}. Nothing was changed.",
                      rule=exc.rule or "sync") from exc


def _merge(repo: Path, target: str, branch: str, ours: str, theirs: str,
           curator: Identity | None) -> tuple[str, int]:
    base = gitremote.merge_base(repo, ours, theirs)
    if base is None:
        raise Refused(f"{branch} and {target}/{branch} share no history; factdesk joins only "
                      "lines of the same corpus", rule="sync")
    merged = gitremote.merge_trees(repo, ours, theirs)
    both = _changed_on_both_sides(repo, ours, theirs, merged)
    if both:
        conflicts = tuple(
            FactConflict(p, *(gitremote.last_change(repo, base, ours, p) or (None, "")),
                         *(gitremote.last_change(repo, base, theirs, p) or (None, "")))
            for p in both)
        raise SyncConflict(_conflict_message(target, branch, ours, theirs, conflicts),
                           conflicts, ours, theirs, base)
    who = curator or _curator(repo)
    brought = gitremote.commits_between(repo, ours, theirs)
    action_id = secrets.token_hex(8)
    message = (f"sync: merge {target}/{branch} into {branch} ({brought} commit"
               f"{'s' if brought != 1 else ''})\n\n"
               f"Factdesk-Action: {SYNC_ACTION}\nFactdesk-Action-Id: {action_id}\n")
    sha = merge_commit(repo, ours, theirs, merged.tree, message,
                       author=with_op(who, SYNC_ACTION), committer=who)
    try:
        move_branch(repo, sha, expected_head=ours, action_id=action_id,
                    subject=message.splitlines()[0], curator=who)
    except Refused as exc:
        raise Refused(f"cannot merge {target}/{branch} into {branch}: {exc}. Nothing was changed.",
                      rule=exc.rule or "sync") from exc
    return sha, brought


def _changed_on_both_sides(repo: Path, ours: str, theirs: str,
                           merged: gitremote.TreeMerge) -> list[str]:
    """The paths both sides changed: every path git could not merge, and each fact whose
    merged version is neither side's (git combined two changes to it). A fact changed the
    same way on both sides, or changed by one side only, is no conflict."""
    differ_ours = gitremote.tree_changes(repo, ours, merged.tree)
    differ_theirs = gitremote.tree_changes(repo, theirs, merged.tree)
    combined = [p for p in differ_ours if p in differ_theirs and p.startswith(FACT_ROOT)]
    found = list(dict.fromkeys([*merged.conflicted, *combined]))
    return sorted(found, key=lambda p: (not p.startswith(FACT_ROOT), p))


def _conflict_message(target: str, branch: str, ours: str, theirs: str,
                      conflicts: tuple[FactConflict, ...]) -> str:
    lines = [f"{target}/{branch} and your {branch} both changed "
             f"{'this fact' if len(conflicts) == 1 else f'these {len(conflicts)} facts'} "
             f"since they last met; nothing was merged and nothing changed "
             f"(yours {ours[:12]}, theirs {theirs[:12]}):"]
    for c in conflicts:
        lines.append(f"  {c.path}")
        lines.append(f"      yours:  {c.ours[:12] if c.ours else '-'} {c.ours_said}")
        lines.append(f"      theirs: {c.theirs[:12] if c.theirs else '-'} {c.theirs_said}")
    lines.append("Decide which version stands (undo yours, or edit the fact to agree with "
                 "theirs and commit), then sync again.")
    return "\n".join(lines)


def _curator(repo: Path) -> Identity:
    from factdesk.curation.identity import curator_identity, default_identity_file

    return curator_identity(repo, default_identity_file())
