"""One background-read pattern for the panels: run a function over a private read-only
connection to the index on a QThread and hand its result (or its failure, as text) back
to the GUI thread. Nothing that can fail here ever takes the window down."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from PySide6.QtCore import QObject, QThread, Signal

from factdesk.index.indexer import Indexer


class ReadWorker(QThread):
    did_finish = Signal(object)
    did_fail = Signal(str)

    def __init__(self, indexer: Indexer, job: Callable[[sqlite3.Connection], object],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._indexer = indexer
        self._job = job

    def run(self) -> None:
        try:
            conn = self._indexer.connect(readonly=True)
            try:
                result = self._job(conn)
            finally:
                conn.close()
        except Exception as exc:  # shown in the panel, never a crash
            self.did_fail.emit(f"{type(exc).__name__}: {exc}")
            return
        self.did_finish.emit(result)
