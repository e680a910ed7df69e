"""ProblemsPanel: every checker finding in the corpus, grouped by rule code.

Double-clicking a finding emits `fact_did_request(id)` so the window can show that fact.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from factdesk.gui import theme
from factdesk.gui.panel import IndexChange, LazyRefresh, Window
from factdesk.index import reads
from factdesk.index.search import problem_count

if TYPE_CHECKING:
    import sqlite3

FACT_ROLE = Qt.ItemDataRole.UserRole + 1
MAX_PER_CODE = 2000


class ProblemsPanel(LazyRefresh, QWidget):
    """A tree: rule code (count) → `path:line message` rows."""

    fact_did_request = Signal(int)
    caption_did_change = Signal(str)
    caption = menu_text = "Problems"
    action_name = "showProblems"

    def __init__(self, connection: Callable[[], sqlite3.Connection | None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._connection = connection
        self.tree = QTreeWidget(self)
        theme.follow_items(self.tree)  # (its coloured items follow a theme switch)
        self.tree.setObjectName("problemsTree")
        self.tree.setAccessibleName("Problems by code")
        self.tree.setHeaderLabels(["Problem", "Fact", "Line", "Message"])
        self.tree.setUniformRowHeights(True)
        self.tree.itemDoubleClicked.connect(self._activated)
        self.tree.itemActivated.connect(self._activated)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree)
        self.total = 0

    def refresh(self) -> None:
        """Reload all findings from the index."""
        self.tree.clear()
        conn = self._connection()
        self.total = 0
        if conn is None:
            return
        groups: dict[str, QTreeWidgetItem] = {}
        counts: dict[str, int] = {}
        for r in reads.problem_rows(conn):
            code = r["code"]
            counts[code] = counts.get(code, 0) + 1
            self.total += 1
            group = groups.get(code)
            if group is None:
                group = QTreeWidgetItem([code, "", "", ""])
                theme.paint_item(group, theme.SEVERITY.get(r["severity"], theme.TEXT))
                groups[code] = group
                self.tree.addTopLevelItem(group)
            if counts[code] > MAX_PER_CODE:
                continue
            item = QTreeWidgetItem(group, [r["severity"], theme.clip(r["title"] or r["path"], 300),
                                           str(r["line"]), theme.clip(r["message"], 500)])
            item.setData(0, FACT_ROLE, r["id"])
            item.setToolTip(1, theme.tooltip(r["path"]))
            item.setToolTip(3, theme.tooltip(r["message"]))
        for code, group in groups.items():
            extra = counts[code] - MAX_PER_CODE
            group.setText(0, f"{code} ({counts[code]})")
            if extra > 0:
                QTreeWidgetItem(group, [f"… {extra} more: search problem:{code}", "", "", ""])
        self.tree.resizeColumnToContents(0)
        self.tree.setColumnWidth(1, 260)  # the message gets the rest: it says what is wrong
        self.tree.resizeColumnToContents(2)

    def step(self, delta: int) -> None:
        """J/K: the next/previous row, as the arrows go (the first when none is current)."""
        item = self.tree.currentItem()
        target = self.tree.topLevelItem(0) if item is None else (
            self.tree.itemBelow(item) if delta > 0 else self.tree.itemAbove(item))
        if target is not None:
            self.tree.setCurrentItem(target)
            self.tree.scrollToItem(target)

    def _activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        fact_id = item.data(0, FACT_ROLE)
        if fact_id is not None:
            self.fact_did_request.emit(int(fact_id))

    # -- Panel ------------------------------------------------------------------------------

    def tab_widget(self) -> QWidget:
        return self

    def index_did_change(self, change: IndexChange) -> None:
        conn = self._connection()
        if conn is not None:  # (the count in the caption, whether shown or not)
            self.caption_did_change.emit(f"Problems ({problem_count(conn)})")
        self.refresh_when_seen(change)

    def tab_did_show(self) -> None:
        self.catch_up()

    def close_worker(self) -> None:
        """(No background work.)"""

    def attach(self, window: Window) -> None:
        self.fact_did_request.connect(window.show_fact)
