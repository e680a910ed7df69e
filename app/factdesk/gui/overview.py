"""OverviewPanel: counts per envelope axis as bar charts, and "needs a curator" links.

Bars are painted directly (no QtCharts dependency); every link sets a query.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QGridLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from factdesk.gui import theme
from factdesk.gui.panel import IndexChange, LazyRefresh, Window
from factdesk.index import reads
from factdesk.index.search import count as search_count
from factdesk.index.search import facet_counts

if TYPE_CHECKING:
    import sqlite3

CHARTS = (("type", "Type"), ("kind", "Kind"), ("origin", "Origin"),
          ("claim_type", "Claim type"), ("claimant_type", "Claimant type"),
          ("subject_kind", "Subject"))
#: (caption, query) of the curator work lists
CURATOR_LINKS = (
    ("Facts with problems", "has:problems"),
    ("Facts with errors", "has:errors"),
    ("Overdue or unfalsifiable hypotheses (H1)", "type:hypothesis problem:H1"),
    ("Stale evidence weights (R2)", "problem:R2"),
    ("Hypotheses or pragmatic facts seeding synthesis (R1)", "problem:R1"),
    ("Authority violations (A1)", "problem:A1"),
    ("Legacy facts without an envelope", "-has:envelope"),
    ("Retracted facts", "status:retracted"),
)
BAR_HEIGHT = 18


class BarChart(QWidget):
    """Horizontal bars: label on the left, bar, count on the right."""

    def __init__(self, column: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.column = column
        self.bars: list[tuple[str, int]] = []

    def set_bars(self, bars: list[tuple[str, int]]) -> None:
        self.bars = bars
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(320, max(1, len(self.bars)) * (BAR_HEIGHT + 4) + 4)

    def minimumSizeHint(self) -> QSize:
        return QSize(200, self.sizeHint().height())

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        peak = max((n for _l, n in self.bars), default=1) or 1
        label_w = 130
        count_w = 50
        bar_w = max(10, self.width() - label_w - count_w - 12)
        for i, (label, count) in enumerate(self.bars):
            y = 2 + i * (BAR_HEIGHT + 4)
            mark = theme.mark_for(self.column, label)
            color = QColor(mark.color if mark else "#607d8b")
            painter.setPen(QColor("#212121"))
            text = theme.labelled(self.column, label) if mark else label
            painter.drawText(QRectF(0, y, label_w - 6, BAR_HEIGHT),
                             Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                             painter.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight,
                                                              label_w - 8))
            width = max(2.0, bar_w * count / peak)
            painter.fillRect(QRectF(label_w, y + 2, width, BAR_HEIGHT - 4), color)
            painter.drawText(QRectF(label_w + width + 4, y, count_w, BAR_HEIGHT),
                             Qt.AlignmentFlag.AlignVCenter, str(count))
        painter.end()


class OverviewPanel(LazyRefresh, QScrollArea):
    """Corpus composition and curator work lists; emits `query_did_request(text)`."""

    query_did_request = Signal(str)
    caption_did_change = Signal(str)
    caption = menu_text = "Overview"
    action_name = "showOverview"

    def __init__(self, connection: Callable[[], sqlite3.Connection | None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._connection = connection
        self.setWidgetResizable(True)
        inner = QWidget(self)
        grid = QGridLayout(inner)
        self.charts: dict[str, BarChart] = {}
        for i, (column, title) in enumerate(CHARTS):
            box = QGroupBox(title, inner)
            chart = BarChart(column, box)
            QVBoxLayout(box).addWidget(chart)
            self.charts[column] = chart
            grid.addWidget(box, i // 2, i % 2)
        curator = QGroupBox("Needs a curator", inner)
        curator_layout = QVBoxLayout(curator)
        self.links: dict[str, QPushButton] = {}
        for caption, query in CURATOR_LINKS:
            button = QPushButton(caption, curator)
            button.setFlat(True)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.setStyleSheet("QPushButton { text-align: left; color: #1565c0; "
                                 "text-decoration: underline; }")
            button.setToolTip(theme.tooltip(query))
            button.clicked.connect(lambda _=False, q=query: self.query_did_request.emit(q))
            curator_layout.addWidget(button)
            self.links[query] = button
        self.summary = QLabel("", curator)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        curator_layout.addWidget(self.summary)
        grid.addWidget(curator, 0, 2, 3, 1)
        grid.setRowStretch(3, 1)
        self.setWidget(inner)

    def refresh(self) -> None:
        """Recount everything (after an index update)."""
        conn = self._connection()
        if conn is None:
            return
        for column, chart in self.charts.items():
            chart.set_bars([(str(v), n) for v, n in facet_counts(conn, column, "") if v])
        for caption, query in CURATOR_LINKS:
            count = search_count(conn, query)
            self.links[query].setText(f"{caption}  ({count})")
        live, problems = reads.totals(conn)
        self.summary.setText(f"{live} live facts, {problems} findings")

    # -- Panel ------------------------------------------------------------------------------

    def tab_widget(self) -> QWidget:
        return self

    def step(self, delta: int) -> None:
        """(No list: j/k move nothing here.)"""

    def index_did_change(self, change: IndexChange) -> None:
        self.refresh_when_seen(change)

    def tab_did_show(self) -> None:
        self.catch_up()

    def close_worker(self) -> None:
        """(No background work.)"""

    def attach(self, window: Window) -> None:
        self.query_did_request.connect(window.set_query)
