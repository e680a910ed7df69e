"""The operation pipeline (on the model of Anki's `CollectionOp`): every curation call and
every index update runs on ONE serial writer thread, never on the GUI thread.

    window.ops.run(lambda cur: cur.retract(paths, reason), success=on_done)

`Operations.run` queues the call on the `WriterLane`. There it runs against the window's
`Curation` (made on that thread: resolving the curator runs git), the index is brought up
to date with the paths it touched, and `operation_did_execute(Executed)` is emitted once,
on the GUI thread; git's own index is synced afterwards (`ChangeSet.finish`), still on the
writer thread. A `FactdeskError` comes back to the caller's `failed` (else to
`operation_did_fail`); a missing curator identity is asked for once, saved, and the call
retried. Anything else is a bug and is raised on the GUI thread (the global handler).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from factdesk.curation import ChangeSet, Curation, Identity
from factdesk.curation.identity import MissingIdentity, curator_identity, save_identity
from factdesk.errors import FactdeskError
from factdesk.index.indexer import Indexer, IndexStats


@dataclass(frozen=True, slots=True)
class Executed:
    """One finished operation: what it changed, and the index update that followed (None
    when that update failed: the failure is reported on its own)."""

    changes: ChangeSet
    index: IndexStats | None
    index_error: str | None = None


@dataclass(frozen=True, slots=True)
class _Tail:
    """A job's answer, and work to do on the writer thread once it was handed back."""

    value: object
    then: Callable[[], None]


class WriterLane(QObject):
    """One writer thread per corpus: jobs run one at a time, in order; each answer (or
    failure) comes back on the GUI thread through `done`/`failed`.

    A job is a *write* (a curation commit, recovery: never cut short) unless submitted as
    `interruptible` (an index update or read: the index is SQLite, and an update killed
    part-way is rolled back and its scratch files removed by the next one). Closing waits
    for the writes only: quitting during a first index build ends at once."""

    busy_did_change = Signal(bool)
    _did_end = Signal(object)  # a call to make on the GUI thread
    tail_did_fail = Signal(str)
    did_stop = Signal()  # its thread ended (after `close`)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._jobs: queue.Queue[tuple[Callable[[], object], Callable[[Any], None],
                                      Callable[[BaseException], None], bool] | None] = queue.Queue()
        self._pending = 0
        self._closed = False
        #: writes queued or running (the thread decrements as each ends)
        self._writes = 0
        self._writes_lock = threading.Lock()
        self._did_end.connect(self._deliver)  # queued: emitted on the writer thread
        self._thread = threading.Thread(target=self._loop, name="factdesk-writer", daemon=True)
        self._thread.start()

    @property
    def busy(self) -> bool:
        return self._pending > 0

    @property
    def writing(self) -> bool:
        """A write is queued or running."""
        with self._writes_lock:
            return self._writes > 0

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def submit(self, job: Callable[[], object], *, done: Callable[[Any], None],
               failed: Callable[[BaseException], None], interruptible: bool = False) -> None:
        if self._closed:
            return
        self._pending += 1
        if self._pending == 1:
            self.busy_did_change.emit(True)
        if not interruptible:
            with self._writes_lock:
                self._writes += 1
        self._jobs.put((job, done, failed, interruptible))

    def close(self, *, wait: bool = True) -> None:
        """Stop: the queued and running writes finish (never cut short), queued index work
        is dropped, a running index update is not waited for; answers still to come are
        dropped. `wait`: return once the writes are done (quit); else at once (a switch of
        corpus: `did_stop` says when the thread ended). The app's exit waits for the writes
        of every lane closed (`join_closing`) and ends a process whose lane still runs an
        index update without waiting for it."""
        if self._closed:
            return
        self._closed = True
        self._jobs.put(None)
        _closing.add(self)
        if wait:
            self.finish_writes()

    def finish_writes(self) -> None:
        """Wait until no write is queued or running (the thread may still run index work)."""
        while self._thread.is_alive() and self.writing:
            self._thread.join(0.02)

    def _loop(self) -> None:
        while (item := self._jobs.get()) is not None:
            job, done, failed, interruptible = item
            if interruptible and self._closed:
                continue  # (closing: index work no longer wanted)
            try:
                self._run(job, done, failed)
            finally:
                if not interruptible:
                    with self._writes_lock:
                        self._writes -= 1
        _closing.discard(self)
        with contextlib.suppress(RuntimeError):  # (the window, and this lane, may be gone)
            self.did_stop.emit()

    def _run(self, job: Callable[[], object], done: Callable[[Any], None],
             failed: Callable[[BaseException], None]) -> None:
        try:
            result = job()
        except BaseException as exc:  # handed to the GUI thread, which decides
            self._hand_back(partial(failed, exc))
            return
        if isinstance(result, _Tail):
            self._hand_back(partial(done, result.value))
            try:
                result.then()
            except Exception as exc:  # reported; the journal makes the next start finish it
                with contextlib.suppress(RuntimeError):
                    self.tail_did_fail.emit(f"{type(exc).__name__}: {exc}")
        else:
            self._hand_back(partial(done, result))

    def _hand_back(self, call: Callable[[], None]) -> None:
        with contextlib.suppress(RuntimeError):  # (closed and deleted: nobody to hear it)
            self._did_end.emit(call)

    def _deliver(self, call: Callable[[], None]) -> None:
        self._pending -= 1
        if self._pending == 0:
            self.busy_did_change.emit(False)
        if not self._closed:
            call()


#: lanes closed (quit, or a switch of corpus) whose thread has not ended yet
_closing: set[WriterLane] = set()


def join_closing(*, index_work: bool = False) -> bool:
    """(The app's exit.) Wait for the writes of every closed lane — and for its index work
    too with `index_work` (an in-process caller, a test: nothing may run on after it);
    True when a lane's thread still runs index work, which the exit does not wait for
    (`os._exit`)."""
    for lane in list(_closing):
        lane.finish_writes()
        if index_work:
            lane._thread.join()
    return any(lane.running for lane in list(_closing))


def reading_curation(indexer: Indexer) -> Curation:
    """A `Curation` for reads and previews only (no identity is looked up for it)."""
    return Curation(indexer, Identity("preview", "preview@factdesk.invalid"), update_index=False)


Success = Callable[[ChangeSet], None]
Failure = Callable[[FactdeskError], None]


class Operations(QObject):
    """The window's curation calls, run on the writer lane (see the module docstring)."""

    operation_did_execute = Signal(object)  # Executed
    operation_did_fail = Signal(object)  # FactdeskError

    def __init__(self, indexer: Indexer, lane: WriterLane, *, identity_file: Path | None,
                 ask_identity: Callable[[], tuple[str, str] | None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.indexer = indexer
        self.lane = lane
        self.identity_file = identity_file
        self._ask_identity = ask_identity
        self._curation: Curation | None = None  # made and used on the writer thread only
        self._reader: Curation | None = None  # the same, for reads: it commits nothing

    def curation(self) -> Curation:
        """(On the writer thread.) The corpus's `Curation`, made on first use."""
        if self._curation is None:
            curator = curator_identity(self.indexer.repo, self.identity_file)
            self._curation = Curation(self.indexer, curator, update_index=False,
                                      defer_index_sync=True)
        return self._curation

    def run(self, op: Callable[[Curation], ChangeSet], *, success: Success | None = None,
            failed: Failure | None = None, asked: bool = False) -> None:
        """Queue `op(curation)`; `success(changes)` after `operation_did_execute`."""
        repo = self.indexer.repo

        def job() -> _Tail:
            changes = op(self.curation())
            stats: IndexStats | None = None
            error: str | None = None
            if changes.commit is not None:
                try:
                    stats = self.indexer.update(hint=changes.paths_touched)
                except Exception as exc:  # the commit stands; the update is reported
                    error = f"{type(exc).__name__}: {exc}"
            return _Tail(Executed(changes, stats, error), lambda: changes.finish(repo))

        self.lane.submit(job, done=partial(self._executed, success),
                         failed=partial(self._failed, op, success, failed, asked))

    def read(self, job: Callable[[Curation], object], *, done: Callable[[Any], None],
             failed: Failure | None = None) -> None:
        """A read that belongs on the writer lane (the undo stacks: they change with every
        commit), `done(answer)` on the GUI thread. It needs no curator identity."""
        self.lane.submit(lambda: job(self.reader()), done=done,
                         failed=partial(self._read_failed, failed), interruptible=True)

    def reader(self) -> Curation:
        """(Off the GUI thread.) A `Curation` that only reads and previews (its curator is
        a placeholder: it never commits)."""
        if self._reader is None:
            self._reader = reading_curation(self.indexer)
        return self._reader

    def _executed(self, success: Success | None, executed: Executed) -> None:
        self.operation_did_execute.emit(executed)
        if success is not None:
            success(executed.changes)

    def _failed(self, op: Callable[[Curation], ChangeSet], success: Success | None,
                failed: Failure | None, asked: bool, exc: BaseException) -> None:
        if isinstance(exc, MissingIdentity) and not asked and self.identity_file is not None:
            answer = self._ask_identity()
            if answer is not None:
                settings_file = self.identity_file
                self.lane.submit(lambda: save_identity(settings_file, *answer),
                                 done=lambda _none: self.run(op, success=success, failed=failed,
                                                             asked=True),
                                 failed=partial(self._failed, op, success, failed, True))
                return
        if not isinstance(exc, FactdeskError):
            raise exc
        if failed is not None:
            failed(exc)
        else:
            self.operation_did_fail.emit(exc)

    def _read_failed(self, failed: Failure | None, exc: BaseException) -> None:
        if not isinstance(exc, FactdeskError):
            raise exc
        if failed is not None:
            failed(exc)
