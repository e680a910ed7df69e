"""Plain-Python state of the fact table: which columns exist, the sort, and persistence.

No Qt widgets here (Anki's `table/state.py`): the model reads columns from it, the
controller changes it and saves it.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWidget

from factdesk.index.columns import FACT_COLUMNS


@dataclass(frozen=True, slots=True)
class Column:
    """One table column: its key (also its SORTABLE sort key), header, and SQL expression."""

    key: str
    label: str
    sql: str
    width: int = 100


#: what the GUI adds to the index's columns (index.columns): header label, width
_LOOKS: dict[str, tuple[str, int]] = {
    "title": ("Title", 300), "kind": ("Kind", 85), "type": ("Type", 105),
    "origin": ("Origin", 95), "claim_type": ("Claim type", 95), "claimant": ("Claimant", 120),
    "subject": ("Subject", 90), "confidence": ("Confidence", 80),
    "evidence_weight": ("Evidence wt", 85), "status": ("Status", 80),
    "updated": ("Updated", 130), "author": ("Author", 120), "path": ("Path", 300),
}
#: the GUI's own column: a `similar:` result's similarity to its target (no SQL: the
#: semantic layer's score; shown, first, only while a `similar:` query fills the table)
SIMILARITY = "similarity"
COLUMNS: tuple[Column, ...] = (
    *(Column(c.key, _LOOKS[c.key][0], c.column, _LOOKS[c.key][1]) for c in FACT_COLUMNS),
    Column(SIMILARITY, "Similarity", "", 80))
#: Extra columns fetched for each row (styling and tooltips), besides the visible ones.
DEFAULT_HIDDEN = frozenset({"author", SIMILARITY})


class FactTableState:
    """Sort and the current query; header layout is persisted by the controller."""

    def __init__(self, settings: QSettings) -> None:
        self._settings = settings
        self.columns = COLUMNS
        self.sort_key: str = str(settings.value("table/sort_key", "updated"))
        if self.sort_key not in {c.key for c in COLUMNS} - {SIMILARITY}:
            self.sort_key = "updated"
        self.descending: bool = str(settings.value("table/descending", "true")) == "true"
        self.query: str = ""
        #: a `similar:` result's order: nearest first (False: farthest first); not kept
        self.similar_descending = True

    def column_index(self, key: str) -> int:
        return next(i for i, c in enumerate(self.columns) if c.key == key)

    def set_sort(self, key: str, descending: bool) -> None:
        self.sort_key, self.descending = key, descending
        self._settings.setValue("table/sort_key", key)
        self._settings.setValue("table/descending", "true" if descending else "false")


def fitted_width(view: QWidget, column: Column) -> int:
    """A column's first width for the view's font (issue 18: a bigger font cut "⚙
    methodology"): a marked column (type, kind, origin, status) as wide as its widest
    label in bold, the others scaled with the font; the title keeps its width (it takes
    what is left, and its text elides)."""
    from PySide6.QtGui import QFont, QFontMetrics

    from factdesk.gui import theme

    font = view.font()
    scale = QFontMetrics(font).averageCharWidth() / 7  # (7 pixels: the default font's)
    width = column.width if column.key in ("title", "path") else round(column.width * max(1.0, scale))
    marks = theme.MARKS_BY_COLUMN.get(column.key)
    if marks:
        bold = QFont(font)
        bold.setBold(True)
        metrics = QFontMetrics(bold)
        widest = max(metrics.horizontalAdvance(theme.labelled(column.key, v)) for v in marks)
        width = max(width, widest + 2 * metrics.averageCharWidth() + 8)
    return width
