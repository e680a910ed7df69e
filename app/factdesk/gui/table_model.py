"""FactTableModel: a thin QAbstractTableModel over a list of fact ids.

`rowCount()` is the length of the id list one SQL query produced (sorted and filtered in
SQL). Rows are read lazily a page at a time into a cache that is dropped in O(1).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from factdesk.gui import theme
from factdesk.gui.table_state import SIMILARITY, FactTableState
from factdesk.index.search import table_rows

if TYPE_CHECKING:
    import sqlite3

FACT_ID_ROLE = Qt.ItemDataRole.UserRole + 1
FACT_PATH_ROLE = Qt.ItemDataRole.UserRole + 2
PAGE_SIZE = 256

Index = QModelIndex | QPersistentModelIndex


def _format_time(stamp: int | None) -> str:
    if not stamp:
        return ""
    return datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def _format_float(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


class FactTableModel(QAbstractTableModel):
    """Rows are fact ids; cells come from a lazily filled page cache."""

    def __init__(self, state: FactTableState, connection: Callable[[], sqlite3.Connection | None],
                 parent: Any = None) -> None:
        super().__init__(parent)
        self._state = state
        self._connection = connection
        self._ids: list[int] = []
        self._row_of: dict[int, int] | None = None
        self._pages: dict[int, dict[int, sqlite3.Row]] = {}
        self._cells: dict[int, Any] = {}
        #: a `similar:` result's similarity per fact id (empty for any other query)
        self._scores: dict[int, float] = {}
        theme.on_change(self._scheme_did_change)  # (the cached colours are of the old scheme)

    def _scheme_did_change(self) -> bool:
        from shiboken6 import isValid

        if not isValid(self):
            return False
        self.invalidate()
        return True

    # -- data loading ---------------------------------------------------------------------

    @property
    def ids(self) -> list[int]:
        return self._ids

    @property
    def scores(self) -> dict[int, float]:
        return self._scores

    def set_ids(self, ids: list[int], scores: dict[int, float] | None = None) -> None:
        """Replace the row list (after a search, a sort or a reindex); `scores`: the
        similarity of each row to a `similar:` query's target."""
        self.beginResetModel()
        self._ids = ids
        self._scores = scores or {}
        self._row_of = None
        self._pages = {}
        self._cells = {}
        self.endResetModel()

    def invalidate(self) -> None:
        """Drop cached rows (the index changed) and repaint."""
        self._pages = {}
        self._cells = {}
        if self._ids:
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(len(self._ids) - 1, self.columnCount() - 1))

    def row_of(self, fact_id: int) -> int | None:
        """The row of a fact: a C-speed scan of the id list (about a millisecond at 100,000
        rows), far cheaper than building a position map after every change of the list."""
        if self._row_of is not None:
            return self._row_of.get(fact_id)
        try:
            return self._ids.index(fact_id)
        except ValueError:
            return None

    def fact_id(self, row: int) -> int | None:
        return self._ids[row] if 0 <= row < len(self._ids) else None

    def _row(self, row: int) -> sqlite3.Row | None:
        page = row // PAGE_SIZE
        cached = self._pages.get(page)
        if cached is None:
            cached = self._load_page(page)
            if len(self._pages) >= _PAGE_CACHE:  # the oldest page goes (dicts keep order)
                del self._pages[next(iter(self._pages))]
            self._pages[page] = cached
        return cached.get(self._ids[row])

    def _load_page(self, page: int) -> dict[int, sqlite3.Row]:
        conn = self._connection()
        ids = self._ids[page * PAGE_SIZE:(page + 1) * PAGE_SIZE]
        if conn is None or not ids:
            return {}
        # (rows failing their checksums are left out, never shown: the next update repairs
        # them, issue 15 #10)
        return table_rows(conn, ids, leave_out=True)

    # -- Qt model interface ---------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._state.columns)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
                and 0 <= section < len(self._state.columns)):
            return self._state.columns[section].label
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        return _FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # The view asks for a dozen roles per visible cell on every paint (1,300 calls per
        # scroll step): the roles we do not answer return first, and a cell's display,
        # colour, font and alignment are computed together and cached (by an int key:
        # tuples would be tracked by the garbage collector, whose full passes over tens of
        # thousands of them stalled scrolling).
        if role not in _ROLES:
            return None
        row_number = index.row()
        if not 0 <= row_number < len(self._ids):
            return None
        fact_id = self._ids[row_number]
        if role == _ID:
            return fact_id
        column = index.column()
        cell = (fact_id << 20) | (column << 10)
        value = self._cells.get(cell | role, _MISSING)
        if value is not _MISSING:
            return value
        row = self._row(row_number)
        if row is None:
            return None
        key = self._state.columns[column].key
        if key == SIMILARITY and role != _PATH:
            return self._similarity(fact_id, role)
        if len(self._cells) > _CELL_CACHE:
            self._cells.clear()
        if role in _PAINT_ROLES:
            cells = self._cells
            cells[cell | _DISPLAY] = _display(key, row)
            cells[cell | _FOREGROUND] = _foreground(key, row)
            cells[cell | _FONT] = _font(key, row)
            cells[cell | _ALIGN] = _RIGHT if key in ("confidence", "evidence_weight") else None
            return cells[cell | role]
        value = row["path"] if role == _PATH else theme.tooltip(_tooltip(key, row))
        self._cells[cell | role] = value
        return value


    def _similarity(self, fact_id: int, role: int) -> Any:
        score = self._scores.get(fact_id)
        if score is None:
            return None
        if role == _ALIGN:
            return _RIGHT
        if role in (_DISPLAY, _TOOLTIP):
            return f"{score:.3f}" if role == _DISPLAY else f"similarity {score:.4f} (cosine)"
        return None


_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole.value)
_FONT = int(Qt.ItemDataRole.FontRole.value)
_ALIGN = int(Qt.ItemDataRole.TextAlignmentRole.value)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
_ID = int(FACT_ID_ROLE)
_PATH = int(FACT_PATH_ROLE)
_PAINT_ROLES = frozenset({_DISPLAY, _FOREGROUND, _FONT, _ALIGN})
_ROLES = _PAINT_ROLES | {_TOOLTIP, _ID, _PATH}  # all < 1024: they fit the cell key
_MISSING = object()
_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
#: computed cells kept (a few screens' worth); cleared whole when full
_CELL_CACHE = 20_000
#: row pages kept while scrolling (10,000 rows)
_PAGE_CACHE = 40


def _display(key: str, row: sqlite3.Row) -> str:
    if key in ("type", "kind", "origin", "status"):
        return theme.labelled(key, row[key])
    if key == "subject":
        return row["subject_kind"] or ""
    if key in ("confidence", "evidence_weight"):
        return _format_float(row[key])
    if key == "updated":
        return _format_time(row["updated_at"])
    if key == "title":
        problems = row["errors"] + row["warnings"]
        return theme.clip(row["title"]) + (f"  ⚠{problems}" if problems else "")
    value = row[key]
    return "" if value is None else theme.clip(str(value))  # (path, claimant, domain …)


def _tooltip(key: str, row: sqlite3.Row) -> str:
    if key == "claim_type" and row["claim_type_derived"]:
        return f"{row['claim_type']} (derived from the type)"
    if key == "claimant":
        derived = " (derived from git)" if row["claimant_derived"] else ""
        return f"{row['claimant'] or 'unknown'} · {row['claimant_type'] or 'unverified'}{derived}"
    if key == "subject":
        return f"{row['subject_kind'] or ''} {row['subject_ref'] or ''}".strip()
    if key == "evidence_weight":
        return (f"recorded {_format_float(row['evidence_weight']) or '—'}, "
                f"computed {_format_float(row['evidence_weight_computed']) or '—'}")
    if key == "title":
        return f"{row['title']}\n{row['path']}"
    return _display(key, row)


def _foreground(key: str, row: sqlite3.Row) -> QColor | None:
    if row["status"] == "retracted":
        return QColor(theme.DERIVED_COLOR)
    mark = theme.mark_for(key, row[key] if key in ("type", "kind", "origin", "status") else None)
    if mark is not None:
        return QColor(mark.color)
    if (key == "claim_type" and row["claim_type_derived"]) or (
            key == "claimant" and row["claimant_derived"]):
        return QColor(theme.DERIVED_COLOR)
    if key == "title" and row["errors"]:
        return QColor(theme.ERROR_COLOR)
    return None


def _font(key: str, row: sqlite3.Row) -> QFont | None:
    derived = (key == "claim_type" and row["claim_type_derived"]) or (
        key == "claimant" and row["claimant_derived"])
    retracted = row["status"] == "retracted"
    bold = key == "type"
    if not (derived or retracted or bold):
        return None
    font = QFont()
    font.setItalic(bool(derived))
    font.setStrikeOut(retracted and key == "title")
    font.setBold(bold)
    return font
