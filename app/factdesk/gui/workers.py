"""One background-read pattern for the panels: run a function over a private read-only
connection to the index on a QThread and hand its result (or its failure, as text) back
to the GUI thread. Nothing that can fail here ever takes the window down."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal

from factdesk.index.indexer import Indexer


class ReadWorker(QThread):
    """`job(conn)` on a connection of its own (`open_reader()`), closed afterwards."""

    did_finish = Signal(object)
    did_fail = Signal(str)

    def __init__(self, open_reader: Callable[[], sqlite3.Connection],
                 job: Callable[[sqlite3.Connection], object],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._open = open_reader
        self._job = job

    def run(self) -> None:
        try:
            conn = self._open()
            try:
                result = self._job(conn)
            finally:
                conn.close()
        except Exception as exc:  # shown in the panel, never a crash
            self.did_fail.emit(f"{type(exc).__name__}: {exc}")
            return
        self.did_finish.emit(result)


class BackgroundRead(QObject):
    """A panel's background read: at most one `ReadWorker` at a time (a start while one
    runs is ignored); the result or the failure text comes back on the GUI thread, after
    the thread has been reaped."""

    def __init__(self, indexer: Indexer, job: Callable[[sqlite3.Connection], object], *,
                 done: Callable[[Any], None], failed: Callable[[str], None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._indexer = indexer
        self._job = job
        self._done = done
        self._failed = failed
        self._worker: ReadWorker | None = None

    @property
    def running(self) -> bool:
        return self._worker is not None

    def start(self) -> bool:
        if self._worker is not None:
            return False
        worker = ReadWorker(lambda: self._indexer.connect(readonly=True), self._job, self)
        worker.did_finish.connect(self._on_finish)
        worker.did_fail.connect(self._on_fail)
        self._worker = worker
        worker.start()
        return True

    def wait(self) -> None:
        """Block until a running read ends (window closing)."""
        if self._worker is not None:
            self._worker.wait()
            self._worker.deleteLater()
            self._worker = None

    def _on_finish(self, result: object) -> None:
        self.wait()
        self._done(result)

    def _on_fail(self, message: str) -> None:
        self.wait()
        self._failed(message)
