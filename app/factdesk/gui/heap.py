"""The built window's objects leave the garbage collector's scans: its full passes over them
(~60,000) stalled scrolling by 30-60 ms at 100,000 facts. Once, after the first fill (the
first paint); closing the window makes them collectable again."""

from __future__ import annotations

import gc

from PySide6.QtCore import QTimer


class HeapFreeze:
    """`arm()` after each fill (the first one counts), `release()` at close."""

    def __init__(self) -> None:
        self.frozen = False

    def arm(self) -> None:
        if not self.frozen:
            self.frozen = True
            QTimer.singleShot(0, self._freeze)  # after the first paint

    def _freeze(self) -> None:
        if self.frozen:
            gc.collect()
            gc.freeze()

    def release(self) -> None:
        if self.frozen:
            gc.unfreeze()
            self.frozen = False
