"""MainWindow: sidebar | (the centre's tabs) | inspector, the menus and the status bar.

Wires the parts together and holds no business rules. The centre's tabs are `Panel`s
(gui/panel.py): a new tab is one new file plus one line in `_make_panels`; all but the
Facts tab are made after the first paint (gui/later_panel.py). Every write
goes through `ops` (gui/operations.py: one serial writer thread shared with the index
updates); its `operation_did_execute` and the session's `index_did_update` both end in
`_refresh`, which the table, the sidebar and every panel follow.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QMainWindow,
    QSplitter,
    QTabBar,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from factdesk.core import Settings
from factdesk.curation import ChangeSet, recover
from factdesk.curation.identity import identity_file
from factdesk.errors import FactdeskError, QueryError
from factdesk.gui import dialogs
from factdesk.gui.curation_front import CurationFront
from factdesk.gui.facts_tab import FactsTab
from factdesk.gui.heap import HeapFreeze
from factdesk.gui.inspector import InspectorPanel
from factdesk.gui.later_panel import LaterPanel, Made, after_first_paint, later_tabs
from factdesk.gui.menus import MenuBuilder
from factdesk.gui.navigation import Navigator
from factdesk.gui.notice_banner import NoticeBanner
from factdesk.gui.open_corpus import CorpusOpener
from factdesk.gui.operations import Executed, Operations
from factdesk.gui.panel import IndexChange, Panel, focus_into, follow_screen
from factdesk.gui.relabel_dialog import RelabelOpener
from factdesk.gui.search_bar import SearchBar
from factdesk.gui.semantic_controller import SemanticController
from factdesk.gui.session import IndexSession
from factdesk.gui.sidebar import FacetSidebar
from factdesk.gui.status_area import StatusArea
from factdesk.gui.table import PENDING, FactTableController, Place
from factdesk.gui.undo_stack import UndoStack
from factdesk.gui.watcher import CorpusWatcher
from factdesk.gui.welcome import WelcomeBanner, wants_welcome
from factdesk.gui.workers import favour_the_gui_thread
from factdesk.index.indexer import Indexer
from factdesk.index.query import parse_similar, vocabulary_hints
from factdesk.reflect.charts import track_record_line

if TYPE_CHECKING:
    from factdesk.gui.agents_panel import AgentsPanel
    from factdesk.gui.messages_panel import MessagesPanel
    from factdesk.gui.mislabel_panel import MislabelPanel
    from factdesk.gui.overview import OverviewPanel
    from factdesk.gui.problems_panel import ProblemsPanel
    from factdesk.gui.proposals_panel import ProposalsPanel
    from factdesk.gui.settlement_panel import SettlementPanel
    from factdesk.gui.transitions_panel import TransitionsPanel


class MainWindow(QMainWindow):
    """The one main window of factdesk."""

    index_did_update = Signal(object)  # IndexStats, after every view has refreshed
    query_did_apply = Signal(str)

    def __init__(self, repo: Path, settings: QSettings, *, watch: bool = True,
                 update_on_open: bool = True, semantic: bool | None = None,
                 indexer: Indexer | None = None) -> None:
        super().__init__()
        favour_the_gui_thread()  # (the keys wait on no worker's Python: gui/workers.py)
        self.setObjectName("mainWindow")
        self.settings = settings
        #: what a window opened in this one's place gets too (gui/open_corpus.py)
        self.options: dict[str, Any] = {"watch": watch, "semantic": semantic}
        self._leaving = False
        self.session = IndexSession(repo, self, indexer=indexer)
        self.ops = Operations(self.session.indexer, self.session.lane, parent=self,
                              identity_file=identity_file(Settings.resolve()),
                              ask_identity=lambda: self.ask_identity())
        self.semantic = SemanticController(self.session.indexer, settings, enabled=semantic, parent=self)
        self.last_error: str | None = None
        conn = lambda: self.session.conn  # noqa: E731 - the live connection, read at use
        self.table = FactTableController(self.session, settings, self, id_source=lambda text:
                                         self.semantic.similar_ids(self.session.conn, text))
        self.search = SearchBar(conn, self)
        self.sidebar = FacetSidebar(conn, settings, self,
                                    open_reader=lambda: self.session.indexer.connect(readonly=True),
                                    paths_of=self.semantic.similar_paths)
        self.relabel = RelabelOpener(self.ops, self)
        self.inspector = InspectorPanel(self.session, self, track_record=lambda agent: track_record_line(
            self._reflection(), agent))  # type: ignore[arg-type]
        self.status = StatusArea(self, self.table)
        self.progress, self.commit_notice = self.status.progress, self.status.commit_notice
        front = CurationFront(self.session, self.ops, self.table, self.inspector, self.relabel,
                              self.status, ask_text=lambda *a: self.ask_text(*a),
                              reindex=lambda: self.reindex(), parent=self,
                              facts_in_front=lambda: self.front() is self.facts)
        self.curation_front = front  # (its Reload after a refusal: `_on_failed`)
        self.selected_paths, self.open_relabel = front.selected_paths, front.open_relabel
        self.retract_selected = front.retract_selected
        self._connected = False  # (the window's services are wired: `_connect`)
        self.panels: list[Panel] = self._make_panels(conn)
        self._refs_only = False  # (the update running was asked for by a move of refs only)
        #: the index moved while another tab was in front: the Facts table's query runs again
        #: when its tab is shown (the sidebar's counts, always in sight, at once)
        self._table_stale = False
        self._build_layout()
        self.nav = nav = Navigator(self.session, self.center, self.table, self.inspector,
                                   self.search, self.status)
        (self.set_query, self.add_filter, self.more_like_this, self.show_fact, self.show_path,
         self.inspect_path, self.focus_search, self.focus_inspector, self.focus_table,
         self.copy_path) = (nav.set_query, nav.add_filter, nav.more_like_this, nav.show_fact,
                            nav.show_path, nav.inspect_path, nav.focus_search,
                            nav.focus_inspector, nav.focus_table, nav.copy_path)
        self.corpora = CorpusOpener(self)  # File ▸ Open corpus…, Open recent, Clone; the title
        self.actions_by_name = MenuBuilder(self).build()
        self.undo_stack = UndoStack(self.ops, self.actions_by_name["undo"], self.actions_by_name["redo"],
                                    self)
        self._connect()
        self.heap = HeapFreeze()
        self.watcher = CorpusWatcher(self.session.repo, self.session.indexer.git_dir, self)
        self.watcher.corpus_did_change.connect(self._outside_change)
        self.watcher.did_watch.connect(self._watch_said)
        self.watcher.enabled = watch
        dialogs.restore_geometry(self.settings, self, self._splitters())
        if self.session.conn is not None:
            self._refresh(IndexChange(None, None, in_front=False))
        self.session.lane.submit(lambda: recover(self.session.repo), done=self.status.recovered,
                                 failed=self.status.recovery_failed)
        if update_on_open:
            self.reindex()
        after_first_paint(self.table.view.viewport(), self._make_later)

    def _make_panels(self, conn: Callable[[], object]) -> list[Panel]:
        """The centre's tabs, in order (View ▸ Ctrl+1 …): the Facts tab, then those made
        after the first paint (`later_tabs`, gui/later_panel.py: one entry per tab)."""
        self.facts = FactsTab(self.search, self.table, self)
        later = later_tabs(self, conn)
        self._later = {p.name: p for p in later}
        for p in later:
            p.did_make.connect(functools.partial(self._made, p))
        return [self.facts, *later]

    # the tabs made after the first paint (made now when asked for)
    problems: Made[ProblemsPanel] = Made("problems")
    overview: Made[OverviewPanel] = Made("overview")
    mislabels: Made[MislabelPanel] = Made("mislabels")
    settlement: Made[SettlementPanel] = Made("settlement")
    transitions: Made[TransitionsPanel] = Made("transitions")
    proposals: Made[ProposalsPanel] = Made("proposals")
    agents: Made[AgentsPanel] = Made("agents")
    messages: Made[MessagesPanel] = Made("messages")

    @property
    def transitions_tab(self) -> QWidget:
        return self.transitions.tab_widget()

    def _made(self, later: LaterPanel, real: Panel) -> None:
        """A tab's real panel was made: its widget takes the stand-in page's place (the
        same index, caption and front tab; the tab widget's signals held meanwhile)."""
        if self._connected:
            self._connect_panel(real)
        center = getattr(self, "center", None)
        index = -1 if center is None else center.indexOf(later.page)
        if index < 0:  # (made before the layout: the layout takes the real one)
            return
        current, text = center.currentIndex(), center.tabText(index)
        widget = real.tab_widget()
        widget.setAutoFillBackground(True)  # (as `_build_layout` does for every page)
        center.blockSignals(True)
        try:
            center.removeTab(index)
            center.insertTab(index, widget, text)
            center.setCurrentIndex(current)
        finally:
            center.blockSignals(False)
        self._follow_screen(current)

    def make_every_tab(self) -> None:
        """Every tab's panel made now (the shortcut sheet lists the keys of all of them)."""
        for later in self._later.values():
            later.make()

    def _make_later(self) -> None:
        """After the first paint: the next tab not yet made, one per turn of the event loop."""
        from shiboken6 import isValid

        if not isValid(self) or self._leaving or not self.isVisible():  # (closed meanwhile)
            return
        waiting = [p for p in self._later.values() if p.real is None]
        if waiting:
            waiting[0].make()
            if len(waiting) > 1:
                QTimer.singleShot(0, self._make_later)

    def _reflection(self) -> object:
        """The Transitions tab's reflection for the inspector's track records (None until
        that tab is made and has read it: the track records follow when it has)."""
        made = self._later["transitions"].real
        return getattr(made, "reflection", None)

    # -- construction ---------------------------------------------------------------------

    def _build_layout(self) -> None:
        self.center = QTabWidget(self)
        self.center.setObjectName("centerTabs")
        for panel in self.panels:
            page = panel.tab_widget()
            # (the window's own background: Fusion's tab pane is a lighter grey (in the dark
            # scheme 2.2:1 under black), on which no text colour was checked — issue 24 item 6)
            page.setAutoFillBackground(True)
            self.center.addTab(page, panel.caption)
            panel.caption_did_change.connect(  # type: ignore[attr-defined]
                functools.partial(self._set_caption, panel))
        # the tabs' bar spans the window (issue 24 item 8): over the centre alone, nine tabs
        # did not fit at 1366×768 and Proposals, Agents, Messages hid behind scroll arrows
        self.tab_bar = QTabBar(self)
        self.tab_bar.setObjectName("tabBar")
        self.tab_bar.setAccessibleName("Tabs")
        self.tab_bar.setExpanding(False)
        self.tab_bar.setElideMode(Qt.TextElideMode.ElideNone)
        for i in range(self.center.count()):
            self.tab_bar.addTab(self.center.tabText(i))
        self.center.tabBar().hide()
        self.center.setDocumentMode(True)  # (no pane frame under a bar it does not show)
        self.center.currentChanged.connect(self.tab_bar.setCurrentIndex)
        self.tab_bar.currentChanged.connect(self.center.setCurrentIndex)
        self._front: Panel | None = None
        #: the fact the Facts tab showed when another tab came to the front (issue 24 #1)
        self._facts_fact: int | None = None
        self.center.currentChanged.connect(self._tab_changed)
        # (a tab may build or place widgets when first shown: the Tab order follows again)
        self.center.currentChanged.connect(self._follow_screen)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("mainSplitter")
        for part in (self.sidebar, self.center, self.inspector):
            self.splitter.addWidget(part)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([230, 700, 470])
        self.welcome = self._welcome()
        #: a word that stays until dismissed: a sync's summary (issue 24 item 11)
        self.notice = NoticeBanner(self)
        central = QWidget(self)
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        if self.welcome is not None:  # (the first run, on the demo: New, Open, Clone above)
            column.addWidget(self.welcome)
        column.addWidget(self.notice)
        column.addWidget(self.tab_bar)
        column.addWidget(self.splitter, 1)
        self.setCentralWidget(central)
        follow_screen(self, [self.tab_bar, self.center, self.inspector])  # (Tab order: issue 18)

    def _welcome(self) -> WelcomeBanner | None:
        from factdesk.demo import DEMO_DIR_NAME

        demo = Settings.resolve().workspace / DEMO_DIR_NAME
        if not wants_welcome(self.settings, self.session.repo, demo):
            return None
        # (the opener is made after the layout: its actions are looked up when clicked)
        return WelcomeBanner(self.settings, new=lambda: self.corpora.new_corpus(),
                             open_=lambda: self.corpora.choose_folder(),
                             clone=lambda: self.corpora.clone_from_url(), parent=self)

    def _follow_screen(self, _index: int) -> None:
        from shiboken6 import isValid

        # (not while the window is hidden: closing, or torn down tab by tab)
        if isValid(self) and self.isVisible() and isValid(self.center) and isValid(self.inspector):
            follow_screen(self, [self.tab_bar, self.center, self.inspector])

    def _set_caption(self, panel: Panel, text: str) -> None:
        index = self.center.indexOf(panel.tab_widget())
        self.center.setTabText(index, text)
        self.tab_bar.setTabText(index, text)

    def front(self) -> Panel:
        """The panel of the tab in front (made now if it was a stand-in)."""
        entry = self._in_front()
        return entry.make() if isinstance(entry, LaterPanel) else entry

    def _in_front(self) -> Panel:
        """The entry of `panels` in front (a `LaterPanel` while its tab is not made)."""
        return self.panels[max(self.center.currentIndex(), 0)]

    def _requery(self) -> None:
        self._table_stale = False
        if not self.apply_query(self.search.text()):
            self.table.refresh()

    def _tab_changed(self, _index: int) -> None:
        if self._front is self.facts:
            self._facts_fact = self.inspector.fact_id
        self._front = self.front()
        if self._front is self.facts and self._table_stale:
            self._requery()
        self._front.tab_did_show()
        self.sync_inspector(switched=True)
        if self.isVisible():
            focus_into(self.center.currentWidget(), keep=(self.search,))

    def sync_inspector(self, *, switched: bool = False) -> None:
        """The inspector shows what the tab in front has selected (issue 24 #1): the
        fact its `selected_path()` names (none: an empty inspector), the Facts tab's own
        fact again when it comes back; a tab with no fact of its own leaves it as it is."""
        front = self.front()
        if front is self.facts:
            if switched and self._facts_fact is not None:
                self.inspector.show_fact(self._facts_fact)
            return
        selected = getattr(front, "selected_path", None)
        if selected is None:
            return
        path = selected()
        fact_id = self.nav.id_of(path) if path else None
        if fact_id != self.inspector.fact_id:
            self.inspector.show_fact(fact_id)

    def inspect_from(self, panel: object, path: str | None) -> None:
        """A tab's selection for the inspector, shown only while that tab is in front (a
        queue reloading behind another tab never takes the inspector over)."""
        if panel is self.front():
            fact_id = self.nav.id_of(path) if path else None
            if fact_id != self.inspector.fact_id:
                self.inspector.show_fact(fact_id)

    def _connect(self) -> None:
        s = self.session
        s.index_did_update.connect(lambda stats: self._refresh(IndexChange(stats, None, in_front=True)))
        s.index_did_fail.connect(self._on_index_failed)
        s.progress_did_change.connect(self.status.stage)
        s.lane.busy_did_change.connect(lambda busy: self.status.lane_busy(busy, s.is_updating))
        s.lane.tail_did_fail.connect(lambda m: self.status.say(m, 10000))
        self.ops.operation_did_execute.connect(self._on_executed)
        self.ops.operation_did_fail.connect(self._on_failed)
        self.commit_notice.undo_did_request.connect(self.undo_stack.undo_exactly)
        self.commit_notice.redo_did_request.connect(self.undo_stack.redo)
        self.semantic.status_did_change.connect(self.status.say)
        self.semantic.did_become_ready.connect(  # (a `similar:` waiting on it is answered)
            lambda: self.apply_query(self.search.text())
            if parse_similar(self.search.text()) is not None else None)
        self.sidebar.term_did_activate.connect(self.add_filter)
        self.sidebar.query_did_activate.connect(self.set_query)
        for panel in self.panels:
            panel.attach(self)
            made = panel.real if isinstance(panel, LaterPanel) else panel
            if made is not None:  # (those made later: `_made`)
                self._connect_panel(made)
        self._connected = True
        self.inspector.fact_link_did_activate.connect(self.show_fact)
        self.inspector.status_did_change.connect(self.status.say)

    def _connect_panel(self, panel: Panel) -> None:
        finished = getattr(panel, "sync_did_finish", None)  # (the Proposals tab's Sync)
        if finished is not None:
            finished.connect(self.notice.sync_did_finish)

    # -- queries ------------------------------------------------------------------------------

    def apply_query(self, text: str) -> bool:
        """Run a query; a QueryError is shown under the search bar and changes nothing."""
        try:
            if self.table.requery(text) == PENDING:  # (applied again once resolved)
                return True
            runnable = self.table.executable(text) or text
        except QueryError as exc:
            if parse_similar(text) is None:
                self.search.show_error(str(exc))
                return False
            # `similar:` before the semantic model is ready (issue 24 item 12): said, with
            # no rows and no facet counts under it (it listed every fact, each facet 0)
            said = str(exc)
            self.search.show_error(said if "similar:" in said else f"similar: {said}")
            self.table.show_none(text)
            self.search.show_chips(text)
            self.sidebar.refresh_facets(text)
            self.query_did_apply.emit(text)
            return True
        hints = vocabulary_hints(text) if self.table.model.rowCount() == 0 else []
        self.search.show_error("No facts: " + "; ".join(hints) if hints else None)
        self.search.show_chips(text)
        self.sidebar.refresh_facets(runnable)
        self.query_did_apply.emit(text)
        return True

    def go(self, delta: int) -> None:
        """Alt+Left / Alt+Right (`Navigator.go`)."""
        if self.nav.go(delta):
            self.last_error = None

    # -- questions ----------------------------------------------------------------------------

    def ask_text(self, title: str, label: str, default: str) -> str | None:
        """A one-line question (tests replace this with an answer)."""
        return dialogs.ask_text(self, title, label, default)

    def ask_identity(self) -> tuple[str, str] | None:
        """Name and e-mail for commits, asked once (tests replace this with an answer)."""
        return dialogs.ask_identity(self)

    # -- curation -----------------------------------------------------------------------------

    @property
    def curation(self):  # type: ignore[no-untyped-def]
        """(On the writer lane only: inside a `run_action` call.) The corpus's `Curation`."""
        return self.ops.curation()

    @property
    def relabel_dialog(self) -> QDialog | None:
        return self.relabel.dialog

    def run_action(self, action: Callable[[], ChangeSet],
                   success: Callable[[ChangeSet], None] | None = None) -> None:
        """Run a zero-argument curation call on the writer lane (see `ops.run`)."""
        self.ops.run(lambda _cur: action(), success=success)

    def undo(self) -> None:
        self.undo_stack.undo()

    def redo(self) -> None:
        self.undo_stack.redo()

    def _on_executed(self, executed: Executed) -> None:
        changes = executed.changes
        if executed.index is None:
            self.status.committed(changes)
            if executed.index_error is not None:
                self._on_index_failed(executed.index_error)
            return
        place = self.table.place_for(changes, self.inspector.path)
        change = IndexChange(executed.index, changes, in_front=True)
        self.session.accept_update(executed.index)
        self._refresh(change, place=place)
        self.status.committed(changes)  # (after the refresh's own word: warnings last)
        if executed.index.mode == "behind":  # another updater held the index: catch up
            self.reindex()

    def _on_failed(self, exc: FactdeskError) -> None:
        self.last_error = str(exc)
        if self.curation_front.offer_reload(exc):  # changed on disk: the dialog offers Reload
            return
        self.status.action_failed(exc)

    # -- index --------------------------------------------------------------------------------

    def reindex(self, *, rebuild: bool = False) -> None:
        """Bring the index up to date in the background (F5)."""
        self.status.working("indexing…")
        self._refs_only = False
        self.session.update(rebuild=rebuild)

    def _watch_said(self) -> None:
        """A watch that could not start (the platform's limit) is said once, in words: the
        window still sees every change, at the cost of a full look each update."""
        if self.watcher.trouble and not getattr(self, "_watch_told", False):
            self._watch_told = True
            self.status.say(f"Not watching for outside changes: {self.watcher.trouble} "
                            "(each update looks at everything; F5 refreshes)", 15000)

    def _outside_change(self) -> None:
        """The watch saw an outside change (an agent's commit or tip, an editor's save):
        the index takes in the paths it names, or looks at everything when it cannot say."""
        seen = self.watcher.take()
        if seen.nothing:
            return
        self.status.working("indexing…")
        self._refs_only = not seen.whole and not seen.paths  # (an agent's new tip: `_refresh`)
        self.session.update(hint=None if seen.whole else sorted(seen.paths))

    def _refresh(self, change: IndexChange, *, place: Place | None = None) -> None:
        """Every view after the index moved on (a reindex, an outside commit, our action).
        An outside change the index found nothing in (an agent's new tip: git's refs moved,
        the corpus did not) is for the tabs that read the agents' branches only
        (`Panel.reads_agent_branches`): ten agents
        writing a proposal a second each redrew the table, the sidebar, the inspector and
        every tab ten times a second, and the curator's keys waited behind them."""
        refs_only, self._refs_only = self._refs_only, False
        if refs_only and change.changes is None and change.stats is not None \
                and change.stats.mode == "unchanged":
            for reader in [p for p in self.panels if getattr(p, "reads_agent_branches", False)]:
                reader.index_did_change(IndexChange(change.stats, None,
                                                    in_front=reader is self._in_front()))
            self.status.index_updated(change.stats)
            self.index_did_update.emit(change.stats)
            return
        self.table.index_moved()
        ours = change.changes
        if change.light and ours is not None and self.table.patch_paths(list(ours.paths_touched)):
            self.sidebar.refresh_facets(self.search.text())
        elif self.front() is not self.facts:  # (the table again when its tab is shown)
            self._table_stale = True
            self.sidebar.refresh_facets(self.sidebar.facet_query)
        else:
            self._requery()
        if not change.light:
            self.sidebar.refresh_ontology()
            self.watcher.watch()
            self.heap.arm()
        front = self._in_front()
        for panel in self.panels:
            panel.index_did_change(IndexChange(change.stats, change.changes, in_front=panel is front))
        self.refresh_inspector()
        self.sync_inspector()  # (a decision moved the queue on: its fact, never a blank)
        if place is not None:
            self.table.restore(place)
        self.inspector.reload_attestations()
        self.undo_stack.reread()
        if change.stats is not None:
            self.semantic.start()
            self.status.index_updated(change.stats)
            self.index_did_update.emit(change.stats)

    def _on_index_failed(self, message: str) -> None:
        self.watcher.lost("the last update did not finish")  # (what it saw: looked at again)
        self.last_error = message
        self.status.index_failed(message)

    def refresh_inspector(self) -> None:
        if self.inspector.fact_id is not None:
            self.inspector.show_fact(self.inspector.fact_id)

    # -- persistence --------------------------------------------------------------------------

    def _splitters(self) -> dict[str, QSplitter]:
        return {"window/splitter": self.splitter, "window/sidebar": self.sidebar.splitter}

    def save_state(self) -> None:
        dialogs.save_geometry(self.settings, self, self._splitters())
        self.table.save_header()
        self.settings.sync()

    def leave(self) -> None:
        """Close for another corpus (gui/open_corpus.py): nothing waits for this window's
        writes, which finish on its writer thread; it is deleted once they have."""
        self._leaving = True
        self.close()

    def _left(self) -> None:
        from factdesk.gui.open_corpus import WINDOWS

        if self in WINDOWS:
            WINDOWS.remove(self)
        self.deleteLater()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._leaving:
            self.session.lane.did_stop.connect(self._left)
        self.save_state()
        self.watcher.enabled = False
        self.watcher.close()
        for panel in self.panels:
            panel.close_worker()
        for part in (self.table, self.sidebar, self.inspector, self.relabel):
            part.close_worker()
        self.semantic.close()
        # (since:last-visit, in the next session: a write, so the lane's last job — left
        # out when an index update runs, which quitting does not wait for)
        self.session.lane.submit(self.session.indexer.record_visit, done=lambda _r: None,
                                 failed=lambda _e: None, interruptible=self.session.is_updating)
        self.session.close(wait=not self._leaving)  # (finishes the queued writes first)
        self.heap.release()  # this window's objects become collectable again
        super().closeEvent(event)
        if not self._leaving:  # (closed for good: the app no longer holds it; File ▸ Open
            # looked for the window that replaced one among those held, and found this one)
            QTimer.singleShot(0, self._forget)

    def _forget(self) -> None:
        from factdesk.gui.open_corpus import WINDOWS

        if self in WINDOWS:
            WINDOWS.remove(self)
