"""The index of the message store (`msg/`, FORMAT.md §14), kept apart from the facts'.

Messages live in a SQLite file of their own beside the facts' index
(`.git/factdesk/messages.v1.db`): the facts' index holds exactly the schema its version
makes (anything more there reads as damage), and nothing that reads facts — search, the
table, facets, counts, recall — ever meets a message unless it asks for them
(`include:messages`, `--include-agent-comm`).

`refresh` brings it up to date by comparing the work tree's stat data (size, mtime) with
what it recorded, reading only the files that changed; it is derived, so a damaged or
other-version file is replaced.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from factdesk.corpus.messages import MessageOutcome, Seen, cross_check, read_message, scan
from factdesk.index.query import CompiledQuery
from factdesk.index.rows import rows_in
from factdesk.model.enums import Severity
from factdesk.model.fact import Problem
from factdesk.model.messages import Message

_T = TypeVar("_T")

VERSION = 1
FILE_NAME = f"messages.v{VERSION}.db"

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS messages (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        ok INTEGER NOT NULL,
        sender TEXT NOT NULL DEFAULT '', recipients TEXT NOT NULL DEFAULT '[]',
        sent TEXT NOT NULL DEFAULT '', delivery TEXT NOT NULL DEFAULT '',
        context TEXT, refs TEXT NOT NULL DEFAULT '[]', in_reply_to TEXT,
        extra TEXT NOT NULL DEFAULT '{}', key_lines TEXT NOT NULL DEFAULT '{}',
        body TEXT NOT NULL DEFAULT '',
        size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS messages_sent ON messages(sent)",
    """CREATE TABLE IF NOT EXISTS message_problems (
        path TEXT NOT NULL, line INTEGER NOT NULL, code TEXT NOT NULL,
        severity TEXT NOT NULL, message TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS message_problems_path ON message_problems(path)",
    """CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
        sender, recipients, context, body, tokenize='unicode61 remove_diacritics 2')""",
)


@dataclass(frozen=True, slots=True)
class RefreshStats:
    messages: int
    changed: int
    removed: int
    seconds: float


def db_path(index_path: Path) -> Path:
    """The messages' file beside the facts' index file (`Indexer.path`)."""
    return index_path.parent / FILE_NAME


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    if readonly:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10,
                               check_same_thread=False)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=10, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


def _open_for_write(path: Path) -> sqlite3.Connection:
    """The file, made or checked; a damaged one (or another version's) is replaced: it is
    derived from the files under msg/."""
    for attempt in (1, 2):
        conn: sqlite3.Connection | None = None
        try:
            conn = connect(path)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == VERSION:  # (made before: no write unless something changed)
                return conn
            if version != 0:
                raise sqlite3.DatabaseError(f"messages index version {version}")
            conn.execute("PRAGMA journal_mode = WAL")
            for statement in SCHEMA:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {VERSION}")
            conn.commit()
            return conn
        except sqlite3.DatabaseError:
            if attempt == 2:
                raise
            if conn is not None:
                with contextlib.suppress(Exception):  # (closing a broken connection)
                    conn.close()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
    raise AssertionError("unreachable")


def refresh(repo: Path, path: Path) -> RefreshStats:
    """Bring the messages' index at `path` up to date with `repo`'s msg/ folder."""
    started = time.perf_counter()
    seen = {s.path: s for s in scan(repo)}
    conn = _open_for_write(path)
    try:
        known = {r[0]: (r[1], r[2]) for r in conn.execute(
            "SELECT path, size, mtime_ns FROM messages")}
        changed = [s for p, s in seen.items() if known.get(p) != (s.size, s.mtime_ns)]
        gone = [p for p in known if p not in seen]
        if changed or gone:
            conn.execute("BEGIN IMMEDIATE")
            for p in gone:
                _delete(conn, p)
            for s in changed:
                _delete(conn, s.path)
                _insert(conn, read_message(repo, s.path), s)
            conn.commit()
        return RefreshStats(len(seen), len(changed), len(gone), time.perf_counter() - started)
    finally:
        conn.close()


def _delete(conn: sqlite3.Connection, rel: str) -> None:
    row = conn.execute("SELECT id FROM messages WHERE path = ?", (rel,)).fetchone()
    if row is not None:
        conn.execute("DELETE FROM messages_fts WHERE rowid = ?", (row[0],))
        conn.execute("DELETE FROM messages WHERE id = ?", (row[0],))
    conn.execute("DELETE FROM message_problems WHERE path = ?", (rel,))


def _insert(conn: sqlite3.Connection, outcome: MessageOutcome, seen: Seen) -> None:
    m = outcome.message
    cur = conn.execute(
        "INSERT INTO messages (path, ok, sender, recipients, sent, delivery, context, refs, "
        "in_reply_to, extra, key_lines, body, size, mtime_ns) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (outcome.path, int(m is not None), m.sender if m else "",
         json.dumps(list(m.to) if m else []), m.sent if m else "", m.delivery if m else "",
         m.context_explanation if m else None, json.dumps(list(m.referenced_memory_ids) if m else []),
         m.in_reply_to if m else None, json.dumps(dict(m.extra) if m else {}, default=str),
         json.dumps(dict(m.key_lines) if m else {}), outcome.text, seen.size, seen.mtime_ns))
    conn.execute("INSERT INTO messages_fts (rowid, sender, recipients, context, body) "
                 "VALUES (?, ?, ?, ?, ?)",
                 (cur.lastrowid, m.sender if m else "", " ".join(m.to) if m else "",
                  (m.context_explanation or "") if m else "", outcome.text))
    conn.executemany(
        "INSERT INTO message_problems (path, line, code, severity, message) VALUES (?, ?, ?, ?, ?)",
        [(p.path, p.line, p.code, str(p.severity), p.message) for p in outcome.problems])


# -- reads ---------------------------------------------------------------------------------


def _message(row: sqlite3.Row) -> Message:
    return Message(path=row["path"], sender=row["sender"], to=tuple(json.loads(row["recipients"])),
                   sent=row["sent"], delivery=row["delivery"], body=row["body"],
                   context_explanation=row["context"],
                   referenced_memory_ids=tuple(json.loads(row["refs"])),
                   in_reply_to=row["in_reply_to"], extra=json.loads(row["extra"]),
                   key_lines=json.loads(row["key_lines"]))


def all_messages(conn: sqlite3.Connection) -> list[Message]:
    """Every readable message, oldest first."""
    return [_message(r) for r in conn.execute(
        "SELECT * FROM messages WHERE ok = 1 ORDER BY sent, path")]


def get_message(conn: sqlite3.Connection, path: str) -> Message | None:
    row = conn.execute("SELECT * FROM messages WHERE path = ? AND ok = 1", (path,)).fetchone()
    return _message(row) if row is not None else None


def referencing(conn: sqlite3.Connection, fact_path: str) -> list[Message]:
    """The messages whose `referenced_memory_ids` name `fact_path` (the inspector's
    backlinks), oldest first."""
    return [_message(r) for r in conn.execute(
        "SELECT m.* FROM messages m WHERE m.ok = 1 AND EXISTS "
        "(SELECT 1 FROM json_each(m.refs) r WHERE r.value = ?) ORDER BY m.sent, m.path",
        (fact_path,))]


def addressed_to(conn: sqlite3.Connection, agent: str, limit: int) -> list[Message]:
    """The readable messages whose `to` names `agent` (an agent's inbox), newest first."""
    return [_message(r) for r in conn.execute(
        "SELECT m.* FROM messages m WHERE m.ok = 1 AND EXISTS "
        "(SELECT 1 FROM json_each(m.recipients) r WHERE r.value = ?) "
        "ORDER BY m.sent DESC, m.path LIMIT ?", (agent, limit))]


def count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0])


def problems(conn: sqlite3.Connection, fact_paths: Iterable[str] | set[str]) -> list[Problem]:
    """Every finding about the messages: each file's own, then the cross-file ones (a
    referenced fact or a replied-to message that does not exist)."""
    facts = fact_paths if isinstance(fact_paths, set) else set(fact_paths)
    out = [Problem(r[0], r[1], r[2], Severity(r[3]), r[4]) for r in conn.execute(
        "SELECT path, line, code, severity, message FROM message_problems")]
    paths = known_paths(conn)
    out += cross_check(all_messages(conn), facts, paths)
    out.sort(key=lambda p: (p.path, p.line, p.code))
    return out


@dataclass(frozen=True, slots=True)
class MessageHit:
    """A message in search results (`search --format json` with `include:messages`)."""

    path: str
    title: str
    sender: str
    to: tuple[str, ...]
    delivery: str
    score: float
    id: None = None
    type: str = "message"

    def as_dict(self) -> dict[str, object]:
        return {"id": None, "path": self.path, "title": self.title, "type": "message",
                "score": round(self.score, 6), "from": self.sender, "to": list(self.to),
                "delivery": self.delivery}


def search(conn: sqlite3.Connection, q: CompiledQuery, *, limit: int = 20) -> list[MessageHit]:
    """The best `limit` messages for a compiled query: bm25 with text, newest without. The
    facts' field filters say nothing about messages: a query with any matches none."""
    if q.filters:
        return []
    if q.fts is None:
        rows = conn.execute("SELECT id, 0.0 FROM messages WHERE ok = 1 "
                            "ORDER BY sent DESC, path DESC LIMIT ?", (limit,)).fetchall()
    else:
        try:
            rows = conn.execute(
                "SELECT rowid, bm25(messages_fts, 1.0, 1.0, 3.0, 1.0) FROM messages_fts "
                "WHERE messages_fts MATCH ? ORDER BY bm25(messages_fts, 1.0, 1.0, 3.0, 1.0) "
                "LIMIT ?", (q.fts, limit)).fetchall()
        except sqlite3.OperationalError:
            return []
    score = {r[0]: -float(r[1]) for r in rows}
    if not score:
        return []
    found = {r["id"]: r for r in rows_in(conn, "SELECT * FROM messages WHERE id IN ({marks})",
                                         list(score), named=True)}
    out = []
    for i, s in score.items():
        if i in found:
            m = _message(found[i])
            out.append(MessageHit(m.path, m.first_line or m.path, m.sender, m.to, m.delivery, s))
    return out


def read(repo: Path, index_path: Path, work: Callable[[sqlite3.Connection], _T]) -> _T:
    """`refresh`, then `work` over a read-only connection."""
    path = db_path(index_path)
    refresh(repo, path)
    conn = connect(path, readonly=True)
    try:
        return work(conn)
    finally:
        conn.close()


def known_paths(conn: sqlite3.Connection) -> set[str]:
    """Every indexed message's path."""
    return {r[0] for r in conn.execute("SELECT path FROM messages")}


def referenced_facts(conn: sqlite3.Connection, paths: list[str]) -> dict[str, tuple[str, str]]:
    """Over the *facts'* index: path → (title, status) of each referenced fact that has a
    row (a retracted one keeps its last version's), for the Messages tab's references."""
    return {r[0]: (r[1], r[2]) for r in rows_in(
        conn, "SELECT path, title, status FROM facts WHERE path IN ({marks})", paths)}
