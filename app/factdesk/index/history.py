"""Derive each path's history fields from the `changes` and `commits` tables (pure SQL), and
the rows of those tables from git's log."""

from __future__ import annotations

import bisect
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from factdesk.corpus.githistory import Step, cancelled_commits
from factdesk.corpus.gitrepo import ZERO, Commit


@dataclass(frozen=True, slots=True)
class PathHistory:
    created_at: int | None = None
    created_sha: str | None = None
    updated_at: int | None = None
    updated_sha: str | None = None
    author: str | None = None
    author_email: str | None = None
    op: str | None = None
    creator: str | None = None
    creator_email: str | None = None
    deleted: bool = False
    retracted_at: int | None = None
    retracted_sha: str | None = None
    retracted_by: str | None = None
    retracted_reason: str | None = None
    last_blob: str | None = None  # the last live version's blob (for retracted facts)


_FP_SQL = """
SELECT c.status, c.old_blob, c.new_blob, c.sha, m.time, m.author, m.email, m.op, m.subject
FROM changes c JOIN commits m ON m.sha = c.sha
WHERE c.path = ? AND c.first_parent >= ? ORDER BY c.seq
"""
_CREATOR_SQL = """
SELECT m.author, m.email, m.sha FROM changes c JOIN commits m ON m.sha = c.sha
WHERE c.path = ? AND c.status = 'A' AND instr(m.parents, ' ') = 0
ORDER BY m.time, c.seq
"""
#: commits that carry factdesk's action trailers (an undo or redo can cancel only those)
_MARKED = "m.body LIKE '%Factdesk-Action-Id:%'"
_MARKED_OF_PATH_SQL = f"""
SELECT m.sha, m.subject, m.body FROM commits m
WHERE m.sha IN (SELECT sha FROM changes WHERE path = ?) AND {_MARKED}
"""
_MARKED_SQL = f"SELECT m.sha, m.subject, m.body FROM commits m WHERE {_MARKED}"


def _cancelled(path: str, rows: Sequence[Sequence[Any]], messages: dict[str, str]
               ) -> frozenset[str]:
    """The commits among `rows` (`_FP_SQL`'s, oldest first) that an undo cancels with its
    action, judged on this path's changes (`githistory.cancelled_commits`)."""
    if not any("Factdesk-Reverts:" in messages.get(r[3], "") for r in rows):
        return frozenset()
    steps = [Step(r[3], messages[r[3]], {path: (_blob(r[1]), _blob(r[2]))})
             for r in rows if r[3] in messages]
    return cancelled_commits(steps).shas


def _blob(blob: str | None) -> str | None:
    return None if not blob or blob == ZERO else blob


def path_history(conn: sqlite3.Connection, path: str) -> PathHistory:
    """The history fields of one path; an action and the undo that reverted it are left
    out, as if neither had been made (so are a redo and the undo it reverted)."""
    rows = conn.execute(_FP_SQL, (path, 1)).fetchall()
    if not rows:  # only ever on a merged side branch: use every commit, in order
        rows = conn.execute(_FP_SQL, (path, 0)).fetchall()
    if not rows:
        return PathHistory()
    messages = {sha: f"{subject}\n\n{body}"
                for sha, subject, body in conn.execute(_MARKED_OF_PATH_SQL, (path,))}
    cancelled = _cancelled(path, rows, messages) if messages else frozenset()
    if cancelled:
        rows = [r for r in rows if r[3] not in cancelled]
        if not rows:
            return PathHistory()
    creator = next(((a, e) for a, e, sha in conn.execute(_CREATOR_SQL, (path,))
                    if sha not in cancelled), None)
    return _history(rows, creator)


_ALL_SQL = """
SELECT c.path, c.first_parent, c.status, c.old_blob, c.new_blob, c.sha, m.time, m.author,
       m.email, m.op, m.subject, instr(m.parents, ' ') = 0
FROM changes c JOIN commits m ON m.sha = c.sha ORDER BY c.path, c.seq
"""


def all_histories(conn: sqlite3.Connection) -> dict[str, PathHistory]:
    """`path_history` of every path in `changes`, from one ordered pass (a rebuild)."""
    out: dict[str, PathHistory] = {}
    group: list[tuple[object, ...]] = []
    current: str | None = None
    messages = {sha: f"{subject}\n\n{body}" for sha, subject, body in conn.execute(_MARKED_SQL)}

    def flush() -> None:
        if current is None:
            return
        rows = [r[2:11] for r in group if r[1] >= 1]  # type: ignore[operator]
        if not rows:
            rows = [r[2:11] for r in group]
        cancelled = _cancelled(current, rows, messages) if messages else frozenset()
        if cancelled:
            rows = [r for r in rows if r[3] not in cancelled]
            if not rows:
                out[current] = PathHistory()
                return
        # the creator: the oldest non-merge commit that added the path (time, then order)
        added = [r for r in group if r[2] == "A" and r[11] and r[5] not in cancelled]
        first_add = min(added, key=lambda r: r[6]) if added else None  # type: ignore[arg-type,return-value]
        out[current] = _history(rows, (first_add[7], first_add[8]) if first_add else None)

    # one string object per distinct sha, name, e-mail, message: 100,000 histories share
    # the few thousand commits' values instead of each holding copies
    shared: dict[object, object] = {}
    for row in conn.execute(_ALL_SQL):
        if row[0] != current:
            flush()
            current, group = row[0], []
        group.append(tuple(shared.setdefault(v, v) if i >= 5 else v for i, v in enumerate(row)))
    flush()
    return out


def _history(rows: Sequence[Sequence[Any]], creator: Sequence[Any] | None) -> PathHistory:
    """Rows of `_FP_SQL` (oldest first, never empty) and the creator's (name, e-mail)."""
    last_delete = max((i for i, r in enumerate(rows) if r[0] == "D"), default=-1)
    deleted = rows[-1][0] == "D"
    if deleted:
        live = rows[: last_delete]
        prev_delete = max((i for i, r in enumerate(live) if r[0] == "D"), default=-1)
        live = live[prev_delete + 1 :]
    else:
        live = rows[last_delete + 1 :]
    first = live[0] if live else None
    last = live[-1] if live else None
    if creator is None and first is not None:
        creator = (first[5], first[6])
    hist = PathHistory(
        created_at=first[4] if first else None,
        created_sha=first[3] if first else None,
        updated_at=last[4] if last else None,
        updated_sha=last[3] if last else None,
        author=last[5] if last else None,
        author_email=last[6] if last else None,
        op=last[7] if last else None,
        creator=creator[0] if creator else None,
        creator_email=creator[1] if creator else None,
        deleted=deleted,
        last_blob=(rows[-1][1] if deleted else (last[2] if last else None)),
    )
    if deleted:
        d = rows[-1]
        hist = replace(hist, retracted_at=d[4], retracted_sha=d[3], retracted_by=d[5],
                       retracted_reason=d[8])
    return hist


def commits_touching(conn: sqlite3.Connection, path: str) -> list[sqlite3.Row]:
    """Every indexed commit that changed `path`, newest first, with its change."""
    return conn.execute(
        "SELECT c.sha, c.status, c.old_blob, c.new_blob, c.seq, m.time, m.author, m.op, "
        "m.subject FROM changes c JOIN commits m ON m.sha = c.sha "
        "WHERE c.path = ? ORDER BY c.seq DESC", (path,)).fetchall()


def blob_at(conn: sqlite3.Connection, path: str, seq: int) -> str | None:
    """The blob of `path` as of first-parent commit `seq`, stepping over deletions."""
    row = conn.execute(
        "SELECT status, old_blob, new_blob FROM changes WHERE path = ? AND first_parent = 1 "
        "AND seq <= ? ORDER BY seq DESC LIMIT 1", (path, seq)).fetchone()
    return None if row is None else _blob_after(row[0], row[1], row[2])


def _blob_after(status: str, old_blob: str | None, new_blob: str | None) -> str | None:
    """The version a change leaves to read: a deletion's is the one it deleted."""
    return old_blob if status == "D" else new_blob


#: a row of the `commits` table, and one of `changes`
CommitRow = tuple[str, int, int, str, str, str, str | None, int, str, str]
ChangeRow = tuple[str, str, str, str | None, str | None, int, int]


def history_rows(commits: list[Commit], root: str, seq0: int
                 ) -> tuple[list[CommitRow], list[ChangeRow]]:
    """`commits` (newest first, as `gitrepo.log` gives them) as rows of `commits` and
    `changes`, numbered oldest first from `seq0`; only changes under `root`."""
    rows: list[CommitRow] = []
    changes: list[ChangeRow] = []
    prefix = root + "/"
    for offset, commit in enumerate(reversed(commits)):
        seq = seq0 + offset
        rows.append((commit.sha, seq, int(commit.first_parent), " ".join(commit.parents),
                     commit.author, commit.email, commit.op, commit.time, commit.subject,
                     commit.body))
        for ch in commit.changes:
            if ch.path.startswith(prefix):
                changes.append((commit.sha, ch.path, ch.status, ch.old_blob, ch.new_blob,
                                seq, int(commit.first_parent)))
    return rows, changes


class FirstParentChanges:
    """A rebuild's history in memory, from the rows it writes to `commits` and `changes`:
    each commit's sequence number, and per path the blob after each first-parent change.
    Answers what `blob_at` and the `commits` table do, without the connection."""

    def __init__(self, commit_rows: list[CommitRow], change_rows: list[ChangeRow]) -> None:
        self.seq: dict[str, int] = {row[0]: row[1] for row in commit_rows}
        self._changes: dict[str, tuple[list[int], list[str | None]]] = {}
        for _sha, path, status, old_blob, new_blob, seq, first_parent in change_rows:
            if first_parent:  # (rows come oldest first: each path's list stays sorted)
                seqs, blobs = self._changes.setdefault(path, ([], []))
                seqs.append(seq)
                blobs.append(_blob_after(status, old_blob, new_blob))

    @classmethod
    def of(cls, commits: list[Commit], root: str) -> FirstParentChanges:
        return cls(*history_rows(commits, root, 0))

    def blob_at(self, path: str, seq: int) -> str | None:
        """The blob of `path` as of first-parent commit `seq`, stepping over deletions."""
        found = self._changes.get(path)
        if found is None:
            return None
        seqs, blobs = found
        at = bisect.bisect_right(seqs, seq)
        return blobs[at - 1] if at else None
