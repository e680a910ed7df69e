"""The Facts tab: the search bar over the big table. The window refreshes the table itself
after an index update (it shares the query with the sidebar), so this tab only steps."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from factdesk.gui.panel import IndexChange, Window
from factdesk.gui.search_bar import SearchBar
from factdesk.gui.table import FactTableController


class FactsTab(QWidget):
    """Search bar and fact table (a `Panel`)."""

    caption_did_change = Signal(str)
    caption = menu_text = "Facts"
    action_name = "showFacts"

    def __init__(self, search: SearchBar, table: FactTableController,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._table = table
        self._search = search
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.addWidget(search)
        layout.addWidget(table.view, 1)

    def tab_widget(self) -> QWidget:
        return self

    def step(self, delta: int) -> None:
        self._table.move(delta)

    def index_did_change(self, change: IndexChange) -> None:
        """(The window refreshes the table: `MainWindow._refresh_table`.)"""

    def tab_did_show(self) -> None:
        """(Always current.)"""

    def close_worker(self) -> None:
        """(No worker of its own: the table's sort orders belong to the session.)"""

    def attach(self, window: Window) -> None:
        search, table = self._search, self._table
        search.query_did_submit.connect(window.apply_query)
        table.revisions_did_resolve.connect(  # (a since: revision git resolved meanwhile)
            lambda text: window.apply_query(text) if text == search.text() else None)
        table.view.enter_did_press.connect(window.focus_inspector)
        table.view.escape_did_press.connect(search.clear)
