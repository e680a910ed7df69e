"""A stacked bar chart painted with QPainter (the Transitions tab's two charts).

    chart = StackedBarChart("How predictions turned out", horizontal=True)
    chart.set_data(["codex", "claude-code"], [Segment("confirmed", tone, [3, 1]), …],
                   line=Line("% held", tone, [66.7, None]))

Bars stack one `Segment` per outcome over each category, against a count axis with round
ticks; an optional `Line` (a percentage, 0–100) is drawn over vertical bars against a right
hand axis in its own colour. Drawn with the palette in use, re-read at every paint (a theme
switch needs no rebuild). Every label is drawn as plain text: a claimant id from the corpus
is never markup (RELIABILITY H01). It replaces QtCharts, which ships in PySide6-Addons
beside WebEngine (issue 25: the install depends on PySide6-Essentials only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from PySide6.QtCore import QPointF, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from factdesk.gui import theme
from factdesk.gui.painted import RecordingPainter


@dataclass(frozen=True, slots=True)
class Segment:
    """One stacked part of every bar: its legend, fill and one value per category."""

    legend: str
    fill: theme.Tone
    values: Sequence[int]


@dataclass(frozen=True, slots=True)
class Line:
    """A percentage per category (None: no point there), on the right-hand axis."""

    legend: str
    tone: theme.Tone
    values: Sequence[float | None]


def count_ticks(peak: int) -> tuple[int, int]:
    """(step, top) of a count axis from 0 to at least `peak`, at round steps (at most ~6)."""
    step = 1
    while step * 6 < peak:
        step = step * 5 // 2 if str(step).startswith("2") else step * 2
    return step, max(step, -(-peak // step) * step)


class StackedBarChart(QWidget):
    """Categories of stacked bars, with a legend; vertical bars may carry a `Line`."""

    PAD = 6

    def __init__(self, title: str, *, horizontal: bool = False,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.horizontal = horizontal
        self.categories: list[str] = []
        self.segments: list[Segment] = []
        self.line: Line | None = None
        self.setMinimumSize(320, 280)  # (legend and axis labels readable, not elided)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # (reachable by Tab: a reader names it)
        self.setAccessibleName(title)

    # -- data ---------------------------------------------------------------------------------

    def set_data(self, categories: Sequence[str], segments: Sequence[Segment],
                 line: Line | None = None) -> None:
        self.categories = list(categories)
        self.segments = [s for s in segments if len(s.values) == len(self.categories)]
        self.line = line
        self.update()

    def clear(self) -> None:
        self.set_data([], [])

    def set_title(self, title: str) -> None:
        self.title = title
        self.update()

    def totals(self) -> dict[str, int]:
        """Each segment's sum over every category (what the bars add up to)."""
        return {s.legend: sum(s.values) for s in self.segments}

    def sizeHint(self) -> QSize:
        return QSize(420, 320)

    # -- painting -----------------------------------------------------------------------------

    def paintEvent(self, _event: QPaintEvent) -> None:
        self.painted_text: list[tuple[QRect, str]] = []  # (what it drew: measured by tests)
        p = RecordingPainter(self, self.painted_text)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = QColor(theme.TEXT.color)
        p.fillRect(self.rect(), QColor(theme.BASE.color))
        fm = QFontMetrics(self.font())
        title_font = QFont(self.font())
        title_font.setBold(True)
        p.setFont(title_font)
        p.setPen(text)
        top = self.PAD
        p.drawText(QRectF(0, top, self.width(), fm.height() + 2), Qt.AlignmentFlag.AlignHCenter,
                   self.title)
        p.setFont(self.font())
        top += fm.height() + self.PAD
        legend_h = self._paint_legend(p, fm)
        plot = QRectF(self.PAD, top, self.width() - 2 * self.PAD,
                      self.height() - top - legend_h - 2 * self.PAD)
        if not self.categories or plot.height() < 40 or plot.width() < 80:
            p.end()
            return
        if self.horizontal:
            self._paint_horizontal(p, fm, plot)
        else:
            self._paint_vertical(p, fm, plot)
        p.end()

    def _paint_legend(self, p: QPainter, fm: QFontMetrics) -> int:
        items = [(s.legend, QColor(s.fill.color), False) for s in self.segments]
        if self.line is not None:
            items.append((self.line.legend, QColor(self.line.tone.color), True))
        if not items:
            return 0
        box = fm.height() - 4
        rows, x, y = 1, self.PAD, 0.0
        placed = []
        for label, colour, is_line in items:
            width = box + 4 + fm.horizontalAdvance(label) + 12
            if x + width > self.width() - self.PAD and x > self.PAD:
                rows, x = rows + 1, self.PAD
            placed.append((x, rows, label, colour, is_line))
            x += width
        height = rows * (fm.height() + 2)
        base = self.height() - self.PAD - height
        p.setPen(QColor(theme.TEXT.color))
        for x, row, label, colour, is_line in placed:
            y = base + (row - 1) * (fm.height() + 2)
            swatch = QRectF(x, y + 2, box, box)
            if is_line:
                p.setPen(QPen(colour, 2))
                p.drawLine(QPointF(swatch.left(), swatch.center().y()),
                           QPointF(swatch.right(), swatch.center().y()))
            else:
                p.fillRect(swatch, colour)
            p.setPen(QColor(theme.TEXT.color))
            p.drawText(QRectF(x + box + 4, y, fm.horizontalAdvance(label) + 4, fm.height()),
                       Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, label)
        return height

    def _grid_pen(self) -> QPen:
        grid = QColor(theme.DERIVED.color)
        return QPen(grid.darker(180) if theme.is_dark() else grid.lighter(150), 1)

    def _bar_totals(self) -> list[int]:
        return [sum(s.values[i] for s in self.segments) for i in range(len(self.categories))]

    def _paint_horizontal(self, p: QPainter, fm: QFontMetrics, plot: QRectF) -> None:
        step, top = count_ticks(max(self._bar_totals(), default=0))
        label_w = min(max((fm.horizontalAdvance(c) for c in self.categories), default=0) + 8,
                      plot.width() * 0.4)
        area = QRectF(plot.left() + label_w, plot.top(), plot.width() - label_w - 8,
                      plot.height() - fm.height() - 4)
        text = QColor(theme.TEXT.color)
        for value in range(0, top + 1, step):  # the count axis, along the bottom
            x = area.left() + area.width() * value / top
            p.setPen(self._grid_pen())
            p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()))
            p.setPen(text)
            p.drawText(QRectF(x - 30, area.bottom() + 2, 60, fm.height()),
                       Qt.AlignmentFlag.AlignHCenter, str(value))
        band = area.height() / len(self.categories)
        for i, category in enumerate(self.categories):  # top-down, in the given order
            y = area.top() + band * i
            p.setPen(text)
            p.drawText(QRectF(plot.left(), y, label_w - 6, band),
                       Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
                       fm.elidedText(category, Qt.TextElideMode.ElideMiddle, int(label_w - 6)))
            x = area.left()
            for segment in self.segments:
                width = area.width() * segment.values[i] / top
                if width > 0:
                    p.fillRect(QRectF(x, y + band * 0.15, width, band * 0.7),
                               QColor(segment.fill.color))
                x += width
        p.setPen(QPen(QColor(theme.DERIVED.color), 1))
        p.drawLine(area.bottomLeft(), area.topLeft())

    def _paint_vertical(self, p: QPainter, fm: QFontMetrics, plot: QRectF) -> None:
        step, top = count_ticks(max(self._bar_totals(), default=0))
        many = len(self.categories) > 8
        label_h = (max((fm.horizontalAdvance(c) for c in self.categories), default=0) + 6
                   if many else fm.height() + 4)
        left_w = fm.horizontalAdvance(str(top)) + 8
        right_w = fm.horizontalAdvance("100%") + 8 if self.line is not None else 8
        area = QRectF(plot.left() + left_w, plot.top() + fm.height() / 2,
                      plot.width() - left_w - right_w,
                      plot.height() - label_h - fm.height() / 2)
        if area.height() < 20:
            return
        text = QColor(theme.TEXT.color)
        for value in range(0, top + 1, step):  # the count axis, on the left
            y = area.bottom() - area.height() * value / top
            p.setPen(self._grid_pen())
            p.drawLine(QPointF(area.left(), y), QPointF(area.right(), y))
            p.setPen(text)
            p.drawText(QRectF(plot.left(), y - fm.height() / 2, left_w - 4, fm.height()),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, str(value))
        band = area.width() / len(self.categories)
        for i, category in enumerate(self.categories):
            x = area.left() + band * i
            y = area.bottom()
            for segment in self.segments:
                height = area.height() * segment.values[i] / top
                if height > 0:
                    p.fillRect(QRectF(x + band * 0.1, y - height, band * 0.8, height),
                               QColor(segment.fill.color))
                y -= height
            p.setPen(text)
            if many:
                p.save()
                p.translate(x + band / 2 + fm.ascent() / 2, area.bottom() + 4)
                p.rotate(-90)
                p.drawText(QRectF(-label_h, -fm.ascent(), label_h - 4, fm.height()),
                           Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, category)
                p.restore()
            else:
                p.drawText(QRectF(x, area.bottom() + 2, band, fm.height()),
                           Qt.AlignmentFlag.AlignHCenter, category)
        p.setPen(QPen(QColor(theme.DERIVED.color), 1))
        p.drawLine(area.bottomLeft(), area.bottomRight())
        if self.line is not None:
            self._paint_line(p, fm, area, band)

    def _paint_line(self, p: QPainter, fm: QFontMetrics, area: QRectF, band: float) -> None:
        assert self.line is not None
        tone = QColor(self.line.tone.color)
        p.setPen(tone)
        for value in (0, 50, 100):  # the share axis, on the right, in the line's colour
            y = area.bottom() - area.height() * value / 100
            p.drawText(QRectF(area.right() + 4, y - fm.height() / 2, 60, fm.height()),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, f"{value}%")
        points = [QPointF(area.left() + band * (i + 0.5), area.bottom() - area.height() * v / 100)
                  for i, v in enumerate(self.line.values) if v is not None]
        p.setPen(QPen(tone, 2))
        for a, b in pairwise(points):
            p.drawLine(a, b)
        p.setBrush(tone)
        for point in points:
            p.drawEllipse(point, 3, 3)
