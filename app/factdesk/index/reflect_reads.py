"""The index reads that reflection (`reflect/queue.py`) makes: SQL stays in `index/`."""

from __future__ import annotations

import sqlite3


def live_hypotheses(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    """Every live hypothesis's row of `facts`."""
    return conn.execute(
        "SELECT * FROM facts WHERE status = 'live' AND type = 'hypothesis'").fetchall()


def fact_brief(conn: sqlite3.Connection, path: str) -> sqlite3.Row | None:
    """path, title, type, status and created_at of one fact, or None."""
    row: sqlite3.Row | None = conn.execute(
        "SELECT path, title, type, status, created_at FROM facts WHERE path = ?",
        (path,)).fetchone()
    return row


def methodology_citations(conn: sqlite3.Connection) -> list[tuple[str, str, int]]:
    """(path, title, live facts citing it) for every live methodology fact, by path."""
    rows = conn.execute(
        "SELECT f.path, f.title, (SELECT COUNT(*) FROM refs r CROSS JOIN facts s ON s.path = r.src "
        "  WHERE r.target IN (f.path, lower(f.path)) AND s.status = 'live' "
        "  AND s.path != f.path) AS n "
        "FROM facts f WHERE f.status = 'live' AND f.type = 'methodology' ORDER BY f.path")
    return [(r["path"], r["title"], int(r["n"])) for r in rows]
