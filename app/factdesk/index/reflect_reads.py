"""The index reads that reflection (`reflect/queue.py`) makes: SQL stays in `index/`."""

from __future__ import annotations

import sqlite3


def live_hypotheses(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    """Every live hypothesis's row of `facts`."""
    return conn.execute(
        "SELECT * FROM facts WHERE status = 'live' AND type = 'hypothesis'").fetchall()


def fact_brief(conn: sqlite3.Connection, path: str) -> sqlite3.Row | None:
    """path, title, type, kind, status and created_at of one fact, or None."""
    row: sqlite3.Row | None = conn.execute(
        "SELECT path, title, type, kind, status, created_at FROM facts WHERE path = ?",
        (path,)).fetchone()
    return row


def refs_toward(conn: sqlite3.Connection, path: str, *, limit: int = 100_000
                ) -> tuple[dict[str, list[str]], dict[str, str]]:
    """The refs of every live fact from which `path` is reachable by following refs (any
    depth), as lower-cased `src → [targets]`, and those facts' titles by lower-cased path:
    all a derivation check needs (`model.derivation`), read backwards from `path` along the
    refs table's target index."""
    refs: dict[str, list[str]] = {}
    titles: dict[str, str] = {}
    seen = {path.lower()}
    frontier = [path.lower()]
    while frontier and len(seen) < limit:
        found: list[str] = []
        for start in range(0, len(frontier), 500):
            batch = frontier[start:start + 500]
            marks = ",".join("?" * len(batch))
            for row in conn.execute(
                    f"SELECT r.src, r.target, f.title FROM refs r JOIN facts f ON f.path = r.src "
                    f"WHERE r.target IN ({marks})", batch):
                src = str(row[0]).lower()
                refs.setdefault(src, []).append(str(row[1]).lower())
                titles[src] = str(row[2])
                if src not in seen:
                    seen.add(src)
                    found.append(src)
        frontier = found
    return refs, titles


def methodology_citations(conn: sqlite3.Connection) -> list[tuple[str, str, int]]:
    """(path, title, live facts citing it) for every live methodology fact, by path."""
    rows = conn.execute(
        "SELECT f.path, f.title, (SELECT COUNT(*) FROM refs r CROSS JOIN facts s ON s.path = r.src "
        "  WHERE r.target IN (f.path, lower(f.path)) AND s.status = 'live' "
        "  AND s.path != f.path) AS n "
        "FROM facts f WHERE f.status = 'live' AND f.type = 'methodology' ORDER BY f.path")
    return [(r["path"], r["title"], int(r["n"])) for r in rows]
