"""Read-only queries of the index that the desktop app makes on its GUI thread (the lazy
table's pages, the Problems tab, the Overview's totals, the session's repository ids, a
queue pane's fact). SQL lives in `factdesk.index`; the GUI only calls these.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from factdesk.index.curation_reads import stored_repo_ids

PROBLEMS_SQL = """
SELECT p.code, p.severity, p.path, p.line, p.message, f.id, f.title
FROM problems p LEFT JOIN facts f ON f.path = p.path
ORDER BY CASE p.severity WHEN 'error' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, p.code, p.path
"""


def problem_rows(conn: sqlite3.Connection) -> Iterator[sqlite3.Row]:
    """Every finding with its fact's id and title, errors first, by code and path."""
    return iter(conn.execute(PROBLEMS_SQL))


def totals(conn: sqlite3.Connection) -> tuple[int, int]:
    """(live facts, findings)."""
    live = conn.execute("SELECT COUNT(*) FROM facts WHERE status = 'live'").fetchone()[0]
    problems = conn.execute("SELECT COUNT(*) FROM problems").fetchone()[0]
    return int(live), int(problems)


def repo_ids(conn: sqlite3.Connection) -> frozenset[str]:
    """The repository ids the index remembers (a ref naming one is local)."""
    return stored_repo_ids(conn) or frozenset()


def live_fact(conn: sqlite3.Connection, path: str) -> sqlite3.Row | None:
    """The indexed fact at `path` (id, title, body, envelope columns), None if absent."""
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM facts WHERE path = ? ORDER BY status = 'retracted' LIMIT 1", (path,)).fetchone()
    return row
