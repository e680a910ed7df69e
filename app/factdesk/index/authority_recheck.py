"""A registry change re-checked in place (issue 16): the rows and findings that depend on
`.factdesk/agents.yaml`, and nothing else, brought to what a rebuild would write.

What the registry decides in the index (and only this):

* a row's **derived claimant** (no `claimant_agent_id` in the file): the registry id of
  the creating commit's author e-mail, else knomit's id from that e-mail, else the
  author's name (`rows.fact_row`); and its **derived claimant type** (no `claimant_type`
  in the file): the registry's type for that claimant;
* the **authority findings** of a live fact that names its claimant or claimant type:
  `A1` (the authority table, with an added type's rows; the persona's refs; the claimant
  against the registry and the commit author) and the `E1` finding "unknown
  claimant_type" (the registry's types);
* each row's error and warning counts, which count those findings, and its `sum_head`
  checksum, which covers the columns above;
* the registry's own findings (`registry`, `registry-trust`).

Every other column, finding, ref and the full-text rows are the same under any
registry, so `recheck` reads the few columns it needs (no bodies), recomputes those
values with the same functions a rebuild uses (`rows.fact_row`'s rule, `rules._a1`,
`rules._envelope_values`), and writes only the rows and findings that differ. At 100,000
facts it takes a fraction of a second where a rebuild took minutes
(bench/agents_bench.py); tests/agents/test_recheck.py holds it equal to a rebuild.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from factdesk.index import schema
from factdesk.index.rows import _NORMAL, SUM_GROUPS, checksum, problem_counts
from factdesk.model.enums import Severity
from factdesk.model.fact import Envelope, Fact, Problem
from factdesk.model.registry import Registry, agent_id_from_email
from factdesk.model.rules import CheckContext, _a1, _envelope_values

#: the registry's own finding codes (`registry_io`, `registry_trust`)
REGISTRY_CODES = ("registry", "registry-trust")
#: the E1 finding the registry decides (its list of agent types)
_UNKNOWN_TYPE = "unknown claimant_type "
_EMPTY_TYPE = _UNKNOWN_TYPE + "''"
_HEAD = SUM_GROUPS["sum_head"]
#: the full-text table's update trigger (`schema.TRIGGERS`), dropped while the re-check
#: writes columns the full-text table does not hold
_UPDATE_TRIGGER = next(s + "END;" for s in schema.TRIGGERS.split("END;")
                       if "CREATE TRIGGER facts_au" in s).strip()
_SELECT = ("id", "path", "status", "type", "refs", "key_lines", "claim_type",
           "claim_type_derived", "claimant_derived", "claimant_type_derived", "settle_by",
           "creator", "creator_email", *(c for c in _HEAD if c not in (
               "path", "status", "type", "claim_type", "claim_type_derived",
               "claimant_derived")), "sum_head")


@dataclass
class Recheck:
    """What a registry re-check changed."""

    #: paths whose row (claimant, claimant type, counts) changed
    rows: list[str] = field(default_factory=list)
    #: authority findings (A1, E1 unknown type, the registry's own) before and after
    before: int = 0
    after: int = 0
    #: findings that appeared, and that disappeared
    appeared: int = 0
    disappeared: int = 0

    @property
    def paths(self) -> list[str]:
        return self.rows


def only_registry_changed(meta: dict[str, str], *, root: str, registry: str,
                          ontology: str) -> bool:
    """The index was built under another registry, and under the same root and ontology:
    a re-check, not a rebuild. (An index without a complete build is rebuilt.)"""
    return (meta.get("complete") == "1" and meta.get("root") == root
            and meta.get("ontology") == ontology and meta.get("registry") != registry)


def registry_dependent(problem_code: str, message: str) -> bool:
    """A finding the registry decides (what `recheck` deletes and writes again)."""
    if problem_code == "A1":
        return True
    return problem_code == "E1" and message.startswith(_UNKNOWN_TYPE)


def recheck(conn: sqlite3.Connection, registry: Registry, *, stamp: str) -> Recheck:
    """Bring every registry-dependent value of the index to what a rebuild under
    `registry` writes, inside the caller's write transaction, and record `stamp` as the
    registry the index was built under."""
    out = Recheck()
    creator_id = _creator_ids(registry)
    had = _dependent_findings(conn)
    registry_had = _registry_findings(conn)
    out.before = sum(len(v) for v in had.values()) + len(registry_had)
    conn.execute("DROP TRIGGER IF EXISTS facts_au")  # (no full-text column changes here)
    try:
        out.rows, out.appeared, out.disappeared = _recheck_rows(conn, registry, creator_id, had)
    finally:
        conn.execute(_UPDATE_TRIGGER)
    conn.execute(f"DELETE FROM problems WHERE code IN ({','.join('?' * len(REGISTRY_CODES))})",
                 REGISTRY_CODES)
    conn.executemany(
        "INSERT INTO problems (path, line, code, severity, message) VALUES (?,?,?,?,?)",
        [(p.path, p.line, p.code, str(p.severity), p.message) for p in registry.problems])
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('registry', ?)", (stamp,))
    registry_now = _registry_findings(conn)
    out.appeared += len(_minus(registry_now, registry_had))
    out.disappeared += len(_minus(registry_had, registry_now))
    out.after = out.before + out.appeared - out.disappeared
    return out


def _same(f: Finding) -> Finding:
    """A finding as the count of those that appeared or disappeared sees it: one whose
    list of legal types alone changed is the same finding."""
    return (*f[:3], f[3].split(": must be one of ", 1)[0])


def _minus(a: Sequence[Finding], b: Sequence[Finding]) -> list[Finding]:
    """`a` less `b`, as multisets of `_same` findings."""
    left = [_same(f) for f in b]
    out = []
    for item in a:
        if _same(item) in left:
            left.remove(_same(item))
        else:
            out.append(item)
    return out


def _creator_ids(registry: Registry) -> Any:
    @cache
    def creator_id(email: str | None, name: str | None) -> str | None:
        if not email:
            return None
        agent = registry.agent_for_email(email)
        return agent.id if agent else (agent_id_from_email(email) or name)

    return creator_id


Finding = tuple[int, str, str, str]  # (line, code, severity, message)


def _registry_findings(conn: sqlite3.Connection) -> list[Finding]:
    return [tuple(r) for r in conn.execute(  # type: ignore[misc]
        "SELECT line, code, severity, message FROM problems WHERE code IN "
        f"({','.join('?' * len(REGISTRY_CODES))})", REGISTRY_CODES)]


def _dependent_findings(conn: sqlite3.Connection) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for path, line, code, severity, message in conn.execute(
            "SELECT path, line, code, severity, message FROM problems "
            "WHERE code IN ('A1', 'E1') ORDER BY id"):
        if registry_dependent(code, message):
            out.setdefault(path, []).append((line, code, severity, message))
    return out


def _light_fact(row: sqlite3.Row, had: Sequence[Finding]) -> Fact:
    """The fact as the authority rules see it (no body: they do not read it). An empty
    `claimant_type` is stored as derived; the finding it had says it was there (whether
    the type is empty does not depend on the registry, the finding's list of types does)."""
    empty_type = any(f[3].startswith(_EMPTY_TYPE) for f in had)
    claimant_type = "" if empty_type else (
        None if row["claimant_type_derived"] else row["claimant_type"])
    return Fact(
        path=row["path"], title="", body="", type=row["type"],
        refs=tuple(json.loads(row["refs"] or "[]")),
        envelope=Envelope(
            claim_type=None if row["claim_type_derived"] else row["claim_type"],
            claimant_agent_id=None if row["claimant_derived"] else row["claimant"],
            claimant_type=claimant_type, subject_kind=row["subject_kind"], settle_by=row["settle_by"]),
        key_lines=json.loads(row["key_lines"] or "{}"))


def _findings(fact: Fact, ctx: CheckContext) -> list[Finding]:
    found: list[Problem] = list(_a1(fact, ctx))
    found += [p for p in _envelope_values(fact, ctx) if registry_dependent(p.code, p.message)]
    return [(p.line, p.code, str(p.severity), p.message) for p in found]


def _recheck_rows(conn: sqlite3.Connection, registry: Registry, creator_id: Any,
                  had: dict[str, list[Finding]]) -> tuple[list[str], int, int]:
    """(paths whose row changed, findings that appeared, findings that disappeared)."""
    cursor = conn.cursor()
    cursor.row_factory = sqlite3.Row
    # the rows whose values the registry may decide: a derived claimant or type, or a
    # live fact that names its claimant or type (the authority rules' input)
    cursor.execute(
        f"SELECT {', '.join(_SELECT)} FROM facts WHERE claimant_derived = 1 "
        "OR claimant_type_derived = 1 OR (status = 'live' AND claimant IS NOT NULL) "
        "OR (status = 'live' AND claimant_type IS NOT NULL)")
    changed: list[str] = []
    appeared = disappeared = 0
    updates: list[tuple[object, ...]] = []
    gone: list[str] = []
    added: list[tuple[object, ...]] = []
    while batch := cursor.fetchmany(2000):
        creators = {r["path"]: r["creator_email"] for r in batch
                    if r["status"] == "live" and r["creator_email"]}
        ctx = CheckContext(facts={}, registry=registry, creators=creators)
        for r in batch:
            values = dict(zip(r.keys(), tuple(r), strict=True))
            fact_has = r["status"] == "live"  # (a live row is a fact the rules checked)
            if r["claimant_derived"]:
                values["claimant"] = creator_id(r["creator_email"], r["creator"])
            if r["claimant_type_derived"]:
                claimant = values["claimant"]
                values["claimant_type"] = registry.type_of(claimant) if claimant else None
            old = had.get(r["path"], [])
            new = _findings(_light_fact(r, old), ctx) if fact_has else old
            if sorted(new) != sorted(old):
                appeared += len(_minus(new, old))
                disappeared += len(_minus(old, new))
                gone.append(r["path"])
                added += [(r["path"], *f) for f in new]
                e_old, w_old = _counts(old)
                e_new, w_new = _counts(new)
                values["errors"] = r["errors"] - e_old + e_new
                values["warnings"] = r["warnings"] - w_old + w_new
            if any(values[c] != r[c] for c in ("claimant", "claimant_type", "errors",
                                                "warnings")):
                sum_head = checksum(tuple([_NORMAL[c](values[c]) for c in _HEAD]))
                updates.append((values["claimant"], values["claimant_type"], values["errors"],
                                values["warnings"], sum_head, r["id"]))
                changed.append(r["path"])
    conn.executemany("UPDATE facts SET claimant = ?, claimant_type = ?, errors = ?, "
                     "warnings = ?, sum_head = ? WHERE id = ?", updates)
    _replace_findings(conn, gone, added)
    return changed, appeared, disappeared


def _counts(found: Sequence[Finding]) -> tuple[int, int]:
    return problem_counts([Problem("", line, code, Severity(sev), msg)
                           for line, code, sev, msg in found])


def _replace_findings(conn: sqlite3.Connection, paths: Iterable[str],
                      added: list[tuple[object, ...]]) -> None:
    for path in paths:
        for pid, code, message in conn.execute(
                "SELECT id, code, message FROM problems WHERE path = ? AND code IN ('A1', 'E1')",
                (path,)).fetchall():
            if registry_dependent(code, message):
                conn.execute("DELETE FROM problems WHERE id = ?", (pid,))
    conn.executemany(
        "INSERT INTO problems (path, line, code, severity, message) VALUES (?,?,?,?,?)", added)


