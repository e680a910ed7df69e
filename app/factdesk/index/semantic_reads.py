"""The index reads the semantic layer makes (issue 14: SQL only in `index/` and in the
stores that own their tables). Pure reads over an open index connection."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from factdesk.index.query import CompiledQuery


def title_and_body(conn: sqlite3.Connection, path: str) -> tuple[str, str] | None:
    """The title and body of the fact at `path` (what is embedded), or None."""
    row = conn.execute("SELECT title, body FROM facts WHERE path = ?", (path,)).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


def commit_times(conn: sqlite3.Connection) -> dict[str, int]:
    """Every commit the index has read: sha → committer time (for `since:`)."""
    return {r[0]: r[1] for r in conn.execute("SELECT sha, time FROM commits")}


def paths_matching(conn: sqlite3.Connection, compiled: CompiledQuery, paths: Sequence[str]
                   ) -> set[str]:
    """Those of `paths` whose facts the query's filters (and its retracted rule) select."""
    if not paths:
        return set()
    sql = (f"SELECT f.path FROM facts f WHERE {compiled.where_sql()} "
           "AND f.path IN (SELECT value FROM json_each(?))")
    return {r[0] for r in conn.execute(sql, [*compiled.params, json.dumps(list(paths))])}
