"""FacetSidebar: ontology tree, facets with live counts, and saved searches.

Clicking a node adds a `field:value` term to the query; counts come from the core's
`facet_counts` over the current query, so they always match the table.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from PySide6.QtCore import QObject, QPoint, QSettings, Qt, QThread, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from factdesk.errors import QueryError
from factdesk.gui import theme
from factdesk.index.search import facet_counts

TERM_ROLE = Qt.ItemDataRole.UserRole + 1
#: facet column → (heading, query field)
FACETS: dict[str, tuple[str, str]] = {
    "type": ("Type", "type"), "kind": ("Kind", "kind"), "origin": ("Origin", "origin"),
    "claim_type": ("Claim type", "claim"), "claimant_type": ("Claimant type", "claimant"),
    "subject_kind": ("Subject", "subject"), "status": ("Status", "status"),
}
ONTOLOGY_SQL = "SELECT folder, COUNT(*) FROM facts WHERE status != 'retracted' GROUP BY folder"


#: above this many facts, facet counts are computed on a worker thread (they scan the index)
ASYNC_FACTS = 20_000


def count_all(conn: sqlite3.Connection, query: str) -> list[tuple[str, list[tuple[str | None, int]]]]:
    """Every facet column's value counts among the facts `query` selects."""
    out = []
    for column in FACETS:
        try:
            out.append((column, facet_counts(conn, column, query)))
        except QueryError:
            out.append((column, []))
    return out


class FacetWorker(QThread):
    """Counts facets with its own read connection, off the GUI thread."""

    did_count = Signal(str, object)  # query, counts

    def __init__(self, open_reader: Callable[[], sqlite3.Connection], query: str,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._open = open_reader
        self.query = query

    def run(self) -> None:
        try:
            conn = self._open()
            try:
                counts = count_all(conn, self.query)
            finally:
                conn.close()
        except sqlite3.Error:
            counts = []
        self.did_count.emit(self.query, counts)


class FacetSidebar(QWidget):
    """Left pane; emits `term_did_activate(field, value)` and `query_did_activate(text)`."""

    term_did_activate = Signal(str, str)
    query_did_activate = Signal(str)
    facets_did_update = Signal(str)

    def __init__(self, connection: Callable[[], sqlite3.Connection | None],
                 settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        self._connection = connection
        #: opens a private read connection for the worker thread (None: always count inline)
        self.open_reader: Callable[[], sqlite3.Connection] | None = None
        self.async_threshold = ASYNC_FACTS
        self._facet_worker: FacetWorker | None = None
        self._wanted: str | None = None
        self._settings = settings
        self.ontology = QTreeWidget(self)
        self.ontology.setObjectName("ontologyTree")
        self.ontology.setHeaderLabels(["Ontology", "Facts"])
        self.facets = QTreeWidget(self)
        self.facets.setObjectName("facetTree")
        self.facets.setHeaderLabels(["Facet", "Count"])
        self.saved = QListWidget(self)
        self.saved.setObjectName("savedSearches")
        self.saved.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.saved.customContextMenuRequested.connect(self._saved_menu)
        for tree in (self.ontology, self.facets):
            tree.itemClicked.connect(self._item_clicked)
            tree.itemActivated.connect(self._item_clicked)
            tree.setUniformRowHeights(True)
            tree.header().setStretchLastSection(False)
            tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
            tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.saved.itemClicked.connect(lambda it: self.query_did_activate.emit(it.data(TERM_ROLE)))
        self.saved.itemActivated.connect(
            lambda it: self.query_did_activate.emit(it.data(TERM_ROLE)))
        saved_box = QWidget(self)
        saved_layout = QVBoxLayout(saved_box)
        saved_layout.setContentsMargins(0, 0, 0, 0)
        heading = QLabel("Saved searches", saved_box)
        heading.setTextFormat(Qt.TextFormat.PlainText)
        saved_layout.addWidget(heading)
        saved_layout.addWidget(self.saved)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.setObjectName("sidebarSplitter")
        self.splitter.addWidget(self.ontology)
        self.splitter.addWidget(self.facets)
        self.splitter.addWidget(saved_box)
        self.splitter.setSizes([260, 360, 120])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self._load_saved()

    # -- ontology and facets -----------------------------------------------------------------

    def refresh_ontology(self) -> None:
        """Rebuild the folder tree (after an index update)."""
        self.ontology.clear()
        conn = self._connection()
        if conn is None:
            return
        nodes: dict[str, QTreeWidgetItem] = {}
        counts: dict[str, int] = {}
        for folder, count in conn.execute(ONTOLOGY_SQL):
            parts = (folder or "").split("/")
            for depth in range(1, len(parts) + 1):
                key = "/".join(parts[:depth])
                counts[key] = counts.get(key, 0) + count
        for key in sorted(counts):
            parent_key, _, name = key.rpartition("/")
            parent = nodes.get(parent_key)
            item = QTreeWidgetItem([name or "(root)", str(counts[key])])
            item.setData(0, TERM_ROLE, ("path", key + "/"))
            item.setToolTip(0, theme.tooltip(key))
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight)
            if parent is None:
                self.ontology.addTopLevelItem(item)
            else:
                parent.addChild(item)
            nodes[key] = item
        for i in range(self.ontology.topLevelItemCount()):
            self.ontology.topLevelItem(i).setExpanded(True)

    def refresh_facets(self, query: str) -> None:
        """Counts of every facet value among the facts `query` selects. On a large corpus
        they are counted on a worker thread and filled in when ready (the latest query wins);
        `facets_did_update(query)` says when."""
        conn = self._connection()
        if conn is None:
            self._fill(query, [])
            return
        if self.open_reader is not None and self._large(conn):
            self._wanted = query
            if self._facet_worker is None:
                self._start_worker(query)
            return
        self._fill(query, count_all(conn, query))

    def _large(self, conn: sqlite3.Connection) -> bool:
        row = conn.execute("SELECT MAX(id) FROM facts").fetchone()
        return bool(row and row[0] and row[0] > self.async_threshold)

    def _start_worker(self, query: str) -> None:
        assert self.open_reader is not None
        worker = FacetWorker(self.open_reader, query, self)
        worker.did_count.connect(self._counted)
        self._facet_worker = worker
        worker.start()

    def _counted(self, query: str, counts: list[tuple[str, list[tuple[str | None, int]]]]) -> None:
        if self._facet_worker is not None:
            self._facet_worker.wait()
            self._facet_worker.deleteLater()
            self._facet_worker = None
        if self._wanted is not None and self._wanted != query:
            self._start_worker(self._wanted)
            return
        self._wanted = None
        self._fill(query, counts)

    def close_worker(self) -> None:
        self._wanted = None
        if self._facet_worker is not None:
            self._facet_worker.wait()

    def _fill(self, query: str, all_counts: list[tuple[str, list[tuple[str | None, int]]]]) -> None:
        expanded = {self.facets.topLevelItem(i).data(0, TERM_ROLE): self.facets.topLevelItem(i)
                    .isExpanded() for i in range(self.facets.topLevelItemCount())}
        self.facets.clear()
        for column, counts in all_counts:
            heading, field = FACETS[column]
            group = QTreeWidgetItem([heading, str(sum(n for _v, n in counts))])
            group.setData(0, TERM_ROLE, column)
            group.setFlags(group.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            self.facets.addTopLevelItem(group)
            for value, count in counts:
                if value is None:
                    continue
                marked = column in ("type", "kind", "origin", "status")
                item = QTreeWidgetItem(group, [theme.labelled(column, str(value)) if marked
                                               else str(value), str(count)])
                item.setData(0, TERM_ROLE, (field, str(value)))
                item.setToolTip(0, theme.tooltip(f"{field}:{value}"))
                item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight)
                mark = theme.mark_for(column, str(value))
                if mark is not None:
                    item.setForeground(0, QBrush(QColor(mark.color)))
            group.setExpanded(expanded.get(column, True))
        self.facets_did_update.emit(query)

    def _item_clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        data = item.data(0, TERM_ROLE)
        if isinstance(data, tuple):
            self.term_did_activate.emit(*data)

    # -- saved searches ----------------------------------------------------------------------

    def _load_saved(self) -> None:
        self.saved.clear()
        raw = self._settings.value("saved_searches", "[]")
        try:
            entries = json.loads(str(raw))
        except ValueError:
            entries = []
        for name, query in entries:
            item = QListWidgetItem(str(name))
            item.setData(TERM_ROLE, str(query))
            item.setToolTip(theme.tooltip(str(query)))
            self.saved.addItem(item)

    def saved_searches(self) -> list[tuple[str, str]]:
        return [(self.saved.item(i).text(), self.saved.item(i).data(TERM_ROLE))
                for i in range(self.saved.count())]

    def save_search(self, name: str, query: str) -> None:
        """Store (or replace) a named search in QSettings."""
        entries = [e for e in self.saved_searches() if e[0] != name] + [(name, query)]
        self._settings.setValue("saved_searches", json.dumps(entries))
        self._load_saved()

    def delete_search(self, name: str) -> None:
        entries = [e for e in self.saved_searches() if e[0] != name]
        self._settings.setValue("saved_searches", json.dumps(entries))
        self._load_saved()

    def ask_and_save(self, query: str) -> None:
        name, ok = QInputDialog.getText(self, "Save search", "Name for this search:",
                                        QLineEdit.EchoMode.Normal, query[:40])
        if ok and name.strip():
            self.save_search(name.strip(), query)

    def _saved_menu(self, pos: QPoint) -> None:
        item = self.saved.itemAt(pos)
        if item is None:
            return
        menu = QMenu(self)
        menu.addAction("Delete", lambda: self.delete_search(item.text()))
        menu.exec(self.saved.mapToGlobal(pos))
