"""FactTableController: owns the fact table's view, header, selection and menus.

Sorting happens in SQL (`search.fact_ids(sort=…)`), never in a proxy model; the selection
is kept as a fact id and restored after every re-query (Anki's `table/table.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from PySide6.QtCore import (
    QByteArray,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPoint,
    QSettings,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QFocusEvent, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QHeaderView,
    QMenu,
    QTableView,
    QWidget,
)

from factdesk.curation import ChangeSet
from factdesk.errors import QueryError
from factdesk.gui.session import IndexSession
from factdesk.gui.table_model import FactTableModel
from factdesk.gui.table_state import DEFAULT_HIDDEN, SIMILARITY, FactTableState, fitted_width
from factdesk.gui.workers import BackgroundRead
from factdesk.index.query import revision_resolver
from factdesk.index.search import fact_ids, ids_of_paths, place_ids

#: a `since:` term (negated or not) and its value
SINCE_RE = re.compile(r"(?<!\S)(-?since:)(\S+)")
#: `requery`'s answer while the query's revisions are resolved in the background
PENDING = -1


def revisions_named(text: str) -> list[str]:
    """The `since:` values of `text` that only git can resolve (not a date, not
    last-visit): a branch, a tag, a sha, `HEAD~3`."""
    out = []
    for _prefix, value in SINCE_RE.findall(text):
        if value == "last-visit":
            continue
        try:
            date.fromisoformat(value)
        except ValueError:
            out.append(value)
    return out


def _resolve_revisions(conn: object, revs: tuple[str, ...], _text: str
                       ) -> dict[str, tuple[str | None, str | None]]:
    """(Off the GUI thread: it runs git.) Each revision's full sha, and why a `since:` on
    it cannot run (a revision git does not know, a commit the index has not read)."""
    from factdesk.errors import QueryError as _QueryError

    resolve = revision_resolver(conn)  # type: ignore[arg-type]
    out: dict[str, tuple[str | None, str | None]] = {}
    for rev in revs:
        try:
            fact_ids(conn, f"since:{rev}")  # type: ignore[arg-type]
        except _QueryError as exc:
            out[rev] = (None, str(exc))
            continue
        out[rev] = (resolve(rev), None)
    return out


class FactTableView(QTableView):
    """The table widget; j/k are window actions, Enter asks to focus the inspector."""

    enter_did_press = Signal()
    escape_did_press = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("factTable")
        self.setAccessibleName("Facts")
        self.setTabKeyNavigation(False)  # (Tab leaves the table: rows are picked with j/k, arrows)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.setShowGrid(False)
        self.setSortingEnabled(False)  # we sort in SQL ourselves on header clicks
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)

    def focusInEvent(self, event: QFocusEvent) -> None:
        # QAbstractItemView makes the first row current when the view takes focus, which
        # opens a fact in the inspector that nobody chose, and only when the rows happened
        # to be loaded before the focus came. Here focus chooses nothing: j, k and the
        # arrows start at the first row, and a click chooses the row clicked.
        QAbstractScrollArea.focusInEvent(self, event)
        self.setAttribute(Qt.WidgetAttribute.WA_InputMethodEnabled, False)  # cells never edit
        self.viewport().update()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.enter_did_press.emit()
            return
        if event.key() == Qt.Key.Key_Escape:  # (Esc clears the search, here as in the bar)
            self.escape_did_press.emit()
            return
        super().keyPressEvent(event)


@dataclass(frozen=True, slots=True)
class Place:
    """Where the user was: the fact to show again, and the row for a neighbour."""

    path: str | None
    row: int | None


class FactTableController(QObject):
    """Connects state, model and view; emits `fact_did_select` with the current fact id."""

    fact_did_select = Signal(object)  # int | None
    rows_did_change = Signal(int)
    #: the revisions a query's `since:` names are resolved: apply `text` again
    revisions_did_resolve = Signal(str)

    def __init__(self, session: IndexSession, settings: QSettings,
                 parent: QWidget | None = None, *,
                 id_source: Callable[[str], list[tuple[int, float]] | None] | None = None) -> None:
        super().__init__(parent)
        #: answers queries the index cannot (a `similar:` search): (id, similarity) pairs,
        #: nearest first, or None
        self.id_source = id_source
        self._session = session
        self._settings = settings
        self.state = FactTableState(settings)
        self.model = FactTableModel(self.state, lambda: self._session.conn, self)
        self.view = FactTableView(parent)
        self.view.setModel(self.model)
        header = self.view.horizontalHeader()
        header.setSectionsMovable(True)
        header.setSectionsClickable(True)
        header.setSortIndicatorShown(True)
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._show_header_menu)
        self._restore_header()
        header.sortIndicatorChanged.connect(self._on_sort_changed)
        header.sectionMoved.connect(lambda *_: self.save_header())
        header.sectionResized.connect(lambda *_: self.save_header())
        self.view.selectionModel().currentRowChanged.connect(self._on_current_changed)
        self._current: int | None = None
        self._resetting = False
        #: `since:` revisions resolved by git off the GUI thread: (full sha, or why not)
        self._revisions: dict[str, tuple[str | None, str | None]] = {}
        self._resolving = BackgroundRead.of_index(session.indexer, _resolve_revisions,
                                                  done=self._resolved, failed=self._resolved,
                                                  parent=self)

    # -- header -----------------------------------------------------------------------------

    def _restore_header(self) -> None:
        header = self.view.horizontalHeader()
        saved = self._settings.value("table/header")
        restored = isinstance(saved, QByteArray) and header.restoreState(saved)
        if not restored:
            for i, column in enumerate(self.state.columns):
                header.resizeSection(i, fitted_width(self.view, column))
                header.setSectionHidden(i, column.key in DEFAULT_HIDDEN)
        order = (Qt.SortOrder.DescendingOrder if self.state.descending
                 else Qt.SortOrder.AscendingOrder)
        header.setSortIndicator(self.state.column_index(self.state.sort_key), order)

    def save_header(self) -> None:
        self._settings.setValue("table/header", self.view.horizontalHeader().saveState())

    def _show_header_menu(self, pos: QPoint) -> None:
        self.column_menu().exec(self.view.horizontalHeader().mapToGlobal(pos))

    def column_menu(self) -> QMenu:
        """A checkable entry per column (drag headers to reorder)."""
        header = self.view.horizontalHeader()
        menu = QMenu(self.view)
        menu.setObjectName("columnMenu")
        for i, column in enumerate(self.state.columns):
            action = QAction(column.label, menu)
            action.setCheckable(True)
            action.setChecked(not header.isSectionHidden(i))
            action.toggled.connect(lambda on, i=i: self.set_column_visible(i, on))
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction("Reset columns", self.reset_columns)
        return menu

    def set_column_visible(self, section: int, visible: bool) -> None:
        header = self.view.horizontalHeader()
        if not visible and header.count() - header.hiddenSectionCount() <= 1:
            return  # keep at least one column
        header.setSectionHidden(section, not visible)
        self.save_header()

    def reset_columns(self) -> None:
        header = self.view.horizontalHeader()
        for i, column in enumerate(self.state.columns):
            header.moveSection(header.visualIndex(i), i)
            header.resizeSection(i, fitted_width(self.view, column))
            header.setSectionHidden(i, column.key in DEFAULT_HIDDEN)
        self.save_header()

    def _on_sort_changed(self, section: int, order: Qt.SortOrder) -> None:
        key = self.state.columns[section].key
        descending = order == Qt.SortOrder.DescendingOrder
        if key == SIMILARITY:  # a `similar:` result's own order (not kept in settings)
            self.state.similar_descending = descending
        else:
            self.state.set_sort(key, descending)
        self.save_header()
        self.requery()

    def _show_similarity(self, on: bool) -> None:
        """While a `similar:` result fills the table its Similarity column shows, first, and
        the sort indicator is on it (the rows are in similarity order); else it hides and
        the indicator is back on the table's sort."""
        header = self.view.horizontalHeader()
        section = self.state.column_index(SIMILARITY)
        if on and header.isSectionHidden(section):
            header.setSectionHidden(section, False)
            header.moveSection(header.visualIndex(section), 0)
        elif not on and not header.isSectionHidden(section):
            header.setSectionHidden(section, True)
        if on:
            key, descending = SIMILARITY, self.state.similar_descending
        else:
            key, descending = self.state.sort_key, self.state.descending
        keys = [c.key for c in self.state.columns]
        if key not in keys:  # (a sort with no column of its own: `problems`)
            return
        order = Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
        header.blockSignals(True)  # (the indicator only: no re-sort)
        header.setSortIndicator(keys.index(key), order)
        header.blockSignals(False)

    # -- rows and selection -----------------------------------------------------------------

    def executable(self, text: str) -> str | None:
        """`text` with each `since:` revision replaced by its full sha (which the index
        resolves without git); None while one is being resolved (started here, in the
        background; `revisions_did_resolve(text)` follows). Raises QueryError for a
        revision that cannot be used."""
        missing = tuple(r for r in dict.fromkeys(revisions_named(text)) if r not in self._revisions)
        if missing:
            self._resolving.start(missing, text)
            return None

        def replace(match: re.Match[str]) -> str:
            found = self._revisions.get(match.group(2))
            if found is None:
                return match.group(0)
            sha, why = found
            if sha is None:
                raise QueryError(why or f"since: {match.group(2)!r} is no revision")
            return match.group(1) + sha

        return SINCE_RE.sub(replace, text)

    def _resolved(self, found: object, _revs: tuple[str, ...], text: str) -> None:
        if isinstance(found, dict):
            self._revisions.update(found)
        else:  # the read failed: say so for each
            self._revisions.update({r: (None, str(found)) for r in _revs})
        self.revisions_did_resolve.emit(text)

    def index_moved(self) -> None:
        """The index changed: drop the cached rows, and the resolved revisions (a branch
        may have moved)."""
        self.model.invalidate()
        self._revisions.clear()

    def close_worker(self) -> None:
        self._resolving.close()

    def requery(self, query: str | None = None) -> int:
        """Re-run the query in SQL; raises QueryError for a bad query (state unchanged).
        Returns PENDING (the rows stay) while git resolves a `since:` revision off the
        GUI thread; `revisions_did_resolve` follows."""
        conn = self._session.conn
        text = self.state.query if query is None else query
        special = self.id_source(text) if self.id_source is not None else None
        runnable = text if special is not None else self.executable(text)
        if runnable is None:
            return PENDING
        scores: dict[int, float] | None = None
        if special is not None:
            ranked = special if self.state.similar_descending else special[::-1]
            ids = [fact_id for fact_id, _score in ranked]
            scores = dict(special)
        elif conn is None:
            ids = []
        else:
            ids = fact_ids(conn, runnable, sort=self.state.sort_key,
                           descending=self.state.descending, orders=self._session.orders)
            self._session.warm_orders(self.state.sort_key)
        same = text == self.state.query
        self.state.query = text
        self._show_similarity(special is not None)
        self._show_ids(ids, keep_scroll=same, scores=scores)
        return len(ids)

    def _show_ids(self, ids: list[int], *, keep_scroll: bool = False,
                  scores: dict[int, float] | None = None) -> None:
        """Replace the rows, keeping the current fact selected when it is still there. With
        `keep_scroll` (the same query again: an index update) the rows the user scrolled to
        stay in view; an agent's every commit pulled the view back to the selected row."""
        keep = self._current
        bar = self.view.verticalScrollBar()
        position = bar.value()
        self._resetting = True
        try:
            self.model.set_ids(ids, scores)
        finally:
            self._resetting = False
        if keep is not None and self.model.row_of(keep) is not None:
            self.select_id(keep, scroll=not keep_scroll)
            if keep_scroll:
                bar.setValue(position)
        elif keep is not None:
            self._current = None
            self.fact_did_select.emit(None)
        self.rows_did_change.emit(len(ids))

    def patch(self, changed: list[int]) -> bool:
        """After our own small action (no file added or removed): move the changed facts to
        where a full re-query would put them (`search.place_ids`), without re-reading every
        id. False when that cannot be done exactly: the caller re-queries."""
        conn = self._session.conn
        text = self.state.query
        if conn is None or (self.id_source is not None and self.id_source(text) is not None):
            return False
        try:
            runnable = self.executable(text)
            if runnable is None:
                return False
            ids = place_ids(conn, runnable, self.model.ids, changed, sort=self.state.sort_key,
                            descending=self.state.descending)
        except QueryError:
            return False
        if ids is None:
            return False
        self._show_ids(ids)
        return True

    def refresh(self) -> None:
        """The index changed: drop the page cache and re-run the same query."""
        self.index_moved()
        try:
            self.requery()
        except QueryError:  # (a `similar:` still unanswerable: still no rows)
            self._show_ids([])

    def show_none(self, text: str) -> None:
        """No rows for `text`, a query that cannot be answered yet (`similar:` before the
        semantic model is ready): never the previous query's rows under it."""
        self.state.query = text
        self._show_similarity(False)
        self._show_ids([])

    def select_id(self, fact_id: int, *, scroll: bool = True) -> bool:
        """Make `fact_id` current (and scroll it into view); False when it is not in the
        table."""
        row = self.model.row_of(fact_id)
        if row is None:
            return False
        index = self.model.index(row, self._first_visible_column())
        flags = (QItemSelectionModel.SelectionFlag.ClearAndSelect
                 | QItemSelectionModel.SelectionFlag.Rows)
        self.view.selectionModel().setCurrentIndex(index, flags)
        if scroll:
            self.view.scrollTo(index)
        return True

    def _first_visible_column(self) -> int:
        return self.view.horizontalHeader().logicalIndex(0) if self.model.columnCount() else 0

    def move(self, delta: int) -> None:
        """Move the current row by `delta` (j/k)."""
        count = self.model.rowCount()
        if not count:
            return
        current = self.view.currentIndex()
        row = current.row() + delta if current.isValid() else 0
        fact_id = self.model.fact_id(max(0, min(count - 1, row)))
        if fact_id is not None:
            self.select_id(fact_id)

    def current_id(self) -> int | None:
        return self._current

    def selected_ids(self) -> list[int]:
        """The selected facts in table order (the current one when nothing is selected)."""
        rows = sorted(index.row() for index in self.view.selectionModel().selectedRows())
        ids = [i for i in (self.model.fact_id(r) for r in rows) if i is not None]
        if not ids and self._current is not None:
            ids = [self._current]
        return ids

    # -- the user's place across an action ---------------------------------------------------

    def place_for(self, changes: ChangeSet, shown_path: str | None) -> Place:
        """Before the views refresh after our own action: where the user should be after it.
        The fact shown, followed through a move; the one fact the action brought (back)
        into the table (an undone retract, a confirmation's new observation); and the row,
        for a neighbour when the fact left the table (a retract)."""
        moved = {f.path: f.new_path for f in changes.files if f.new_path}
        path = moved.get(shown_path, shown_path) if shown_path else None
        conn = self._session.conn
        if conn is not None:
            ids = ids_of_paths(conn, changes.paths_after)
            shown = set(self.model.ids)  # (one pass: a bulk action names thousands)
            back = [p for p in changes.paths_after if ids.get(p) not in shown]
            if len(back) == 1:
                path = back[0]
        current = self.view.currentIndex()
        return Place(path, current.row() if current.isValid() else None)

    def restore(self, place: Place) -> None:
        """After the refresh: select the place's fact, else its row's new occupant."""
        conn = self._session.conn
        if place.path is None or conn is None:
            return
        fact_id = ids_of_paths(conn, [place.path]).get(place.path)
        rows = self.model.rowCount()
        if (fact_id is None or self.model.row_of(fact_id) is None) and place.row is not None and rows:
            fact_id = self.model.fact_id(min(place.row, rows - 1))
        if fact_id is not None and self.current_id() != fact_id:
            self.select_id(fact_id)

    def patch_paths(self, paths: list[str]) -> bool:
        """`patch` by path (our action's files)."""
        conn = self._session.conn
        if conn is None or not paths:
            return False
        return self.patch(list(ids_of_paths(conn, paths).values()))

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._resetting:
            return
        fact_id = self.model.fact_id(current.row()) if current.isValid() else None
        if fact_id != self._current:
            self._current = fact_id
            self.fact_did_select.emit(fact_id)
