"""Read-only queries of the index that the desktop app makes on its GUI thread (the lazy
table's pages, the Problems tab, the Overview's totals, the session's repository ids, a
queue pane's fact). SQL lives in `factdesk.index`; the GUI only calls these.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from typing import Any

from factdesk.index import dup_ids
from factdesk.index.curation_reads import stored_repo_ids

PROBLEMS_SQL = """
SELECT p.code, p.severity, p.path, p.line, p.message, f.id, f.title
FROM problems p LEFT JOIN facts f ON f.path = p.path
ORDER BY CASE p.severity WHEN 'error' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, p.code, p.path
"""


def problem_rows(conn: sqlite3.Connection) -> Iterator[Mapping[str, Any]]:
    """Every finding with its fact's id and title, errors first, by code and path: the
    stored ones and the derived `dup_id` warnings (index.dup_ids), as `check` lists them."""
    stored = [dict(r) for r in conn.execute(PROBLEMS_SQL)]
    derived = dup_ids.all_problems(conn)
    if not derived:
        return iter(stored)
    paths = [p.path for p in derived]
    facts = {path: (fid, title) for i in range(0, len(paths), 500)
             for path, fid, title in conn.execute(
                 "SELECT path, id, title FROM facts WHERE path IN "
                 f"({','.join('?' * len(paths[i:i + 500]))})", paths[i:i + 500])}
    rows = stored + [{"code": p.code, "severity": str(p.severity), "path": p.path,
                      "line": p.line, "message": p.message,
                      "id": facts.get(p.path, (None, None))[0],
                      "title": facts.get(p.path, (None, None))[1]} for p in derived]
    rank = {"error": 0, "warning": 1}
    return iter(sorted(rows, key=lambda r: (rank.get(r["severity"], 2), r["code"], r["path"])))


def totals(conn: sqlite3.Connection) -> tuple[int, int]:
    """(live facts, findings)."""
    live = conn.execute("SELECT COUNT(*) FROM facts WHERE status = 'live'").fetchone()[0]
    problems = conn.execute("SELECT COUNT(*) FROM problems").fetchone()[0]
    return int(live), int(problems) + len(dup_ids.all_problems(conn))


def repo_ids(conn: sqlite3.Connection) -> frozenset[str]:
    """The repository ids the index remembers (a ref naming one is local)."""
    return stored_repo_ids(conn) or frozenset()


def live_fact(conn: sqlite3.Connection, path: str) -> sqlite3.Row | None:
    """The indexed fact at `path` (id, title, body, envelope columns), None if absent."""
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM facts WHERE path = ? ORDER BY status = 'retracted' LIMIT 1", (path,)).fetchone()
    return row
