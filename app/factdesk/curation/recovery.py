"""The intent journal of an action and recovery from one a crash left (RELIABILITY.md §3.5
step 4 and 9, §3.3): `.git/factdesk/journal/<id>.json` records what the action changes; at
start, `recover()` (gitwrite, under the writer lock) finishes an action whose files were all
replaced, rolls back one whose files were partly replaced, never completes one whose failure
was reported, and says what it did."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from factdesk import fsio
from factdesk.corpus import githistory, gitrepo
from factdesk.corpus.gitrepo import ZERO, GitError
from factdesk.curation.gittree import (
    _build_commit,
    _git,
    _hash_object,
    _took_in,
    head_ref,
    sync_index,
    touched_between,
    tree_entries,
)
from factdesk.curation.writetypes import FileChange, Identity, _why


def state_dir(repo: Path) -> Path:
    path = gitrepo.git_dir(repo) / "factdesk"
    path.mkdir(parents=True, exist_ok=True)
    return path


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
              store_old: bool = False, parents: Sequence[str] = (),
              moves_to: str | None = None) -> _Journal:
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
            # more parents after the tip (a review merge): a completed commit has them too
            "parents": list(parents),
        }
        if moves_to is not None:  # (a sync moving the branch to a commit made elsewhere)
            record["moves_to"] = moves_to
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


@dataclass(frozen=True)
class _Record:
    """One journal, read: what the interrupted action was and what it changes."""

    action_id: str
    message: str
    subject: str
    ref: str
    base: str
    entries: list[dict[str, object]]
    paths: list[str]
    #: what git's index may hold for each path for recovery to sync it
    expect: dict[str, set[str | None]]
    failed: bool

    @classmethod
    def read(cls, record: dict[str, object], failed: bool) -> _Record:
        entries = record["changes"]
        assert isinstance(entries, list)
        return cls(str(record["action_id"]), str(record["message"]), _subject(record),
                   str(record["ref"]), str(record["base"]), entries,
                   [str(e["path"]) for e in entries],
                   {str(e["path"]): {e.get("old"), e.get("index", e.get("old"))} for e in entries},
                   failed)

    def who(self, record: dict[str, object]) -> tuple[Identity, Identity]:
        author, committer = record["author"], record["committer"]
        assert isinstance(author, list) and isinstance(committer, list)
        return Identity(str(author[0]), str(author[1])), Identity(str(committer[0]), str(committer[1]))


def _recover_one(repo: Path, record: dict[str, object], *, failed: bool = False) -> Recovered:
    """One interrupted action, in this order: already committed (sync the index); no file
    changed (nothing to do); an agent's commit took it in (leave it); all files replaced on
    an unmoved branch (complete the commit); else roll back what can be rolled back."""
    rec = _Record.read(record, failed)
    if record.get("moves_to"):
        return _recover_move(repo, rec, str(record["moves_to"]))
    if not failed and _action_in_history(repo, rec.ref, rec.action_id, rec.base, {
            str(e["path"]): e.get("new") for e in rec.entries}):
        return _synced_committed(repo, rec)
    disk = {p: _blob_or_none(repo / p) for p in rec.paths}
    if all(disk[str(e["path"])] == e["old"] for e in rec.entries):
        return Recovered(rec.action_id, "rolled back",
                         f"'{rec.subject}' {'failed' if failed else 'was interrupted'} before any "
                         "file changed; nothing to undo")
    new_state = all(disk[str(e["path"])] == e["new"] for e in rec.entries)
    head = _git(repo, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).stdout.decode().strip()
    at_head = {p: blob for p, (_m, blob) in tree_entries(repo, head or ZERO, rec.paths).items()}
    taken = [p for p in rec.paths if disk[p] != _old(rec.entries, p) and disk[p] == at_head.get(p)
             and disk[p] == _new(rec.entries, p)]
    if new_state and len(taken) == len(rec.paths):
        return _taken_in(repo, rec, head)
    if not failed and new_state and (done := _complete(repo, rec, record)) is not None:
        return done
    return _roll_back(repo, rec, disk, at_head)


def _recover_move(repo: Path, rec: _Record, moves_to: str) -> Recovered:
    """A sync's move of the branch (gitwrite.move_branch): finished when the branch holds
    the commit it moved to (only git's index is left to sync), else rolled back; never a
    commit built here (it would turn another curator's work or a merge into ours)."""
    if not rec.failed:
        tip = _git(repo, "rev-parse", "-q", "--verify", rec.ref, check=False).stdout.decode().strip()
        if tip and gitrepo.is_ancestor(repo, moves_to, tip):
            return _synced_committed(repo, rec)
    disk = {p: _blob_or_none(repo / p) for p in rec.paths}
    head = _git(repo, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).stdout.decode().strip()
    at_head = {p: blob for p, (_m, blob) in tree_entries(repo, head or ZERO, rec.paths).items()}
    return _roll_back(repo, rec, disk, at_head)


def _synced_committed(repo: Path, rec: _Record) -> Recovered:
    """The action's commit is in the history: only git's index is left to sync."""
    if not sync_index(repo, rec.paths, retry=True, expect=rec.expect):
        raise _KeepJournal(Recovered(
            rec.action_id, "needs attention",
            f"'{rec.subject}' is committed, but git's index could not be synced for its files: "
            f"{gitrepo.git_dir(repo) / 'index.lock'} is held; it will be retried"))
    return Recovered(rec.action_id, "already committed",
                     f"'{rec.subject}' was committed before the interruption; the index was synced")


def _taken_in(repo: Path, rec: _Record, head: str) -> Recovered:
    """An agent's commit (`git commit -a`) took the change in: HEAD and the disk agree."""
    sync_index(repo, rec.paths, retry=True, expect=rec.expect)
    return Recovered(rec.action_id, "already committed",
                     f"'{rec.subject}' was interrupted, and {_took_in(repo, rec.base, head, rec.paths)} "
                     "took its change in: HEAD holds it (without factdesk's record of the decision); "
                     "the files were left as HEAD has them")


def _complete(repo: Path, rec: _Record, record: dict[str, object]) -> Recovered | None:
    """Every file holds the new bytes and the branch is checked out and did not touch them
    since: the commit is built on its tip and published (None: it cannot be)."""
    tip = _git(repo, "rev-parse", "-q", "--verify", rec.ref, check=False).stdout.decode().strip() or ZERO
    if head_ref(gitrepo.git_dir(repo)) != rec.ref or not (
            tip == rec.base or (tip != ZERO and not touched_between(repo, rec.base, tip, rec.paths))):
        return None
    new = {str(e["path"]): (None if e["new"] is None else str(e["new"])) for e in rec.entries}
    extra = record.get("parents")
    parents = [str(p) for p in extra] if isinstance(extra, list) else []
    sha = _build_commit(repo, tip, new, rec.message, *rec.who(record), parents=parents)
    proc = _git(repo, "update-ref", "-m", f"factdesk: recover {rec.subject}", rec.ref, sha, tip,
                check=False)
    if proc.returncode != 0:
        return None
    sync_index(repo, rec.paths, retry=True, expect=rec.expect)
    return Recovered(rec.action_id, "completed",
                     f"'{rec.subject}' was interrupted after writing its files; its commit "
                     f"{sha[:12]} was completed")


def _roll_back(repo: Path, rec: _Record, disk: Mapping[str, str | None],
               at_head: Mapping[str, str]) -> Recovered:
    """Each file that holds the new bytes goes back to the old ones, unless HEAD holds the
    new bytes (left) or a third version (left, and said)."""
    at_base = {p: blob for p, (_m, blob) in tree_entries(repo, rec.base, rec.paths).items()}
    rolled: list[str] = []
    kept: list[str] = []
    diverged: list[str] = []
    with gitrepo.BlobReader(repo) as reader_proc:
        for e in rec.entries:
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
                    return Recovered(rec.action_id, "needs attention",
                                     f"'{rec.subject}': the old version of {p} is missing from git")
                fsio.atomic_write(repo / p, data)
            rolled.append(p)
    what = "failed (as was reported then)" if rec.failed else "was interrupted half-way"
    text = f"'{rec.subject}' {what}; restored {', '.join(rolled) or 'nothing'} to the committed version"
    if kept:
        text += f"; {', '.join(kept)} left as HEAD has them (a later commit holds the change)"
    if diverged:
        text += (f"; {', '.join(diverged)} still hold factdesk's uncommitted version while HEAD has "
                 "another: look at them before committing")
        return Recovered(rec.action_id, "needs attention", text)
    return Recovered(rec.action_id, "rolled back", text)


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
    for sha, _subject, body in githistory.messages_with(
            repo, rng, f"Factdesk-Action-Id: {action_id}", first_parent=False):
        if githistory.final_trailers(body).get("Factdesk-Action-Id") != action_id:
            continue
        held = tree_entries(repo, sha, list(blobs))
        if all((held.get(p) or ("", None))[1] == blob for p, blob in blobs.items()):
            return True
    return False
