"""The write path: one curation action becomes one commit (RELIABILITY.md §3.5, I3, I4).

    1. take the per-corpus writer lock;
    2. HEAD must be a branch (no detached HEAD, merge, rebase or cherry-pick in
       progress); R0 = its tip; if the caller saw another tip, the commits since must not
       touch the action's paths;
    3. every path must still hold the bytes the action was computed from, and those must
       be what HEAD has (another writer's uncommitted edit is never swept into our
       commit);
    4. the new blobs go into the object store, then the intent journal is written;
    5. each file is replaced atomically (fsio) after re-checking its bytes;
    6. the commit is built on a temporary index (`read-tree R0`, `update-index`,
       `write-tree`, `commit-tree -p R0`), never the shared `.git/index`, so an agent's
       staged work stays staged and is never committed;
    7. `update-ref B NEW R0` publishes it compare-and-swap; if an agent moved the branch
       and did not touch our paths the commit is rebuilt on the new tip (5 tries), else
       the files are put back and the action is refused;
    8. the real index is synced for our paths only (skipped, not failed, when
       `index.lock` is held);
    9. the journal is removed.

A crash at any step leaves old or new bytes; `recover()` (run at start) finishes an
action whose files were all replaced, rolls back one whose files were partly replaced,
and reports what it did.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from factdesk import faults, fsio
from factdesk.corpus import gitrepo
from factdesk.corpus.gitrepo import ZERO, GitError, git_argv, git_env
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


def _git(repo: Path, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None,
         check: bool = True) -> subprocess.CompletedProcess[bytes]:
    full = git_env()
    if env:
        full.update(env)
    proc = subprocess.run(git_argv(repo, *args), input=input,
                          capture_output=True, env=full, check=False)
    if check and proc.returncode != 0:
        raise GitError(f"git {args[0]} failed: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc


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
    out = _git(repo, "diff", "--name-only", "-z", "--no-renames", old, new, "--", *paths).stdout
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def commit_files(repo: Path, changes: Sequence[FileChange], message: str, *,
                 author: Identity, committer: Identity, action_id: str,
                 expected_head: str | None = None, allow_dirty: bool = False,
                 defer_sync: bool = False) -> Committed:
    """Write `changes` and publish them as one commit on the current branch (see module doc).
    `defer_sync`: leave step 8 (the real index) and 9 to `finish_sync`, off the user's
    critical path; the journal stays until then, so a crash in between is recovered."""
    if not changes:
        raise Refused("nothing to change")
    paths = [c.path for c in changes]
    if len(set(paths)) != len(paths):
        raise Refused("an action may change each file once")
    for p in paths:
        if not gitrepo_path_ok(p):
            raise Refused(f"{p}: not a path factdesk writes")
    with writer_lock(repo):
        ref, r0 = current_branch(repo)
        if expected_head and expected_head != r0:
            moved = touched_between(repo, expected_head, r0, paths) if _exists(repo, expected_head) \
                else paths
            if moved:
                raise Conflict(_moved_message(repo, expected_head, r0, moved))
        for p in paths:
            refuse_links(repo, p)
        _check_preconditions(repo, r0, changes, allow_dirty)
        faults.point("action.before_write")
        blobs = {c.path: _hash_object(repo, c.new) for c in changes if c.new is not None}
        faults.point("commit.blob_written")
        journal = _Journal.write(repo, action_id, ref, r0, message, changes, blobs, author, committer,
                                 store_old=allow_dirty)
        faults.point("action.journal_written")
        try:
            _replace_files(repo, changes)
        except BaseException:
            _restore_files(repo, changes)
            journal.remove()
            raise
        try:
            done = _publish(repo, ref, r0, changes, blobs, message, author, committer)
        except BaseException:
            _restore_files(repo, changes)
            journal.remove()
            raise
        if defer_sync:
            return Committed(done.sha, done.parent, done.branch, done.rebased,
                             pending_sync=tuple(paths), journal=journal.path)
        if sync_index(repo, paths, {c.path: blobs.get(c.path) for c in changes}, retry=True):
            faults.point("commit.index_synced")
            journal.remove()  # else kept: the next start syncs (an agent holds index.lock)
        return done


def finish_sync(repo: Path, committed: Committed) -> None:
    """Step 8 and 9 of a deferred commit: the real index gets HEAD's blobs for the paths
    (read now, under the writer lock, so a later action's version is never overwritten
    by an earlier one's), then the journal goes."""
    if not committed.pending_sync:
        return
    with writer_lock(repo):
        paths = list(committed.pending_sync)
        heads = tree_entries(repo, "HEAD", paths)
        if not sync_index(repo, paths, {p: heads[p][1] if p in heads else None for p in paths},
                          retry=True):
            return  # index.lock held by another git process: the journal stays for recovery
        faults.point("commit.index_synced")
        if committed.journal is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(committed.journal)


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


def _check_preconditions(repo: Path, r0: str, changes: Sequence[FileChange], allow_dirty: bool) -> None:
    committed_blobs = tree_entries(repo, r0, [c.path for c in changes])
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


def _restore_files(repo: Path, changes: Sequence[FileChange]) -> None:
    """Put back the old bytes, only where the file now holds ours."""
    for c in changes:
        target = repo / c.path
        now = fsio.read_or_none(target)
        if now == c.old or now != c.new:
            continue
        if c.old is None:
            fsio.remove(target)
        else:
            fsio.atomic_write(target, c.old)


def _publish(repo: Path, ref: str, r0: str, changes: Sequence[FileChange], blobs: Mapping[str, str],
             message: str, author: Identity, committer: Identity) -> Committed:
    paths = [c.path for c in changes]
    base = r0
    for attempt in range(MAX_CAS_TRIES):
        sha = _build_commit(repo, base, {c.path: blobs.get(c.path) for c in changes}, message,
                            author, committer)
        faults.point("commit.commit_written")
        faults.point("commit.before_cas")
        proc = _git(repo, "update-ref", "-m", f"factdesk: {message.splitlines()[0]}", ref, sha, base,
                    check=False)
        if proc.returncode == 0:
            faults.point("commit.ref_updated")
            return Committed(sha, base, ref, rebased=attempt > 0)
        tip = _git(repo, "rev-parse", "-q", "--verify", ref, check=False).stdout.decode().strip()
        sym = _git(repo, "symbolic-ref", "-q", "HEAD", check=False).stdout.decode().strip()
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
        self.writer = subprocess.Popen(git_argv(repo, "mktree", "-z", "--batch"),
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=git_env())

    def __enter__(self) -> _TreeIO:
        return self

    def __exit__(self, *exc: object) -> None:
        self.reader.close()
        if self.writer.stdin:
            self.writer.stdin.close()
        self.writer.wait(timeout=10)
        if self.writer.stdout:
            self.writer.stdout.close()

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
            self.writer.stdin.write(f"{mode} {kind} {sha}\t".encode() + raw + b"\0")
        self.writer.stdin.write(b"\0")
        self.writer.stdin.flush()
        line = self.writer.stdout.readline().decode().strip()
        if len(line) != 40:
            raise GitError("git mktree failed")
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
               *, retry: bool = False) -> bool:
    """Make the real git index agree with HEAD for `paths` (our files only). Skipped when
    another git process holds `index.lock`; `git status` then shows our paths as staged
    reversions until the next sync, which recovery retries. With the blob ids known, one
    `update-index --index-info` (no refresh of the other entries) does it."""
    lock = gitrepo.git_dir(repo) / "index.lock"
    for _ in range(40 if retry else 1):  # another git command's lock is gone within ms
        if not lock.exists():
            break
        time.sleep(0.025)
    else:
        return False
    if entries is None:
        proc = _git(repo, "reset", "-q", "--", *paths, check=False)
    else:
        modes = _modes(repo, "HEAD", [p for p, b in entries.items() if b is not None])
        proc = _git(repo, "update-index", "-z", "--index-info", input=_index_info(entries, modes),
                    check=False)
    return proc.returncode == 0


# -- the intent journal and recovery ------------------------------------------------------------


@dataclass
class _Journal:
    path: Path

    @classmethod
    def write(cls, repo: Path, action_id: str, ref: str, r0: str, message: str,
              changes: Sequence[FileChange], blobs: Mapping[str, str], author: Identity,
              committer: Identity, *, store_old: bool = False) -> _Journal:
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
            "changes": [{"path": c.path, "old": old_blobs[c.path], "new": blobs.get(c.path)}
                        for c in changes],
            "written_at": time.time(),
        }
        path = directory / f"{action_id}.json"
        fsio.atomic_write(path, json.dumps(record, indent=1).encode(), crash_points=False)
        return cls(path)

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)


@dataclass(frozen=True, slots=True)
class Recovered:
    action_id: str
    outcome: str  # "completed" | "rolled back" | "already committed" | "needs attention"
    message: str


class _KeepJournal(Exception):
    def __init__(self, report: Recovered) -> None:
        super().__init__(report.message)
        self.report = report


def pending_actions(repo: Path) -> list[Path]:
    directory = gitrepo.git_dir(repo) / "factdesk" / "journal"
    return sorted(directory.glob("*.json")) if directory.is_dir() else []


def recover(repo: Path) -> list[Recovered]:
    """Finish or roll back actions a crash left half-done, and say what was done."""
    out: list[Recovered] = []
    for path in pending_actions(repo):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            out.append(Recovered(path.stem, "needs attention", f"unreadable journal {path}: {exc}"))
            continue
        with writer_lock(repo):
            try:
                out.append(_recover_one(repo, record))
            except _KeepJournal as keep:
                out.append(keep.report)
                continue
            entries = record.get("changes") or []
            for folder in {(repo / str(e["path"])).parent for e in entries}:
                fsio.remove_stale_temps(folder)
            fsio.remove_stale_temps(path.parent)
        os.unlink(path)
    return out


def _recover_one(repo: Path, record: dict[str, object]) -> Recovered:
    action_id = str(record["action_id"])
    message = str(record["message"])
    subject = message.splitlines()[0]
    ref, base = str(record["ref"]), str(record["base"])
    entries = record["changes"]
    assert isinstance(entries, list)
    paths = [str(e["path"]) for e in entries]
    tip = _git(repo, "rev-parse", "-q", "--verify", ref, check=False).stdout.decode().strip() or ZERO
    if _action_in_history(repo, ref, action_id, base):
        if not sync_index(repo, paths, retry=True):
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
                         f"'{subject}' was interrupted before any file changed; nothing to undo")
    if new_state and (tip == base or (tip != ZERO and not touched_between(repo, base, tip, paths))):
        base = tip
        new = {str(e["path"]): (None if e["new"] is None else str(e["new"])) for e in entries}
        who = record["author"], record["committer"]
        assert isinstance(who[0], list) and isinstance(who[1], list)
        sha = _build_commit(repo, base, new, message, Identity(str(who[0][0]), str(who[0][1])),
                            Identity(str(who[1][0]), str(who[1][1])))
        proc = _git(repo, "update-ref", "-m", f"factdesk: recover {subject}", ref, sha, base, check=False)
        if proc.returncode == 0:
            sync_index(repo, paths)
            return Recovered(action_id, "completed",
                             f"'{subject}' was interrupted after writing its files; its commit "
                             f"{sha[:12]} was completed")
    rolled = []
    with gitrepo.BlobReader(repo) as reader_proc:
        for e in entries:
            p = str(e["path"])
            if disk[p] == e["new"] and disk[p] != e["old"]:
                if e["old"] is None:
                    fsio.remove(repo / p)
                else:
                    data = reader_proc.read(str(e["old"]))
                    if data is None:
                        return Recovered(action_id, "needs attention",
                                         f"'{subject}': the old version of {p} is missing from git")
                    fsio.atomic_write(repo / p, data)
                rolled.append(p)
    return Recovered(action_id, "rolled back",
                     f"'{subject}' was interrupted half-way; restored {', '.join(rolled) or 'nothing'} "
                     "to the committed version")


def _blob_or_none(path: Path) -> str | None:
    data = fsio.read_or_none(path)
    return gitrepo.blob_id(data) if data is not None else None


def _action_in_history(repo: Path, ref: str, action_id: str, base: str) -> bool:
    rng = ref if base == ZERO else f"{base}..{ref}"
    out = _git(repo, "log", "--format=%H", "-n", "50", "--fixed-strings",
               f"--grep=Factdesk-Action-Id: {action_id}", rng, "--", check=False).stdout
    return bool(out.strip())
