"""What the window really draws, measured in pixels (issue 24 items 6 and 7).

`contrast_failures(window)` grabs the window as it is on screen and finds every text it
draws — the labels, the buttons, the cells of every list and table, the lines of every text
pane, the tab captions, the text a chart paints itself (`painted_text`) — then measures,
for each line of text, its ink against the
background it is drawn on: the background is the commonest colour of the text's own
rectangle, the ink the pixel farthest from it in contrast (anti-aliasing only blends a
glyph's edges toward the background; its stems carry the colour). A line under 4.5:1
(WCAG AA for body text) is a failure, named with its widget, its text and both colours.

So a colour baked into a widget at construction, an HTML span with a colour of its own, a
style sheet's background or a palette role nobody checked are all caught, whatever draws
them. Disabled controls are left out (WCAG 1.4.3 exempts them). Limits: two colours on one
line of one widget are measured as the stronger one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QModelIndex, QRect
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QLabel,
    QPlainTextEdit,
    QTabBar,
    QTextEdit,
    QWidget,
)

AA_TEXT = 4.5
#: a pixel this far from the background (in contrast) is ink, not noise
INK = 1.25
#: rows of background inside one line of text (under an underscore), and a line's least height
GAP = 2
MIN_LINE = 4


@dataclass(frozen=True, slots=True)
class Drawn:
    """One line of text as drawn: where, what, its ink and background, their contrast."""

    where: str
    text: str
    ink: str
    background: str
    ratio: float

    def __str__(self) -> str:
        return (f"{self.where} {self.text[:50]!r}: {self.ink} on {self.background} "
                f"= {self.ratio:.2f}:1")


def pixels(image: QImage) -> np.ndarray:
    """The image as an (height, width, 3) array of 8-bit RGB."""
    img = image.convertToFormat(QImage.Format.Format_RGB888)
    width, height, stride = img.width(), img.height(), img.bytesPerLine()
    buf = np.frombuffer(img.constBits(), dtype=np.uint8, count=stride * height)
    return buf.reshape(height, stride)[:, :width * 3].reshape(height, width, 3).copy()


def _luminance(rgb: np.ndarray) -> np.ndarray:
    c = rgb.astype(np.float64) / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return lin[..., 0] * 0.2126 + lin[..., 1] * 0.7152 + lin[..., 2] * 0.0722


def _hex(rgb: np.ndarray) -> str:
    return "#" + "".join(f"{int(v):02x}" for v in rgb)


def lines_of(crop: np.ndarray) -> list[tuple[str, str, float]]:
    """(ink, background, ratio) of each line of text in `crop` (rows of ink separated by
    rows of background); empty when nothing is drawn on it."""
    if crop.size == 0:
        return []
    flat = crop.reshape(-1, 3)
    colours, counts = np.unique(flat, axis=0, return_counts=True)
    bg = colours[int(np.argmax(counts))]
    lum = _luminance(crop)
    bg_lum = float(_luminance(bg[None, :])[0])
    ratio = (np.maximum(lum, bg_lum) + 0.05) / (np.minimum(lum, bg_lum) + 0.05)
    rows = np.flatnonzero((ratio > INK).any(axis=1))
    out: list[tuple[str, str, float]] = []
    if rows.size == 0:
        return out
    # (a line's underscores and descenders may sit a row or two apart: the same line)
    bands = np.split(rows, np.flatnonzero(np.diff(rows) > GAP + 1) + 1)
    for band in bands:
        if band[-1] - band[0] + 1 < MIN_LINE:  # (a rule or a cut-off sliver: no text)
            continue
        part = ratio[band[0]:band[-1] + 1]
        y, x = np.unravel_index(int(np.argmax(part)), part.shape)
        ink = crop[band[0] + y, x]
        out.append((_hex(ink), _hex(bg), float(part[y, x])))
    return out


def _name(widget: QWidget) -> str:
    return f"{type(widget).__name__}({widget.objectName() or widget.accessibleName() or ''})"


def _visible_rect(widget: QWidget, window: QWidget, rect: QRect | None = None) -> QRect:
    """`rect` (the widget's own by default), clipped to what is visible of the widget,
    in window coordinates."""
    shown = widget.visibleRegion().boundingRect()
    rect = shown if rect is None else rect.intersected(shown)
    if rect.isEmpty():
        return QRect()
    return QRect(widget.mapTo(window, rect.topLeft()), rect.size()).intersected(window.rect())


def _texts(window: QWidget) -> list[tuple[str, str, QRect]]:
    """(where, text, rectangle in the window) of every text the window shows."""
    out: list[tuple[str, str, QRect]] = []
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or not widget.isEnabled() or widget.window() is not window:
            continue
        # (a chart paints its own text: gui/painted.py notes each line and where)
        for rect, text in getattr(widget, "painted_text", None) or ():
            if text.strip():
                out.append((f"{_name(widget)} painted", text, _visible_rect(widget, window, rect)))
        if isinstance(widget, QLabel) and widget.text().strip():
            out.append((_name(widget), widget.text(), _visible_rect(widget, window,
                                                                   widget.contentsRect())))
        elif isinstance(widget, QAbstractButton) and widget.text().strip():
            inner = widget.rect().adjusted(4, 4, -4, -4)  # (not the bevel)
            out.append((_name(widget), widget.text(), _visible_rect(widget, window, inner)))
        elif isinstance(widget, QTabBar):
            arrows = [b.geometry() for b in widget.findChildren(QAbstractButton) if b.isVisible()]
            for i in range(widget.count()):
                whole = widget.tabRect(i)
                if not widget.rect().contains(whole) or any(whole.intersects(a) for a in arrows):
                    continue  # (scrolled out of sight: test_layout.py's business)
                inner = widget.tabRect(i).adjusted(4, 4, -4, -4)
                out.append((f"{_name(widget)} tab {i}", widget.tabText(i),
                            _visible_rect(widget, window, inner)))
        elif isinstance(widget, (QTextEdit, QPlainTextEdit)) and widget.toPlainText().strip():
            port = widget.viewport()
            out.append((_name(widget), widget.toPlainText(), _visible_rect(port, window)))
        elif isinstance(widget, QAbstractItemView) and widget.model() is not None:
            out += _cells(widget, window)
    return [(w, t, r) for w, t, r in out if r.width() > 2 and r.height() > 2]


def _cells(view: QAbstractItemView, window: QWidget) -> list[tuple[str, str, QRect]]:
    """Every cell of `view` in sight (a tree's expanded children too)."""
    model = view.model()
    port = view.viewport()
    sight = port.rect()
    out: list[tuple[str, str, QRect]] = []

    def columns(parent: QModelIndex) -> int:
        try:
            return int(model.columnCount(parent))
        except TypeError:  # (a list model: one column, its columnCount private)
            return 1

    def walk(parent: QModelIndex, depth: int) -> None:
        for row in range(min(model.rowCount(parent), 500)):
            first = model.index(row, 0, parent)
            if not view.visualRect(first).isValid() and depth == 0 and \
                    view.visualRect(first).top() > sight.bottom():
                break
            for column in range(columns(parent)):
                index = model.index(row, column, parent)
                rect = view.visualRect(index).intersected(sight)
                text = index.data()
                if rect.isEmpty() or not isinstance(text, str) or not text.strip():
                    continue
                out.append((f"{_name(view)} [{row},{column}]", text,
                            _visible_rect(port, window, rect.adjusted(1, 1, -1, -1))))
            if depth < 3 and columns(parent) > 0 and model.rowCount(first) > 0:
                walk(first, depth + 1)

    walk(QModelIndex(), 0)
    return out


def drawn_text(window: QWidget) -> list[Drawn]:
    """Every line of text the window draws now, with its measured contrast."""
    image = pixels(window.grab().toImage())
    scale = image.shape[1] / max(window.width(), 1)  # (a device pixel ratio above 1)
    out = []
    for where, text, rect in _texts(window):
        x0, y0 = int(rect.left() * scale), int(rect.top() * scale)
        x1, y1 = int((rect.right() + 1) * scale), int((rect.bottom() + 1) * scale)
        for ink, bg, ratio in lines_of(image[y0:y1, x0:x1]):
            out.append(Drawn(where, text, ink, bg, ratio))
    return out


def contrast_failures(window: QWidget, need: float = AA_TEXT) -> list[Drawn]:
    """Every line of text the window draws under `need`:1 against its background."""
    return [d for d in drawn_text(window) if d.ratio < need]
