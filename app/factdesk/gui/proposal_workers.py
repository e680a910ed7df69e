"""The Proposals tab's helpers on their own: the worker that streams the checks (the
badges), one stream of them at a time (`CheckStream`), the selected proposal's check on
demand once the selection rests (`CheckSoon`), and the key router that gives A/R/E/S to
the tab wherever its focus is."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QThread, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QLineEdit, QPlainTextEdit

from factdesk.errors import FactdeskError
from factdesk.gui import proposal_source
from factdesk.gui.keys import describe
from factdesk.gui.operations import Operations
from factdesk.gui.workers import BackgroundRead, let_finish
from factdesk.index.indexer import Indexer
from factdesk.review.model import Proposal, Queue

#: the keys the tab answers wherever its focus is (a window shortcut of the same letter,
#: R = relabel, would otherwise be ambiguous and neither would fire)
LETTERS = {Qt.Key.Key_A: "accept", Qt.Key.Key_R: "reject", Qt.Key.Key_E: "edit",
           Qt.Key.Key_S: "skip"}


class CheckWorker(QThread):
    """`check_all` over one queue, each checked proposal handed back as it comes. Between
    two proposals it waits while `quiet()` says so — a decision on the writer lane, the
    curator moving in the queue: pure-Python checks hold the GIL, and every Qt call of the
    GUI thread (and the writer's work) would queue behind them."""

    did_check = Signal(object)  # Proposal
    did_fail = Signal(str)

    def __init__(self, ops: Operations, queue: Queue, quiet: Callable[[], bool],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._indexer = ops.indexer
        self._queue = queue
        self._quiet = quiet
        self.stopped = False

    def run(self) -> None:
        try:
            for proposal in proposal_source.checked(self._indexer, self._queue, lambda: self.stopped):
                self.did_check.emit(proposal)
                while self._quiet() and not self.stopped:
                    time.sleep(0.02)
        except Exception as exc:  # shown in the tab, never a crash
            self.did_fail.emit(str(exc) if isinstance(exc, FactdeskError)
                               else f"{type(exc).__name__}: {exc}")


class CheckStream(QObject):
    """One `CheckWorker` at a time: a new start stops the running one (its answers are
    dropped); `did_check` with the proposals checked since the last one — at most every
    `BATCH_MS`: each answer is a repaint, a verdict over its branch and a resize of the
    queue's columns, and a queue re-read while agents write streams hundreds of them —
    `did_end` once the newest is done (after its last `did_check`)."""

    did_check = Signal(list)  # [Proposal]
    did_fail = Signal(str)
    did_end = Signal()
    BATCH_MS = 100

    def __init__(self, ops: Operations, quiet: Callable[[], bool], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ops = ops
        self._quiet = quiet
        self._worker: CheckWorker | None = None
        self._came: list[object] = []
        self._batch = QTimer(self)
        self._batch.setSingleShot(True)
        self._batch.setInterval(self.BATCH_MS)
        self._batch.timeout.connect(self.flush)

    def flush(self) -> None:
        """Hand over what came (at once: a decision or the stream's end)."""
        self._batch.stop()
        came, self._came = self._came, []
        if came:
            self.did_check.emit(came)

    def start(self, queue: Queue) -> None:
        self.stop()
        worker = CheckWorker(self._ops, queue, self._quiet)
        worker.did_check.connect(self._checked)
        worker.did_fail.connect(self.did_fail)
        worker.finished.connect(partial(self._ended, worker))
        self._worker = worker
        worker.start()

    def stop(self) -> None:
        self.flush()  # (what came before the stop is handed over, as it came)
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stopped = True
            worker.did_check.disconnect(self._checked)
            let_finish(worker)

    def _checked(self, proposal: object) -> None:
        if self.sender() is self._worker:
            self._came.append(proposal)
            if not self._batch.isActive():
                self._batch.start()

    def _ended(self, worker: CheckWorker) -> None:
        if worker is self._worker:
            self._worker = None
            self.flush()
            self.did_end.emit()
        worker.deleteLater()


class CheckSoon(QObject):
    """The selected proposal checked on demand, before its badge streams in: asked at each
    move, started once the selection has rested `REST_MS` — a run of j presses starts no
    check (and no thread: 2–8 ms of the window's time each while agents write) for the
    rows it passes. `done([proposal])` on the GUI thread."""

    REST_MS = 60

    def __init__(self, indexer: Indexer, done: Callable[[list[Proposal]], None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._read = BackgroundRead(
            None, lambda queue, sha: proposal_source.check_one(indexer, queue, sha),
            done=lambda p, *_a: done([p]), failed=lambda *_a: None, parent=self)
        self._asked: tuple[Queue, str] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(self.REST_MS)
        self._timer.timeout.connect(self._start)

    def ask(self, queue: Queue, sha: str) -> None:
        """Check `sha` of `queue` once the selection rests (a newer ask replaces it)."""
        self._asked = (queue, sha)
        self._timer.start()

    def forget(self) -> None:
        """The selection moved to a row with nothing to check."""
        self._asked = None
        self._timer.stop()

    def close(self) -> None:
        self.forget()
        self._read.close()

    def _start(self) -> None:
        if self._asked is not None:
            (queue, sha), self._asked = self._asked, None
            self._read.start(queue, sha)


class KeyRouter(QObject):
    """A/R/E/S for the panel wherever its focus is, except in a text field."""

    def __init__(self, panel: Any) -> None:  # (the ProposalsPanel: its decisions by name)
        super().__init__(panel)
        self._panel = panel

    def bound(self) -> list[tuple[str, str]]:
        """(key, what it does) of each letter it answers: Help ▸ Keyboard shortcuts reads
        them here, so the sheet says the tab's own keys (issue 24 #10)."""
        return [(QKeySequence(key).toString(QKeySequence.SequenceFormat.NativeText),
                 describe(getattr(self._panel, name))) for key, name in LETTERS.items()]

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            return False
        assert isinstance(event, QKeyEvent)
        name = LETTERS.get(Qt.Key(event.key()))
        typing = isinstance(watched, QLineEdit) or (
            isinstance(watched, QPlainTextEdit) and not watched.isReadOnly())
        if name is None or typing or event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            return False
        if kind == QEvent.Type.ShortcutOverride:
            event.accept()  # the key comes to us as a key press, not to a window shortcut
            return True
        self._panel.hush()
        if not event.isAutoRepeat():
            getattr(self._panel, name)()
        return True


