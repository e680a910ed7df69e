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
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from factdesk import faults, fsio
from factdesk.corpus import githistory, gitrepo
from factdesk.corpus.gitrepo import ZERO, GitError
from factdesk.errors import FactdeskError
from factdesk.index.locking import file_lock

MAX_CAS_TRIES = 5


class CurationError(FactdeskError):
    """An action was refused; nothing was written. The message says why."""


class Conflict(CurationError):
    """Someone else changed what the action was computed from (no last-writer-wins)."""


class Refused(CurationError):
    """The action breaks a rule or the repository is in a state that forbids writing."""

    def __init__(self, message: str, rule: str | None = None) -> None:
        super().__init__(message)
        self.rule = rule


class Failed(CurationError):
    """The system failed the action (a full disk, an I/O error, git failing): nothing was
    committed. The message says so in words and says what state the files were left in."""


def refuse_links(repo: Path, path: str) -> None:
    """Refused (rule `symlink`) when a part of `path` is a symbolic link: factdesk never
    reads or writes through one (RELIABILITY C05, C06)."""
    if link := fsio.linked_component(repo, path):
        raise Refused(f"{path}: {link} is a symbolic link; factdesk never reads or writes "
                      "through one", rule="symlink")


@dataclass(frozen=True, slots=True)
class FileChange:
    """`path` goes from `old` (None: must not exist) to `new` (None: delete)."""

    path: str
    old: bytes | None
    new: bytes | None


@dataclass(frozen=True, slots=True)
class Identity:
    name: str
    email: str


@dataclass(frozen=True, slots=True)
class Committed:
    sha: str
    parent: str
    branch: str
    rebased: bool
    #: paths whose real-index entries still wait for `finish_sync` (deferred), and the
    #: journal kept until then
    pending_sync: tuple[str, ...] = ()
    journal: Path | None = None
    #: the action is committed, but something after the ref moved needs saying (the
    #: checkout switched branch during it; finishing failed and is left to recovery)
    warnings: tuple[str, ...] = ()
    #: HEAD's symbolic ref right after the ref moved, when it was no longer `branch`
    switched_to: str | None = field(default=None, compare=False)


def _git(repo: Path, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None,
         check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Every git call of the write path, through gitrepo's one protocol (argv, safety
    options, environment)."""
    return gitrepo.git_proc(repo, *args, input=input, env=env, check=check)


def state_dir(repo: Path) -> Path:
    path = gitrepo.git_dir(repo) / "factdesk"
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def writer_lock(repo: Path) -> Iterator[None]:
    """One writer per corpus (across processes); a second waits up to 10 s, then refuses."""
    with file_lock(state_dir(repo) / "write.lock", 10, lambda: Conflict(
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


def tree_entries(repo: Path, rev: str, paths: Sequence[str]) -> dict[str, tuple[str, str]]:
    """path → (mode, blob id) in commit `rev`, for those of `paths` it has (one `ls-tree`)."""
    if rev == ZERO or not paths:
        return {}
    out = _git(repo, "ls-tree", "-z", "--end-of-options", rev, "--", *paths).stdout
    entries = {}
    for entry in out.split(b"\0"):
        if b"\t" in entry:
            meta, path = entry.split(b"\t", 1)
            mode, _kind, blob = meta.decode().split()[:3]
            entries[path.decode("utf-8", "surrogateescape")] = (mode, blob)
    return entries


def _modes(repo: Path, rev: str, paths: Sequence[str]) -> dict[str, str]:
    return {p: mode for p, (mode, _) in tree_entries(repo, rev, paths).items()}


def touched_between(repo: Path, old: str, new: str, paths: Sequence[str]) -> list[str]:
    """Which of `paths` differ between two commits."""
    if old == new:
        return []
    if old == ZERO:
        return [p for p in paths if p in tree_entries(repo, new, paths)]
    out = _git(repo, "diff", "--name-only", "-z", "--no-renames", old, new,
               "--", *paths).stdout
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def commit_files(repo: Path, changes: Sequence[FileChange], message: str, *,
                 author: Identity, committer: Identity, action_id: str,
                 expected_head: str | None = None, allow_dirty: bool = False,
                 defer_sync: bool = False) -> Committed:
    """Write `changes` and publish them as one commit on the current branch (see module doc).
    `defer_sync`: leave step 8 (the real index) and 9 to `finish_sync`, off the user's
    critical path; the journal stays (held by this process) until then, so a crash in
    between is recovered and another process never takes it for an interrupted one."""
    if not changes:
        raise Refused("nothing to change")
    paths = [c.path for c in changes]
    if len(set(paths)) != len(paths):
        raise Refused("an action may change each file once")
    for p in paths:
        if not gitrepo_path_ok(p):
            raise Refused(f"{p}: not a path factdesk writes")
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
            blobs = {c.path: _hash_object(repo, c.new) for c in changes if c.new is not None}
        except GitError as exc:
            raise Failed(f"could not store the new version in git ({exc}); nothing was changed") \
                from exc
        faults.point("commit.blob_written")
        try:
            journal = _Journal.write(repo, action_id, ref, r0, message, changes, blobs, author,
                                     committer, staged, store_old=allow_dirty)
        except (OSError, GitError) as exc:
            raise Failed(f"could not write the action's journal ({_why(exc)}); nothing was "
                         "changed") from exc
        faults.point("action.journal_written")
        try:
            _replace_files(repo, changes)
            done = _publish(repo, gd, ref, r0, changes, blobs, message, author, committer)
        except BaseException as exc:
            said = _abandon(repo, journal, changes, r0, blobs, exc)
            if said is not None:
                raise said from exc
            raise
        # the ref moved: the action is committed, whatever fails from here on
        return _after_publish(repo, journal, done, changes, blobs, staged, defer_sync)


def _after_publish(repo: Path, journal: _Journal, done: Committed, changes: Sequence[FileChange],
                   blobs: Mapping[str, str], staged: Mapping[str, str | None],
                   defer_sync: bool) -> Committed:
    paths = [c.path for c in changes]
    expect = _expect(changes, staged)
    try:
        if done.switched_to is None:
            target = {c.path: blobs.get(c.path) for c in changes}
            synced = not defer_sync and sync_index(repo, paths, target, retry=True, expect=expect)
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


def _settled_head(gd: Path) -> str | None:
    """HEAD's symbolic target once no other git process holds the index or HEAD (a checkout
    writes the index, then its branch and HEAD): waited for up to half a second."""
    for _ in range(20):
        if not (gd / "index.lock").exists() and not (gd / "HEAD.lock").exists():
            break
        time.sleep(0.025)
    return head_ref(gd)


def with_warning(done: Committed, text: str) -> Committed:
    """`done`, with one more thing to say (the commit stands)."""
    return Committed(done.sha, done.parent, done.branch, done.rebased, done.pending_sync,
                     done.journal, (*done.warnings, text), done.switched_to)


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}{f': {exc.filename}' if exc.filename else ''}"
    return str(exc)


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


def _took_in(repo: Path, base: str, head: str, paths: Sequence[str]) -> str:
    line = _git(repo, "log", "-1", "--format=%h (%an: %s)", f"{base}..{head}",
                "--", *paths,
                check=False).stdout.decode("utf-8", "replace").strip()
    return f"commit {line}" if line else "another commit"


def _expect(changes: Sequence[FileChange], staged: Mapping[str, str | None]) -> dict[str, set[str | None]]:
    """What git's index may hold for each path for our sync to write it: what it held when
    the action was checked. Anything else was staged by another writer since: kept."""
    return {c.path: {staged.get(c.path)} for c in changes}


def finish_sync(repo: Path, committed: Committed) -> None:
    """Step 8 and 9 of a deferred commit: the real index gets HEAD's blobs for the paths
    (read now, under the writer lock, so a later action's version is never overwritten
    by an earlier one's) where it still holds what it held before, then the journal goes."""
    if not committed.pending_sync:
        return
    held = _HELD.pop(committed.journal, None) if committed.journal is not None else None
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


def _journal_expect(journal: Path | None, paths: Sequence[str]) -> dict[str, set[str | None]]:
    """What the index may hold for a journal's paths to be synced: the old blob, or what it
    held when the action was checked; unknown (no journal): HEAD's parent's."""
    expect: dict[str, set[str | None]] = {p: set() for p in paths}
    try:
        record = json.loads(journal.read_bytes()) if journal is not None else {}
    except (OSError, ValueError):
        record = {}
    for e in record.get("changes") or []:
        if str(e.get("path")) in expect:
            expect[str(e["path"])].update({e.get("old"), e.get("index", e.get("old"))})
    return expect


def gitrepo_path_ok(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and ".." not in parts and ".git" not in parts \
        and "" not in parts


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


#: `index_entries`' value for a path with unmerged (conflict) stages
UNMERGED = "unmerged"


def index_entries(repo: Path, paths: Sequence[str], env: Mapping[str, str] | None = None
                  ) -> dict[str, str | None]:
    """path → blob id in git's index (or the one `env`'s GIT_INDEX_FILE names), for those of
    `paths` it has; `UNMERGED` for a path in conflict."""
    if not paths:
        return {}
    out = _git(repo, "ls-files", "-s", "-z", "--", *paths, env=env).stdout
    wanted = set(paths)
    entries: dict[str, str | None] = {}
    for entry in out.split(b"\0"):
        if b"\t" in entry:
            meta, raw = entry.split(b"\t", 1)
            path = raw.decode("utf-8", "surrogateescape")
            if path not in wanted:
                continue
            _mode, blob, stage = meta.decode().split()[:3]
            entries[path] = blob if stage == "0" and entries.get(path) != UNMERGED else UNMERGED
    return entries


def _owed_syncs(repo: Path, head_blobs: Mapping[str, str | None]) -> dict[str, set[str | None]]:
    """For each path, the index entries an earlier factdesk action left to be synced (its
    journal is still there and HEAD holds its new blob): those are ours, not staged work."""
    owed: dict[str, set[str | None]] = {}
    for journal in pending_actions(repo):
        try:
            record = json.loads(journal.read_bytes())
        except (OSError, ValueError):
            continue
        for e in record.get("changes") or []:
            p = str(e.get("path"))
            if p in head_blobs and e.get("new") == head_blobs[p]:
                owed.setdefault(p, set()).update({e.get("old"), e.get("index", e.get("old"))})
    return owed


def _hash_object(repo: Path, data: bytes) -> str:
    return _git(repo, "hash-object", "-w", "--no-filters", "--stdin", input=data).stdout.decode().strip()


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


def head_ref(gd: Path) -> str | None:
    """HEAD's symbolic target (`refs/heads/B`), read from the file git keeps it in (no git
    process on the critical path); None when detached or unreadable."""
    try:
        text = (gd / "HEAD").read_bytes()
    except OSError:
        return None
    if not text.startswith(b"ref: "):
        return None
    return text[5:].strip().decode("utf-8", "surrogateescape")


def _publish(repo: Path, gd: Path, ref: str, r0: str, changes: Sequence[FileChange],
             blobs: Mapping[str, str], message: str, author: Identity, committer: Identity
             ) -> Committed:
    paths = [c.path for c in changes]
    base = r0
    for attempt in range(MAX_CAS_TRIES):
        sha = _build_commit(repo, base, {c.path: blobs.get(c.path) for c in changes}, message,
                            author, committer)
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


def _build_commit(repo: Path, base: str, entries: Mapping[str, str | None],
                  message: str, author: Identity, committer: Identity) -> str:
    """A commit on `base` whose tree sets each path to a blob id, or removes it (None)."""
    tree = _build_tree(repo, base, entries)
    faults.point("commit.tree_written")
    ident = {"GIT_AUTHOR_NAME": author.name, "GIT_AUTHOR_EMAIL": author.email,
             "GIT_COMMITTER_NAME": committer.name, "GIT_COMMITTER_EMAIL": committer.email}
    args = ["commit-tree", tree, "-F", "-"]
    if base != ZERO:
        args[2:2] = ["-p", base]
    return _git(repo, *args, input=message.encode("utf-8"), env=ident).stdout.decode().strip()


def _build_tree(repo: Path, base: str, entries: Mapping[str, str | None]) -> str:
    """The new root tree: only the trees on the changed paths are rewritten, with one
    `cat-file --batch` reading them and one `mktree --batch` writing them, so the cost
    follows the size of the change, not of the corpus (a temporary index would read and
    write every one of 100,000 entries)."""
    nested: dict[str, object] = {}
    for path, blob in entries.items():
        node = nested
        parts = path.split("/")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            assert isinstance(child, dict)
            node = child
        node[parts[-1]] = blob
    with _TreeIO(repo) as io:
        root = io.root_of(base)
        return io.build(root, nested) or io.write({})


class _TreeIO:
    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.reader = gitrepo.BlobReader(repo)
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed in __exit__
        self.writer = subprocess.Popen(gitrepo.git_argv(repo, "mktree", "-z", "--batch"),
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=self.errors, env=gitrepo.git_env())

    def __enter__(self) -> _TreeIO:
        return self

    def __exit__(self, *exc: object) -> None:
        self.reader.close()
        if self.writer.stdin:
            self.writer.stdin.close()
        self.writer.wait(timeout=10)
        if self.writer.stdout:
            self.writer.stdout.close()
        self.errors.close()

    def _failed(self) -> GitError:
        """git's own words for why mktree stopped (a full disk, a missing object)."""
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            if self.writer.stdin:
                self.writer.stdin.close()
            self.writer.wait(timeout=10)
        self.errors.seek(0)
        return gitrepo.git_failed("mktree", self.errors.read()[-2000:])

    def root_of(self, commit: str) -> str | None:
        if commit == ZERO:
            return None
        data = self.reader.read(commit)  # the commit object: its first line names the tree
        if data is None or not data.startswith(b"tree "):
            raise GitError(f"commit {commit} is missing from the object store")
        return data[5:45].decode()

    def read(self, tree: str | None) -> dict[str, tuple[str, str]]:
        """name → (mode, sha) of a tree object."""
        if tree is None:
            return {}
        data = self.reader.read(tree)
        if data is None:
            raise GitError(f"tree {tree} is missing from the object store")
        out: dict[str, tuple[str, str]] = {}
        i = 0
        while i < len(data):
            space = data.index(b" ", i)
            nul = data.index(b"\0", space)
            mode = data[i:space].decode()
            name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
            out[name] = (mode, data[nul + 1 : nul + 21].hex())
            i = nul + 21
        return out

    def write(self, items: Mapping[str, tuple[str, str]]) -> str:
        assert self.writer.stdin and self.writer.stdout
        for name, (mode, sha) in items.items():
            kind = "tree" if mode == "40000" else ("commit" if mode == "160000" else "blob")
            raw = name.encode("utf-8", "surrogateescape")
            chunk = f"{mode} {kind} {sha}\t".encode() + raw + b"\0"
            try:
                self.writer.stdin.write(chunk)
            except BrokenPipeError:
                raise self._failed() from None
        try:
            self.writer.stdin.write(b"\0")
            self.writer.stdin.flush()
        except BrokenPipeError:
            raise self._failed() from None
        line = self.writer.stdout.readline().decode().strip()
        if len(line) != 40:
            raise self._failed()
        return line

    def build(self, tree: str | None, changes: Mapping[str, object]) -> str | None:
        items = self.read(tree)
        for name, change in changes.items():
            if isinstance(change, dict):
                old = items.get(name)
                sub_tree = old[1] if old and old[0] == "40000" else None
                new_sub = self.build(sub_tree, change)
                if new_sub is None:
                    items.pop(name, None)
                else:
                    items[name] = ("40000", new_sub)
            elif change is None:
                items.pop(name, None)
            else:
                old = items.get(name)
                mode = old[0] if old and old[0] in ("100644", "100755") else "100644"
                items[name] = (mode, str(change))
        if not items:
            return None
        return self.write(items)


def tree_with_index(repo: Path, base: str, entries: Mapping[str, str | None]) -> str:
    """The same tree through a temporary index: the reference `_build_tree` is tested against."""
    modes = _modes(repo, base, list(entries))
    with tempfile.TemporaryDirectory(prefix="factdesk-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _git(repo, "read-tree", *(["--empty"] if base == ZERO else [base]), env=env)
        _git(repo, "update-index", "-z", "--index-info", input=_index_info(entries, modes), env=env)
        return _git(repo, "write-tree", env=env).stdout.decode().strip()


def _index_info(entries: Mapping[str, str | None], modes: Mapping[str, str]) -> bytes:
    lines = [f"0 {ZERO}\t{path}" if blob is None else f"{modes.get(path, '100644')} {blob}\t{path}"
             for path, blob in entries.items()]
    return b"".join(line.encode("utf-8", "surrogateescape") + b"\0" for line in lines)


def sync_index(repo: Path, paths: Sequence[str], entries: Mapping[str, str | None] | None = None,
               *, retry: bool = False, expect: Mapping[str, set[str | None]] | None = None) -> bool:
    """Make the real git index agree with HEAD (or `entries`, path → blob id) for `paths`
    (our files only). Done under git's own `index.lock`, taken as git takes it: a copy of
    the index is changed and renamed into place, so no git command runs in between. With
    `expect`, a path is written only where its entry still holds one of the expected
    values: anything else was staged by another writer since, and is kept. Skipped (False)
    when another git process holds `index.lock`; `git status` then shows our paths as
    staged reversions until the next sync, which recovery retries."""
    gd = gitrepo.git_dir(repo)
    lock = gd / "index.lock"
    for attempt in range(40 if retry else 1):  # another git command's lock is gone within ms
        try:
            os.close(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            break
        except FileExistsError:
            if attempt + 1 < (40 if retry else 1):
                time.sleep(0.025)
    else:
        return False
    held = True
    tmp = gd / f"factdesk-index-{secrets.token_hex(6)}"
    try:
        index = gd / "index"
        if index.exists():
            shutil.copy2(index, tmp)  # the timestamp too: git's racy-entry checks stay as they were
        env = {"GIT_INDEX_FILE": str(tmp)}
        if entries is None:
            heads = tree_entries(repo, "HEAD", paths)
            entries = {p: heads[p][1] if p in heads else None for p in paths}
        now = index_entries(repo, list(entries), env)
        entries = {p: b for p, b in entries.items() if now.get(p) != b and
                   (expect is None or now.get(p) in expect.get(p, set()))}
        if entries:
            modes = _modes(repo, "HEAD", [p for p, b in entries.items() if b is not None])
            proc = _git(repo, "update-index", "-z", "--index-info",
                        input=_index_info(entries, modes), env=env, check=False)
            if proc.returncode != 0:
                return False
            os.replace(tmp, lock)
            os.replace(lock, index)
            held = False
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if held:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock)


# -- the intent journal and recovery ------------------------------------------------------------


#: journals of this process's deferred actions → the descriptor that holds their lock
_HELD: dict[Path, int] = {}

FAILED = ".failed.json"


@dataclass
class _Journal:
    """The intent record of one action in `.git/factdesk/journal/<id>.json`. While the action
    runs (and, deferred, until `finish_sync`) this process holds an exclusive `flock` on it:
    recovery skips a journal it cannot lock, since its writer is alive. A kill releases it."""

    path: Path
    fd: int | None = None

    @classmethod
    def write(cls, repo: Path, action_id: str, ref: str, r0: str, message: str,
              changes: Sequence[FileChange], blobs: Mapping[str, str], author: Identity,
              committer: Identity, staged: Mapping[str, str | None], *,
              store_old: bool = False) -> _Journal:
        directory = state_dir(repo) / "journal"
        directory.mkdir(exist_ok=True)
        # the old bytes are HEAD's (checked above), so their blobs are in git already;
        # with allow_dirty they may not be, and a rollback needs them: store them
        old_blobs = {c.path: None if c.old is None else
                     (_hash_object(repo, c.old) if store_old else gitrepo.blob_id(c.old))
                     for c in changes}
        record = {
            "action_id": action_id, "ref": ref, "base": r0, "message": message,
            "author": [author.name, author.email], "committer": [committer.name, committer.email],
            "changes": [{"path": c.path, "old": old_blobs[c.path], "new": blobs.get(c.path),
                         "index": staged.get(c.path)} for c in changes],
            "written_at": time.time(), "pid": os.getpid(),
        }
        path = directory / f"{action_id}.json"
        fsio.atomic_write(path, json.dumps(record, indent=1).encode(), crash_points=False)
        journal = cls(path)
        # taken under the writer lock, so no recovery can look at it before it is held
        journal.fd = os.open(path, os.O_RDONLY)
        fcntl.flock(journal.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return journal

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        self.release()

    def release(self) -> None:
        """Leave the journal for recovery (the action is over in this process)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def hold(self) -> None:
        """Keep it held past this call, until `finish_sync` (a deferred index sync)."""
        if self.fd is not None:
            _HELD[self.path] = self.fd
            self.fd = None

    def mark_failed(self) -> None:
        """The action failed and was reported, but a file could not be put back: recovery
        must roll it back, never complete it. A rename needs no free space; when even that
        fails the journal is dropped (the files' state was said in the error)."""
        failed = self.path.with_name(self.path.name.removesuffix(".json") + FAILED)
        try:
            os.rename(self.path, failed)
            self.path = failed
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        self.release()


@dataclass(frozen=True, slots=True)
class Recovered:
    action_id: str
    outcome: str  # "completed" | "rolled back" | "already committed" | "needs attention"
    message: str


class _KeepJournal(Exception):
    def __init__(self, report: Recovered) -> None:
        super().__init__(report.message)
        self.report = report


def _journal_dir(repo: Path) -> Path:
    return gitrepo.git_dir(repo) / "factdesk" / "journal"


def pending_actions(repo: Path) -> list[Path]:
    directory = _journal_dir(repo)
    return sorted(directory.glob("*.json")) if directory.is_dir() else []


def recover(repo: Path) -> list[Recovered]:
    """Finish or roll back actions a crash left half-done, and say what was done. Runs under
    the writer lock (an action in progress is never taken for an interrupted one), skips a
    journal whose process is alive (a deferred index sync), and removes the temporary files
    a killed write left."""
    directory = _journal_dir(repo)
    if not directory.is_dir() or not any(directory.iterdir()):
        return []
    try:
        with writer_lock(repo):
            return _recover_locked(repo, directory)
    except Conflict:
        return []  # another factdesk action holds the lock past the wait: next time


def _recover_locked(repo: Path, directory: Path) -> list[Recovered]:
    out: list[Recovered] = []
    fsio.remove_stale_temps(directory)  # a journal write killed before its rename
    for path in sorted(directory.glob("*.json")):
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its process is alive and still finishing it
            if not path.exists():
                continue  # finished and removed while we waited for it
            try:
                record = json.loads(os.read(fd, 1 << 24) or b"null")
                assert isinstance(record, dict) and isinstance(record.get("changes"), list)
            except (OSError, ValueError, AssertionError) as exc:
                out.append(Recovered(path.stem, "needs attention", f"unreadable journal {path}: {exc}"))
                continue
            try:
                report = _recover_one(repo, record, failed=path.name.endswith(FAILED))
            except _KeepJournal as keep:
                out.append(keep.report)
                continue
            except (OSError, GitError) as exc:
                out.append(Recovered(str(record.get("action_id")), "needs attention",
                                     f"'{_subject(record)}' could not be finished or rolled back "
                                     f"({_why(exc)}); it will be tried again at the next start"))
                continue
            out.append(report)
            for folder in {(repo / str(e["path"])).parent for e in record["changes"]}:
                fsio.remove_stale_temps(folder)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        finally:
            os.close(fd)
    return out


def _subject(record: Mapping[str, object]) -> str:
    return (str(record.get("message") or "").splitlines() or ["?"])[0]


def _recover_one(repo: Path, record: dict[str, object], *, failed: bool = False) -> Recovered:
    action_id = str(record["action_id"])
    message = str(record["message"])
    subject = _subject(record)
    ref, base = str(record["ref"]), str(record["base"])
    entries = record["changes"]
    assert isinstance(entries, list)
    paths = [str(e["path"]) for e in entries]
    expect = {str(e["path"]): {e.get("old"), e.get("index", e.get("old"))} for e in entries}
    tip = _git(repo, "rev-parse", "-q", "--verify", ref, check=False).stdout.decode().strip() or ZERO
    if not failed and _action_in_history(repo, ref, action_id, base, {
            str(e["path"]): e.get("new") for e in entries}):
        if not sync_index(repo, paths, retry=True, expect=expect):
            raise _KeepJournal(Recovered(
                action_id, "needs attention",
                f"'{subject}' is committed, but git's index could not be synced for its files: "
                f"{gitrepo.git_dir(repo) / 'index.lock'} is held; it will be retried"))
        return Recovered(action_id, "already committed",
                         f"'{subject}' was committed before the interruption; the index was synced")
    disk = {p: _blob_or_none(repo / p) for p in paths}
    new_state = all(disk[str(e["path"])] == e["new"] for e in entries)
    old_state = all(disk[str(e["path"])] == e["old"] for e in entries)
    if old_state:
        return Recovered(action_id, "rolled back",
                         f"'{subject}' {'failed' if failed else 'was interrupted'} before any "
                         "file changed; nothing to undo")
    head = _git(repo, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).stdout.decode().strip()
    at_head = {p: blob for p, (_m, blob) in tree_entries(repo, head or ZERO, paths).items()}
    taken = [p for p in paths if disk[p] != _old(entries, p) and disk[p] == at_head.get(p)
             and disk[p] == _new(entries, p)]
    if new_state and len(taken) == len(paths):
        # an agent's commit (`git commit -a`) took the change in: HEAD and the disk agree
        sync_index(repo, paths, retry=True, expect={p: expect[p] for p in paths})
        return Recovered(action_id, "already committed",
                         f"'{subject}' was interrupted, and {_took_in(repo, base, head, paths)} took "
                         "its change in: HEAD holds it (without factdesk's record of the decision); "
                         "the files were left as HEAD has them")
    same_branch = head_ref(gitrepo.git_dir(repo)) == ref
    if not failed and new_state and same_branch and (
            tip == base or (tip != ZERO and not touched_between(repo, base, tip, paths))):
        base = tip
        new = {str(e["path"]): (None if e["new"] is None else str(e["new"])) for e in entries}
        who = record["author"], record["committer"]
        assert isinstance(who[0], list) and isinstance(who[1], list)
        sha = _build_commit(repo, base, new, message, Identity(str(who[0][0]), str(who[0][1])),
                            Identity(str(who[1][0]), str(who[1][1])))
        proc = _git(repo, "update-ref", "-m", f"factdesk: recover {subject}", ref, sha, base, check=False)
        if proc.returncode == 0:
            sync_index(repo, paths, retry=True, expect=expect)
            return Recovered(action_id, "completed",
                             f"'{subject}' was interrupted after writing its files; its commit "
                             f"{sha[:12]} was completed")
    at_base = {p: blob for p, (_m, blob) in tree_entries(repo, base, paths).items()}
    rolled: list[str] = []
    kept: list[str] = []
    diverged: list[str] = []
    with gitrepo.BlobReader(repo) as reader_proc:
        for e in entries:
            p = str(e["path"])
            if disk[p] != e["new"] or disk[p] == e["old"]:
                continue
            if at_head.get(p) == e["new"]:
                kept.append(p)  # HEAD holds our bytes: never restored under it
                continue
            if at_head.get(p) not in (e["old"], at_base.get(p)):
                diverged.append(p)
                continue
            if e["old"] is None:
                fsio.remove(repo / p)
            else:
                data = reader_proc.read(str(e["old"]))
                if data is None:
                    return Recovered(action_id, "needs attention",
                                     f"'{subject}': the old version of {p} is missing from git")
                fsio.atomic_write(repo / p, data)
            rolled.append(p)
    what = "failed (as was reported then)" if failed else "was interrupted half-way"
    text = f"'{subject}' {what}; restored {', '.join(rolled) or 'nothing'} to the committed version"
    if kept:
        text += f"; {', '.join(kept)} left as HEAD has them (a later commit holds the change)"
    if diverged:
        text += (f"; {', '.join(diverged)} still hold factdesk's uncommitted version while HEAD has "
                 "another: look at them before committing")
        return Recovered(action_id, "needs attention", text)
    return Recovered(action_id, "rolled back", text)


def _old(entries: Sequence[Mapping[str, object]], path: str) -> object:
    return next(e["old"] for e in entries if e["path"] == path)


def _new(entries: Sequence[Mapping[str, object]], path: str) -> object:
    return next(e["new"] for e in entries if e["path"] == path)


def _blob_or_none(path: Path) -> str | None:
    data = fsio.read_or_none(path)
    return gitrepo.blob_id(data) if data is not None else None


def _action_in_history(repo: Path, ref: str, action_id: str, base: str,
                       blobs: Mapping[str, object]) -> bool:
    """Whether the interrupted action was committed: a commit since `base` carries its id in
    its final trailer block AND holds the action's new version of each of its files (so a
    commit forging the id — an agent can read the journal — never makes recovery drop an
    action whose bytes are not in the history: issue 15 #2's neighbour)."""
    rng = ref if base == ZERO else f"{base}..{ref}"
    out = _git(repo, "log", "--format=%H%x00%B%x01", "-n", "50", "--fixed-strings",
               f"--grep=Factdesk-Action-Id: {action_id}", rng, "--", check=False).stdout
    for chunk in out.split(b"\x01"):
        sha, _, body = chunk.strip(b"\n").partition(b"\x00")
        if not sha:
            continue
        trailers = githistory.final_trailers(body.decode("utf-8", "replace"))
        if trailers.get("Factdesk-Action-Id") != action_id:
            continue
        held = tree_entries(repo, sha.decode(), list(blobs))
        if all((held.get(p) or ("", None))[1] == blob for p, blob in blobs.items()):
            return True
    return False
