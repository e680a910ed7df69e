"""The open corpus as the GUI sees it: repository, index, the GUI thread's read connection,
and the background worker that brings the index up to date.

Index updates run on a QThread with their own connection (the indexer opens it); the GUI
thread only reads, through one read-only connection opened once the index is usable.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QThread, QTimer, Signal

from factdesk.core import open_corpus
from factdesk.gui.workers import BackgroundRead
from factdesk.index import locking, schema
from factdesk.index.indexer import Indexer, IndexStats
from factdesk.index.search import IdArray, SortOrders, full_order

_inode = locking.inode


#: quiet time before the sort orders are read in the background
WARM_DELAY_MS = 300


class IndexWorker(QThread):
    """Runs `Indexer.update()` off the GUI thread and reports progress through signals."""

    progress_did_change = Signal(str, int, int)
    update_did_finish = Signal(object)  # IndexStats
    update_did_fail = Signal(str)

    def __init__(self, indexer: Indexer, *, rebuild: bool = False, hint: list[str] | None = None,
                 after: list[Callable[[], None]] | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._indexer = indexer
        self._rebuild = rebuild
        self._hint = hint
        self._after = after or []

    def run(self) -> None:
        try:
            stats = self._indexer.update(rebuild=self._rebuild, progress=self._progress,
                                         hint=self._hint)
        except Exception as exc:  # a failed update must reach the user, not kill the thread
            self._run_after()
            self.update_did_fail.emit(f"{type(exc).__name__}: {exc}")
            return
        self.update_did_finish.emit(stats)
        self._run_after()

    def _run_after(self) -> None:
        """Work that must follow the update but not delay the view (git's index sync)."""
        for job in self._after:
            try:
                job()
            except Exception as exc:  # reported; the journal makes the next start finish it
                self.update_did_fail.emit(f"{type(exc).__name__}: {exc}")

    def _progress(self, stage: str, done: int, total: int) -> None:
        self.progress_did_change.emit(stage, done, total)


class IndexSession(QObject):
    """One corpus: owns the indexer, the read connection and at most one running update."""

    index_did_update = Signal(object)  # IndexStats
    index_did_fail = Signal(str)
    progress_did_change = Signal(str, int, int)

    def __init__(self, repo: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.indexer = open_corpus(repo)
        self.repo = self.indexer.repo
        self.conn: sqlite3.Connection | None = None
        self._worker: IndexWorker | None = None
        self._pending = False
        self._after: list[Callable[[], None]] = []
        self.repo_ids: frozenset[str] = frozenset()
        #: every sort order of the table, read in the background (`warm_orders`)
        self.orders = SortOrders()
        self._warm = BackgroundRead.of_index(self.indexer, _read_orders, done=self._warmed,
                                             failed=lambda *_: None,  # SQL still works
                                             parent=self)
        self._warm_timer = QTimer(self)
        self._warm_timer.setSingleShot(True)
        self._warm_timer.setInterval(WARM_DELAY_MS)
        self._warm_timer.timeout.connect(self._start_warm)
        self._warm_first: str | None = None
        self._warm_again = False
        self._reader_inode: int | None = None
        if schema.is_usable(self.indexer.path):
            self._open_reader()

    @property
    def is_updating(self) -> bool:
        return self._worker is not None

    def _open_reader(self) -> None:
        """The GUI thread's read connection — opened anew when the index file was replaced
        (a damaged one moved aside and rebuilt): the old connection would go on reading the
        moved file, and the sort orders read from the new one must not meet it."""
        inode = _inode(self.indexer.path)
        if self.conn is not None and inode != self._reader_inode:
            self.conn.close()
            self.conn = None
            self.orders = SortOrders()
        if self.conn is None:
            self.conn = self.indexer.connect(readonly=True)
            self._reader_inode = inode
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'repo_id'").fetchone()
        self.repo_ids = frozenset((row[0] if row else "").split())

    def update(self, *, rebuild: bool = False, hint: list[str] | None = None,
               after: Callable[[], None] | None = None) -> None:
        """Start a background update; a request during a running one is queued once.
        `hint`: the paths factdesk's own action just committed (a fast update); `after`:
        run on the worker thread once the update is done."""
        if after is not None:
            self._after.append(after)
        if self._worker is not None:
            self._pending = True
            return
        jobs, self._after = self._after, []
        worker = IndexWorker(self.indexer, rebuild=rebuild, hint=hint, after=jobs, parent=self)
        worker.progress_did_change.connect(self.progress_did_change)
        worker.update_did_finish.connect(self._on_finished)
        worker.update_did_fail.connect(self._on_failed)
        worker.finished.connect(self._on_thread_done)
        self._worker = worker
        worker.start()

    # -- sort orders ------------------------------------------------------------------------

    def warm_orders(self, first: str | None = None) -> None:
        """Read the sort orders the cache lacks on a worker thread, `first` first, once the
        window has been quiet for a moment (a sort click then filters a cached order)."""
        self._warm_first = first
        self._warm_timer.start()

    @property
    def is_warming(self) -> bool:
        return self._warm_timer.isActive() or self._warm.running

    def _start_warm(self) -> None:
        if self.conn is None:
            return
        if self._warm.running:
            self._warm_again = True  # the index may have moved on: read again when done
            return
        missing = sorted(self.orders.missing(), key=lambda k: k != self._warm_first)
        if not missing:
            return
        # (a replaced connection gets a new cache: the orders go to the cache asked for)
        self._warm.start(missing, SortOrders.version(self.conn), self.orders)

    def _warmed(self, found: dict[str, IdArray], _keys: list[str], version: tuple[int, int],
                orders: SortOrders) -> None:
        accepted = orders.offer(version, found)  # refused when the index moved meanwhile
        if self._warm_again or not accepted:
            self._warm_again = False
            self.warm_orders(self._warm_first)

    def _on_finished(self, stats: IndexStats) -> None:
        """The index is up to date: the views refresh now, while the worker may still be
        finishing its `after` jobs (the thread is reaped when it ends, never waited for)."""
        self._open_reader()
        self.index_did_update.emit(stats)
        self.warm_orders()

    def _on_failed(self, message: str) -> None:
        self.index_did_fail.emit(message)

    def _on_thread_done(self) -> None:
        if self._worker is not None:
            self._worker.wait()
            self._worker.deleteLater()
            self._worker = None
        self._run_pending()

    def _run_pending(self) -> None:
        if self._pending:
            self._pending = False
            self.update()

    def close(self) -> None:
        """Wait for a running update (it is one transaction) and close the connection."""
        self._pending = False
        self._warm_again = False
        self._warm_timer.stop()
        self._warm.close()
        if self._worker is not None:
            self._worker.wait()
            self._worker.deleteLater()
            self._worker = None
        jobs, self._after = self._after, []
        for job in jobs:  # deferred git-index syncs queued behind an update: do them now
            job()
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def _read_orders(conn: sqlite3.Connection, keys: list[str], *_for: object
                 ) -> dict[str, IdArray]:
    """(On the warm-up's thread.) The sort orders `keys` (for the cache and index version
    that the start names, handed back to `_warmed`)."""
    return {key: full_order(conn, key) for key in keys}
