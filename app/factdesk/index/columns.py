"""The fact table's columns, defined once: each column's key (also its sort key), the
`facts` column it shows and the SQL it sorts by. The GUI adds only labels and widths
(gui/table_state.py); search sorts by `SORTABLE`."""

from __future__ import annotations

from dataclasses import dataclass

from factdesk.index.rows import TABLE_SUMS, sum_sql


@dataclass(frozen=True, slots=True)
class FactColumn:
    """One column of the fact table, as the index knows it."""

    #: the table's key for it, and its sort key
    key: str
    #: the `facts` column whose value it shows
    column: str
    #: the ORDER BY expression (over `facts f`)
    order: str


FACT_COLUMNS: tuple[FactColumn, ...] = (
    FactColumn("title", "title", "f.title COLLATE NOCASE"),
    FactColumn("kind", "kind", "f.kind"),
    FactColumn("type", "type", "f.type"),
    FactColumn("origin", "origin", "f.origin"),
    FactColumn("claim_type", "claim_type", "f.claim_type"),
    FactColumn("claimant", "claimant", "f.claimant"),
    FactColumn("subject", "subject_kind", "f.subject_kind"),
    FactColumn("confidence", "confidence", "f.confidence"),
    FactColumn("evidence_weight", "evidence_weight", "f.evidence_weight"),
    FactColumn("status", "status", "f.status"),
    FactColumn("updated", "updated_at", "f.updated_at"),
    FactColumn("author", "author", "f.author"),
    FactColumn("path", "path", "f.path"),
)

#: sort orders with no column of their own
OTHER_ORDERS: dict[str, str] = {
    "problems": "(f.errors * 1000 + f.warnings)", "created": "f.created_at",
}

#: every sort key and its ORDER BY expression
SORTABLE: dict[str, str] = {c.key: c.order for c in FACT_COLUMNS} | OTHER_ORDERS

#: the fields read for each row of the table: the columns shown, and those its styling
#: and tooltips need ("id, title, kind, type, origin, claim_type, claim_type_derived,
#: claimant, claimant_derived, claimant_type, subject_kind, subject_ref, confidence,
#: evidence_weight, evidence_weight_computed, status, updated_at, author, path, errors,
#: warnings"), with what verifies them: the row checksum `sum_head` and the other values it
#: covers (`rows.verify(rows, rows.TABLE_SUMS)`, issue 15 #10)
ROW_FIELDS = sum_sql(TABLE_SUMS)
