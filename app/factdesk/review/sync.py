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

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from factdesk.corpus import githistory, gitremote, gitrepo
from factdesk.corpus.gitrepo import ZERO, GitError
from factdesk.curation.changes import with_op
from factdesk.curation.gitwrite import (
    Conflict,
    CurationError,
    Identity,
    Refused,
    current_branch,
    merge_commit,
    move_branch,
)
from factdesk.curation.trust import SYNC_ACTION

#: `progress(what, fraction)`: in words, and how far along the whole sync is (0.0 – 1.0)
Progress = Callable[[str, float], None]
#: the folder of the facts: a path here changed on both sides is a conflict, never combined
FACT_ROOT = "kb/"
ROUNDS = 3
#: what a join did, least to most
_KINDS = ("up-to-date", "ahead", "fast-forward", "merged")


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

    @property
    def agent_updates(self) -> list[gitremote.RefUpdate]:
        """The remote-tracking `agent/*` branches this fetch created or moved."""
        return [u for f in self.fetched for u in f.updated
                if u.ref.split("/", 3)[-1].startswith("agent/")]


def sync(repo: Path, *, remote: str | None = None, progress: Progress | None = None,
         curator: Identity | None = None) -> SyncResult:
    """Fetch, join and push (module doc). Raises `Refused` (detached HEAD, a merge or rebase
    in progress, no such remote, the user's uncommitted work on a file the join changes),
    `SyncConflict`, `GitError` (git's words: an unreachable remote, a refused URL)."""
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
    pushed: gitremote.PushResult | None = None
    for round_ in range(ROUNDS):
        if round_:
            say(f"fetch {target} again", 0.6)
            fetched += gitremote.fetch(repo, target)
        kind, brought, made = _join(repo, target, branch, curator, say)
        incoming += brought
        merge = made or merge
        joined = max(joined, kind, key=_KINDS.index)
        say(f"push {branch} to {target}", 0.7)
        pushed = gitremote.push(repo, target, branch, progress=_scaled(say, 0.7, 0.3))
        if not pushed.rejected:
            break
    _, after = current_branch(repo)
    if pushed is not None and pushed.rejected:
        warnings.append(f"{target} kept moving: {branch} was not pushed ({pushed.message}); "
                        "sync again")
    say("sync: done", 1.0)
    return SyncResult(branch, target, tuple(fetched), joined, start, after, incoming, merge,
                      pushed, tuple(warnings))


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


def _join(repo: Path, target: str, branch: str, curator: Identity | None, say: Progress
          ) -> tuple[str, int, str | None]:
    """Bring the remote's branch into ours: (what was done, commits brought in, the merge
    commit made). Retried when the branch moves under us (another factdesk action)."""
    for _ in range(ROUNDS):
        _, ours = current_branch(repo)
        theirs = gitremote.tracking_tip(repo, target, branch)
        if theirs is None or theirs == ours:
            return "up-to-date", 0, None
        if ours != ZERO and gitrepo.is_ancestor(repo, theirs, ours):
            return "ahead", 0, None
        try:
            if ours == ZERO or gitrepo.is_ancestor(repo, ours, theirs):
                say(f"fast-forward {branch} to {target}/{branch}", 0.62)
                brought = gitremote.commits_between(repo, ours, theirs) if ours != ZERO else 0
                _move(repo, theirs, ours, f"sync: fast-forward {branch} to {target}/{branch}",
                      curator, target, branch)
                return "fast-forward", brought, None
            say(f"merge {target}/{branch} into {branch}", 0.62)
            made, brought = _merge(repo, target, branch, ours, theirs, curator)
            return "merged", brought, made
        except Conflict as exc:
            if current_branch(repo)[1] != ours:
                continue  # the branch moved while we prepared: look again
            raise Refused(f"cannot bring {target}/{branch} into {branch}: {exc}. Nothing was "
                          "changed.", rule="sync") from exc
    raise Conflict(f"{branch} kept moving during the sync; nothing was changed: sync again")


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
