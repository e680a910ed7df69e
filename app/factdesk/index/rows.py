"""Map facts to index rows and back (the only place that knows both shapes)."""

from __future__ import annotations

import json
import operator
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from factdesk.corpus.codec import ParseOutcome
from factdesk.index.history import PathHistory
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


#: The `facts` columns a row carries, in insert order (all but the id).
ROW_COLUMNS: tuple[str, ...] = (
    "path", "status", "title", "body", "topic", "folder", "errors", "warnings",
    "created_at", "created_sha", "creator", "creator_email", "updated_at", "updated_sha",
    "author", "author_email", "op", "retracted_at", "retracted_sha", "retracted_by",
    "retracted_reason", "blob", "size", "mtime_ns", "evidence_weight_computed",
    "kind", "type", "origin", "origin_raw", "claim_type", "claim_type_derived", "claimant",
    "claimant_derived", "claimant_type", "claimant_type_derived", "subject_kind",
    "subject_ref", "settle_by", "settlement", "confidence", "sources", "evidence_weight",
    "domain", "entities", "refs", "extra", "key_lines", "title_line",
)
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
        return row
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
        "claimant": claimant, "claimant_derived": int(env.claimant_agent_id is None),
        "claimant_type": claimant_type,
        "claimant_type_derived": int(env.claimant_type is None),
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
    return row


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


def rows_in(conn: sqlite3.Connection, sql: str, items: Sequence[object], *, batch: int = 500
            ) -> list[Any]:
    """`sql` with one `IN ({marks})` placeholder run over `items` in batches (SQLite's
    variable limit), rows concatenated (batch by batch: an ORDER BY orders each batch).
    The one helper for such loops; a statement without rows (DELETE) works too."""
    out: list[Any] = []
    for i in range(0, len(items), batch):
        part = list(items[i : i + batch])
        out += conn.execute(sql.format(marks=",".join("?" * len(part))), part).fetchall()
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
