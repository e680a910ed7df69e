"""Background embedding for the GUI: a QObject run in a QThread around `embed_pending`.

    worker = EmbeddingWorker(indexer)            # setting: "static" | "full" | None
    thread = start_in_thread(worker)             # progress(done, total), finished(stats),
                                                 # failed(message); worker.cancel()

Loading the model, distilling the static one on first use and embedding all happen in
the worker's thread; the GUI only receives signals. A missing or broken model emits
`failed` with a notice for the status bar; everything else in the app keeps working.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot

from factdesk.errors import FactdeskError
from factdesk.gui.workers import keep_until_finished
from factdesk.index.indexer import Indexer


class EmbeddingWorker(QObject):
    """Brings one corpus's embeddings up to date; cancellable between batches."""

    progress = Signal(int, int)
    status = Signal(str)
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, indexer: Indexer, setting: str | None = None) -> None:
        super().__init__()
        self.indexer = indexer
        self.setting = setting
        self._cancel = threading.Event()
        #: the ready `SemanticSession` once `finished` has been emitted
        self.session: object | None = None

    def cancel(self) -> None:
        """Stop after the current batch; what was embedded so far is kept."""
        self._cancel.set()

    @Slot()
    def run(self) -> None:
        from factdesk.semantic.search import session_for

        try:
            self.status.emit("loading the embedding model…")
            session = session_for(self.indexer, self.setting, progress=self.status.emit)
            self.status.emit(f"embedding with {session.model_id}")
            stats = session.embed_pending(progress=self.progress.emit, cancel=self._cancel)
            session.vectors()  # the matrix is built here, not on the first query
            self.session = session
        except FactdeskError as exc:
            self.failed.emit(f"Semantic search is off: {exc}")
            return
        except (OSError, RuntimeError, ValueError, MemoryError) as exc:
            self.failed.emit(f"Semantic search is off: the embedding model failed ({exc})")
            return
        self.finished.emit(stats)


def start_in_thread(worker: EmbeddingWorker) -> QThread:
    """Move `worker` to a new QThread and start it; both are deleted when it ends."""
    thread = thread_for(worker)
    thread.start()
    return thread


def thread_for(worker: EmbeddingWorker) -> QThread:
    """A QThread (not started) that runs `worker` and deletes both when it ends. It has no
    parent: the window may close (and go) while the model still loads; both are kept
    until the thread ends (`workers.keep_until_finished`), and nothing waits for it."""
    thread = QThread()
    keep_until_finished(thread, worker)
    worker.moveToThread(thread)
    thread.started.connect(worker.run)
    # QThread.quit is thread-safe: called directly from the worker's thread, the loop ends
    # as soon as run() returns, whatever the GUI thread is doing.
    worker.finished.connect(thread.quit, Qt.ConnectionType.DirectConnection)
    worker.failed.connect(thread.quit, Qt.ConnectionType.DirectConnection)
    thread.finished.connect(worker.deleteLater)
    thread.finished.connect(thread.deleteLater)
    return thread
