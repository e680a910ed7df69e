"""`RecordingPainter`: a QPainter that notes each text it draws and where, so that what a
chart paints by hand can be measured like any label (tests/gui/drawn.py: issue 24 item 6
measured every widget's text but not the charts' own, drawn with `drawText`)."""

from __future__ import annotations

from PySide6.QtCore import QRect, QRectF
from PySide6.QtGui import QPaintDevice, QPainter


class RecordingPainter(QPainter):
    """Paints as QPainter does; each `drawText(rect, flags, text)` also appends
    (its bounding rectangle in the device's coordinates, the text) to `into`."""

    def __init__(self, device: QPaintDevice, into: list[tuple[QRect, str]]) -> None:
        super().__init__(device)
        self._into = into

    def drawText(self, *args: object) -> object:  # type: ignore[override]
        bound = super().drawText(*args)  # type: ignore[call-overload]
        if len(args) == 3 and isinstance(bound, QRectF) and isinstance(args[2], str):
            self._into.append((self.transform().mapRect(bound).toAlignedRect(), args[2]))
        return bound
