"""The git plumbing of the write path (RELIABILITY.md §3.5 steps 6 and 8): what a commit's
tree or git's index holds for some paths, the new tree and commit built from the base
commit's trees (`mktree`, `commit-tree`, never the shared `.git/index`), and the real index
synced for our paths only, under git's own `index.lock`. Every git call goes through
gitrepo's one protocol (argv, safety options, environment)."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from factdesk import faults
from factdesk.corpus import gitrepo
from factdesk.corpus.gitrepo import ZERO, GitError
from factdesk.curation.writetypes import Identity


def _git(repo: Path, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None,
         check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Every git call of the write path, through gitrepo's one protocol (argv, safety
    options, environment)."""
    return gitrepo.git_proc(repo, *args, input=input, env=env, check=check)


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


def tree_entries(repo: Path, rev: str, paths: Sequence[str]) -> dict[str, tuple[str, str]]:
    """path → (mode, blob id) in commit `rev`, for those of `paths` it has (one `ls-tree`)."""
    # a path git cannot take as a pathspec (an empty, `.` or `..` segment: an agent's tree
    # may hold one, issue 22) is no file factdesk writes: absent here, never a failure
    paths = [p for p in paths if not p.startswith("/") and
             not {"", ".", ".."} & set(p.split("/"))]
    if rev == ZERO or not paths:
        return {}
    out = _git(repo, "ls-tree", "-z", "--end-of-options", rev, "--", *paths,
               env={"GIT_LITERAL_PATHSPECS": "1"}).stdout
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
    """Which of `paths` differ between two commits (none of no paths: an empty commit
    touches nothing)."""
    if old == new or not paths:
        return []
    if old == ZERO:
        return [p for p in paths if p in tree_entries(repo, new, paths)]
    out = _git(repo, "diff", "--name-only", "-z", "--no-renames", old, new,
               "--", *paths).stdout
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def _took_in(repo: Path, base: str, head: str, paths: Sequence[str]) -> str:
    line = _git(repo, "log", "-1", "--format=%h (%an: %s)", f"{base}..{head}",
                "--", *paths,
                check=False).stdout.decode("utf-8", "replace").strip()
    return f"commit {line}" if line else "another commit"


#: from how many paths on `index_entries` lists the whole index rather than match pathspecs
_MANY_PATHS = 64

#: `index_entries`' value for a path with unmerged (conflict) stages
UNMERGED = "unmerged"


def index_entries(repo: Path, paths: Sequence[str], env: Mapping[str, str] | None = None
                  ) -> dict[str, str | None]:
    """path → blob id in git's index (or the one `env`'s GIT_INDEX_FILE names), for those of
    `paths` it has; `UNMERGED` for a path in conflict."""
    if not paths:
        return {}
    # many paths: git matches each entry against every pathspec (446 paths at 100,000
    # entries: 0.25 s of CPU); the whole listing, filtered here, costs 0.03 s
    specs = ["--", *paths] if len(paths) <= _MANY_PATHS else []
    out = _git(repo, "ls-files", "-s", "-z", *specs, env=env).stdout
    wanted = {p.encode("utf-8", "surrogateescape") for p in paths}
    entries: dict[str, str | None] = {}
    for entry in out.split(b"\0"):
        if b"\t" in entry:
            meta, raw = entry.split(b"\t", 1)
            if raw not in wanted:
                continue
            path = raw.decode("utf-8", "surrogateescape")
            _mode, blob, stage = meta.decode().split()[:3]
            entries[path] = blob if stage == "0" and entries.get(path) != UNMERGED else UNMERGED
    return entries


def _hash_object(repo: Path, data: bytes) -> str:
    return _git(repo, "hash-object", "-w", "--no-filters", "--stdin", input=data).stdout.decode().strip()


def _store_blobs(repo: Path, datas: Sequence[bytes]) -> list[str]:
    """The blob id of each of `datas`, each stored in git's object store. Many at once (an
    accepted batch of proposals, whose versions git holds already): the ids are computed
    here, one `cat-file --batch-check` says which are there, and only the others are
    written (one `hash-object` each) — not one git process per file."""
    if len(datas) <= 2:
        return [_hash_object(repo, d) for d in datas]
    ids = [gitrepo.blob_id(d) for d in datas]
    out = _git(repo, "cat-file", "--batch-check", input="".join(f"{i}\n" for i in ids).encode()
               ).stdout.decode()
    present = {line.split()[0] for line in out.splitlines()
               if line and not line.endswith(" missing")}
    for data, blob in zip(datas, ids, strict=True):
        if blob not in present and _hash_object(repo, data) != blob:
            raise GitError(f"git stored a blob under another id than {blob}")
    return ids


def _build_commit(repo: Path, base: str, entries: Mapping[str, str | None],
                  message: str, author: Identity, committer: Identity,
                  parents: Sequence[str] = ()) -> str:
    """A commit on `base` whose tree sets each path to a blob id, or removes it (None);
    `parents`: more parents after `base` (a review merge's agent commit: review/merge.py)."""
    tree = _build_tree(repo, base, entries)
    faults.point("commit.tree_written")
    ident = {"GIT_AUTHOR_NAME": author.name, "GIT_AUTHOR_EMAIL": author.email,
             "GIT_COMMITTER_NAME": committer.name, "GIT_COMMITTER_EMAIL": committer.email}
    args = ["commit-tree", tree, "-F", "-"]
    if base != ZERO:
        args[2:2] = ["-p", base, *(arg for extra in parents for arg in ("-p", extra))]
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


# -- commits on a branch nobody has checked out (an agent's own, issue 26) ---------------------


def commit_files_on(repo: Path, base: str, files: Mapping[str, bytes | None], message: str, *,
                    author: Identity, committer: Identity) -> str:
    """A commit on `base` (ZERO: a root commit) whose tree is `base`'s with each of `files`
    set to its bytes, or removed (None): objects, trees and the commit only (`hash-object`,
    `mktree`, `commit-tree`). The work tree, git's index and every ref are left alone."""
    written = [p for p, data in files.items() if data is not None]
    blobs = dict(zip(written, _store_blobs(repo, [files[p] or b"" for p in written]),
                     strict=True))
    return _build_commit(repo, base, {p: blobs.get(p) for p in files}, message, author,
                         committer)


def swap_ref(repo: Path, ref: str, new: str, old: str | None, reason: str) -> bool:
    """Move `ref` to `new` only if it still holds `old` (None: only if it does not exist),
    in one `update-ref` (git's lock file makes it a compare-and-swap). False when another
    writer moved it first, or held its lock (the caller retries from the new tip)."""
    proc = _git(repo, "update-ref", "-m", reason, "--end-of-options", ref, new, old or ZERO,
                check=False)
    return proc.returncode == 0


def ref_tip(repo: Path, ref: str) -> str | None:
    """The commit `ref` (a full ref name) holds, None when it does not exist."""
    out = _git(repo, "rev-parse", "-q", "--verify", "--end-of-options", f"{ref}^{{commit}}",
               check=False).stdout.decode().strip()
    return out or None
