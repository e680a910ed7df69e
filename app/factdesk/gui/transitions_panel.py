"""The Transitions tab: hypothesis transitions over history and how predictions turned out.

Reads `factdesk.reflect` only (no rules here): `cache.cached_walk` for the transition log,
`queue.open_hypotheses` for what is still open or overdue, `stats.track_records` for the
track records, `queue.methodology_counts` for reinforcement. All of it is computed off the
GUI thread (`TransitionsWorker`, with its own read connection), like `factdesk transitions
--stats`. The charts are painted with QPainter (`gui/stacked_chart.py`): corpus text in them
is drawn as plain text, never markup (RELIABILITY H01).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from PySide6.QtCore import (
    QEvent,
    QObject,
    Qt,
    QThread,
    QTimer,
    Signal,
)
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QBoxLayout,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from factdesk.gui import theme
from factdesk.gui.panel import IndexChange, Window
from factdesk.gui.stacked_chart import Line, Segment, StackedBarChart
from factdesk.gui.transitions_table import COLUMNS, TransitionsModel, TransitionsTable
from factdesk.gui.workers import failure_text, let_finish
from factdesk.index.indexer import Indexer
from factdesk.model.words import count
from factdesk.reflect.charts import (
    BUCKETS,
    outcomes_over_time,
    period_label,
    segment_counts,
    target_path,
    track_record_line,
)
from factdesk.reflect.model import KINDS, Transition
from factdesk.reflect.stats import OUTCOMES, Reflection, TrackRecord

#: stacked segments of the track-record chart: (attribute, legend, colour: gui/theme.py,
#: light or dark)
RECORD_SEGMENTS = tuple((name, "open" if name == "pending" else name, fill)
                        for name, fill in theme.OUTCOME_FILLS.items())
ALL_KINDS = "All transitions"
#: behind another tab, the transitions (the inspector's track records) are computed again
#: at most this often while the corpus keeps moving
BEHIND_S = 10.0
HYPOTHESES_ONLY = "Hypothesis transitions"
ALL_CLAIMANTS = "All claimants"
#: time buckets of the outcomes-over-time chart; "auto" picks the coarsest giving >= MIN_BUCKETS


@dataclass(frozen=True, slots=True)
class LoadResult:
    """What the worker computed for one range."""

    since: str | None
    transitions: list[Transition]
    commits: int
    reflection: Reflection


class TransitionsWorker(QThread):
    """The transition log (cached) and the track records, with its own read connection."""

    did_finish = Signal(object)  # LoadResult
    did_fail = Signal(str)

    def __init__(self, repo: Path, indexer: Indexer, since: str | None, today: date | None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._repo = repo
        self._indexer = indexer
        self._since = since
        self._today = today

    def run(self) -> None:
        from factdesk.reflect.cache import cached_walk
        from factdesk.reflect.queue import methodology_counts, open_hypotheses
        from factdesk.reflect.stats import OpenClaim, track_records

        try:
            log = cached_walk(self._repo, self._since)
            conn = self._indexer.connect(readonly=True)
            try:
                queue = open_hypotheses(conn, self._today or date.today())
                claims = [OpenClaim(i.path, i.claimant, i.claimant_type, i.overdue) for i in queue]
                ref = track_records(log.transitions, claims, methodology_counts(conn))
            finally:
                conn.close()
        except Exception as exc:  # reported in the panel, never a crash
            self.did_fail.emit(failure_text(exc))
            return
        self.did_finish.emit(LoadResult(self._since, list(log.transitions), log.commits, ref))


# -- the panel --------------------------------------------------------------------------------


def _label(parent: QWidget, name: str) -> QLabel:
    label = QLabel(parent)
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class TransitionsPanel(QWidget):
    """Transitions over a commit range, track-record charts and methodology reinforcement.

    Signals: `did_load(int)` (transitions in the range, after each load),
    `fact_activated(str)` (a row's fact path: Enter or double-click)."""

    did_load = Signal(int)
    fact_activated = Signal(str)
    caption_did_change = Signal(str)
    caption = "Transitions"
    menu_text = "Transitions and track records"
    action_name = "showTransitions"

    def __init__(self, repo: Path, indexer: Indexer, parent: QWidget | None = None, *,
                 today: date | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transitionsPanel")
        self.repo = repo
        self.indexer = indexer
        self.today = today  #: reference date for overdue hypotheses (None: today)
        self.loaded = False
        self._frame: QScrollArea | None = None
        self.since: str | None = None
        self.transitions: list[Transition] = []
        self.commits = 0
        self.reflection: Reflection | None = None
        self._worker: TransitionsWorker | None = None
        self._pending = False
        self._closed = False  # (the window closed: no load starts)
        self._unfilled = False  # (loaded behind another tab: `tab_did_show` fills)
        self._behind = QTimer(self)  # (a load asked for behind another tab, done later)
        self._behind.setSingleShot(True)
        self._behind.setInterval(int(BEHIND_S * 1000))
        self._behind.timeout.connect(self.load)
        self._build()

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        bar = QHBoxLayout()
        self.since_edit = QLineEdit(self)
        self.since_edit.setObjectName("transitionsSince")
        self.since_edit.setPlaceholderText("since REV (empty: whole history) — Enter to apply")
        self.since_edit.setClearButtonEnabled(True)
        self.since_edit.returnPressed.connect(self.apply_since)
        self.kind_combo = QComboBox(self)
        self.kind_combo.setObjectName("transitionsKind")
        self.kind_combo.addItems([ALL_KINDS, HYPOTHESES_ONLY, *KINDS])
        self.kind_combo.currentIndexChanged.connect(lambda _i: self._fill_table())
        self.status = _label(self, "transitionsStatus")
        self.status.setWordWrap(True)  # (its width never widens the tab: the charts were cut)
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.status.setMinimumWidth(120)
        bar.addWidget(self.since_edit, 2)
        bar.addWidget(self.kind_combo)
        bar.addWidget(self.status, 3)
        outer.addLayout(bar)

        split = QSplitter(Qt.Orientation.Vertical, self)
        self.model = TransitionsModel(self)
        self.table = TransitionsTable(split)
        self.table.setObjectName("transitionsTable")
        self.table.setTabKeyNavigation(False)  # (Tab leaves the table: no keyboard trap)
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)  # newest first
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        for col, width in enumerate((120, 110, 260, 170, 200, 90, 130, 90)):
            header.resizeSection(col, width)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.doubleClicked.connect(lambda index: self._activate(index.row()))
        self.table.row_activated.connect(self._activate)
        split.addWidget(self.table)

        # the charts and the methodology table side by side on a wide centre, one under
        # the other on a narrow one (a 1366-pixel screen: `_reflow`); the tab scrolls
        lower = QWidget(split)
        self.charts_box = lower
        self._lower_layout = QBoxLayout(QBoxLayout.Direction.LeftToRight, lower)
        self._lower_layout.setContentsMargins(0, 0, 0, 0)
        agents = QWidget(lower)
        agents_layout = QVBoxLayout(agents)
        agents_layout.setContentsMargins(0, 0, 0, 0)
        self.group_combo = QComboBox(agents)
        self.group_combo.setObjectName("transitionsGroup")
        self.group_combo.addItem("Per claimant agent", "agent")
        self.group_combo.addItem("Per claimant type", "type")
        self.group_combo.currentIndexChanged.connect(lambda _i: self._fill_records())
        self.records_chart = self.records_view = StackedBarChart(
            "How predictions turned out", horizontal=True, parent=agents)
        self.records_view.setObjectName("transitionsRecordsChart")
        agents_layout.addWidget(self.group_combo)
        agents_layout.addWidget(self.records_view, 1)

        months = QWidget(lower)
        months_layout = QVBoxLayout(months)
        months_layout.setContentsMargins(0, 0, 0, 0)
        self.month_combo = QComboBox(months)
        self.month_combo.setObjectName("transitionsMonthKey")
        self.month_combo.currentIndexChanged.connect(lambda _i: self._fill_months())
        self.bucket_combo = QComboBox(months)
        self.bucket_combo.setObjectName("transitionsBucket")
        self.bucket_combo.addItems(list(BUCKETS))
        self.bucket_combo.currentIndexChanged.connect(lambda _i: self._fill_months())
        self.bucket = "month"  #: the time bucket the chart shows (what "auto" chose)
        self.months_chart = self.months_view = StackedBarChart(
            "Outcomes over time, and share that held", parent=months)
        self.months_view.setObjectName("transitionsMonthsChart")
        combos = QHBoxLayout()
        combos.addWidget(self.month_combo, 2)
        combos.addWidget(self.bucket_combo, 1)
        months_layout.addLayout(combos)
        months_layout.addWidget(self.months_view, 1)

        meth = QWidget(lower)
        meth_layout = QVBoxLayout(meth)
        meth_layout.setContentsMargins(0, 0, 0, 0)
        self.meth_caption = _label(meth, "transitionsMethodologyCaption")
        self.meth_caption.setText("Methodology facts, most reinforced first")
        self.methodology_table = QTableWidget(0, 3, meth)
        self.methodology_table.setObjectName("transitionsMethodologies")
        self.methodology_table.setTabKeyNavigation(False)
        self.methodology_table.setHorizontalHeaderLabels(["Transitions", "Citing", "Methodology"])
        self.methodology_table.verticalHeader().setVisible(False)
        self.methodology_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.methodology_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.methodology_table.horizontalHeader().setStretchLastSection(True)
        self.methodology_table.setWordWrap(False)
        self.methodology_table.verticalHeader().setDefaultSectionSize(22)
        self.methodology_table.horizontalHeader().resizeSection(0, 80)
        self.methodology_table.horizontalHeader().resizeSection(1, 55)
        self.methodology_table.itemDoubleClicked.connect(self._activate_methodology)
        meth_layout.addWidget(self.meth_caption)
        meth_layout.addWidget(self.methodology_table, 1)

        self.methodology_table.setMinimumHeight(160)
        for w, stretch in ((agents, 4), (months, 5), (meth, 3)):
            self._lower_layout.addWidget(w, stretch)
        split.addWidget(lower)
        split.setChildrenCollapsible(False)
        self.table.setMinimumHeight(140)
        split.setSizes([330, 420])
        self.split = split
        outer.addWidget(split, 1)
        self.status.setText("Not computed yet.")
        self.setAccessibleName("Transitions and track records")
        self.status.setAccessibleName("Transitions summary")
        for combo, name in ((self.kind_combo, "Transition kind"),
                            (self.group_combo, "Group the track records"),
                            (self.month_combo, "Claimants of the outcomes chart"),
                            (self.bucket_combo, "Time bucket")):
            combo.setAccessibleName(name)
        self.since_edit.setAccessibleName("Since revision")
        self.table.setAccessibleName("Transitions")
        self.methodology_table.setAccessibleName("Methodology facts")
        theme.on_change(self._scheme_did_change)

    #: under this width the charts stack (each needs ~320 pixels for its labels)
    WIDE = 1000

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._reflow()
        super().resizeEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:  # (the frame's viewport: the room there is)
            self._reflow()
        return False

    def _reflow(self) -> None:
        # the room the tab has (its frame's viewport), not the panel's own width: side by
        # side, the panel's minimum is ~1000 pixels and it would never narrow to reflow
        room = self._frame.viewport().width() if self._frame is not None else self.width()
        wide = room >= self.WIDE
        direction = QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom
        if self._lower_layout.direction() != direction:
            self._lower_layout.setDirection(direction)

    def _scheme_did_change(self) -> bool:
        from shiboken6 import isValid

        if not isValid(self):
            return False
        for chart in (self.records_chart, self.months_chart):
            chart.update()  # (painted in the palette in use)
        if self.loaded:
            self._fill_records()
            self._fill_months()
            self.model.layoutChanged.emit()  # (the outcome column's colours)
        return True

    def key_widgets(self) -> list[QWidget]:
        """What must stay readable at 1366×768 (tests/gui/test_layout.py): the charts (their
        labels), the table and the combos."""
        return [self.records_view, self.months_view, self.table, self.methodology_table,
                self.kind_combo, self.group_combo]

    # -- loading ------------------------------------------------------------------------------

    def load(self) -> None:
        """(Re)compute the transitions of the current range in the background; a load asked
        for while one runs happens when it ends."""
        if self._closed:
            return
        if self._worker is not None:
            self._pending = True
            return
        self._pending = False
        what = f"since {self.since}" if self.since else "over the whole history"
        self.status.setText(f"Finding transitions {what}…")
        worker = TransitionsWorker(self.repo, self.indexer, self.since, self.today, self)
        worker.did_finish.connect(self._loaded)
        worker.did_fail.connect(self._failed)
        self._worker = worker
        worker.start()

    def apply_since(self) -> None:
        """Enter in the since field: the range after that revision (empty: everything)."""
        self.since = self.since_edit.text().strip() or None
        self.load()

    def _reap(self) -> None:
        if self._worker is not None:
            self._worker.wait()
            self._worker.deleteLater()
            self._worker = None

    def step(self, delta: int) -> None:
        """J/K: the next/previous row of the table (the first when none is current)."""
        current = self.table.currentIndex()
        row = current.row() + delta if current.isValid() else 0
        if 0 <= row < self.model.rowCount():
            self.table.selectRow(row)

    # -- Panel ------------------------------------------------------------------------------

    def tab_widget(self) -> QWidget:
        """The panel in a scroll area: its charts and toolbar must not set the window's
        minimum width."""
        if self._frame is None:
            self._frame = QScrollArea(self.parentWidget())
            self._frame.setWidgetResizable(True)
            self._frame.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            self._frame.viewport().installEventFilter(self)
            self._frame.setAccessibleName("Transitions")
            self._frame.setWidget(self)
        return self._frame

    def index_did_change(self, change: IndexChange) -> None:
        # after an update (not the window's first fill from the index as it was: the
        # update on open follows at once), and after our action only when shown or when a
        # file came or went; in the background, the inspector's track records follow —
        # at most once per `BEHIND_S` (each walk holds the GIL for a while: at every
        # decision and every sync of a writing fleet it was most of the window's work)
        if change.stats is None or not (self.loaded or not change.light):
            return
        if not self.loaded or not self._behind_a_tab():
            self.load()
        elif not self._behind.isActive():
            self._behind.start()

    def _behind_a_tab(self) -> bool:
        """In a shown window, on a tab that is not in front."""
        return self.window().isVisible() and not self.isVisible()

    def tab_did_show(self) -> None:
        if not self.loaded:
            self.load()
        elif self._behind.isActive():
            self._behind.stop()
            self.load()
        elif self._unfilled:
            self._fill_views()

    def attach(self, window: Window) -> None:
        self.fact_activated.connect(window.show_path)
        self.did_load.connect(lambda _n: window.refresh_inspector())  # (its track records)

    def close_worker(self) -> None:
        """The window is closing: a running computation ends on its own, unheard (nothing
        waits for it); no other starts."""
        self._pending = False
        self._closed = True
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.did_finish.disconnect(self._loaded)
            worker.did_fail.disconnect(self._failed)
            let_finish(worker)

    def _loaded(self, result: LoadResult) -> None:
        self._reap()
        if self._pending:
            self.load()
            return
        self.transitions = result.transitions
        self.commits = result.commits
        self.reflection = result.reflection
        self.loaded = True
        # behind another tab, the views wait until shown (the inspector's track records
        # read `transitions` meanwhile): a hidden tab redrew its table at every decision
        self._unfilled = self._behind_a_tab()
        if not self._unfilled:
            self._fill_views()
        self.did_load.emit(len(self.transitions))

    def _fill_views(self) -> None:
        self._unfilled = False
        self._fill_table()
        self._fill_keys()
        self._fill_records()
        self._fill_months()
        self._fill_methodologies()

    def _failed(self, message: str) -> None:
        self._reap()
        if self._pending:
            self.load()
            return
        self.status.setText(f"Could not compute transitions: {message}")

    # -- views --------------------------------------------------------------------------------

    def _fill_table(self) -> None:
        choice = self.kind_combo.currentText()
        if choice == ALL_KINDS:
            rows = self.transitions
        elif choice == HYPOTHESES_ONLY:
            rows = [t for t in self.transitions if t.hypothesis]
        else:
            rows = [t for t in self.transitions if t.kind == choice]
        self.model.set_rows(rows)
        header = self.table.horizontalHeader()
        if header.sortIndicatorSection() < len(COLUMNS):
            self.model.sort(header.sortIndicatorSection(), header.sortIndicatorOrder())
        if not self.loaded:
            return
        what = f"since {self.since}" if self.since else "over the whole history"
        shown = "" if len(rows) == len(self.transitions) else f" ({len(rows)} shown)"
        ref = self.reflection
        rate = "" if ref is None or ref.total.hit_rate is None else \
            f"; {ref.total.hit_rate:.0%} of judged predictions held"
        self.status.setText(f"{count(len(self.transitions), 'transition')}{shown} in "
                            f"{count(self.commits, 'commit')} {what}{rate}")

    def _fill_keys(self) -> None:
        ref = self.reflection
        current = self.month_combo.currentData()
        self.month_combo.blockSignals(True)
        self.month_combo.clear()
        self.month_combo.addItem(ALL_CLAIMANTS, "all:all")
        if ref is not None:
            for key in ref.by_agent:
                self.month_combo.addItem(f"agent {key}", f"agent:{key}")
            for key in ref.by_type:
                self.month_combo.addItem(f"type {key}", f"type:{key}")
        found = self.month_combo.findData(current) if current is not None else -1
        self.month_combo.setCurrentIndex(max(found, 0))
        self.month_combo.blockSignals(False)

    def record_rows(self) -> dict[str, TrackRecord]:
        """The track records the bar chart shows (per agent or per type)."""
        if self.reflection is None:
            return {}
        by_type = self.group_combo.currentData() == "type"
        return self.reflection.by_type if by_type else self.reflection.by_agent

    def _fill_records(self) -> None:
        rows = [r for r in self.record_rows().values() if r.settled + r.open]
        counts = [segment_counts(r) for r in rows]
        self.records_chart.set_data(
            [r.key for r in rows],
            [Segment(legend, color, [c[attr] for c in counts])
             for attr, legend, color in RECORD_SEGMENTS])
        self.records_view.setAccessibleDescription("; ".join(
            f"{r.key}: " + ", ".join(f"{c[attr]} {legend}" for attr, legend, _f in RECORD_SEGMENTS
                                     if c[attr]) for r, c in zip(rows, counts, strict=True)))

    def month_points(self) -> list[tuple[str, dict[str, int]]]:
        """(period, outcome counts) for the claimants and time bucket chosen in the combos."""
        if not self.loaded:
            return []
        group, _, key = str(self.month_combo.currentData() or "all:all").partition(":")
        bucket, points = outcomes_over_time(self.transitions, self.bucket_combo.currentText(),
                                            group, key)
        self.bucket = bucket
        return points

    def _fill_months(self) -> None:
        points = self.month_points()
        rates: list[float | None] = []
        for _m, c in points:
            held = c["confirmed"] + c["promoted"]
            judged = held + c["refuted"]
            rates.append(100.0 * held / judged if judged else None)
        self.months_chart.set_title(f"Outcomes per {self.bucket}, and share that held")
        self.months_chart.set_data(
            [period_label(m, self.bucket, len(points)) for m, _c in points],
            [Segment(legend, color, [c[attr] for _m, c in points])
             for attr, legend, color in RECORD_SEGMENTS if attr in OUTCOMES],
            line=Line("% held", theme.HIT_RATE, rates) if points else None)
        self.months_view.setAccessibleDescription("; ".join(
            f"{m}: " + ", ".join(f"{c[a]} {legend}" for a, legend, _f in RECORD_SEGMENTS
                                 if a in OUTCOMES and c[a]) for m, c in points))

    def _fill_methodologies(self) -> None:
        table = self.methodology_table
        table.setSortingEnabled(False)
        items = self.reflection.methodologies if self.reflection else []
        table.setRowCount(len(items))
        for row, m in enumerate(items):
            for col, value in enumerate((m.transitions, m.citing)):
                cell = QTableWidgetItem()
                cell.setData(Qt.ItemDataRole.DisplayRole, value)
                table.setItem(row, col, cell)
            name = QTableWidgetItem(f"{m.title}  ({m.path})" if m.title else m.path)
            name.setData(Qt.ItemDataRole.UserRole, m.path)
            name.setToolTip(theme.tooltip(m.path))
            table.setItem(row, 2, name)
        table.setSortingEnabled(True)

    # -- activation ---------------------------------------------------------------------------

    def _activate(self, row: int) -> None:
        if 0 <= row < len(self.model.rows):
            self.fact_activated.emit(target_path(self.model.rows[row]))

    def _activate_methodology(self, item: QTableWidgetItem) -> None:
        cell = self.methodology_table.item(item.row(), 2)
        path = cell.data(Qt.ItemDataRole.UserRole) if cell is not None else None
        if path:
            self.fact_activated.emit(str(path))

    def track_record(self, agent_id: str | None) -> str | None:
        """`track_record_line` for the loaded range (None before the first load)."""
        return track_record_line(self.reflection, agent_id)
