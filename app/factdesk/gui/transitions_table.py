"""The Transitions tab's table: one row per transition, display text only (never markup),
sortable by every column; Enter or a double-click activates a row (gui/transitions_panel.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent
from PySide6.QtWidgets import QTableView

from factdesk.gui import theme
from factdesk.gui.cells_model import CellsModel
from factdesk.reflect.charts import outcome_text
from factdesk.reflect.model import Transition

#: an outcome's text colour in the table (text needs 4.5:1, a bar only 3:1)
OUTCOME_TEXT = {"confirmed": theme.SETTLE_DUE, "promoted": theme.SETTLE_DUE,
                "refuted": theme.ERROR, "retracted": theme.DERIVED, "overdue": theme.WARNING}
COLUMNS = ("Time", "Kind", "Path", "Outcome / change", "Confirming fact", "Author", "Claimant",
           "Commit", "Methodologies")


# -- pure helpers -----------------------------------------------------------------------------


def _when(ts: int) -> str:
    return datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%d %H:%M")


# -- the transitions table --------------------------------------------------------------------


def _cells(t: Transition) -> tuple[str, ...]:
    claimant = ""
    if t.hypothesis:
        claimant = f"{t.claimant or '?'} ({t.claimant_type or '?'})"
    return (_when(t.time), t.kind, t.path, outcome_text(t), t.confirming or "",
            t.author or t.author_email, claimant, t.sha[:10], ", ".join(t.methodologies))


_SORT_KEYS: tuple[Callable[[Transition], Any], ...] = (
    lambda t: (t.time, t.seq), lambda t: t.kind, lambda t: t.path, outcome_text,
    lambda t: t.confirming or "", lambda t: t.author or t.author_email,
    lambda t: (t.claimant or "", t.claimant_type or ""), lambda t: t.seq,
    lambda t: len(t.methodologies),
)


class TransitionsModel(CellsModel):
    """Transitions as rows (display text only: never markup)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(len(COLUMNS), parent)

    def cells_of(self, record: Transition) -> tuple[str, ...]:
        return _cells(record)

    def sort_key(self, column: int) -> Callable[[Transition], Any]:
        return _SORT_KEYS[column]

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.display(index)
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 2:
            t = self.rows[index.row()]
            return theme.tooltip(f"{t.title}\n{t.path}\n{t.subject}")
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == 3:
            tone = OUTCOME_TEXT.get(self.rows[index.row()].outcome or "")
            return QColor(tone.color) if tone is not None else None
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None


class TransitionsTable(QTableView):
    """Enter or double-click activates the row."""

    row_activated = Signal(int)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self.row_activated.emit(self.currentIndex().row())
            return
        super().keyPressEvent(event)


