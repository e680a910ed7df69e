"""The index reads behind the Agents record (reflect/agents.py): who claimed what, the
authority findings, the commits' authors and the files each commit changed."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator


def added_blobs(conn: sqlite3.Connection) -> Iterator[tuple[str, str | None]]:
    """(path, blob) of every addition, copy or rename in history order (a path's first
    version comes first)."""
    yield from conn.execute(
        "SELECT path, new_blob FROM changes WHERE status IN ('A', 'C', 'R') ORDER BY seq")


def fact_claims(conn: sqlite3.Connection) -> list[tuple[str, str, str | None, str | None, str | None, str]]:
    """(path, status, claimant, claim type, subject kind, type) of every indexed fact."""
    return conn.execute("SELECT path, status, claimant, claim_type, subject_kind, type FROM facts"
                        ).fetchall()


def authority_findings(conn: sqlite3.Connection) -> dict[str, int]:
    """How many authority (A1) findings each fact has."""
    return dict(conn.execute(
        "SELECT path, COUNT(*) FROM problems WHERE code = 'A1' GROUP BY path").fetchall())


def commit_authors(conn: sqlite3.Connection) -> list[tuple[str | None, str | None, int, int]]:
    """(author, e-mail, time, on the first-parent line) of every indexed commit."""
    return conn.execute("SELECT author, email, time, first_parent FROM commits").fetchall()


def changed_not_added(conn: sqlite3.Connection, commit: str) -> tuple[str, ...]:
    """The paths `commit` changed or deleted (not those it added)."""
    return tuple(p for (p,) in conn.execute(
        "SELECT path FROM changes WHERE sha = ? AND status != 'A'", (commit,)))
