"""FacetSidebar: ontology tree, facets with live counts, and saved searches.

Clicking a node adds a `field:value` term to the query; counts come from the core's
`facet_counts` over the current query, so they always match the table.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QSettings, Qt, Signal
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

from factdesk.errors import FactdeskError, QueryError
from factdesk.gui import theme
from factdesk.gui.workers import BackgroundRead
from factdesk.index.query import CompiledQuery, paths_query
from factdesk.index.search import facet_counts, folder_counts, max_fact_id

if TYPE_CHECKING:
    import sqlite3

TERM_ROLE = Qt.ItemDataRole.UserRole + 1
MARK_ROLE = Qt.ItemDataRole.UserRole + 3  # (column, value) of a marked facet value
FOLDER_ROLE = Qt.ItemDataRole.UserRole + 2
#: facet column → (heading, query field)
FACETS: dict[str, tuple[str, str]] = {
    "type": ("Type", "type"), "kind": ("Kind", "kind"), "origin": ("Origin", "origin"),
    "claim_type": ("Claim type", "claim"), "claimant_type": ("Claimant type", "claimant"),
    "subject_kind": ("Subject", "subject"), "status": ("Status", "status"),
}

#: above this many facts, facet and folder counts are computed on a worker thread (they scan
#: the index: at 10,000 facts 50–300 ms of the window's thread while agents write)
ASYNC_FACTS = 5_000


def count_all(conn: sqlite3.Connection, query: str,
              paths_of: Callable[[str], list[str] | None] | None = None
              ) -> list[tuple[str, list[tuple[str | None, int]]]]:
    """Every facet column's value counts among the facts `query` selects; `paths_of` answers
    the queries SQL does not (`similar:`: the semantic layer's paths, issue 14 bug 6)."""
    try:
        paths = paths_of(query) if paths_of is not None else None
    except FactdeskError:  # (semantic search off or not ready: no counts, never zeros)
        return []
    target: str | CompiledQuery = paths_query(paths) if paths is not None else query
    out = []
    for column in FACETS:
        try:
            out.append((column, facet_counts(conn, column, target)))
        except QueryError:
            out.append((column, []))
    return out


class FacetSidebar(QWidget):
    """Left pane; emits `term_did_activate(field, value)` and `query_did_activate(text)`."""

    term_did_activate = Signal(str, str)
    query_did_activate = Signal(str)
    facets_did_update = Signal(str)
    ontology_did_update = Signal()  # after a count on the worker thread

    def __init__(self, connection: Callable[[], sqlite3.Connection | None],
                 settings: QSettings, parent: QWidget | None = None, *,
                 open_reader: Callable[[], sqlite3.Connection] | None = None,
                 paths_of: Callable[[str], list[str] | None] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        self._connection = connection
        #: opens a private read connection for the worker thread (None: always count inline)
        self.open_reader = open_reader
        #: the paths of a query SQL does not answer (`similar:`), else None (`count_all`)
        self.paths_of = paths_of
        self.async_threshold = ASYNC_FACTS
        # counts read on a worker thread (a large corpus); the newest request wins
        self._facet_read = BackgroundRead(
            self._open_reader, lambda conn, query: count_all(conn, query, self.paths_of),
            done=self._facets_read,
            failed=lambda _message, query: self._facets_read([], query),  # (no counts)
            parent=self)
        self._folder_read = BackgroundRead(
            self._open_reader, lambda conn, _generation: folder_counts(conn),
            done=self._folders_read,
            failed=lambda _message, generation: self._folders_read({}, generation),
            parent=self)
        self._facet_query = ""  # the query the facet tree shows, or is being counted for
        self._filled: tuple[str, list[tuple[str, list[tuple[str | None, int]]]]] = ("", [])
        self._settings = settings
        self.ontology = QTreeWidget(self)
        self.ontology.setObjectName("ontologyTree")
        self.ontology.setHeaderLabels(["Ontology", "#"])
        self.ontology.headerItem().setToolTip(1, "How many facts each folder holds")
        self.ontology.setAccessibleName("Ontology: facts per folder")
        self.facets = QTreeWidget(self)
        self.facets.setObjectName("facetTree")
        # (a narrow count heading and indent: at 1.5× the font in a 230-pixel sidebar the
        # values read "observ…", "hypoth…" beside a "Count" column — issue 24 item 8)
        self.facets.setHeaderLabels(["Facet", "#"])
        self.facets.headerItem().setToolTip(1, "How many of the facts shown have this value")
        self.facets.setIndentation(max(10, self.facets.indentation() // 2))
        self.facets.setAccessibleName("Facets: facts per value (Enter filters)")
        self.saved = QListWidget(self)
        self.saved.setObjectName("savedSearches")
        self.saved.setAccessibleName("Saved searches")
        theme.on_change(self._recolour)
        self.saved.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.saved.customContextMenuRequested.connect(self._saved_menu)
        self._folder_counts: dict[str, int] = {}
        self._folder_children: dict[str | None, list[str]] = {}
        self._ontology_generation = 0  # the newest folder-tree request
        self.ontology.itemExpanded.connect(self._folder_expanded)
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
        """Rebuild the folder tree (after an index update). On a large corpus the folders
        are counted on a worker thread (tens of thousands of them at 100,000 facts: ~0.3 s
        that the window's first paint does not wait for). Items are made lazily: the top
        level and its children now, deeper folders when their parent is expanded."""
        self._ontology_generation += 1  # a count asked for earlier is superseded
        conn = self._connection()
        if conn is None:
            self._fill_ontology({})
            return
        if self.open_reader is not None and self._large(conn):
            self._folder_read.start(self._ontology_generation)
            return
        self._fill_ontology(folder_counts(conn))

    def _open_reader(self) -> sqlite3.Connection:
        assert self.open_reader is not None
        return self.open_reader()

    @property
    def counting(self) -> bool:
        """Folder or facet counts are being read on a worker thread."""
        return self._folder_read.running or self._facet_read.running

    def _folders_read(self, counts: dict[str, int], generation: int) -> None:
        """A folder count from the worker, for the refresh `generation` (a failed count: an
        empty tree, never a crash)."""
        if generation != self._ontology_generation:
            return  # a later refresh already filled the tree
        self._fill_ontology(counts)
        self.ontology_did_update.emit()

    def _fill_ontology(self, counts: dict[str, int]) -> None:
        if counts and counts == self._folder_counts and self.ontology.topLevelItemCount():
            return  # (the same counts: an agent's commit elsewhere rebuilt the tree, ~40 ms)
        self.ontology.clear()
        children: dict[str | None, list[str]] = {}
        for key in sorted(counts):  # top-level folders (and the root, "") under None
            children.setdefault(key.rpartition("/")[0] if "/" in key else None, []).append(key)
        self._folder_counts, self._folder_children = counts, children
        for key in children.get(None, []):
            item = self._folder_item(key)
            self.ontology.addTopLevelItem(item)
            self._folder_expanded(item)
            item.setExpanded(True)

    def _folder_item(self, key: str) -> QTreeWidgetItem:
        item = QTreeWidgetItem([theme.clip(key.rpartition("/")[2] or "(root)", 200),
                                str(self._folder_counts[key])])
        item.setData(0, TERM_ROLE, ("path", key + "/"))
        item.setData(0, FOLDER_ROLE, key)
        item.setToolTip(0, theme.tooltip(key))
        item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight)
        if self._folder_children.get(key):
            item.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
        return item

    def _folder_expanded(self, item: QTreeWidgetItem) -> None:
        """Make a folder's children the first time it opens."""
        key = item.data(0, FOLDER_ROLE)
        if key is None or item.childCount():
            return
        item.addChildren([self._folder_item(k) for k in self._folder_children.get(key, [])])

    def folder_item(self, key: str) -> QTreeWidgetItem | None:
        """The tree item of a folder (`kb/gotchas/db`), its ancestors expanded to make it."""
        parts = key.split("/")
        parent: QTreeWidgetItem | None = None
        for depth in range(1, len(parts) + 1):
            want = "/".join(parts[:depth])
            items = ([self.ontology.topLevelItem(i) for i in range(self.ontology.topLevelItemCount())]
                     if parent is None else
                     [parent.child(i) for i in range(parent.childCount())])
            found = next((it for it in items if it.data(0, FOLDER_ROLE) == want), None)
            if found is None:
                return None
            if depth < len(parts):
                found.setExpanded(True)
                self._folder_expanded(found)
            parent = found
        return parent

    def refresh_facets(self, query: str) -> None:
        """Counts of every facet value among the facts `query` selects. On a large corpus
        they are counted on a worker thread and filled in when ready (the latest query wins);
        `facets_did_update(query)` says when."""
        self._facet_query = query
        conn = self._connection()
        if conn is None:
            self._fill(query, [])
            return
        if self.open_reader is not None and self._large(conn):
            self._facet_read.start(query)
            return
        self._fill(query, count_all(conn, query, self.paths_of))

    @property
    def facet_query(self) -> str:
        """The query the facet counts were last asked for."""
        return self._facet_query

    def _large(self, conn: sqlite3.Connection) -> bool:
        return max_fact_id(conn) > self.async_threshold

    def _facets_read(self, counts: list[tuple[str, list[tuple[str | None, int]]]],
                     query: str) -> None:
        """Facet counts from the worker, for `query` (a failed count: none, never a crash)."""
        if query != self._facet_query:
            return  # a later refresh already filled the tree
        self._fill(query, counts)

    def close_worker(self) -> None:
        """Wait for the counts being read (window closing); none is shown afterwards."""
        self._folder_read.close()
        self._facet_read.close()

    def _fill(self, query: str, all_counts: list[tuple[str, list[tuple[str | None, int]]]]) -> None:
        if (query, all_counts) == self._filled and all_counts:
            self.facets_did_update.emit(query)  # (the same counts: the tree stays as it is)
            return
        self._filled = (query, all_counts)
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
                                               else theme.clip(str(value), 200), str(count)])
                item.setData(0, TERM_ROLE, (field, str(value)))
                item.setToolTip(0, theme.tooltip(f"{field}:{value}"))
                item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight)
                mark = theme.mark_for(column, str(value))
                if mark is not None:
                    item.setForeground(0, QBrush(QColor(mark.color)))
                    item.setData(0, MARK_ROLE, (column, str(value)))
            group.setExpanded(expanded.get(column, True))
        self.facets_did_update.emit(query)

    def _recolour(self) -> bool:
        """Light or dark: the facet values' marks in the new scheme."""
        from shiboken6 import isValid

        if not isValid(self):
            return False
        for g in range(self.facets.topLevelItemCount()):
            group = self.facets.topLevelItem(g)
            for i in range(group.childCount() if group is not None else 0):
                item = group.child(i) if group is not None else None
                marked = item.data(0, MARK_ROLE) if item is not None else None
                mark = theme.mark_for(*marked) if marked else None
                if item is not None and mark is not None:
                    item.setForeground(0, QBrush(QColor(mark.color)))
        return True

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
