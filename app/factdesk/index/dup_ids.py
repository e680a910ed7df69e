"""Facts that share an 8-hex name (issue 22 #9). knomit mints `<8 hex>.md` names with no
collision check (FORMAT §1.4: about one collision at 100,000 facts), so two facts in two
folders may have one name: neither is wrong, but a name then no longer finds one fact.
`dup_id` is a warning on each of them, worked out from the rows when it is read (never
stored: a new twin changes the other fact's findings without touching its file, and a
derived finding is always what a rebuild would give, I1)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence

from factdesk.model.enums import Severity
from factdesk.model.fact import Problem

CODE = "dup_id"
#: knomit's minted names (FORMAT §1.4)
NAME = re.compile(r"[0-9a-f]{8}\.md")


def name_of(path: str) -> str | None:
    """The 8-hex file name of `path` (lower case), or None for any other name."""
    name = path.rsplit("/", 1)[-1].lower()
    return name if NAME.fullmatch(name) else None


#: the facts whose path ends in a name (lower case, 11 characters), through the index on
#: that expression (`schema.SORT_INDEXES`' facts_name: a lookup, not a read of every row)
SAME_NAME = ("SELECT path FROM facts WHERE lower(substr(path, -11)) = ? AND status != 'retracted' "
             "AND path != ? ORDER BY path")


def same_name(conn: sqlite3.Connection, path: str) -> list[str]:
    """The other facts (live or broken) with the 8-hex name of `path`."""
    name = name_of(path)
    if name is None:
        return []
    return [r[0] for r in conn.execute(SAME_NAME, (name, path))
            if r[0].rsplit("/", 1)[-1].lower() == name]


def problem(path: str, others: Sequence[str]) -> Problem:
    listed = ", ".join(others[:5]) + (f" (+{len(others) - 5} more)" if len(others) > 5 else "")
    return Problem(path, 1, CODE, Severity.WARNING,
                   f"its 8-hex name is also {listed}: the name alone is ambiguous (knomit's "
                   "names are not unique, FORMAT §1.4); refer to it by its path")


def problems_for(conn: sqlite3.Connection, path: str) -> list[Problem]:
    others = same_name(conn, path)
    return [problem(path, others)] if others else []


def all_problems(conn: sqlite3.Connection) -> list[Problem]:
    """A `dup_id` warning on each fact that shares its 8-hex name."""
    by_name: dict[str, list[str]] = {}
    # SQLite finds the paths whose last 11 characters are shared (in C, one pass); the
    # exact 8-hex rule is applied to those few here
    for (path,) in conn.execute(
            "SELECT path FROM facts WHERE status != 'retracted' AND lower(substr(path, -11)) IN "
            "(SELECT lower(substr(path, -11)) AS tail FROM facts WHERE status != 'retracted' "
            "GROUP BY tail HAVING count(*) > 1)"):
        if (name := name_of(path)) is not None:
            by_name.setdefault(name, []).append(path)
    return [problem(p, [o for o in group if o != p])
            for group in by_name.values() if len(group) > 1 for p in sorted(group)]


def among(paths: Iterable[str], conn: sqlite3.Connection, *,
          gone: Iterable[str] = ()) -> dict[str, list[str]]:
    """For versions about to be in place (a decision's), path → the other facts with its
    8-hex name: the indexed ones (but those in `gone`, deleted by it) and its own others."""
    mine = list(paths)
    deleted = set(gone)
    out: dict[str, list[str]] = {}
    for p in mine:
        name = name_of(p)
        if name is None:
            continue
        others = [o for o in same_name(conn, p) if o not in deleted]
        others += [o for o in mine if o != p and name_of(o) == name and o not in others]
        if others:
            out[p] = sorted(others)
    return out
