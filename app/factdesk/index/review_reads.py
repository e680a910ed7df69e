"""Reads of the index for proposal review (factdesk/review/): the derived facts awaiting a
curator's attestation, and the facts citing a path (a deletion that leaves citations
behind). SQL lives in `factdesk.index`; review only calls these."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from factdesk.index.rows import rows_in


def derived_facts(conn: sqlite3.Connection) -> list[tuple[str, str, str, str, str, str, int]]:
    """(path, title, type, origin, blob, creator e-mail, created at) of every live fact
    whose origin is `distilled` or `discovered`, newest first."""
    return [tuple(r) for r in conn.execute(
        "SELECT path, title, type, origin, blob, creator_email, created_at FROM facts "
        "WHERE status = 'live' AND origin IN ('distilled', 'discovered') "
        "ORDER BY created_at DESC, path")]


def citing(conn: sqlite3.Connection, targets: Sequence[str]) -> dict[str, list[str]]:
    """target path (lower case, as the refs table keeps it) → the live facts citing it."""
    out: dict[str, list[str]] = {}
    if not targets:
        return out
    for src, target in rows_in(
            conn, "SELECT r.src, r.target FROM refs r JOIN facts f ON f.path = r.src "
                  "WHERE f.status = 'live' AND r.target IN ({marks})",
            [t.lower() for t in targets]):
        out.setdefault(target, []).append(src)
    return out
