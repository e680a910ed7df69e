"""A log-log line chart painted with Qt (no plotting library in the project): cost against
corpus size, one line per measure, floors dashed (bench/scale_sizes.py)."""

from __future__ import annotations

import itertools
import math
import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#17becf", "#7f7f7f")


def _decades(lo: float, hi: float) -> list[float]:
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return [10.0 ** e for e in range(first, last + 1)]


def log_log(path: Path, title: str, unit: str,
            lines: list[tuple[str, bool, list[tuple[int, float]]]]) -> None:
    """Write `path` (PNG): each line (label, dashed?, [(facts, value)]) on log axes."""
    from PySide6.QtCore import QPointF, QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QGuiApplication, QImage, QPainter, QPen

    app = QGuiApplication.instance() or QGuiApplication([])
    width, height, left, right, top, bottom = 760, 420, 70, 250, 36, 48
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    xs = [x for _l, _d, pts in lines for x, _y in pts]
    ys = [y for _l, _d, pts in lines for _x, y in pts if y > 0]
    xticks = _decades(min(xs), max(xs))
    yticks = _decades(min(ys), max(ys))
    x0, x1 = math.log10(xticks[0]), math.log10(xticks[-1]) if len(xticks) > 1 else \
        math.log10(xticks[0]) + 1
    y0, y1 = math.log10(yticks[0]), math.log10(yticks[-1]) if len(yticks) > 1 else \
        math.log10(yticks[0]) + 1
    plot = QRectF(left, top, width - left - right, height - top - bottom)

    def at(x: float, y: float) -> QPointF:
        return QPointF(plot.left() + (math.log10(x) - x0) / (x1 - x0) * plot.width(),
                       plot.bottom() - (math.log10(y) - y0) / (y1 - y0) * plot.height())

    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    font = QFont()
    font.setPixelSize(12)
    p.setFont(font)
    p.setPen(QPen(QColor("#dddddd"), 1))
    for x in xticks:
        p.drawLine(at(x, yticks[0]), at(x, 10 ** y1))
    for y in yticks:
        p.drawLine(at(10 ** x0, y), at(10 ** x1, y))
    p.setPen(QPen(QColor("black"), 1))
    p.drawRect(plot)
    for x in xticks:
        pt = at(x, 10 ** y0)
        p.drawText(QRectF(pt.x() - 40, pt.y() + 4, 80, 16), Qt.AlignmentFlag.AlignHCenter,
                   f"{x:,.0f}")
    for y in yticks:
        pt = at(10 ** x0, y)
        p.drawText(QRectF(pt.x() - left, pt.y() - 8, left - 6, 16), Qt.AlignmentFlag.AlignRight,
                   f"{y:g}")
    p.drawText(QRectF(plot.left(), height - 20, plot.width(), 16), Qt.AlignmentFlag.AlignHCenter,
               "facts (log)")
    p.drawText(QRectF(0, 8, width, 20), Qt.AlignmentFlag.AlignHCenter, f"{title} — {unit} (log)")
    for n, (label, dashed, points) in enumerate(lines):
        colour = QColor(COLOURS[n % len(COLOURS)])
        pen = QPen(colour, 2, Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)
        p.setPen(pen)
        pts = [at(x, y) for x, y in sorted(points) if y > 0]
        for a, b in itertools.pairwise(pts):
            p.drawLine(a, b)
        p.setBrush(colour)
        for pt in pts:
            p.drawEllipse(pt, 3, 3)
        ly = top + 8 + n * 20
        p.drawLine(QPointF(width - right + 16, ly), QPointF(width - right + 40, ly))
        p.setPen(QPen(QColor("black"), 1))
        p.drawText(QRectF(width - right + 46, ly - 8, right - 50, 16),
                   Qt.AlignmentFlag.AlignLeft, label)
    p.end()
    image.save(str(path))
    del app
