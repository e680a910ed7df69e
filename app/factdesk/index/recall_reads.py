"""The index reads behind recall (factdesk.recall), the MCP server's listing and the
message checks: facts by id for rendering, their error findings, the live paths."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from factdesk.index.rows import rows_in

_RENDERED = ("id, path, status, title, type, claim_type, claimant, claimant_type, subject_kind, "
             "subject_ref, settle_by, settlement, sources, refs, evidence_weight, "
             "evidence_weight_computed, blob")


def rows_for_render(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Any]:
    """id → the fields recall renders, for the facts `ids` names."""
    return {r["id"]: r for r in rows_in(
        conn, f"SELECT {_RENDERED} FROM facts WHERE id IN ({{marks}})", list(ids))}


def error_codes(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, list[str]]:
    """path → the codes of its error-severity findings (rule breaches), for `paths`."""
    out: dict[str, list[str]] = {}
    for path, code in rows_in(
            conn, "SELECT path, code FROM problems WHERE severity = 'error' AND path IN ({marks})",
            list(paths)):
        out.setdefault(path, []).append(code)
    return out


def unretracted_paths(conn: sqlite3.Connection) -> set[str]:
    """Every fact path that is not retracted (live and unreadable ones)."""
    return {r[0] for r in conn.execute("SELECT path FROM facts WHERE status != 'retracted'")}


def newest_live(conn: sqlite3.Connection, limit: int) -> list[dict[str, Any]]:
    """The newest live facts (id, path, title, type), newest first."""
    return [dict(r) for r in conn.execute(
        "SELECT id, path, title, type FROM facts WHERE status = 'live' "
        "ORDER BY updated_at DESC, id DESC LIMIT ?", (limit,))]


def provenance(conn: sqlite3.Connection, path: str) -> tuple[str | None, int | None]:
    """(claimant, first commit time) of the fact at `path` (None, None when unknown)."""
    row = conn.execute("SELECT claimant, created_at FROM facts WHERE path = ?", (path,)).fetchone()
    return (row[0], row[1]) if row is not None else (None, None)


def authority_finding_count(conn: sqlite3.Connection) -> int:
    """How many authority and registry findings the index holds."""
    return int(conn.execute(
        "SELECT COUNT(*) FROM problems WHERE code IN ('A1', 'E1', 'registry', "
        "'registry-trust')").fetchone()[0])
