"""Where the user looks: the fact shown (table row or inspector alone), back/forward through
the facts visited, the search bar's query set from elsewhere, and the focus keys.

`Navigator` holds no state of its own beyond `VisitHistory`; the window hands it its parts
and exposes its methods (`window.show_fact`, `window.set_query` …) to the panels and menus.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QTabWidget

from factdesk.gui.history import VisitHistory
from factdesk.gui.inspector import InspectorPanel
from factdesk.gui.search_bar import SearchBar, add_term
from factdesk.gui.session import IndexSession
from factdesk.gui.status_area import StatusArea
from factdesk.gui.table import FactTableController
from factdesk.index.search import ids_of_paths


class Navigator:
    """Showing facts and moving between them (the Facts tab is the centre's first)."""

    def __init__(self, session: IndexSession, center: QTabWidget, table: FactTableController,
                 inspector: InspectorPanel, search: SearchBar, status: StatusArea) -> None:
        self._session = session
        self._center = center
        self._table = table
        self._inspector = inspector
        self._search = search
        self._status = status
        self.history = VisitHistory()
        table.fact_did_select.connect(self._on_table_selection)

    # -- queries ------------------------------------------------------------------------------

    def set_query(self, text: str) -> None:
        self._center.setCurrentIndex(0)
        self._search.set_query(text)

    def add_filter(self, field: str, value: str) -> None:
        self.set_query(add_term(self._search.text(), field, value))

    def more_like_this(self) -> None:
        """Shift+M: a `similar:` search for the selected fact."""
        if self._inspector.path:
            self.set_query(f"similar:{self._inspector.path}")

    # -- facts --------------------------------------------------------------------------------

    def show_fact(self, fact_id: int) -> None:
        """Show a fact: select it in the table when it is there, else inspect it alone."""
        self._center.setCurrentIndex(0)
        if not self._table.select_id(fact_id):
            self._table.view.clearSelection()
            self._inspector.show_fact(fact_id)
            self.history.visit(fact_id)

    def show_path(self, path: str) -> None:
        """Show a fact by path (from the transitions list: it may be retracted by now)."""
        fact_id = self.id_of(path)
        if fact_id is None:
            self._status.say(f"{path} is not in the index")
            return
        self.show_fact(fact_id)

    def inspect_path(self, path: str) -> None:
        """The inspector shows `path` (a queue's current fact), the tab in front stays."""
        fact_id = self.id_of(path)
        if fact_id is not None and fact_id != self._inspector.fact_id:
            self._inspector.show_fact(fact_id)

    def id_of(self, path: str) -> int | None:
        conn = self._session.conn
        return ids_of_paths(conn, [path]).get(path) if conn is not None else None

    def _on_table_selection(self, fact_id: int | None) -> None:
        self._inspector.show_fact(fact_id)
        if fact_id is not None:
            self.history.visit(fact_id)

    def go(self, delta: int) -> bool:
        """Alt+Left / Alt+Right: back or forward; False at either end."""
        fact_id = self.history.step(delta)
        if fact_id is None:
            return False
        self._center.setCurrentIndex(0)
        if not self._table.select_id(fact_id):
            self._table.view.clearSelection()
            self._inspector.show_fact(fact_id)
        return True

    # -- focus --------------------------------------------------------------------------------

    def focus_search(self) -> None:
        self._center.setCurrentIndex(0)
        self._search.line.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self._search.line.selectAll()

    def focus_inspector(self) -> None:
        self._inspector.tabs.currentWidget().setFocus(Qt.FocusReason.ShortcutFocusReason)

    def focus_table(self) -> None:
        self._center.setCurrentIndex(0)
        self._table.view.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def copy_path(self) -> None:
        if self._inspector.path:
            QGuiApplication.clipboard().setText(self._inspector.path)
            self._status.say(f"Copied {self._inspector.path}", 3000)
