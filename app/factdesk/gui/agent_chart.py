"""The reliability chart of one agent (issue 16): for each confidence bin, the share of its
settled predictions that held, drawn against the diagonal of perfect calibration, with the
number of predictions under each bar so a small sample is read as one.

Painted with QPainter (plain text only: an agent id never becomes markup). Bars are faded
where a bin holds fewer than `FEW` predictions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QPointF, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from factdesk.gui import theme
from factdesk.gui.painted import RecordingPainter

#: a bin with fewer settled predictions is drawn faded (read it as a small sample)
FEW = 5


class ReliabilityChart(QWidget):
    """Confidence bins (x) against the share that held (y), n per bin."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("agentReliability")
        self.bins: list[dict[str, Any]] = []
        self.title = "Reliability"
        self.settled = 0
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(160, 160)

    def sizeHint(self) -> QSize:
        return QSize(420, 260)

    def set_bins(self, bins: Sequence[dict[str, Any]], *, agent: str, brier: float | None,
                 settled: int) -> None:
        self.bins = list(bins)
        self.settled = settled
        score = "no settled prediction" if brier is None else f"Brier {brier:.3f}, n={settled}"
        self.title = f"Reliability of {agent} ({score})"
        self.setToolTip(self.describe())
        self.update()

    def describe(self) -> str:
        """The chart in words (its tooltip, and for a screen reader)."""
        lines = [self.title]
        for b in self.bins:
            if b.get("settled"):
                lines.append(f"confidence {b['lo']:.1f}–{b['hi']:.1f}: {b['held']} of "
                             f"{b['settled']} held ({b['share_held']:.0%})")
        if len(lines) == 1:
            lines.append("no settled predictions: nothing to compare its confidence with")
        return "\n".join(lines)

    def paintEvent(self, event: QPaintEvent) -> None:
        self.painted_text: list[tuple[QRect, str]] = []  # (what it drew: measured by tests)
        p = RecordingPainter(self, self.painted_text)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QColor(theme.BASE.color))
        held, axis = QColor(theme.CHART_HELD.color), QColor(theme.CHART_AXIS.color)
        grid, ideal = QColor(theme.CHART_GRID.color), QColor(theme.CHART_IDEAL.color)
        fm = p.fontMetrics()
        line = fm.height()
        bold = QFont(p.font())
        bold.setBold(True)
        p.setFont(bold)
        p.setPen(axis)
        # (elided in the bold font it is drawn in: the plain font's width overflowed both
        # edges at 1.5× the font)
        p.drawText(QRectF(0, 2, self.width(), line), Qt.AlignmentFlag.AlignHCenter,
                   QFontMetrics(bold).elidedText(self.title, Qt.TextElideMode.ElideMiddle,
                                                 self.width() - 8))
        p.setFont(self.font())
        left, right = fm.horizontalAdvance("100%") + line + 10, 12
        top, bottom = line * 3 // 2 + 10, 2 * line + 22  # (the 100% label's upper half: under the title)
        plot = QRectF(left, top, max(40, self.width() - left - right),
                      max(40, self.height() - top - bottom))

        def x(v: float) -> float:
            return plot.left() + v * plot.width()

        def y(v: float) -> float:
            return plot.bottom() - v * plot.height()

        # grid and axes
        for v in (0.0, 0.25, 0.5, 0.75, 1.0):
            p.setPen(QPen(grid, 1))
            p.drawLine(QPointF(plot.left(), y(v)), QPointF(plot.right(), y(v)))
            p.setPen(axis)
            p.drawText(QRectF(0, y(v) - line / 2, left - 4, line),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, f"{v:.0%}")
        p.setPen(QPen(axis, 1))
        p.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()))
        p.drawLine(QPointF(plot.left(), plot.top()), QPointF(plot.left(), plot.bottom()))
        # perfect calibration
        p.setPen(QPen(ideal, 1, Qt.PenStyle.DashLine))
        p.drawLine(QPointF(x(0), y(0)), QPointF(x(1), y(1)))
        # the bars, n under each
        def tick(v: float) -> None:
            """A label under the x axis: the ends inside the plot's edges (a centred 0.0
            ran into the y axis's 0%, a centred 1.0 past the chart's right edge)."""
            text = f"{v:.1f}"
            width = fm.horizontalAdvance(text) + 2
            left_edge = (x(v) if v <= 0 else x(v) - width if v >= 1 else x(v) - width / 2)
            p.drawText(QRectF(left_edge, plot.bottom() + 2, width, line),
                       Qt.AlignmentFlag.AlignHCenter, text)

        settled_any = False
        # every k-th tick, so that the labels never run into each other (a narrow chart, a
        # large font: "0.00.10.20.3…")
        # (an end label sits inside the edge, a middle one centred: 1.5 labels apart)
        room = fm.horizontalAdvance("0.0") * 3 // 2 + fm.horizontalAdvance("  ")
        span = (x(1) - x(0)) / max(len(self.bins), 1)
        every = max(1, -(-room // max(int(span), 1)))
        for i, b in enumerate(self.bins):
            lo, hi, n = float(b["lo"]), float(b["hi"]), int(b.get("settled") or 0)
            p.setPen(axis)
            if i % every == 0 and len(self.bins) - i >= every:  # (clear of the 1.0 too)
                tick(lo)
            if not n:
                continue
            settled_any = True
            share = float(b.get("share_held") or 0.0)
            color = QColor(held)
            if n < FEW:
                color.setAlpha(110)
            pad = (x(hi) - x(lo)) * 0.12
            bar = QRectF(x(lo) + pad, y(share), x(hi) - x(lo) - 2 * pad,
                         max(1.0, plot.bottom() - y(share)))
            p.fillRect(bar, color)
            p.setPen(axis)
            p.drawText(QRectF(x(lo), plot.bottom() + line + 2, x(hi) - x(lo), line),
                       Qt.AlignmentFlag.AlignHCenter, f"n={n}")
        tick(1.0)
        p.setPen(axis)
        p.drawText(QRectF(plot.left(), self.height() - line - 2, plot.width(), line),
                   Qt.AlignmentFlag.AlignHCenter, "confidence it was written with")
        legend = QRectF(plot.left() + 6, plot.top() + 2, plot.width() - 12, line)
        p.fillRect(QRectF(legend.left(), legend.top() + line * 0.25, line * 0.6, line * 0.6), held)
        p.drawText(legend.adjusted(line, 0, 0, 0), Qt.AlignmentFlag.AlignLeft,
                   fm.elidedText("share that held   - - perfectly calibrated",
                                 Qt.TextElideMode.ElideRight, int(legend.width() - line)))
        p.save()
        p.translate(line / 2 + 2, plot.center().y())
        p.rotate(-90)
        p.drawText(QRectF(-plot.height() / 2, -line / 2, plot.height(), line),
                   Qt.AlignmentFlag.AlignHCenter, "held")
        p.restore()
        if not settled_any:
            p.setPen(axis)
            p.drawText(plot, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                       "No settled predictions yet:\nnothing to compare its confidence with.")
        p.end()
