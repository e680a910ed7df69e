"""Map facts to index rows and back (the only place that knows both shapes)."""

from __future__ import annotations

import json
import marshal
import operator
import sqlite3
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from factdesk.corpus.codec import ParseOutcome
from factdesk.index.history import PathHistory
from factdesk.index.schema import DAMAGE, RowDamaged, connect, note_damage
from factdesk.model.authority import attribution
from factdesk.model.enums import Severity
from factdesk.model.fact import Envelope, Fact, Problem
from factdesk.model.registry import Registry, agent_id_from_email

_ENCODE = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
#: unknown keys keep the file's order (the inspector's Other fields shows them so)
_ENCODE_IN_ORDER = json.JSONEncoder(ensure_ascii=False).encode


def _dump(value: object) -> str:
    """`json.dumps(value, ensure_ascii=False, sort_keys=True)` with one encoder for all."""
    return _ENCODE(value)


def _dump_list(items: tuple[str, ...]) -> str:
    return _ENCODE(list(items)) if items else "[]"


#: The `facts` columns a row's values fill (all but the id and the checksums).
VALUE_COLUMNS: tuple[str, ...] = (
    "path", "status", "title", "body", "topic", "folder", "errors", "warnings",
    "created_at", "created_sha", "creator", "creator_email", "updated_at", "updated_sha",
    "author", "author_email", "op", "retracted_at", "retracted_sha", "retracted_by",
    "retracted_reason", "blob", "size", "mtime_ns", "evidence_weight_computed",
    "kind", "type", "origin", "origin_raw", "claim_type", "claim_type_derived", "claimant",
    "claimant_derived", "claimant_type", "claimant_type_derived", "subject_kind",
    "subject_ref", "settle_by", "settlement", "confidence", "sources", "evidence_weight",
    "domain", "entities", "refs", "extra", "key_lines", "title_line",
)

# -- row checksums (issue 15 #10) ---------------------------------------------------------
#
# A flipped bit in a stored value reads back as a valid value (`type: hnsight`); SQLite's
# own checks see only page structure. Each row carries 64-bit checksums over groups of its
# columns, so that each reader verifies what it serves from the columns it reads anyway:
#   sum_head  what the table and search show: their columns, the path, the blob id, and the
#             counts and computed weight (which a rebuild's corpus-wide rules set last,
#             `head_sum_sql`)
#   sum_text  the full-text table's columns (title, body, domain, entities): when it holds,
#             the full-text index can be updated from the row (its `delete` needs the true
#             old values), so the row can be repaired in place
#   sum_rest  every other value column
# `size` and `mtime_ns` (the file stamp) are in no group: the incremental update rewrites
# them alone, and a wrong stamp only makes the next update re-read the file.
#
# A checksum is blake2b (8 bytes, as a signed SQLite integer) of the `repr` of the tuple of
# the group's values as SQLite gives them back (`_normal`: the column's affinity applied),
# so a read verifies a row with C calls only (`failing`).

#: checksum column -> the value columns it covers, in order
SUM_GROUPS: dict[str, tuple[str, ...]] = {
    "sum_head": ("path", "status", "title", "kind", "type", "origin", "claim_type",
                 "claim_type_derived", "claimant", "claimant_derived", "claimant_type",
                 "subject_kind", "subject_ref", "confidence", "evidence_weight", "updated_at",
                 "author", "blob", "errors", "warnings", "evidence_weight_computed"),
    "sum_text": ("title", "body", "domain", "entities"),
}
_GROUPED = {c for cols in SUM_GROUPS.values() for c in cols}
SUM_GROUPS["sum_rest"] = tuple(c for c in VALUE_COLUMNS
                               if c not in _GROUPED and c not in ("size", "mtime_ns"))
SUM_COLUMNS: tuple[str, ...] = tuple(SUM_GROUPS)

#: The `facts` columns a row carries, in insert order (all but the id).
ROW_COLUMNS: tuple[str, ...] = VALUE_COLUMNS + SUM_COLUMNS

#: the columns of REAL and INTEGER affinity (schema.SCHEMA); the rest are TEXT
_REAL = frozenset({"confidence", "evidence_weight", "evidence_weight_computed"})
_INTEGER = frozenset({"errors", "warnings", "claim_type_derived", "claimant_derived",
                      "claimant_type_derived", "sources", "created_at", "updated_at",
                      "retracted_at", "title_line", "size", "mtime_ns"})


def _as_real(value: Any) -> Any:
    if isinstance(value, (int, float)) and value is not None:
        value = float(value)
        return None if value != value else value  # (SQLite stores NaN as NULL)
    return _as_text(value) if isinstance(value, str) else value


def _as_integer(value: Any) -> Any:
    if isinstance(value, float):
        if value != value:
            return None
        return int(value) if value.is_integer() else value
    if isinstance(value, int):
        return int(value)  # (a bool as 0 or 1)
    return _as_text(value) if isinstance(value, str) else value


def _as_text(value: Any) -> Any:
    if isinstance(value, str):
        return value if type(value) is str else str.__str__(value)  # (an enum: its string)
    if isinstance(value, int):
        return str(int(value))
    return value


_NORMAL = {c: _as_real if c in _REAL else _as_integer if c in _INTEGER else _as_text
           for c in VALUE_COLUMNS}


def checksum(values: tuple[Any, ...]) -> int:
    """The checksum of some values as SQLite returns them: CRC-32 of their marshal format 0
    (C calls only, ~4 us a row; format 0 has no references or interning, so equal values
    give equal bytes whatever their identity)."""
    return zlib.crc32(marshal.dumps(values, 0))


def stored(column: str, value: Any) -> Any:
    """`value` as SQLite gives it back from `column` (its affinity applied): what a
    checksum covers."""
    return _NORMAL[column](value)


def add_sums(row: dict[str, Any]) -> dict[str, Any]:
    """`row` with its checksum columns filled (in place), from its values as SQLite will
    store them."""
    for name, cols in SUM_GROUPS.items():
        row[name] = checksum(tuple([_NORMAL[c](row[c]) for c in cols]))
    return row


def head_sum_sql() -> str:
    """SQL for `sum_head` over a row's stored values, with `?` for its last three (the
    counts and the computed weight a rebuild's late UPDATE sets; SET sees old values):
    needs `register_sum`."""
    cols = ", ".join(c if c not in ("errors", "warnings", "evidence_weight_computed")
                     else "?" for c in SUM_GROUPS["sum_head"])
    return f"factdesk_sum({cols})"


def late_values(errors: int, warnings: int, computed: float | None) -> tuple[Any, ...]:
    """The counts and computed weight as stored (for `head_sum_sql`'s parameters)."""
    return int(errors), int(warnings), _as_real(computed)


def register_sum(conn: sqlite3.Connection) -> None:
    """`factdesk_sum(v, …)`: `checksum` as an SQL function, for `head_sum_sql`."""
    conn.create_function("factdesk_sum", -1, lambda *values: checksum(tuple(values)),
                         deterministic=True)


#: what each kind of read verifies: the groups covering the columns it serves
HEAD_SUMS = ("sum_head",)
TABLE_SUMS = HEAD_SUMS
ALL_SUMS = SUM_COLUMNS


def sum_sql(groups: Sequence[str] = ALL_SUMS, *, prefix: str = "") -> str:
    """The columns a read must select (besides its own) to verify `groups`: "a, b, …"."""
    cols: list[str] = ["id"]
    for name in groups:
        cols += [c for c in (*SUM_GROUPS[name], name) if c not in cols]
    return ", ".join(prefix + c for c in cols)


def failing(rows: Sequence[Any], groups: Sequence[str] = ALL_SUMS) -> list[int]:
    """The ids of `rows` (sqlite3.Row, all from one statement, with `id` and the columns
    of `groups`) that fail a checksum of `groups`."""
    rows = [r for r in rows if r is not None]
    if not rows:
        return []
    return _failing({k: i for i, k in enumerate(rows[0].keys())}, [tuple(r) for r in rows],
                    groups)


def _failing(where: dict[str, int], tuples: Sequence[tuple[Any, ...]],
             groups: Sequence[str]) -> list[int]:
    """`failing` over plain tuples, `where` naming each column's place."""
    at_id = where["id"]
    crc32, dumps = zlib.crc32, marshal.dumps
    bad: set[int] = set()
    for name in groups:
        get = operator.itemgetter(*(where[c] for c in SUM_GROUPS[name]))
        at = where[name]
        bad.update(t[at_id] for t in tuples if crc32(dumps(get(t), 0)) != t[at])
    return sorted(bad)


class CheckedRows(dict[int, Any]):
    """A page of rows by id that verifies each row the first time it is read (`get`,
    `[]`, `values`, `items`): a failing row reads as missing and is noted for the next
    update of its index (`schema.note_damage`). The fact table loads pages of 256 rows
    and shows a few dozen: each is verified when shown, not when loaded."""

    def __init__(self, conn: sqlite3.Connection, rows: Sequence[Any],
                 groups: Sequence[str] = HEAD_SUMS) -> None:
        super().__init__((r["id"], r) for r in rows)
        self._conn = conn
        self._checked: set[int] = set()
        self._checks: list[tuple[Callable[[Any], Any], int]] = []
        if rows:
            where = {k: i for i, k in enumerate(rows[0].keys())}
            self._checks = [(operator.itemgetter(*(where[c] for c in SUM_GROUPS[name])),
                             where[name]) for name in groups]

    def _holds(self, key: int, row: Any) -> bool:
        if key in self._checked:
            return True
        values = tuple(row)
        if all(zlib.crc32(marshal.dumps(get(values), 0)) == values[at]
               for get, at in self._checks):
            self._checked.add(key)
            return True
        dict.pop(self, key)
        note_damage(self._conn, [key])
        return False

    def get(self, key: int, default: Any = None) -> Any:
        row = dict.get(self, key)
        return row if row is not None and self._holds(key, row) else default

    def __getitem__(self, key: int) -> Any:
        row = self.get(key)
        if row is None:
            raise KeyError(key)
        return row

    def items(self) -> Any:
        return [(k, r) for k, r in list(dict.items(self)) if self._holds(k, r)]

    def values(self) -> Any:
        return [r for _, r in self.items()]


def bad_groups(row: Any, groups: Sequence[str] = ALL_SUMS) -> list[str]:
    """The checksum groups of `row` (a sqlite3.Row with the columns) that fail."""
    return [name for name in groups if failing([row], (name,))]


def verify(rows: Sequence[Any], groups: Sequence[str] = ALL_SUMS,
           conn: sqlite3.Connection | None = None) -> None:
    """Raise `RowDamaged` (index damage: `Indexer.read` repairs and reads again) when any
    of `rows` fails a checksum of `groups`; each row must carry `id` and those columns.
    With `conn`, the failing rows are also noted for the next update of that index
    (`schema.note_damage`: a reader without the indexer, the GUI's)."""
    bad = failing(rows, groups)
    if bad:
        if conn is not None:
            note_damage(conn, bad)
        raise RowDamaged(bad)


def damaged_ids(conn: sqlite3.Connection, groups: Sequence[str] = ALL_SUMS) -> list[int]:
    """Every row of `facts` that fails a checksum (`check`: the whole table), read in
    batches."""
    cursor = conn.cursor()
    cursor.row_factory = None  # (plain tuples: no sqlite3.Row to make and copy per row)
    cursor.execute(f"SELECT {sum_sql(groups)} FROM facts")
    where = {d[0]: i for i, d in enumerate(cursor.description)}
    bad: list[int] = []
    while batch := cursor.fetchmany(2000):
        bad += _failing(where, batch, groups)
    return bad


def damaged_ids_of(path: Path) -> list[int] | None:
    """`damaged_ids` of the index at `path`, read on a connection of its own (`check`: the
    caller holds the update lock, so no row changes meanwhile); None when the file cannot be
    read through (the update then verifies the rows itself, and meets the damage there)."""
    try:
        conn = connect(path, readonly=True)
        try:
            return damaged_ids(conn)
        finally:
            conn.close()
    except (sqlite3.Error, *DAMAGE):  # (a text that is not UTF-8 any more, too)
        return None


#: a row dict's values in ROW_COLUMNS order, as one tuple (in C: 100,000 rows a rebuild)
row_values: Callable[[dict[str, Any]], tuple[Any, ...]] = operator.itemgetter(*ROW_COLUMNS)
#: the columns the full-text table indexes, in its order
TEXT_COLUMNS: tuple[str, ...] = ("title", "body", "domain", "entities")
#: a row dict's full-text values, in TEXT_COLUMNS order
text_values: Callable[[dict[str, Any]], tuple[Any, ...]] = operator.itemgetter(*TEXT_COLUMNS)


def fact_row(
    outcome: ParseOutcome,
    *,
    status: str,
    history: PathHistory,
    registry: Registry,
    file: tuple[str, int, int] | None,
    computed_weight: float | None,
    problems: list[Problem],
) -> dict[str, Any]:
    # a broken file's row keeps what could be read of it (its bad fields as missing); any
    # other row without a fact (a retracted fact whose last version was broken) does not:
    # `fact_from_row` reads those rows back as facts when their columns are filled
    fact = outcome.fact if outcome.fact is not None else (
        outcome.salvaged if status == "broken" else None)
    parts = outcome.path.split("/")
    errors, warnings = problem_counts(problems)
    row: dict[str, Any] = {
        "path": outcome.path,
        "status": status,
        "title": fact.title if fact else (outcome.title or outcome.path.rsplit("/", 1)[-1]),
        "body": fact.body if fact else outcome.text[:200_000],
        "topic": parts[1] if len(parts) > 2 else "",
        "folder": "/".join(parts[:-1]),
        "errors": errors,
        "warnings": warnings,
        "created_at": history.created_at, "created_sha": history.created_sha,
        "creator": history.creator, "creator_email": history.creator_email,
        "updated_at": history.updated_at, "updated_sha": history.updated_sha,
        "author": history.author, "author_email": history.author_email, "op": history.op,
        "retracted_at": history.retracted_at, "retracted_sha": history.retracted_sha,
        "retracted_by": history.retracted_by, "retracted_reason": history.retracted_reason,
        "blob": file[0] if file else history.last_blob,
        "size": file[1] if file else None,
        "mtime_ns": file[2] if file else None,
        "evidence_weight_computed": computed_weight,
    }
    if fact is None:
        row.update({
            "kind": outcome.raw.get("kind"), "type": outcome.raw.get("type"), "origin": None,
            "origin_raw": None, "claim_type": None, "claim_type_derived": 0, "claimant": None,
            "claimant_derived": 0, "claimant_type": None, "claimant_type_derived": 0,
            "subject_kind": None, "subject_ref": None, "settle_by": None, "settlement": None,
            "confidence": None, "sources": None, "evidence_weight": None,
            "domain": "[]", "entities": "[]", "refs": "[]", "extra": "{}",
            "key_lines": "{}", "title_line": 1,
        })
        return add_sums(row)
    env = fact.envelope
    creator_id = None
    if history.creator_email:
        agent = registry.agent_for_email(history.creator_email)
        creator_id = agent.id if agent else (agent_id_from_email(history.creator_email)
                                             or history.creator)
    claimant = env.claimant_agent_id or creator_id
    claimant_type = env.claimant_type or (registry.type_of(claimant) if claimant else None)
    row.update({
        "kind": fact.kind, "type": fact.type, "origin": fact.origin,
        "origin_raw": fact.origin_raw,
        "claim_type": fact.claim_type, "claim_type_derived": int(fact.claim_type_is_derived),
        # (an empty value is no value: what is shown then is derived, and the registry's)
        "claimant": claimant, "claimant_derived": int(not env.claimant_agent_id),
        "claimant_type": claimant_type,
        "claimant_type_derived": int(not env.claimant_type),
        "subject_kind": env.subject_kind, "subject_ref": env.subject_ref,
        "settle_by": env.settle_by, "settlement": env.settlement,
        "confidence": fact.confidence, "sources": fact.sources,
        "evidence_weight": fact.evidence_weight,
        "domain": _dump_list(fact.domain), "entities": _dump_list(fact.entities),
        "refs": _dump_list(fact.refs), "extra": _extra(fact),
        "key_lines": _dump(dict(fact.key_lines)), "title_line": fact.title_line,
    })
    if outcome.fact is None:  # a broken file's bad (or absent) numbers are missing, not 0
        for key in ("confidence", "sources", "evidence_weight"):
            if key not in fact.key_lines:
                row[key] = None
    return add_sums(row)


#: knomit's `motifs` ride in the `extra` column under this key (no column of their own yet),
#: where `show`, the inspector and the `motif:` filter find them
MOTIFS = "motifs"


def _extra(fact: Fact) -> str:
    extra = {**fact.extra, MOTIFS: list(fact.motifs)} if fact.motifs else fact.extra
    return _ENCODE_IN_ORDER(extra) if extra else "{}"


def problem_counts(problems: list[Problem]) -> tuple[int, int]:
    """(errors, warnings) among `problems`: a row's `errors` and `warnings` columns."""
    return (sum(1 for p in problems if p.severity == Severity.ERROR),
            sum(1 for p in problems if p.severity == Severity.WARNING))


def fact_from_row(row: sqlite3.Row) -> Fact | None:
    """Rebuild the frozen Fact a row was made from (None for broken files, whose rows may
    hold what could be read of them, but which are never facts to the rules)."""
    if row["status"] == "broken" or row["type"] is None or row["confidence"] is None:
        return None
    def raw(col: str, derived: str | None = None) -> str | None:
        return None if derived and row[derived] else row[col]

    extra = json.loads(row["extra"])
    motifs = extra.pop(MOTIFS, ())

    return Fact(
        path=row["path"], title=row["title"], body=row["body"], kind=row["kind"],
        type=row["type"], origin=row["origin"], origin_raw=row["origin_raw"],
        domain=tuple(json.loads(row["domain"])), entities=tuple(json.loads(row["entities"])),
        refs=tuple(json.loads(row["refs"])), confidence=row["confidence"],
        sources=row["sources"], evidence_weight=row["evidence_weight"],
        envelope=Envelope(
            claim_type=raw("claim_type", "claim_type_derived"),
            claimant_agent_id=raw("claimant", "claimant_derived"),
            claimant_type=raw("claimant_type", "claimant_type_derived"),
            subject_kind=row["subject_kind"], subject_ref=row["subject_ref"],
            settle_by=row["settle_by"], settlement=row["settlement"],
        ),
        extra=extra, motifs=tuple(motifs), key_lines=json.loads(row["key_lines"]),
        title_line=row["title_line"],
    )


def rows_in(conn: sqlite3.Connection, sql: str, items: Sequence[object], *, batch: int = 500,
            named: bool = False) -> list[Any]:
    """`sql` with one `IN ({marks})` placeholder run over `items` in batches (SQLite's
    variable limit), rows concatenated (batch by batch: an ORDER BY orders each batch).
    The one helper for such loops; a statement without rows (DELETE) works too.
    `named`: rows as `sqlite3.Row` whatever the connection's row factory."""
    out: list[Any] = []
    cursor = conn.cursor()
    if named:
        cursor.row_factory = sqlite3.Row
    for i in range(0, len(items), batch):
        part = list(items[i : i + batch])
        out += cursor.execute(sql.format(marks=",".join("?" * len(part))), part).fetchall()
    return out


def fact_payload(row: Any, problems: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON shape of `show` (DESIGN.md §6): fields + attribution + both weights."""
    keys = ["id", "path", "status", "title", "kind", "type", "origin", "claim_type",
            "claimant", "claimant_type", "subject_kind", "subject_ref", "settle_by",
            "settlement", "confidence", "sources", "evidence_weight", "evidence_weight_computed",
            "created_at", "creator", "updated_at", "author", "op", "retracted_at",
            "retracted_by", "retracted_reason", "body"]
    data = {k: row[k] for k in keys}
    for k in ("domain", "entities", "refs", "extra"):
        data[k] = json.loads(row[k])
    data["motifs"] = data["extra"].pop("motifs", [])  # (index.rows keeps them in `extra`)
    data["derived"] = [k for k, col in (("claim_type", "claim_type_derived"),
                                       ("claimant", "claimant_derived"),
                                       ("claimant_type", "claimant_type_derived"))
                       if row[col] and row[k] is not None]  # (nothing derived: unknown)
    data["attribution"] = attribution(
        row["title"], claimant=row["claimant"], claimant_type=row["claimant_type"],
        subject_kind=row["subject_kind"], claim_type=row["claim_type"] or "legacy")
    data["problems"] = problems
    return data


def named_rows(conn: sqlite3.Connection, sql: str, params: Sequence[object] = ()
               ) -> list[sqlite3.Row]:
    """`sql`'s rows as `sqlite3.Row`, whatever the connection's row factory."""
    cursor = conn.cursor()
    cursor.row_factory = sqlite3.Row
    return cursor.execute(sql, params).fetchall()
