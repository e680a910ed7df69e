"""A table model over a list of records whose display text is worked out once per row (the
Transitions and Agents tables): the rows, their cells, the counts, the display role and a
sort that carries the view's selection and current row with their rows. Display text only:
corpus text never becomes markup."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)


class CellsModel(QAbstractTableModel):
    """Rows of records; `cells_of(record)` gives a row's display text (computed in
    `set_rows`, not at paint); `sort_key(column)` the key a column sorts by."""

    def __init__(self, columns: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.columns = columns
        self.rows: list[Any] = []
        self._cells: list[tuple[str, ...]] = []

    def cells_of(self, record: Any) -> tuple[str, ...]:
        raise NotImplementedError

    def sort_key(self, column: int) -> Callable[[Any], Any]:
        raise NotImplementedError

    def set_rows(self, rows: Sequence[Any]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self._cells = [self.cells_of(r) for r in self.rows]
        self.endResetModel()

    def set_cell(self, row: int, column: int, text: str) -> None:
        """Replace one cell's text (no signal: the caller emits dataChanged for its range)."""
        cells = list(self._cells[row])
        cells[column] = text
        self._cells[row] = tuple(cells)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()  # noqa: B008
                 ) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()  # noqa: B008
                    ) -> int:
        return 0 if parent.isValid() else self.columns

    def display(self, index: QModelIndex | QPersistentModelIndex) -> str:
        return self._cells[index.row()][index.column()]

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if index.isValid() and role == Qt.ItemDataRole.DisplayRole:
            return self.display(index)
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Reorder the rows; persistent indexes (the view's selection and current row) move
        with their rows."""
        self.layoutAboutToBeChanged.emit()
        key = self.sort_key(column)
        order_of = sorted(range(len(self.rows)), key=lambda i: key(self.rows[i]),
                          reverse=order == Qt.SortOrder.DescendingOrder)
        new_row = {old: new for new, old in enumerate(order_of)}
        self.rows = [self.rows[i] for i in order_of]
        self._cells = [self._cells[i] for i in order_of]
        before = self.persistentIndexList()
        self.changePersistentIndexList(
            before, [self.index(new_row[i.row()], i.column()) for i in before])
        self.layoutChanged.emit()
