"""The index reads the curation layer needs (issue 14: SQL lives in `index/`).

Small named queries over an open index connection; each says what it returns. The
curation operations and the dismissals queue call these and never write SQL of their own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from factdesk.index.rows import rows_in


def stored_repo_ids(conn: sqlite3.Connection) -> frozenset[str] | None:
    """The repository ids the index remembers (`meta.repo_id`), or None when it has none."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'repo_id'").fetchone()
    return frozenset(str(row[0]).split()) if row and row[0] else None


def meta_values(conn: sqlite3.Connection) -> dict[str, str]:
    """Every `meta` key and value of the index."""
    return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta").fetchall()}


def derived_envelope(conn: sqlite3.Connection, path: str) -> dict[str, str | None] | None:
    """The envelope fields the indexer derived for the fact at `path` (claim type,
    claimant, claimant type, subject kind), or None when the index has no such fact."""
    row = conn.execute("SELECT claim_type, claimant, claimant_type, subject_kind "
                       "FROM facts WHERE path = ?", (path,)).fetchone()
    if row is None:
        return None
    return {"claim_type": row[0], "claimant": row[1], "claimant_type": row[2], "subject_kind": row[3]}


def citing_paths(conn: sqlite3.Connection, targets: Sequence[str]) -> set[str]:
    """The paths of the facts whose refs resolve to any of `targets` (lower-cased paths)."""
    return {src for (src,) in rows_in(
        conn, "SELECT DISTINCT src FROM refs WHERE target IN ({marks})", list(targets))}


def live_fact_rows(conn: sqlite3.Connection, paths: Iterable[str] | None = None
                   ) -> list[sqlite3.Row]:
    """The index rows of the live facts (all, or those at `paths`), ordered by path."""
    conn.row_factory = sqlite3.Row
    if paths is None:
        return conn.execute("SELECT * FROM facts WHERE status = 'live' ORDER BY path").fetchall()
    rows = rows_in(conn, "SELECT * FROM facts WHERE status = 'live' AND path IN ({marks})",
                   sorted(set(paths)))
    return sorted(rows, key=lambda r: r["path"])
