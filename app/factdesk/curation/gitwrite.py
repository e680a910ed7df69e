"""The write path: one curation action becomes one commit (RELIABILITY.md §3.5, I3, I4).

    1. take the per-corpus writer lock;
    2. HEAD must be a branch (no detached HEAD, merge, rebase or cherry-pick in
       progress); R0 = its tip; if the caller saw another tip, the commits since must not
       touch the action's paths;
    3. every path must still hold the bytes the action was computed from, and those must
       be what HEAD has (another writer's uncommitted edit is never swept into our
       commit), and git's index must hold what HEAD has for it too (another writer's
       staged deletion or version is never thrown away);
    4. the new blobs go into the object store, then the intent journal is written (and
       held with a lock while this process lives, so no other process takes it for an
       interrupted one);
    5. each file is replaced atomically (fsio) after re-checking its bytes;
    6. the commit is built from trees (`mktree`, `commit-tree -p R0`), never the shared
       `.git/index`, so an agent's staged work stays staged and is never committed;
    7. `update-ref B NEW R0` publishes it compare-and-swap, provided HEAD still points at
       B (a branch switch in the same work tree aborts: E10); if an agent moved the
       branch and did not touch our paths the commit is rebuilt on the new tip (5 tries),
       else the action is refused;
    8. the real index is synced for our paths only, under git's own `index.lock` and only
       where an entry still holds what it held before (skipped, not failed, when another
       git process holds the lock);
    9. the journal is removed.

When the action fails before the ref moved, each file is put back as the checked-out tip
has it, never only as the journal remembers it: a path whose tip already holds our bytes
(an agent's `git commit -a` took them in) is left alone, and the failure says so. Once
the ref moved the action is committed, whatever fails after (the error becomes a warning
and recovery finishes the rest). A crash at any step leaves old or new bytes; `recover()`
(run at start, under the writer lock) finishes an action whose files were all replaced,
rolls back one whose files were partly replaced, never completes one whose failure was
reported, and says what it did.

The parts live in their own rooms, re-exported here: the errors and types in `writetypes`,
git's tree, commit and index plumbing in `gittree`, the journal and recovery in `recovery`.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from factdesk import faults, fsio
from factdesk.corpus import gitrepo
from factdesk.corpus.gitpaths import git_refuses
from factdesk.corpus.gitrepo import ZERO, GitError
from factdesk.curation.gittree import (
    UNMERGED,
    _build_commit,
    _build_tree,
    _git,
    _store_blobs,
    _took_in,
    head_ref,
    index_entries,
    ref_tip,
    sync_index,
    touched_between,
    tree_entries,
    tree_with_index,
)
from factdesk.curation.recovery import (
    _HELD,
    FAILED,
    Recovered,
    _Journal,
    _journal_dir,
    _journal_expect,
    _owed_syncs,
    _recover_locked,
    pending_actions,
    state_dir,
)
from factdesk.curation.writetypes import (
    Committed,
    Conflict,
    CurationError,
    Failed,
    FileChange,
    Identity,
    Refused,
    _why,
    refuse_links,
    with_warning,
)
from factdesk.index.locking import file_lock

if TYPE_CHECKING:
    from factdesk.index.indexer import Indexer

#: what `factdesk.curation.gitwrite` offers: its own protocol, and the names of the rooms it
#: was split into (writetypes, gittree, recovery), kept importable from here
__all__ = [
    "FAILED",
    "MAX_CAS_TRIES",
    "UNMERGED",
    "Committed",
    "Conflict",
    "CurationError",
    "Failed",
    "FileChange",
    "Identity",
    "Recovered",
    "Refused",
    "_build_commit",
    "_build_tree",
    "commit_files",
    "current_branch",
    "finish_sync",
    "gitrepo_path_ok",
    "head_ref",
    "index_entries",
    "merge_commit",
    "move_branch",
    "pending_actions",
    "recover",
    "recover_before_reads",
    "refuse_links",
    "state_dir",
    "sync_index",
    "touched_between",
    "tree_entries",
    "tree_with_index",
    "with_warning",
    "writer_lock",
]

MAX_CAS_TRIES = 5


@contextmanager
def writer_lock(repo: Path, wait: float = 10) -> Iterator[None]:
    """One writer per corpus (across processes); a second waits up to `wait` s (10), then
    refuses."""
    with file_lock(state_dir(repo) / "write.lock", wait, lambda: Conflict(
            "another factdesk action is writing to this corpus; "
            "try again when it has finished")):
        yield


def current_branch(repo: Path) -> tuple[str, str]:
    """(refs/heads/B, its tip or ZERO when unborn), or Refused with the state that forbids writing."""
    gd = gitrepo.git_dir(repo)
    for marker, what in (("MERGE_HEAD", "a merge"), ("rebase-merge", "a rebase"),
                         ("rebase-apply", "a rebase"), ("CHERRY_PICK_HEAD", "a cherry-pick"),
                         ("REVERT_HEAD", "a revert")):
        if (gd / marker).exists():
            raise Refused(f"{what} is in progress in {repo}; finish or abort it before curating")
    proc = _git(repo, "symbolic-ref", "-q", "HEAD", check=False)
    ref = proc.stdout.decode().strip()
    if proc.returncode != 0 or not ref.startswith("refs/heads/"):
        sha = gitrepo.head_sha(repo) or "?"
        raise Refused(f"HEAD is detached at {sha[:12]}; check out a branch before curating")
    tip = _git(repo, "rev-parse", "-q", "--verify", ref, check=False).stdout.decode().strip()
    return ref, tip or ZERO


def commit_files(repo: Path, changes: Sequence[FileChange], message: str, *,
                 author: Identity, committer: Identity, action_id: str,
                 expected_head: str | None = None, allow_dirty: bool = False,
                 defer_sync: bool = False, allow_empty: bool = False,
                 parents: Sequence[str] = ()) -> Committed:
    """Write `changes` and publish them as one commit on the current branch (see module doc).
    `defer_sync`: leave step 8 (the real index) and 9 to `finish_sync`, off the user's
    critical path; the journal stays (held by this process) until then, so a crash in
    between is recovered and another process never takes it for an interrupted one.
    `allow_empty`: a commit that changes no file is made too (a rejection of a proposal
    records a decision, not a change). `parents`: the commit's parents after the branch's
    tip (a review merge: its second parent is the agent commit reviewed up to); the same
    lock, journal (which records them), compare-and-swap and recovery hold."""
    if not changes and not allow_empty:
        raise Refused("nothing to change")
    for extra in parents:
        if not _exists(repo, extra):
            raise Refused(f"{extra}: no such commit to record as a parent")
    paths = [c.path for c in changes]
    if len(set(paths)) != len(paths):
        raise Refused("an action may change each file once")
    for c in changes:  # (removing a bad path is always allowed: it takes it out)
        if c.new is not None and (why := git_refuses(c.path, windows=False)):
            raise Refused(f"{c.path!r}: not a path factdesk writes: git refuses it ({why})",
                          rule="git_path")
    with writer_lock(repo):
        gd = gitrepo.git_dir(repo)
        ref, r0 = current_branch(repo)
        if expected_head and expected_head != r0:
            moved = touched_between(repo, expected_head, r0, paths) if _exists(repo, expected_head) \
                else paths
            if moved:
                raise Conflict(_moved_message(repo, expected_head, r0, moved))
        for p in paths:
            refuse_links(repo, p)
        staged = _check_preconditions(repo, r0, changes, allow_dirty)
        faults.point("action.before_write")
        try:
            written = [c for c in changes if c.new is not None]
            blobs = dict(zip([c.path for c in written],
                             _store_blobs(repo, [c.new for c in written if c.new is not None]),
                             strict=True))
        except GitError as exc:
            raise Failed(f"could not store the new version in git ({exc}); nothing was changed") \
                from exc
        faults.point("commit.blob_written")
        try:
            journal = _Journal.write(repo, action_id, ref, r0, message, changes, blobs, author,
                                     committer, staged, store_old=allow_dirty, parents=parents)
        except (OSError, GitError) as exc:
            raise Failed(f"could not write the action's journal ({_why(exc)}); nothing was "
                         "changed") from exc
        faults.point("action.journal_written")
        try:
            _replace_files(repo, changes)
            done = _publish(repo, gd, ref, r0, changes, blobs, message, author, committer,
                            parents)
        except BaseException as exc:
            said = _abandon(repo, journal, changes, r0, blobs, exc)
            if said is not None:
                raise said from exc
            raise
        # the ref moved: the action is committed, whatever fails from here on
        faults.point("commit.published")  # (HEAD read once more just before)
        return _after_publish(repo, journal, done, changes, blobs, staged, defer_sync)


def _after_publish(repo: Path, journal: _Journal, done: Committed, changes: Sequence[FileChange],
                   blobs: Mapping[str, str], staged: Mapping[str, str | None],
                   defer_sync: bool) -> Committed:
    paths = [c.path for c in changes]
    expect = _expect(changes, staged)
    # nothing to sync (a reject, a merge-only decision: no file): nothing is deferred, and
    # the journal goes now — held for a sync that never comes, the next start took it for
    # an interrupted action (issue 24 #5)
    defer_sync = defer_sync and bool(paths)
    try:
        if done.switched_to is None:
            target = {c.path: blobs.get(c.path) for c in changes}
            synced = not paths or (not defer_sync and sync_index(repo, paths, target, retry=True,
                                                                 expect=expect))
            if synced:
                faults.point("commit.index_synced")
            # E10, late: a `git checkout -b` that read HEAD before the ref moved and writes
            # HEAD after the check in `_publish` made its branch at the old tip, under our
            # new bytes: asked again now that its index write is over
            late = _settled_head(gitrepo.git_dir(repo))
            if late == done.branch:
                if defer_sync:
                    journal.hold()
                    return Committed(done.sha, done.parent, done.branch, done.rebased,
                                     pending_sync=tuple(paths), journal=journal.path)
                if synced:
                    journal.remove()
                else:
                    journal.release()  # index.lock held by another git process: the next start syncs
                return done
            done = Committed(done.sha, done.parent, done.branch, done.rebased,
                             switched_to=late or "a detached HEAD")
            if synced:  # the index entries we just wrote are ours to put back too
                expect = {p: {*expect[p], target[p]} for p in paths}
        return _follow_switch(repo, journal, done, changes, blobs, expect)
    except (OSError, GitError) as exc:
        journal.release()
        return with_warning(done, f"committed as {done.sha[:12]}, but git's index could not be "
                                  f"brought up to date for its files ({_why(exc)}); the next "
                                  "factdesk command finishes it")


def _follow_switch(repo: Path, journal: _Journal, done: Committed, changes: Sequence[FileChange],
                   blobs: Mapping[str, str], expect: Mapping[str, set[str | None]]) -> Committed:
    """The work tree follows another branch now: each file, and git's index entry where it
    is still ours, go as that branch has them, and the commit stands with a warning."""
    outcome = _put_back(repo, changes, done.parent, blobs)
    sync_index(repo, [c.path for c in changes], retry=True, expect=expect)
    journal.remove()
    put = f" ({', '.join(outcome.restored)} put back)" if outcome.restored else ""
    return with_warning(done, f"committed on {done.branch} as {done.sha[:12]}, but the checkout "
                        f"switched to {done.switched_to} during the action; the work tree "
                        f"follows {done.switched_to}, so its files were left as that branch "
                        f"has them{put}{outcome.note()}")


def _wait_for_locks(gd: Path, ref: str | None, seconds: float = 3.0) -> bool:
    """Wait until no other git process holds git's index, HEAD or `ref` (a full ref name)
    — up to `seconds`, so a lock a crashed git left behind delays, never blocks. True when
    they are free."""
    locks = [gd / "index.lock", gd / "HEAD.lock"] + ([gd / f"{ref}.lock"] if ref else [])
    deadline = time.monotonic() + seconds
    while any(lock.exists() for lock in locks):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _settled_head(gd: Path) -> str | None:
    """HEAD's symbolic target once no other git process holds the index or HEAD (a checkout
    writes the index, then its branch and HEAD): waited for up to half a second."""
    for _ in range(20):
        if not (gd / "index.lock").exists() and not (gd / "HEAD.lock").exists():
            break
        time.sleep(0.025)
    return head_ref(gd)


@dataclass
class _PutBack:
    restored: list[str] = field(default_factory=list)
    #: the checked-out tip already holds our bytes (an agent's commit took them in)
    taken: list[str] = field(default_factory=list)
    #: the tip holds a third version: our bytes were left, and the user is told
    diverged: list[str] = field(default_factory=list)
    #: could not be put back (the system failed the write): path → why
    failed: dict[str, str] = field(default_factory=dict)
    head: str = ZERO

    def note(self) -> str:
        out = ""
        if self.diverged:
            out += (f"; {', '.join(self.diverged)} still hold{'s' if len(self.diverged) == 1 else ''} "
                    "factdesk's uncommitted version, and the checked-out commit has another: "
                    "look at them before committing")
        if self.failed:
            out += "; " + "; ".join(
                f"{p} could not be put back ({why}): it holds factdesk's uncommitted version, "
                "and the next factdesk command puts the old one back (it never completes the action)"
                for p, why in self.failed.items())
        return out


def _put_back(repo: Path, changes: Sequence[FileChange], base: str,
              blobs: Mapping[str, str]) -> _PutBack:
    """After a failed action: each file that holds our new bytes goes back to its old bytes
    where the checked-out commit (HEAD now, which may be an agent's commit or another
    branch) still has what the action started from; where HEAD holds our bytes it is left
    (restoring would make the disk disagree with HEAD, and the agent's next `commit -a`
    would revert the change under its name)."""
    out = _PutBack()
    paths = [c.path for c in changes]
    # a git process in flight (an agent's `commit -a` holds index.lock from reading the
    # work tree until its branch moved) may be taking our bytes in: HEAD is read once it
    # is done, else the file went back under a commit that holds the new bytes
    gd = gitrepo.git_dir(repo)
    _wait_for_locks(gd, head_ref(gd))
    head = _git(repo, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).stdout.decode().strip()
    out.head = head or ZERO
    at_head = {p: blob for p, (_mode, blob) in tree_entries(repo, out.head, paths).items()}
    at_base = {p: blob for p, (_mode, blob) in tree_entries(repo, base, paths).items()}
    for c in changes:
        target = repo / c.path
        try:
            now = fsio.read_or_none(target)
        except OSError as exc:
            out.failed[c.path] = _why(exc)
            continue
        if now != c.new or now == c.old:
            continue  # not ours (already old, or another writer's since)
        tip = at_head.get(c.path)
        old = gitrepo.blob_id(c.old) if c.old is not None else None
        if tip == blobs.get(c.path):  # (None, None: HEAD has the deletion)
            out.taken.append(c.path)
            continue
        if tip not in (old, at_base.get(c.path)):
            out.diverged.append(c.path)
            continue
        try:
            if c.old is None:
                fsio.remove(target)
            else:
                fsio.atomic_write(target, c.old)
            out.restored.append(c.path)
        except OSError as exc:
            out.failed[c.path] = _why(exc)
    return out


def _abandon(repo: Path, journal: _Journal, changes: Sequence[FileChange], r0: str,
             blobs: Mapping[str, str], exc: BaseException) -> CurationError | None:
    """The action failed before its ref moved: put the files back (compared with the tip),
    then drop the journal, or mark it failed when a file could not be put back, so that
    recovery finishes the rollback and never the action. Returns the error to raise in
    place of `exc` (None: raise `exc` itself): a refusal keeps its kind with what was left
    said; a system error becomes `Failed`, in words."""
    try:
        out = _put_back(repo, changes, r0, blobs)
    except (OSError, GitError) as inner:
        out = _PutBack(failed={c.path: _why(inner) for c in changes})
    try:
        if out.failed:
            journal.mark_failed()
        else:
            journal.remove()
    except OSError:
        pass  # said below: the files' state is what matters, and recovery reads them
    if not isinstance(exc, Exception):
        return None  # KeyboardInterrupt and the like: cleaned up, raised as they are
    said = out.note()
    if out.taken:
        took = (f"{_took_in(repo, r0, out.head, out.taken)} took in this change before factdesk "
                f"could commit it: HEAD holds it (without factdesk's record of the decision), so "
                f"{', '.join(out.taken)} {'was' if len(out.taken) == 1 else 'were'} left as HEAD "
                f"has {'it' if len(out.taken) == 1 else 'them'} and factdesk made no commit")
        if isinstance(exc, Conflict):
            return Conflict(took + said)
        said = f"; {took}{said}"
    if isinstance(exc, Refused):
        return Refused(f"{exc}{said}", rule=exc.rule) if said else None
    if isinstance(exc, CurationError):
        return type(exc)(f"{exc}{said}") if said else None
    if isinstance(exc, (OSError, GitError)):
        restored = "; the files were put back" if out.restored and not out.failed else ""
        return Failed(f"the action failed: {_why(exc)}. Nothing was committed{restored}{said}")
    return None


def _expect(changes: Sequence[FileChange], staged: Mapping[str, str | None]) -> dict[str, set[str | None]]:
    """What git's index may hold for each path for our sync to write it: what it held when
    the action was checked. Anything else was staged by another writer since: kept."""
    return {c.path: {staged.get(c.path)} for c in changes}


def finish_sync(repo: Path, committed: Committed) -> None:
    """Step 8 and 9 of a deferred commit: the real index gets HEAD's blobs for the paths
    (read now, under the writer lock, so a later action's version is never overwritten
    by an earlier one's) where it still holds what it held before, then the journal goes."""
    held = _HELD.pop(committed.journal, None) if committed.journal is not None else None
    if not committed.pending_sync:  # (nothing to sync: a journal held for it goes)
        if committed.journal is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(committed.journal)
        if held is not None:
            os.close(held)
        return
    try:
        with writer_lock(repo):
            paths = list(committed.pending_sync)
            heads = tree_entries(repo, "HEAD", paths)
            expect = _journal_expect(committed.journal, paths)
            if not sync_index(repo, paths, {p: heads[p][1] if p in heads else None for p in paths},
                              retry=True, expect=expect):
                return  # index.lock held by another git process: the journal stays for recovery
            faults.point("commit.index_synced")
            if committed.journal is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(committed.journal)
    finally:
        if held is not None:
            os.close(held)


def gitrepo_path_ok(path: str) -> bool:
    """A path every git on every platform checks out (`corpus.gitpaths`: never `.git` in any
    spelling NTFS or HFS+ reads as it, never one Windows refuses)."""
    return git_refuses(path) is None


def _exists(repo: Path, sha: str) -> bool:
    return _git(repo, "cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0


def _moved_message(repo: Path, old: str, new: str, moved: Sequence[str]) -> str:
    log = _git(repo, "log", "--format=%h %an: %s", f"{old}..{new}", "--", *moved,
               check=False).stdout.decode("utf-8", "replace").strip()
    return (f"the branch moved since you looked ({old[:8]} → {new[:8]}) and these files "
            f"changed: {', '.join(moved)}\n{log}\nReload and review before trying again.")


def _check_preconditions(repo: Path, r0: str, changes: Sequence[FileChange],
                         allow_dirty: bool) -> dict[str, str | None]:
    """Refuse unless each file holds what the action was computed from, and that is what
    HEAD has; and git's index holds what HEAD has for each path (an agent's staged
    deletion or version of the file is its work: never taken in or thrown away). Returns
    git's index entries for the paths, as they are now."""
    paths = [c.path for c in changes]
    committed_blobs = tree_entries(repo, r0, paths)
    for c in changes:
        disk = fsio.read_or_none(repo / c.path)
        if disk != c.old:
            if c.old is None:
                raise Conflict(f"{c.path} already exists")
            if disk is None:
                raise Conflict(f"{c.path} was deleted since you looked")
            raise Conflict(f"{c.path} changed on disk since you looked; reload and review the change")
        committed = committed_blobs[c.path][1] if c.path in committed_blobs else None
        on_disk = gitrepo.blob_id(disk) if disk is not None else None
        if committed != on_disk and not allow_dirty:
            raise Refused(f"{c.path} has uncommitted changes by another writer; commit or "
                          "discard them first (factdesk never commits work it did not make)")
    staged = index_entries(repo, paths)
    owed: dict[str, set[str | None]] | None = None
    for p in paths:
        head = committed_blobs[p][1] if p in committed_blobs else None
        now = staged.get(p)
        if now == head:
            continue
        if owed is None:
            owed = _owed_syncs(repo, head_blobs={q: committed_blobs[q][1] if q in committed_blobs
                                                 else None for q in paths})
        if now in owed.get(p, set()):
            continue  # our own earlier action's index sync, not done yet
        what = ("a deletion of it" if now is None else "a conflict" if now == UNMERGED
                else "another version of it")
        raise Refused(f"{p}: git's index holds {what}, staged by another writer; commit or unstage "
                      "it first (factdesk never commits or throws away work it did not make)",
                      rule="staged")
    return staged


def _replace_files(repo: Path, changes: Sequence[FileChange]) -> None:
    for i, c in enumerate(changes):
        if i:
            faults.point("action.between_files")
        target = repo / c.path
        if fsio.read_or_none(target) != c.old:
            raise Conflict(f"{c.path} changed on disk while the action was being written")
        if c.new is None:
            fsio.remove(target)
        else:
            fsio.atomic_write(target, c.new)
    faults.point("action.file_replaced")


def _publish(repo: Path, gd: Path, ref: str, r0: str, changes: Sequence[FileChange],
             blobs: Mapping[str, str], message: str, author: Identity, committer: Identity,
             parents: Sequence[str] = ()) -> Committed:
    paths = [c.path for c in changes]
    base = r0
    for attempt in range(MAX_CAS_TRIES):
        sha = _build_commit(repo, base, {c.path: blobs.get(c.path) for c in changes}, message,
                            author, committer, parents)
        faults.point("commit.commit_written")
        faults.point("commit.before_cas")
        sym = head_ref(gd)
        if sym != ref:  # E10: the work tree now follows another branch; never commit under it
            raise Conflict(f"the checkout switched from {ref} to {sym or 'a detached HEAD'} "
                           "during the action; nothing was committed")
        proc = _git(repo, "update-ref", "-m", f"factdesk: {message.splitlines()[0]}", ref, sha, base,
                    check=False)
        if proc.returncode == 0:
            faults.point("commit.ref_updated")
            sym = head_ref(gd)
            return Committed(sha, base, ref, rebased=attempt > 0,
                             switched_to=None if sym == ref else (sym or "a detached HEAD"))
        tip = _git(repo, "rev-parse", "-q", "--verify", ref, check=False).stdout.decode().strip()
        sym = head_ref(gd)
        if sym != ref:
            raise Conflict(f"the checkout switched from {ref} to {sym or 'a detached HEAD'} "
                           "during the action; nothing was committed")
        if not tip:
            raise Conflict(_lock_message(repo, ref, proc))
        if tip == base:
            # another git process holds the ref's lock (an agent's commit in flight): wait
            # for it, then try again from wherever it left the branch
            if attempt + 1 < MAX_CAS_TRIES and _wait_for_locks(gd, ref):
                tip = ref_tip(repo, ref) or base
            if tip == base:
                raise Conflict(_lock_message(repo, ref, proc))
        moved = touched_between(repo, base, tip, paths)
        if moved:
            raise Conflict(_moved_message(repo, base, tip, moved))
        base = tip
    raise Conflict(f"{ref} kept moving; gave up after {MAX_CAS_TRIES} tries. Try again.")


def _lock_message(repo: Path, ref: str, proc: subprocess.CompletedProcess[bytes]) -> str:
    lock = gitrepo.git_dir(repo) / (ref + ".lock")
    err = proc.stderr.decode("utf-8", "replace").strip()
    if lock.exists():
        return (f"{lock} exists: another git process is updating {ref}, or one crashed. "
                "If no git process is running, remove that file and try again.")
    return f"could not update {ref}: {err}"


def recover(repo: Path, *, wait: float = 10) -> list[Recovered]:
    """Finish or roll back actions a crash left half-done, and say what was done. Runs under
    the writer lock (an action in progress is never taken for an interrupted one), skips a
    journal whose process is alive (a deferred index sync), and removes the temporary files
    a killed write left. `wait`: how long to wait for another action's lock (a reader
    passes 0: it never waits, the index shows the pending paths as HEAD has them)."""
    directory = _journal_dir(repo)
    if not directory.is_dir() or not any(directory.iterdir()):
        return []
    try:
        with writer_lock(repo, wait):
            return _recover_locked(repo, directory)
    except Conflict:
        return []  # another factdesk action holds the lock past the wait: next time


def recover_before_reads(indexer: Indexer, report: Callable[[Recovered], None]) -> None:
    """Every `indexer.read` first finishes or rolls back an action a crash left half-done,
    when the writer lock is free at that moment (it never waits: a reader is never held up
    by an action, and never waits on itself inside one); otherwise the index shows the
    pending action's files as HEAD has them and `indexer.pending` says so (issue 22 #3).
    `report` hears what each recovery did."""
    def settle() -> None:
        for done in recover(indexer.repo, wait=0):
            report(done)
    indexer.before_read = settle


# -- sync (review/sync.py): the branch moves to a commit made elsewhere ------------------------


def merge_commit(repo: Path, ours: str, theirs: str, tree: str, message: str, *,
                 author: Identity, committer: Identity) -> str:
    """A true merge commit object (first parent `ours`, second `theirs`, the given tree),
    written to the object store only: `move_branch` publishes it."""
    ident = {"GIT_AUTHOR_NAME": author.name, "GIT_AUTHOR_EMAIL": author.email,
             "GIT_COMMITTER_NAME": committer.name, "GIT_COMMITTER_EMAIL": committer.email}
    return _git(repo, "commit-tree", tree, "-p", ours, "-p", theirs, "-F", "-",
                input=message.encode("utf-8"), env=ident).stdout.decode().strip()


def move_branch(repo: Path, new_tip: str, *, expected_head: str, action_id: str,
                subject: str, curator: Identity) -> Committed:
    """Move the checked-out branch from `expected_head` to `new_tip`, a commit that has it
    as an ancestor (a fast-forward to another curator's commits, or a merge commit built by
    `merge_commit`), under the write protocol: the writer lock; the branch must still be at
    `expected_head` (else `Conflict`: nothing changed); each file that differs between the
    two commits must hold what `expected_head` has, on disk and in git's index (else
    `Refused`: the user's uncommitted work is never touched or swept in), and is replaced
    atomically; the journal records the move (`moves_to`), so a crash is rolled back or,
    when the ref moved, finished — recovery never builds a commit of its own for it; the
    ref moves compare-and-swap; git's index follows for those paths only. Files outside
    those paths, staged or not, are left exactly as they are."""
    with writer_lock(repo):
        gd = gitrepo.git_dir(repo)
        ref, r0 = current_branch(repo)
        if r0 != expected_head:
            raise Conflict(f"{ref} moved while the sync was prepared ({expected_head[:8]} → "
                           f"{r0[:8]}); nothing was changed: sync again")
        if r0 != ZERO and not gitrepo.is_ancestor(repo, r0, new_tip):
            raise Refused(f"{new_tip[:12]} does not contain {ref}'s tip {r0[:12]}; factdesk never "
                          "rewrites a branch", rule="sync")
        changes, blobs = _move_changes(repo, r0, new_tip)
        for c in changes:
            if not gitrepo_path_ok(c.path):
                raise Refused(f"{c.path}: not a path factdesk writes; bring these commits in "
                              "with git", rule="sync")
            refuse_links(repo, c.path)
        staged = _check_preconditions(repo, r0, changes, False) if changes else {}
        try:
            journal = _Journal.write(repo, action_id, ref, r0, subject, changes, blobs, curator,
                                     curator, staged, moves_to=new_tip)
        except (OSError, GitError) as exc:
            raise Failed(f"could not write the sync's journal ({_why(exc)}); nothing was "
                         "changed") from exc
        try:
            _replace_files(repo, changes)
            _set_modes(repo, new_tip, [c.path for c in changes if c.new is not None])
            faults.point("sync.files_replaced")
            sym = head_ref(gd)
            if sym != ref:
                raise Conflict(f"the checkout switched from {ref} to {sym or 'a detached HEAD'} "
                               "during the sync; nothing was changed")
            proc = _git(repo, "update-ref", "-m", f"factdesk: {subject}", ref, new_tip, r0,
                        check=False)
            if proc.returncode != 0:
                tip = _git(repo, "rev-parse", "-q", "--verify", ref,
                           check=False).stdout.decode().strip()
                raise Conflict(_lock_message(repo, ref, proc) if tip == r0 else
                               f"{ref} moved during the sync ({r0[:8]} → {tip[:8]}); nothing was "
                               "changed: sync again")
            sym = head_ref(gd)
            done = Committed(new_tip, r0, ref, False,
                             switched_to=None if sym == ref else (sym or "a detached HEAD"))
        except BaseException as exc:
            said = _abandon(repo, journal, changes, r0, blobs, exc)
            if said is not None:
                raise said from exc
            raise
        faults.point("sync.published")
        return _after_publish(repo, journal, done, changes, blobs, staged, False)


def _move_changes(repo: Path, old: str, new: str) -> tuple[list[FileChange], dict[str, str]]:
    """The file changes between two commits, with both versions' bytes, and the new blobs;
    `Refused` for a symbolic link or submodule (factdesk writes regular files only)."""
    base = old if old != ZERO else "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # (the empty tree)
    out = _git(repo, "diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev",
               "--end-of-options", base, new, "--").stdout
    changes: list[FileChange] = []
    blobs: dict[str, str] = {}
    raw = gitrepo.raw_changes(out)
    with gitrepo.BlobReader(repo) as reader:
        for c in raw:
            old_bytes = reader.read(c.old_blob) if c.old_blob else None
            new_bytes = reader.read(c.new_blob) if c.new_blob else None
            if (c.old_blob and old_bytes is None) or (c.new_blob and new_bytes is None):
                raise Failed(f"{c.path}: a version is missing from git's object store")
            changes.append(FileChange(c.path, old_bytes, new_bytes))
            if c.new_blob:
                blobs[c.path] = c.new_blob
    for entry in out.split(b"\0"):
        if entry.startswith(b":"):
            old_mode, new_mode = entry[1:].split()[:2]
            if {old_mode, new_mode} & {b"120000", b"160000"}:
                raise Refused("the incoming commits change a symbolic link or a submodule; "
                              "factdesk writes regular files only: bring them in with git",
                              rule="sync")
    return changes, blobs


def _set_modes(repo: Path, new: str, paths: Sequence[str]) -> None:
    """The executable bit as the new commit has it (a new file is written 0644)."""
    if not paths:
        return
    modes = {p: mode for p, (mode, _) in tree_entries(repo, new, paths).items()}
    for p in paths:
        want = 0o111 if modes.get(p) == "100755" else 0
        st = os.stat(repo / p)
        if (st.st_mode & 0o111 != 0) != bool(want):
            os.chmod(repo / p, (st.st_mode | 0o755) if want else (st.st_mode & ~0o111))
