"""Plain-Python state of the fact table: which columns exist, the sort, and persistence.

No Qt widgets here (Anki's `table/state.py`): the model reads columns from it, the
controller changes it and saves it.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSettings


@dataclass(frozen=True, slots=True)
class Column:
    """One table column: its key (also its SORTABLE sort key), header, and SQL expression."""

    key: str
    label: str
    sql: str
    width: int = 100


COLUMNS: tuple[Column, ...] = (
    Column("title", "Title", "title", 300),
    Column("kind", "Kind", "kind", 85),
    Column("type", "Type", "type", 105),
    Column("origin", "Origin", "origin", 95),
    Column("claim_type", "Claim type", "claim_type", 95),
    Column("claimant", "Claimant", "claimant", 120),
    Column("subject", "Subject", "subject_kind", 90),
    Column("confidence", "Confidence", "confidence", 80),
    Column("evidence_weight", "Evidence wt", "evidence_weight", 85),
    Column("status", "Status", "status", 80),
    Column("updated", "Updated", "updated_at", 130),
    Column("author", "Author", "author", 120),
    Column("path", "Path", "path", 300),
)
#: Extra columns fetched for each row (styling and tooltips), besides the visible ones.
ROW_SQL = ("id, title, kind, type, origin, claim_type, claim_type_derived, claimant, "
           "claimant_derived, claimant_type, subject_kind, subject_ref, confidence, "
           "evidence_weight, evidence_weight_computed, status, updated_at, author, path, "
           "errors, warnings")
DEFAULT_HIDDEN = frozenset({"author"})


class FactTableState:
    """Sort and the current query; header layout is persisted by the controller."""

    def __init__(self, settings: QSettings) -> None:
        self._settings = settings
        self.columns = COLUMNS
        self.sort_key: str = str(settings.value("table/sort_key", "updated"))
        if self.sort_key not in {c.key for c in COLUMNS}:
            self.sort_key = "updated"
        self.descending: bool = str(settings.value("table/descending", "true")) == "true"
        self.query: str = ""

    def column_index(self, key: str) -> int:
        return next(i for i, c in enumerate(self.columns) if c.key == key)

    def set_sort(self, key: str, descending: bool) -> None:
        self.sort_key, self.descending = key, descending
        self._settings.setValue("table/sort_key", key)
        self._settings.setValue("table/descending", "true" if descending else "false")
