"""MainWindow: sidebar | (search + fact table, problems, overview) | inspector.

Wires the panels together; holds no business rules. The index is opened at once when it
is usable and brought up to date in the background (`IndexSession.update`).
"""

from __future__ import annotations

import functools
import gc
import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Qt, QThread, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QProgressBar,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from factdesk.curation import ChangeSet, Curation, CurationError, recover
from factdesk.curation.ops import EMPTY_STACK, load_attestations
from factdesk.errors import FactdeskError, QueryError
from factdesk.gui import dialogs
from factdesk.gui.inspector import InspectorPanel
from factdesk.gui.mislabel_panel import MislabelPanel
from factdesk.gui.overview import OverviewPanel
from factdesk.gui.problems_panel import ProblemsPanel
from factdesk.gui.relabel_dialog import RelabelDialog
from factdesk.gui.search_bar import SearchBar, add_term
from factdesk.gui.semantic_worker import EmbeddingWorker, start_in_thread
from factdesk.gui.session import IndexSession
from factdesk.gui.settlement_panel import SettlementPanel
from factdesk.gui.sidebar import FacetSidebar
from factdesk.gui.table import FactTableController
from factdesk.gui.transitions_panel import TransitionsPanel, track_record_line
from factdesk.gui.watcher import CorpusWatcher
from factdesk.index.indexer import IndexStats
from factdesk.index.query import parse_similar, vocabulary_hints
from factdesk.index.search import ids_of_paths, live_paths_of_ids, problem_count, seen_state
from factdesk.model.words import count


class MainWindow(QMainWindow):
    """The one main window of factdesk."""

    index_did_update = Signal(object)  # IndexStats, after every view has refreshed
    query_did_apply = Signal(str)

    def __init__(self, repo: Path, settings: QSettings, *, watch: bool = True,
                 update_on_open: bool = True, semantic: bool | None = None) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.settings = settings
        self.session = IndexSession(repo, self)
        self.setWindowTitle(f"factdesk — {self.session.repo.name}")
        conn = lambda: self.session.conn  # noqa: E731 - the live connection, read at use
        self.table = FactTableController(self.session, settings, self)
        self.search = SearchBar(conn, self)
        self.sidebar = FacetSidebar(conn, settings, self)
        self.inspector = InspectorPanel(self.session, self)
        self.problems = ProblemsPanel(conn, self)
        self.overview = OverviewPanel(conn, self)
        self.curation = Curation(self.session.indexer, update_index=False, defer_index_sync=True)
        self.relabel_dialog: RelabelDialog | None = None
        self.last_change: ChangeSet | None = None
        self._reselect_path: str | None = None
        #: the table row of the fact shown when an action began: its neighbour is chosen
        #: when the action took the fact out of the table (a retract)
        self._reselect_row: int | None = None
        self.mislabels = MislabelPanel(self.curation, run_action=self.run_action,
                                       open_editor=self.open_relabel,
                                       ask_text=lambda *a: self.ask_text(*a), parent=self)
        self.settlement = SettlementPanel(self.curation, run_action=self.run_action,
                                          ask_text=lambda *a: self.ask_text(*a),
                                          similar=self.similar_function, parent=self)
        # semantic search is on unless turned off here or with FACTDESK_SEMANTIC=off
        self.transitions = TransitionsPanel(self.session.repo, self.session.indexer, self)
        self.semantic_enabled = semantic if semantic is not None else \
            os.environ.get("FACTDESK_SEMANTIC", "on").lower() not in ("off", "0", "no")
        self.semantic: object | None = None  # a SemanticSession once embeddings are ready
        #: why `similar:` cannot answer (off here, or the model failed), None when it can soon
        self.semantic_notice: str | None = None if self.semantic_enabled else (
            "semantic search is off in this window (FACTDESK_SEMANTIC=off): similar: needs it")
        self._embedder: EmbeddingWorker | None = None
        self._embedder_thread: QThread | None = None
        self._semantic_again = False
        self._history: list[int] = []
        self._history_pos = -1
        self._navigating = False
        self.last_error: str | None = None
        self._build_layout()
        self._build_status_bar()
        self.actions_by_name: dict[str, QAction] = {}
        self._build_menus()
        self._connect()
        self.table.id_source = self._similar_ids
        self.sidebar.paths_of = self._similar_paths  # (facet counts of a similar: answer)
        self.sidebar.open_reader = lambda: self.session.indexer.connect(readonly=True)
        self._light_refresh = False
        self._heap_frozen = False
        self._stale_tabs: set[QWidget] = set()
        self.transitions.fact_activated.connect(self.show_path)
        self.transitions.did_load.connect(lambda _n: self._refresh_inspector())
        # read once per index update (attestations arrive with commits), not per selection
        self._attestations = load_attestations(self.session.repo)
        self.inspector.attestations = lambda: self._attestations
        self.inspector.track_record = lambda agent: track_record_line(self.transitions.reflection, agent)
        self.watcher = CorpusWatcher(self.session.repo, self.session.indexer.git_dir, self)
        self.watcher.corpus_did_change.connect(self.reindex)
        self.watcher.enabled = watch
        self._restore_geometry()
        if self.session.conn is not None:
            self._refresh_all()
        self.recovered = recover(self.session.repo)
        if self.recovered:
            dialogs.show_error(self, "An interrupted action was found",
                               "\n\n".join(f"{r.outcome}: {r.message}" for r in self.recovered))
        if update_on_open:
            self.reindex()

    # -- construction ---------------------------------------------------------------------

    def _build_layout(self) -> None:
        facts = QWidget(self)
        facts_layout = QVBoxLayout(facts)
        facts_layout.setContentsMargins(4, 4, 4, 0)
        facts_layout.addWidget(self.search)
        facts_layout.addWidget(self.table.view, 1)
        self.center = QTabWidget(self)
        self.center.setObjectName("centerTabs")
        self.center.addTab(facts, "Facts")
        self.center.addTab(self.problems, "Problems")
        self.center.addTab(self.overview, "Overview")
        self.center.addTab(self.mislabels, "Mislabels")
        self.center.addTab(self.settlement, "Hypotheses")
        # in a scroll area: its charts and toolbar must not set the window's minimum width
        self.transitions_tab = QScrollArea(self)
        self.transitions_tab.setWidgetResizable(True)
        self.transitions_tab.setWidget(self.transitions)
        self.center.addTab(self.transitions_tab, "Transitions")
        self.settlement.count_did_change.connect(
            lambda n: self.center.setTabText(self.center.indexOf(self.settlement), f"Hypotheses ({n})"))
        self.center.currentChanged.connect(self._tab_shown)
        self.mislabels.count_did_change.connect(
            lambda n: self.center.setTabText(self.center.indexOf(self.mislabels), f"Mislabels ({n})"))
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(self.center)
        self.splitter.addWidget(self.inspector)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([230, 700, 470])
        self.setCentralWidget(self.splitter)

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.count_label = QLabel("", self)
        self.count_label.setTextFormat(Qt.TextFormat.PlainText)
        self.progress = QProgressBar(self)
        self.progress.setObjectName("indexProgress")
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.legend_label = QLabel(dialogs.legend_summary(), self)
        self.legend_label.setTextFormat(Qt.TextFormat.PlainText)
        bar.addPermanentWidget(self.legend_label)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.count_label)

    def _action(self, menu: QMenu, name: str, text: str, slot: Callable[[], object],
                shortcut: str | QKeySequence | QKeySequence.StandardKey | None = None) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(lambda _=False: slot())
        menu.addAction(action)
        self.addAction(action)
        self.actions_by_name[name] = action
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file = bar.addMenu("&File")
        self._action(file, "reindex", "Reindex", self.reindex, "F5")
        self._action(file, "rebuild", "Rebuild index", lambda: self.reindex(rebuild=True),
                     "Shift+F5")
        file.addSeparator()
        self._action(file, "quit", "Quit", self.close, QKeySequence.StandardKey.Quit)
        edit = bar.addMenu("&Edit")
        self._action(edit, "undo", "Undo", self.undo, "Ctrl+Z")
        self._action(edit, "redo", "Redo", self.redo, "Ctrl+Shift+Z")
        edit.aboutToShow.connect(self._name_undo_actions)
        # greyed out only while the menu shows the stacks: a disabled action's shortcut is
        # dead, and the stacks change with every commit, ours or an agent's
        edit.aboutToHide.connect(self._enable_undo_keys)
        edit.addSeparator()
        self._action(edit, "relabel", "Relabel…", self.open_relabel, "R")
        self._action(edit, "retract", "Retract…", self.retract_selected, "Ctrl+Delete")
        edit.addSeparator()
        self._action(edit, "copyPath", "Copy path", self.copy_path, "Ctrl+L")
        self._action(edit, "find", "Search", self.focus_search, "/")
        self._action(edit, "moreLikeThis", "More like this", self.more_like_this, "Shift+M")
        self._action(edit, "saveSearch", "Save search…",
                     lambda: self.sidebar.ask_and_save(self.search.text()), "Ctrl+S")
        go = bar.addMenu("&Go")
        self._action(go, "next", "Next fact", lambda: self.step_list(1), "J")
        self._action(go, "previous", "Previous fact", lambda: self.step_list(-1), "K")
        self._action(go, "back", "Back", self.go_back, "Alt+Left")
        self._action(go, "forward", "Forward", self.go_forward, "Alt+Right")
        # Enter is handled by the table itself (a Return shortcut would steal the search
        # bar's Enter); the menu shows it as the entry's key.
        self._action(go, "inspect", "Focus inspector\tEnter", self.focus_inspector)
        self.table.view.enter_did_press.connect(self.focus_inspector)
        self.table.view.escape_did_press.connect(self.search.clear)
        self._action(go, "focusTable", "Focus table", self.focus_table, "Ctrl+T")
        view = bar.addMenu("&View")
        self._action(view, "showFacts", "Facts", lambda: self.center.setCurrentIndex(0), "Ctrl+1")
        self._action(view, "showProblems", "Problems", lambda: self.center.setCurrentIndex(1),
                     "Ctrl+2")
        self._action(view, "showOverview", "Overview", lambda: self.center.setCurrentIndex(2),
                     "Ctrl+3")
        self._action(view, "showMislabels", "Suspected mislabels",
                     lambda: self.center.setCurrentWidget(self.mislabels), "Ctrl+4")
        self._action(view, "showHypotheses", "Hypothesis settlement queue",
                     lambda: self.center.setCurrentWidget(self.settlement), "Ctrl+5")
        self._action(view, "showTransitions", "Transitions and track records",
                     lambda: self.center.setCurrentWidget(self.transitions_tab), "Ctrl+6")
        models = view.addMenu("Semantic model")
        self._model_actions: dict[str, QAction] = {}
        for key, text in (("static", "Fast (static, distilled from MiniLM)"),
                          ("full", "Full MiniLM (slow on a CPU, best neighbours)")):
            action = self._action(models, f"model_{key}", text,
                                  functools.partial(self.choose_embedding_model, key))
            action.setCheckable(True)
            self._model_actions[key] = action
        self._model_actions[self.embedding_model() or "static"].setChecked(True)
        columns = view.addMenu("Columns")
        columns.aboutToShow.connect(lambda: self._fill_columns_menu(columns))
        watch = self._action(view, "watch", "Watch for external changes", self._toggle_watch)
        watch.setCheckable(True)
        watch.setChecked(True)
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "legend", "Legend", lambda: dialogs.show_legend(self), "F1")
        self._action(help_menu, "queryHelp", "Query language",
                     lambda: dialogs.show_query_help(self))

    def _fill_columns_menu(self, menu: QMenu) -> None:
        menu.clear()
        for action in self.table.column_menu().actions():
            menu.addAction(action)

    def _connect(self) -> None:
        s = self.session
        s.index_did_update.connect(self._on_index_updated)
        s.index_did_fail.connect(self._on_index_failed)
        s.progress_did_change.connect(self._on_progress)
        self.search.query_did_submit.connect(self.apply_query)
        self.sidebar.term_did_activate.connect(self.add_filter)
        self.sidebar.query_did_activate.connect(self.set_query)
        self.overview.query_did_request.connect(self.set_query)
        self.problems.fact_did_request.connect(self.show_fact)
        self.table.fact_did_select.connect(self._on_table_selection)
        self.table.rows_did_change.connect(lambda _n: self._show_count())
        self.table.view.selectionModel().selectionChanged.connect(lambda *_: self._show_count())
        self.inspector.fact_link_did_activate.connect(self.show_fact)
        self.inspector.status_did_change.connect(lambda m: self.statusBar().showMessage(m, 5000))

    # -- queries ------------------------------------------------------------------------------

    def apply_query(self, text: str) -> bool:
        """Run a query; a QueryError is shown under the search bar and changes nothing."""
        try:
            self.table.requery(text)
        except QueryError as exc:
            self.search.show_error(str(exc))
            return False
        hints = vocabulary_hints(text) if self.table.model.rowCount() == 0 else []
        self.search.show_error("No facts: " + "; ".join(hints) if hints else None)
        self.search.show_chips(text)
        self.sidebar.refresh_facets(text)
        self.query_did_apply.emit(text)
        return True

    def set_query(self, text: str) -> None:
        self.center.setCurrentIndex(0)
        self.search.set_query(text)

    def add_filter(self, field: str, value: str) -> None:
        self.set_query(add_term(self.search.text(), field, value))

    # -- navigation ---------------------------------------------------------------------------

    def show_fact(self, fact_id: int) -> None:
        """Show a fact: select it in the table when it is there, else inspect it alone."""
        self.center.setCurrentIndex(0)
        if not self.table.select_id(fact_id):
            self.table.view.clearSelection()
            self._show_in_inspector(fact_id)

    def _on_table_selection(self, fact_id: int | None) -> None:
        if fact_id is None:
            self.inspector.show_fact(None)
            return
        self._show_in_inspector(fact_id)

    def _show_in_inspector(self, fact_id: int) -> None:
        self.inspector.show_fact(fact_id)
        if not self._navigating and (not self._history or self._history[self._history_pos]
                                     != fact_id):
            del self._history[self._history_pos + 1:]
            self._history.append(fact_id)
            self._history_pos = len(self._history) - 1

    def _go(self, pos: int) -> None:
        if not 0 <= pos < len(self._history):
            return
        self._history_pos = pos
        self._navigating = True
        try:
            self.show_fact(self._history[pos])
        finally:
            self._navigating = False
        self.last_error = None

    def go_back(self) -> None:
        self._go(self._history_pos - 1)

    def go_forward(self) -> None:
        self._go(self._history_pos + 1)

    def focus_search(self) -> None:
        self.center.setCurrentIndex(0)
        self.search.line.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.line.selectAll()

    def focus_inspector(self) -> None:
        self.inspector.tabs.currentWidget().setFocus(Qt.FocusReason.ShortcutFocusReason)

    def focus_table(self) -> None:
        self.center.setCurrentIndex(0)
        self.table.view.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def copy_path(self) -> None:
        if self.inspector.path:
            QGuiApplication.clipboard().setText(self.inspector.path)
            self.statusBar().showMessage(f"Copied {self.inspector.path}", 3000)

    # -- curation -----------------------------------------------------------------------------

    def selected_paths(self) -> list[str]:
        """The facts an action applies to: the table's selection when the fact shown is in
        it, else the fact shown (followed through a ref, the Problems or the Transitions
        tab, it is not in the table: R and Retract acted on the row left selected there)."""
        conn = self.session.conn
        ids = self.table.selected_ids()
        shown = self.inspector.fact_id
        if shown is not None and shown not in ids:
            ids = [shown]
        return live_paths_of_ids(conn, ids) if conn is not None and ids else []

    def open_relabel(self, paths: list[str] | None = None, *,
                     initial: dict[str, str | None] | None = None, reason: str = "") -> RelabelDialog | None:
        """Open the relabel editor on the selection (R); returns the open dialog."""
        paths = paths if paths is not None else self.selected_paths()
        conn = self.session.conn
        if not paths or conn is None:
            self.statusBar().showMessage("Select one or more facts to relabel", 4000)
            return None
        blobs, head = seen_state(conn, paths)
        try:
            dialog = RelabelDialog(self.curation, paths, seen_blobs=blobs, seen_head=head, parent=self,
                                   initial=initial, reason=reason)
        except CurationError as exc:
            dialogs.show_error(self, "Cannot relabel", str(exc))
            return None
        dialog.accepted.connect(lambda: self.after_action(dialog.change))
        self.relabel_dialog = dialog
        dialog.open()
        return dialog

    def step_list(self, delta: int) -> None:
        """J/K: the next/previous item of whatever list is in front (table or a queue)."""
        front = self.center.currentWidget()
        if front is self.mislabels:
            self.mislabels.step(delta)
        elif front is self.settlement:
            self.settlement.step(delta)
        elif front is self.problems:
            self.problems.step(delta)
        elif front is self.transitions_tab:
            self.transitions.step(delta)
        elif self.center.currentIndex() == 0:  # (the Overview has no list: nothing moves)
            self.table.move(delta)

    def ask_text(self, title: str, label: str, default: str) -> str | None:
        """A one-line question (tests replace this with an answer). The label may quote
        corpus text: it is plain text, never markup (RELIABILITY H01)."""
        dialog = QInputDialog(self)
        dialog.setWindowTitle(title)
        dialog.setLabelText(label)
        dialog.setTextValue(default)
        for child in dialog.findChildren(QLabel):
            child.setTextFormat(Qt.TextFormat.PlainText)
        ok = dialog.exec() == QDialog.DialogCode.Accepted
        text = dialog.textValue()
        dialog.deleteLater()
        return text if ok and text.strip() else None

    def _patch_table(self, paths: list[str]) -> bool:
        conn = self.session.conn
        if conn is None or not paths:
            return False
        return self.table.patch(list(ids_of_paths(conn, paths).values()))

    def show_path(self, path: str) -> None:
        """Show a fact by path (from the transitions list: it may be retracted by now)."""
        conn = self.session.conn
        fact_id = ids_of_paths(conn, [path]).get(path) if conn is not None else None
        if fact_id is None:
            self.statusBar().showMessage(f"{path} is not in the index", 5000)
            return
        self.show_fact(fact_id)

    def _refresh_inspector(self) -> None:
        if self.inspector.fact_id is not None:
            self.inspector.show_fact(self.inspector.fact_id)

    def _refresh_front(self) -> None:
        front = self.center.currentWidget()
        if front in self._stale_tabs:
            self._stale_tabs.discard(front)
            front.refresh()  # type: ignore[attr-defined]

    def _tab_shown(self, index: int) -> None:
        self._refresh_front()
        if self.center.widget(index) is self.mislabels and not self.mislabels.loaded:
            self.mislabels.load()
        if self.center.widget(index) is self.settlement and not self.settlement.loaded:
            self.settlement.load()
        if self.center.widget(index) is self.transitions_tab and not self.transitions.loaded:
            self.transitions.load()

    def retract_selected(self, reason: str | None = None) -> None:
        paths = self.selected_paths()
        if not paths:
            return
        if reason is None:
            what = (f"“{self.inspector.title.text()[:120]}” ({paths[0]})"  # (shown clipped)
                    if len(paths) == 1 and self.inspector.path == paths[0] else
                    paths[0] if len(paths) == 1 else f"{len(paths)} facts")
            reason = self.ask_text("Retract", f"Retract {what}? Reason:", "")
            if reason is None:
                return
        conn = self.session.conn
        blobs, head = seen_state(conn, paths) if conn is not None else ({}, None)
        self.run_action(lambda: self.curation.retract(paths, reason or "", expected=blobs,
                                                      expected_head=head))

    def run_action(self, action: Callable[[], ChangeSet]) -> ChangeSet | None:
        """Run one curation operation; a refusal, a conflict or a git failure is shown,
        never raised (an empty undo stack only in the status bar)."""
        try:
            result = action()
        except FactdeskError as exc:
            rule = getattr(exc, "rule", None)
            self.last_error = str(exc)
            if rule == EMPTY_STACK:
                self.statusBar().showMessage(str(exc).split(":")[0].capitalize(), 4000)
                return None
            dialogs.show_error(self, "Not done" + (f" [{rule}]" if rule else ""), str(exc))
            return None
        self.after_action(result)
        return result

    def undo(self) -> None:
        self.run_action(self.curation.undo)

    def redo(self) -> None:
        self.run_action(self.curation.redo)

    def _show_count(self) -> None:
        """`2000 facts`, and how many are selected when more than one is: an action applies
        to all of them (Ctrl+A then R relabels every one)."""
        rows = self.table.model.rowCount()
        # (the ranges, not selectedRows(): an index per row, 100,000 after Ctrl+A, each change)
        ranges = self.table.view.selectionModel().selection()
        selected = sum(ranges.at(i).height() for i in range(ranges.count()))
        self.count_label.setText(f"{count(rows, 'fact')}"
                                 + (f" · {selected:,} selected" if selected > 1 else ""))

    def _enable_undo_keys(self) -> None:
        for name in ("undo", "redo"):
            self.actions_by_name[name].setEnabled(True)

    def _name_undo_actions(self) -> None:
        undo, redo = self.curation.stacks()
        self.actions_by_name["undo"].setText(f"Undo {undo[-1].label}" if undo else "Undo")
        self.actions_by_name["undo"].setEnabled(bool(undo))
        self.actions_by_name["redo"].setText(f"Redo {redo[-1].label}" if redo else "Redo")
        self.actions_by_name["redo"].setEnabled(bool(redo))

    def after_action(self, result: ChangeSet | None) -> None:
        """After a commit: a hinted background update; the user's place is kept by path."""
        if result is None:
            return
        self.last_change = result
        moved = {f.path: f.new_path for f in result.files if f.new_path}
        here = self.inspector.path
        self._reselect_path = moved.get(here, here) if here else None
        conn = self.session.conn
        if conn is not None:  # one fact that comes (back) into the table: show it (an undone
            # retract, a restore, a confirmation's new observation)
            ids = ids_of_paths(conn, result.paths_after)
            shown = set(self.table.model.ids)  # (one pass: a bulk action names thousands)
            back = [p for p in result.paths_after if ids.get(p) not in shown]
            if len(back) == 1:
                self._reselect_path = back[0]
        current = self.table.view.currentIndex()
        self._reselect_row = current.row() if current.isValid() else None
        self.statusBar().showMessage(
            f"Committed {result.commit[:10] if result.commit else ''}: {result.subject}", 8000)
        # no file came or went: the folder tree and the watched folders stay as they are
        self._light_refresh = set(result.paths_after) == set(result.paths_touched)
        if not self._light_refresh:
            self.watcher.watch_folders({str(Path(p).parent) for p in result.paths_after})
        self.session.update(hint=list(result.paths_touched), after=lambda: result.finish(self.session.repo))

    # -- semantic layer -----------------------------------------------------------------------

    def start_semantic(self) -> None:
        """Embed new or changed facts in the background (the model loads there too)."""
        if not self.semantic_enabled or self._embedder_thread is not None:
            return
        worker = EmbeddingWorker(self.session.indexer, self.embedding_model())
        worker.progress.connect(self._semantic_progress)
        worker.finished.connect(self._semantic_ready)
        worker.failed.connect(self._semantic_failed)
        self._embedder = worker
        self._embedder_thread = start_in_thread(worker, self)
        self._embedder_thread.finished.connect(self._semantic_thread_done)

    def _semantic_thread_done(self) -> None:
        self._embedder = None
        self._embedder_thread = None
        if self._semantic_again:  # the model was switched while the thread ran
            self._semantic_again = False
            self.start_semantic()

    def embedding_model(self) -> str | None:
        """The chosen embedding model (View menu, kept in settings), else the default."""
        value = self.settings.value("semantic/model", "")
        return str(value) if value in ("static", "full") else None

    def choose_embedding_model(self, name: str) -> None:
        """Switch between the fast static model and the full model; re-embeds in the
        background (vectors of both are kept, so switching back costs nothing)."""
        self.settings.setValue("semantic/model", name)
        for key, action in self._model_actions.items():
            action.setChecked(key == name)
        self.semantic = None
        self.semantic_enabled = True
        self.semantic_notice = None
        self.statusBar().showMessage(f"Semantic search: switching to the {name} model…", 5000)
        if self._embedder_thread is None:
            self.start_semantic()
        else:  # after the running one ends (a flag, not a connection to `finished`: the
            # thread may have finished already, its done-handler still queued)
            self._semantic_again = True

    def _semantic_progress(self, done: int, total: int) -> None:
        if total:
            self.statusBar().showMessage(f"Embedding facts for semantic search: {done}/{total}", 2000)

    def _semantic_ready(self, stats: object) -> None:
        self.semantic = self._embedder.session if self._embedder is not None else None
        self.semantic_notice = None
        embedded = getattr(stats, "embedded", 0)
        self.statusBar().showMessage(f"Semantic search ready ({embedded} facts embedded now)", 5000)
        if self.settlement.loaded:
            self.settlement.refresh_candidates()

    def _semantic_failed(self, message: str) -> None:
        self.semantic_enabled = False
        self.semantic_notice = message
        self.statusBar().showMessage(message, 10000)

    def similar_function(self) -> Callable[[str], list[tuple[str, float]]] | None:
        """Near-duplicates of a fact by path, when embeddings are ready."""
        session = self.semantic
        if session is None:
            return None

        def similar(path: str) -> list[tuple[str, float]]:
            try:
                return [(n.path, n.score) for n in session.neighbours(path, 20)]  # type: ignore[attr-defined]
            except Exception:  # a fact not embedded yet: no neighbours
                return []

        return similar

    def _similar_paths(self, text: str) -> list[str] | None:
        target = parse_similar(text)
        if target is None:
            return None
        if self.semantic is None:
            raise QueryError(self.semantic_notice or "semantic search is not ready yet: facts are being "
                             "embedded in the background")
        return [h.path for h in self.semantic.similar(target, 200)]  # type: ignore[attr-defined]

    def _similar_ids(self, text: str) -> list[int] | None:
        paths = self._similar_paths(text)
        if paths is None:
            return None
        conn = self.session.conn
        if conn is None or not paths:
            return []
        ids = ids_of_paths(conn, paths)
        return [ids[p] for p in paths if p in ids]

    def more_like_this(self) -> None:
        """Shift+M: a `similar:` search for the selected fact."""
        if self.inspector.path:
            self.set_query(f"similar:{self.inspector.path}")

    # -- index --------------------------------------------------------------------------------

    def reindex(self, *, rebuild: bool = False) -> None:
        """Bring the index up to date in the background (F5)."""
        self.progress.setRange(0, 0)
        self.progress.setFormat("indexing…")
        self.progress.show()
        self.session.update(rebuild=rebuild)

    def _on_progress(self, stage: str, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 0))
        self.progress.setValue(min(done, total))
        self.progress.setFormat(f"{stage} %v/%m")

    def _on_index_updated(self, stats: IndexStats) -> None:
        self.progress.hide()
        light, self._light_refresh = self._light_refresh, False
        self._attestations = load_attestations(self.session.repo)
        self._refresh_all(light=light)
        self.start_semantic()
        if self.settlement.loaded:
            self.settlement.load()
        if self.mislabels.loaded:  # (a fix from the Facts tab, an undo, an agent's commit),
            self._stale_tabs.add(self.mislabels)  # read again when in front: it takes ~15 s at
            self._refresh_front()  # 100,000 facts, too long to redo for every commit unseen
        if self.transitions.loaded or not light:
            self.transitions.load()  # in the background; the inspector's track records follow
        if self._reselect_path and self.session.conn is not None:
            fact_id = ids_of_paths(self.session.conn, [self._reselect_path]).get(self._reselect_path)
            rows = self.table.model.rowCount()
            if (fact_id is None or self.table.model.row_of(fact_id) is None) \
                    and self._reselect_row is not None and rows:
                fact_id = self.table.model.fact_id(min(self._reselect_row, rows - 1))
            if fact_id is not None and self.table.current_id() != fact_id:
                self.table.select_id(fact_id)
            self._reselect_path = None
        if not light:
            self.watcher.watch()
        self.statusBar().showMessage(
            f"Index up to date: {stats.facts + stats.broken} facts"
            + (f" ({stats.broken} unreadable)" if stats.broken else "")
            + f", {stats.retracted} retracted, "
            f"{stats.problems} findings ({stats.seconds:.1f}s)", 5000)
        self.index_did_update.emit(stats)

    def _on_index_failed(self, message: str) -> None:
        self.progress.hide()
        self.statusBar().showMessage(f"Indexing failed: {message}", 10000)
        self.last_error = message
        dialogs.show_error(self, "Indexing failed", message)

    def _refresh_all(self, *, light: bool = False) -> None:
        """Every view after an index update. `light`: after our own action that added or
        removed no file, so the folder tree keeps its shape. Panels not in front are
        refreshed when they are next shown."""
        self.table.model.invalidate()
        if light and self.last_change is not None and self._patch_table(list(self.last_change.paths_touched)):
            self.sidebar.refresh_facets(self.search.text())
        elif not self.apply_query(self.search.text()):
            self.table.refresh()
        if not light:
            self.sidebar.refresh_ontology()
            if not self._heap_frozen:
                self._heap_frozen = True
                QTimer.singleShot(0, self._freeze_heap)  # after the first paint
        self._stale_tabs = {self.problems, self.overview}
        self._refresh_front()
        conn = self.session.conn
        if conn is not None:
            self.center.setTabText(1, f"Problems ({problem_count(conn)})")
        if self.inspector.fact_id is not None:
            self.inspector.show_fact(self.inspector.fact_id)

    def _freeze_heap(self) -> None:
        """The objects of the built window leave the garbage collector's scans: its full
        passes over them (~60,000) stalled scrolling by 30-60 ms at 100,000 facts. Once,
        after the first fill (later garbage stays collectable); they are still freed by
        reference counting, and closing the window unfreezes."""
        if self._heap_frozen:
            gc.collect()
            gc.freeze()

    def _toggle_watch(self) -> None:
        self.watcher.enabled = self.actions_by_name["watch"].isChecked()

    # -- persistence --------------------------------------------------------------------------

    def _restore_geometry(self) -> None:
        geometry = self.settings.value("window/geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        else:
            self.resize(1400, 850)
        for key, splitter in (("window/splitter", self.splitter),
                              ("window/sidebar", self.sidebar.splitter)):
            state = self.settings.value(key)
            if isinstance(state, QByteArray):
                splitter.restoreState(state)

    def save_state(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/splitter", self.splitter.saveState())
        self.settings.setValue("window/sidebar", self.sidebar.splitter.saveState())
        self.table.save_header()
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_state()
        self.watcher.enabled = False
        self.mislabels.close_worker()
        self.sidebar.close_worker()
        self.settlement.close_worker()
        self.transitions.close_worker()
        self.inspector.close_worker()
        if self._embedder is not None and self._embedder_thread is not None:
            self._embedder.cancel()  # stops after the current batch; what is done is kept
            self._embedder_thread.wait()
        self.session.close()
        self.session.indexer.record_visit()  # (since:last-visit, in the next session)
        if self._heap_frozen:  # this window's objects become collectable again (File ▸ Open,
            gc.unfreeze()      # or many windows in one test process, would otherwise leak)
            self._heap_frozen = False
        super().closeEvent(event)

