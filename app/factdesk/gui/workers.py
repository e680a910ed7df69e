"""One background-read pattern for the panels: run a function over a private read-only
connection to the index on a QThread and hand its result (or its failure, as text) back
to the GUI thread. Nothing that can fail here ever takes the window down."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QThread, Signal

from factdesk.errors import FactdeskError
from factdesk.index.indexer import Indexer

if TYPE_CHECKING:
    import sqlite3


#: How long a thread holding the GIL keeps it while another waits (Python's default: 5 ms).
#: PySide6 lets go of the GIL around each Qt call, so while a worker runs Python (a check,
#: a queue read, the track records) every Qt call of the window's thread waited up to the
#: whole interval to get it back: 300 small Qt calls took 1.55 s beside one busy worker
#: against 4 ms alone, 46 ms at 0.2 ms (bench/gil_bench.py); the workers lose nothing
#: measurable.
GUI_SWITCH_INTERVAL_S = 0.0002


def favour_the_gui_thread() -> None:
    """The window's thread gets the GIL back within `GUI_SWITCH_INTERVAL_S` (above)."""
    sys.setswitchinterval(min(sys.getswitchinterval(), GUI_SWITCH_INTERVAL_S))


#: Threads that must outlive their owner (a window closing while they run), with what they
#: run: kept until they end, so nothing waits for them and no running QThread is ever
#: destroyed ("QThread: Destroyed while thread is still running" aborts the process).
_alive: dict[QThread, tuple[object, ...]] = {}


def keep_until_finished(thread: QThread, *keep: object) -> None:
    """Hold `thread` (parentless) and `keep` (its worker) until the thread has ended."""
    _prune()
    _alive[thread] = keep


def let_finish(thread: QThread) -> None:
    """The owner of `thread` goes away: never wait for it, let it end on its own. The
    caller disconnects what it must not hear any more."""
    try:
        running = thread.isRunning()
    except RuntimeError:  # already deleted
        return
    if running:
        thread.setParent(None)
        keep_until_finished(thread)


def _prune() -> None:
    for thread in list(_alive):
        try:
            finished = thread.isFinished()
        except RuntimeError:  # deleted by its own deleteLater: it had ended
            finished = True
        if finished:
            del _alive[thread]


def still_running(wait_s: float = 0.0) -> int:
    """How many let-go threads still run after waiting up to `wait_s` seconds in all (the
    app's exit: none may be destroyed running, so it ends the process at once instead)."""
    deadline = time.monotonic() + wait_s
    for thread in list(_alive):
        left_ms = max(0, int((deadline - time.monotonic()) * 1000))
        with contextlib.suppress(RuntimeError):  # deleted: it had ended
            thread.wait(left_ms)
    _prune()
    return len(_alive)


class ReadWorker(QThread):
    """`job(conn)` on a connection of its own (`open_reader()`), closed afterwards; with no
    `open_reader`, `job(None)`."""

    did_finish = Signal(object)
    did_fail = Signal(str)

    def __init__(self, open_reader: Callable[[], sqlite3.Connection] | None,
                 job: Callable[[Any], object], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._open = open_reader
        self._job = job

    def run(self) -> None:
        try:
            conn = self._open() if self._open is not None else None
            try:
                result = self._job(conn)
            finally:
                if conn is not None:
                    conn.close()
        except Exception as exc:  # shown in the panel, never a crash
            self.did_fail.emit(failure_text(exc))
            return
        self.did_finish.emit(result)


def failure_text(exc: BaseException) -> str:
    """How a panel says a background read failed: a user's error (an unknown revision, a
    busy index) in its own words, anything else with the name of its kind."""
    return str(exc) if isinstance(exc, FactdeskError) else f"{type(exc).__name__}: {exc}"


class BackgroundRead(QObject):
    """A panel's background read: `job(conn, *args)` on a `ReadWorker`, one at a time,
    over a private connection from `open_reader` (none: `job(*args)`, work that reads no
    index, such as a diff). A start while one runs waits its turn;
    only the newest waits (it replaces any waiting before it), and the running read's
    answer, stale by then, is dropped. The result, or the failure as text, comes back on
    the GUI thread once the thread has been reaped, with the arguments its start was given
    (`done(result, *args)`, `failed(message, *args)`: the caller can tell which request
    answered); after `close()` nothing comes back."""

    def __init__(self, open_reader: Callable[[], sqlite3.Connection] | None,
                 job: Callable[..., object], *, done: Callable[..., None],
                 failed: Callable[..., None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._open = open_reader
        self._job = job
        self._done = done
        self._failed = failed
        self._worker: ReadWorker | None = None
        self._args: tuple[object, ...] = ()  # the running read's
        self._next: tuple[object, ...] | None = None  # the newest start made while one ran
        self._closed = False

    @classmethod
    def of_index(cls, indexer: Indexer, job: Callable[..., object], *,
                 done: Callable[..., None], failed: Callable[..., None],
                 parent: QObject | None = None) -> BackgroundRead:
        """A read over `indexer`'s index (a read-only connection of its own)."""
        return cls(lambda: indexer.connect(readonly=True), job, done=done, failed=failed,
                   parent=parent)

    @property
    def running(self) -> bool:
        """A read runs, or waits its turn."""
        return self._worker is not None or self._next is not None

    def start(self, *args: object) -> bool:
        """Read now (True), or after the running read (False)."""
        if self._closed:
            return False
        if self._worker is not None:
            self._next = args
            return False
        self._launch(args)
        return True

    def close(self) -> None:
        """The window is closing: drop the waiting read and every answer still to come; a
        running read ends on its own (`let_finish`), nothing waits for it."""
        self._closed = True
        self._next = None
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.did_finish.disconnect(self._on_finish)
            worker.did_fail.disconnect(self._on_fail)
            let_finish(worker)

    def _launch(self, args: tuple[object, ...]) -> None:
        job = self._job
        if self._open is None:
            worker = ReadWorker(None, lambda _none: job(*args), self)
        else:
            worker = ReadWorker(self._open, lambda conn: job(conn, *args), self)
        worker.did_finish.connect(self._on_finish)
        worker.did_fail.connect(self._on_fail)
        self._worker, self._args = worker, args
        worker.start()

    def _reap(self) -> None:
        if self._worker is not None:
            self._worker.wait()
            self._worker.deleteLater()
            self._worker = None

    def _wanted(self) -> bool:
        """Reap the worker that answered; False when its answer is not to be shown (closed,
        or a newer start waits: that one runs now)."""
        if self.sender() is not self._worker:
            return False  # reaped by close() before its answer came
        self._reap()
        if self._closed:
            return False
        if self._next is not None:
            args, self._next = self._next, None
            self._launch(args)
            return False
        return True

    def _on_finish(self, result: object) -> None:
        args = self._args
        if self._wanted():
            self._done(result, *args)

    def _on_fail(self, message: str) -> None:
        args = self._args
        if self._wanted():
            self._failed(message, *args)
