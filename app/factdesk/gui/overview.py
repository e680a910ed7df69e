"""OverviewPanel: counts per envelope axis as bar charts, and "needs a curator" links.

Bars are painted directly (no QtCharts dependency); every link sets a query.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFocusEvent, QKeyEvent, QMouseEvent, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import (
    QGridLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
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
#: the query field of each chart's column (a bar, chosen, filters the table by its value)
FIELDS = {"type": "type", "kind": "kind", "origin": "origin", "claim_type": "claim",
          "claimant_type": "claimant", "subject_kind": "subject"}


class BarChart(QWidget):
    """Horizontal bars: label on the left, bar, count on the right; sized by the font, so
    a bigger application font gives bigger bars. It takes the focus: Up/Down choose a bar,
    Enter (or a click) asks for its facts (`bar_did_activate(column, value)`)."""

    bar_did_activate = Signal(str, str)

    def __init__(self, column: str, parent: QWidget | None = None, *, title: str = "") -> None:
        super().__init__(parent)
        self.column = column
        self.title = title or column
        self.bars: list[tuple[str, int]] = []
        self.current = -1
        self.setObjectName(f"chart_{column}")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._describe()

    def set_bars(self, bars: list[tuple[str, int]]) -> None:
        self.bars = bars
        self.current = min(self.current, len(bars) - 1)
        self._describe()
        self.updateGeometry()
        self.update()

    def _describe(self) -> None:
        """The accessible name and description: what a screen reader says of the chart."""
        self.setAccessibleName(f"{self.title} chart")
        self.setAccessibleDescription(
            "; ".join(f"{label}: {n}" for label, n in self.bars) or "no facts")
        self.setToolTip(theme.tooltip("\n".join(f"{label}: {n}" for label, n in self.bars)))

    def row_height(self) -> int:
        return max(22, round(self.fontMetrics().height() * 1.7))

    def label_width(self) -> int:
        """The widest label (glyph included), at most half the chart."""
        fm = self.fontMetrics()
        widest = max((fm.horizontalAdvance(self._text(label)) for label, _n in self.bars),
                     default=60)
        return min(widest + 12, max(80, self.width() // 2))

    def _text(self, label: str) -> str:
        return theme.labelled(self.column, label) if theme.mark_for(self.column, label) else label

    def sizeHint(self) -> QSize:
        return QSize(360, max(1, len(self.bars)) * self.row_height() + 6)

    def minimumSizeHint(self) -> QSize:
        return QSize(220, self.sizeHint().height())

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        fm = painter.fontMetrics()
        peak = max((n for _l, n in self.bars), default=1) or 1
        row = self.row_height()
        label_w = self.label_width()
        count_w = fm.horizontalAdvance(f"{peak:,}") + 12
        bar_w = max(10, self.width() - label_w - count_w - 8)
        text = self.palette().color(QPalette.ColorRole.WindowText)
        for i, (label, count) in enumerate(self.bars):
            y = 3 + i * row
            if i == self.current and self.hasFocus():
                painter.fillRect(QRectF(0, y, self.width(), row),
                                 self.palette().color(QPalette.ColorRole.Highlight).lighter(170)
                                 if not theme.is_dark() else
                                 self.palette().color(QPalette.ColorRole.Highlight).darker(150))
            mark = theme.mark_for(self.column, label)
            color = QColor(mark.color if mark else theme.CHART_BAR.color)
            painter.setPen(text)
            painter.drawText(QRectF(0, y, label_w - 8, row),
                             Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                             fm.elidedText(self._text(label), Qt.TextElideMode.ElideRight,
                                           label_w - 10))
            width = max(3.0, bar_w * count / peak)
            painter.fillRect(QRectF(label_w, y + row * 0.18, width, row * 0.64), color)
            painter.drawText(QRectF(label_w + width + 6, y, count_w, row),
                             Qt.AlignmentFlag.AlignVCenter, f"{count:,}")
        painter.end()

    # -- keys and clicks ------------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.bars:
            step = 1 if key == Qt.Key.Key_Down else -1
            self.current = max(0, min(len(self.bars) - 1, self.current + step))
            label, n = self.bars[self.current]
            self.setAccessibleDescription(f"{label}: {n}")
            self.update()
            return
        chosen = 0 <= self.current < len(self.bars)
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space) and chosen:
            self.bar_did_activate.emit(self.column, self.bars[self.current][0])
            return
        super().keyPressEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:
        if self.current < 0 and self.bars:
            self.current = 0
        self.update()
        super().focusInEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        self.update()
        super().focusOutEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        i = int((event.position().y() - 3) // self.row_height())
        if 0 <= i < len(self.bars):
            self.current = i
            self.update()
            self.bar_did_activate.emit(self.column, self.bars[i][0])


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
        self.setObjectName("overviewPanel")
        self.setAccessibleName("Overview")
        inner = QWidget(self)
        grid = QGridLayout(inner)
        # the curator's work lists first (what needs doing), across the top; then the
        # charts two abreast: on a 1366-pixel screen the centre is ~650 pixels wide
        curator = QGroupBox("Needs a curator", inner)
        curator_layout = QGridLayout(curator)
        self.links: dict[str, QPushButton] = {}
        for i, (caption, query) in enumerate(CURATOR_LINKS):
            button = QPushButton(caption, curator)
            button.setObjectName(f"overviewLink{i}")
            button.setFlat(True)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            theme.styled(button, lambda: ("QPushButton { text-align: left; "
                                          f"color: {theme.LINK.color}; text-decoration: underline; }}"))
            button.setToolTip(theme.tooltip(query))
            button.setAccessibleName(caption)
            button.setAccessibleDescription(f"Shows the facts of the query {query}")
            button.clicked.connect(lambda _=False, q=query: self.query_did_request.emit(q))
            curator_layout.addWidget(button, i, 0)  # (one column: two were too wide at 1.5×)
            self.links[query] = button
        self.summary = QLabel("", curator)
        self.summary.setObjectName("overviewSummary")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        curator_layout.addWidget(self.summary, len(CURATOR_LINKS), 0)
        grid.addWidget(curator, 0, 0, 1, 2)
        self.charts: dict[str, BarChart] = {}
        for i, (column, title) in enumerate(CHARTS):
            box = QGroupBox(title, inner)
            chart = BarChart(column, box, title=title)
            chart.bar_did_activate.connect(self._bar_activated)
            box_layout = QVBoxLayout(box)
            box_layout.addWidget(chart)
            box_layout.addStretch(1)
            self.charts[column] = chart
            grid.addWidget(box, 1 + i // 2, i % 2)
        grid.setRowStretch(1 + (len(CHARTS) + 1) // 2, 1)
        self.setWidget(inner)
        theme.on_change(self._repaint)

    def _repaint(self) -> bool:
        from shiboken6 import isValid

        if not isValid(self):
            return False
        for chart in self.charts.values():
            chart.update()
        return True

    def _bar_activated(self, column: str, value: str) -> None:
        """A bar chosen: the table shows its facts (`type:observation`)."""
        value = f'"{value}"' if any(c.isspace() for c in value) else value
        self.query_did_request.emit(f"{FIELDS.get(column, column)}:{value}")

    def key_widgets(self) -> list[QWidget]:
        """What must stay readable at 1366×768 (tests/gui/test_layout.py)."""
        return [*self.charts.values(), *self.links.values()]

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
