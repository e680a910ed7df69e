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
`rules._envelope_values`), and writes only the rows and findings that differ, in bulk
(`_recheck_rows`). At 100,000 facts the index update after a 200-fact agent's change takes
0.3–0.4 s, after the promotion of an agent with a third of the corpus (28,000 rows
rewritten, each about a 4 KiB page) about 2 s, where a rebuild took minutes
(bench/agents_bench.py, docs/benchmarks.md); tests/agents/test_recheck.py holds it equal
to a rebuild.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from factdesk.corpus import gitrepo
from factdesk.corpus.registry_io import parse_registry
from factdesk.index import schema
from factdesk.index.rows import SUM_GROUPS, checksum, problem_counts, rows_in, stored
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

#: the page cache while the rows are re-checked (KiB, negative): the changed rows' pages
#: are read, then written, then committed — about one 4 KiB page each (a row holds its
#: body), 115 MB for the 28,000 rows of one agent's third of 100,000 facts; in the
#: connection's usual 64 MiB they were read twice and spilled to the WAL before the commit
_CACHE = -262144


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
    #: only the rows of the changed agents and types were read (else every claimant's)
    narrowed: bool = False

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


Narrow = tuple[set[str], set[str], set[str]]  # agent ids, agent types, paths


def changed_between(old: Registry, new: Registry) -> Narrow | None:
    """(agent ids, agent types) whose rows and findings a change from `old` to `new` can
    touch; None when it can touch any row (an agent's e-mail came, went or changed: the
    derived claimants of its commits; the registry became empty or stopped being)."""
    if bool(old.agents) != bool(new.agents):
        return None
    ids = set(old.agents) | set(new.agents)
    for agent_id in ids:
        a, b = old.agents.get(agent_id), new.agents.get(agent_id)
        if ((a.email or "").lower() if a else "") != ((b.email or "").lower() if b else ""):
            return None
    agents = {i for i in ids if (old.type_of(i), i in old.agents) != (new.type_of(i),
                                                                      i in new.agents)}
    types = set(old.agent_types) ^ set(new.agent_types)
    types |= {t for t in set(old.authority_rows) | set(new.authority_rows)
              if old.authority_rows.get(t) != new.authority_rows.get(t)}
    return agents, types, set()


def stored_registry(conn: sqlite3.Connection, repo: Path, stamp: str | None) -> Registry | None:
    """The registry the index was written under, read back from git by its recorded stamp
    (the file's blob id), when that is exact: no `registry-trust` finding was pending (the
    registry in effect was then the file as it was) and git has the blob. None otherwise."""
    if stamp is None or conn.execute(
            "SELECT 1 FROM problems WHERE code = 'registry-trust' LIMIT 1").fetchone():
        return None
    if not re.fullmatch(r"[0-9a-f]{40}", stamp):
        return parse_registry(b"") if stamp == "" else None  # ("": there was no file)
    with gitrepo.BlobReader(repo) as reader:
        data = reader.read(stamp)
    return parse_registry(data) if data is not None else None


def recheck(conn: sqlite3.Connection, registry: Registry, *, stamp: str,
            old: Registry | None = None) -> Recheck:
    """Bring every registry-dependent value of the index to what a rebuild under
    `registry` writes, inside the caller's write transaction, and record `stamp` as the
    registry the index was built under. `old`: the registry the index was written under,
    when known (the indexer's last parse): only the rows of the agents and types that
    changed are read; else every row that names a claimant."""
    out = Recheck()
    creator_id = _creator_ids(registry)
    narrow = changed_between(old, registry) if old is not None else None
    had = _dependent_findings(conn)
    registry_had = _registry_findings(conn)
    out.before = sum(len(v) for v in had.values()) + len(registry_had)
    conn.execute("DROP TRIGGER IF EXISTS facts_au")  # (no full-text column changes here)
    cache = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute(f"PRAGMA cache_size = {_CACHE}")
    try:
        if narrow is not None and set(old.agent_types) != set(registry.agent_types):  # type: ignore[union-attr]
            # an unknown-type finding lists the legal types: each such fact, whatever its type
            narrow = (narrow[0], narrow[1], {p for p, found in had.items() if any(
                f[1] == "E1" for _, f in found)})
        out.narrowed = narrow is not None
        out.rows, out.appeared, out.disappeared = _recheck_rows(conn, registry, creator_id, had,
                                                                narrow)
    finally:
        conn.execute(f"PRAGMA cache_size = {int(cache)}")
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
#: a finding before its line is known: (the frontmatter key it is on, code, severity, message)
Unplaced = tuple[str, str, str, str]
#: the keys the authority findings are placed on (`rules._p`: the line of the key)
_KEYS = ("claimant_type", "subject_kind", "refs", "claimant_agent_id", "claim_type",
         "settle_by")
#: stand-in lines that say which key a finding was placed on
_SENTINEL = {k: -(i + 1) for i, k in enumerate(_KEYS)}
_KEY_OF = {v: k for k, v in _SENTINEL.items()}


def _registry_findings(conn: sqlite3.Connection) -> list[Finding]:
    return [tuple(r) for r in conn.execute(
        "SELECT line, code, severity, message FROM problems WHERE code IN "
        f"({','.join('?' * len(REGISTRY_CODES))})", REGISTRY_CODES)]


def _dependent_findings(conn: sqlite3.Connection) -> dict[str, list[tuple[int, Finding]]]:
    """path → [(problem id, finding)] of the registry-dependent findings."""
    out: dict[str, list[tuple[int, Finding]]] = {}
    for pid, path, line, code, severity, message in conn.execute(
            "SELECT id, path, line, code, severity, message FROM problems "
            "WHERE code IN ('A1', 'E1') ORDER BY id"):
        if registry_dependent(code, message):
            out.setdefault(path, []).append((pid, (line, code, severity, message)))
    return out


def _group_findings(key: tuple[Any, ...], registry: Registry) -> list[Unplaced]:
    """The registry-dependent findings of every live fact sharing `key` (the inputs the
    authority rules read: the claimant and type the file names, the subject kind, the
    claim type, the type, whether refs is empty, the creating commit's author e-mail)."""
    claimant, claimant_type, subject, claim, fact_type, no_refs, email = key
    fact = Fact(path="", title="", body="", type=fact_type, refs=() if no_refs else ("x",),
                envelope=Envelope(claim_type=claim, claimant_agent_id=claimant,
                                  claimant_type=claimant_type, subject_kind=subject),
                key_lines=_SENTINEL)
    ctx = CheckContext(facts={}, registry=registry, creators={"": email} if email else {})
    found: list[Problem] = list(_a1(fact, ctx))
    found += [p for p in _envelope_values(fact, ctx) if registry_dependent(p.code, p.message)]
    return [(_KEY_OF.get(p.line, ""), p.code, str(p.severity), p.message) for p in found]


def _placed(found: Sequence[Unplaced], key_lines: str | None) -> list[Finding]:
    lines = json.loads(key_lines or "{}")
    return [(int(lines.get(k, 1)) if k else 1, code, sev, msg) for k, code, sev, msg in found]


#: what a candidate row's re-check reads: the id, the head checksum's columns (the new
#: checksum is computed here from them, `rows.checksum`), then the rest the rules need
_COLUMNS = ("id", *_HEAD, "claimant_type_derived", "refs = '[]'", "creator", "creator_email",
            "key_lines")
_AT = {c: i for i, c in enumerate(_COLUMNS)}
#: the columns a re-check may change (and the head checksum over them)
_NEW = ("claimant", "claimant_type", "errors", "warnings")
#: where each of `_NEW` sits in the head checksum's values
_HEAD_AT = tuple(_HEAD.index(c) for c in _NEW)
_ERROR, _WARNING = str(Severity.ERROR), str(Severity.WARNING)


def _candidates(conn: sqlite3.Connection, narrow: Narrow | None
                ) -> Iterator[list[tuple[Any, ...]]]:
    """Batches of the rows whose values the registry may decide: a derived claimant or
    type, or a live fact that names its claimant or type — of the changed agents and
    types only, when `narrow` names them."""
    select = f"SELECT {', '.join(_COLUMNS)} FROM facts WHERE "
    if narrow is None:
        cursor = conn.execute(
            select + "claimant_derived = 1 OR claimant_type_derived = 1 OR "
            "(status = 'live' AND claimant IS NOT NULL) OR "
            "(status = 'live' AND claimant_type IS NOT NULL)")
        while batch := cursor.fetchmany(5000):
            yield batch
        return
    agents, types, paths = narrow
    seen: set[int] = set()
    for column, values in (("claimant", agents), ("claimant_type", types), ("path", paths)):
        items = sorted(values)
        for i in range(0, len(items), 400):
            part = items[i:i + 400]
            rows = conn.execute(select + f"{column} IN ({','.join('?' * len(part))})",
                                part).fetchall()
            yield [r for r in rows if r[0] not in seen]
            seen.update(r[0] for r in rows)


def _recheck_rows(conn: sqlite3.Connection, registry: Registry, creator_id: Any,
                  had: dict[str, list[tuple[int, Finding]]],
                  narrow: Narrow | None) -> tuple[list[str], int, int]:
    """(paths whose row changed, findings that appeared, findings that disappeared).

    Written in bulk, and only what changes: each changed row gets one UPDATE of the
    columns that changed and its head checksum (computed here, `rows.checksum` over the
    head values read with the candidate, the new ones put in: what `rows.add_sums` and a
    rebuild's late update give), the statements grouped by the set of columns they set
    (an index of a column left alone is not touched) and run in id order (the table's
    pages in file order); the changed paths' findings are deleted and inserted at once.
    The per-group work (a group's findings, their counts; a placement per key-lines
    text; the appeared and disappeared counts per pair of finding lists) is done once."""
    groups: dict[tuple[Any, ...], tuple[list[Unplaced], list[tuple[str, str, str]],
                                        tuple[int, int]]] = {}
    placed: dict[tuple[int, str | None], list[Finding]] = {}
    diffs: dict[tuple[tuple[Finding, ...], tuple[Finding, ...]], tuple[int, int]] = {}
    old_counts: dict[tuple[str, ...], tuple[int, int]] = {}
    changed: list[str] = []
    appeared = disappeared = 0
    updates: dict[tuple[int, ...], list[tuple[Any, ...]]] = {}  # changed indexes -> rows
    added: list[tuple[object, ...]] = []
    gone: list[int] = []  # problem ids
    at = _AT
    i_id, i_path, i_status, i_type, i_refs, i_claim = (
        at["id"], at["path"], at["status"], at["type"], at["refs = '[]'"], at["claim_type"])
    i_claimant, i_cder, i_ctype, i_tder, i_subject = (
        at["claimant"], at["claimant_derived"], at["claimant_type"],
        at["claimant_type_derived"], at["subject_kind"])
    i_creator, i_email, i_lines, i_errors, i_warnings = (
        at["creator"], at["creator_email"], at["key_lines"], at["errors"], at["warnings"])
    head_end = 1 + len(_HEAD)
    for batch in _candidates(conn, narrow):
        for row in batch:
            path, claimant, ctype, c_derived, t_derived, email, errors, warnings = (
                row[i_path], row[i_claimant], row[i_ctype], row[i_cder], row[i_tder],
                row[i_email], row[i_errors], row[i_warnings])
            new_claimant = creator_id(email, row[i_creator]) if c_derived else claimant
            new_type = ((registry.type_of(new_claimant) if new_claimant else None)
                        if t_derived else ctype)
            new_errors, new_warnings = errors, warnings
            if row[i_status] == "live":
                old = had.get(path, ())
                empty = bool(old) and any(f[3].startswith(_EMPTY_TYPE) for _, f in old)
                key = (None if c_derived else claimant,
                       "" if empty else (None if t_derived else ctype),
                       row[i_subject], row[i_claim], row[i_type], bool(row[i_refs]), email)
                group = groups.get(key)
                if group is None:
                    found = _group_findings(key, registry)
                    group = groups[key] = (found, sorted(f[1:] for f in found),
                                           _counts([(1, *f[1:]) for f in found]))
                found, found_bare, (e_new, w_new) = group
                if found_bare != (sorted([f[1:] for _, f in old]) if old else []):
                    before = tuple(f for _, f in old)
                    lines = row[i_lines]
                    new = placed.get((id(found), lines))
                    if new is None:
                        new = placed[id(found), lines] = _placed(found, lines)
                    gone += [pid for pid, _ in old]
                    added += [(path, *f) for f in new]
                    diff = diffs.get((tuple(new), before))
                    if diff is None:
                        diff = diffs[tuple(new), before] = (len(_minus(new, before)),
                                                            len(_minus(before, new)))
                    appeared += diff[0]
                    disappeared += diff[1]
                    severities = tuple(f[2] for f in before)
                    counts = old_counts.get(severities)
                    if counts is None:
                        counts = old_counts[severities] = (severities.count(_ERROR),
                                                           severities.count(_WARNING))
                    new_errors = errors - counts[0] + e_new
                    new_warnings = warnings - counts[1] + w_new
            if new_claimant is not None and type(new_claimant) is not str:
                new_claimant = stored("claimant", new_claimant)
            if new_type is not None and type(new_type) is not str:
                new_type = stored("claimant_type", new_type)
            which = ((0,) if new_claimant != claimant else ()) + (
                (1,) if new_type != ctype else ()) + ((2,) if new_errors != errors else ()) + (
                (3,) if new_warnings != warnings else ())
            if which:
                values = (new_claimant, new_type, new_errors, new_warnings)
                head = list(row[1:head_end])
                for i in which:
                    head[_HEAD_AT[i]] = values[i]
                updates.setdefault(which, []).append(
                    (*(values[i] for i in which), checksum(tuple(head)), row[i_id]))
                changed.append(path)
    rows_in(conn, "DELETE FROM problems WHERE id IN ({marks})", sorted(gone))
    conn.executemany(
        "INSERT INTO problems (path, line, code, severity, message) VALUES (?,?,?,?,?)", added)
    for which, rows in updates.items():
        rows.sort(key=lambda r: r[-1])  # (by id)
        sets = ", ".join(f"{_NEW[i]} = ?" for i in which)
        conn.executemany(f"UPDATE facts SET {sets}, sum_head = ? WHERE id = ?", rows)
    return changed, appeared, disappeared


def _counts(found: Sequence[Finding]) -> tuple[int, int]:
    return problem_counts([Problem("", line, code, Severity(sev), msg)
                           for line, code, sev, msg in found])


