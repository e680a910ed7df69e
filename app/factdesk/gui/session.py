"""The open corpus as the GUI sees it: repository, index, the GUI thread's read connection,
and the writer lane that brings the index up to date.

Index updates run on the window's one writer thread (`operations.WriterLane`, shared with
the curation calls) with their own connection (the indexer opens it); the GUI thread only
reads, through one read-only connection opened once the index is usable.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

from factdesk.core import open_corpus
from factdesk.gui.operations import WriterLane
from factdesk.gui.workers import BackgroundRead
from factdesk.index import locking, reads, schema
from factdesk.index.indexer import Indexer, IndexStats
from factdesk.index.search import IdArray, SortOrders, full_order

if TYPE_CHECKING:
    import sqlite3

_inode = locking.inode


#: quiet time before the sort orders are read in the background
WARM_DELAY_MS = 300


class IndexSession(QObject):
    """One corpus: owns the indexer, the read connection and at most one running update."""

    index_did_update = Signal(object)  # IndexStats
    index_did_fail = Signal(str)
    progress_did_change = Signal(str, int, int)

    def __init__(self, repo: Path, parent: QObject | None = None, *,
                 indexer: Indexer | None = None) -> None:
        super().__init__(parent)
        # (`indexer`: the corpus already checked off the GUI thread, gui/open_corpus.py)
        self.indexer = indexer if indexer is not None else open_corpus(repo)
        self.repo = self.indexer.repo
        self.conn: sqlite3.Connection | None = None
        #: the one writer thread: index updates and curation calls, in order
        self.lane = WriterLane(self)
        self._updating = False
        self._pending = False
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
        return self._updating

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
        self.repo_ids = reads.repo_ids(self.conn)

    def update(self, *, rebuild: bool = False, hint: list[str] | None = None) -> None:
        """Queue an update on the writer lane; a request during a running one is queued
        once. `hint`: the paths just committed (a fast update)."""
        if self._updating:
            self._pending = True
            return
        self._updating = True
        indexer, progress = self.indexer, self.progress_did_change.emit
        self.lane.submit(lambda: indexer.update(rebuild=rebuild, progress=progress, hint=hint),
                         done=self._on_finished, failed=self._on_failed, interruptible=True)

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

    def accept_update(self, stats: IndexStats | None) -> None:
        """The index moved on (an update, or an operation's own update on the lane): read
        it from now on, and warm the sort orders again."""
        self._open_reader()
        self.warm_orders()

    def _on_finished(self, stats: IndexStats) -> None:
        self._updating = False
        self.accept_update(stats)
        self.index_did_update.emit(stats)
        self._run_pending()

    def _on_failed(self, exc: BaseException) -> None:
        self._updating = False
        self.index_did_fail.emit(f"{type(exc).__name__}: {exc}")
        self._run_pending()

    def _run_pending(self) -> None:
        if self._pending:
            self._pending = False
            self.update()

    def close(self, *, wait: bool = True) -> None:
        """Finish the queued writes (each is one transaction or one commit), then close the
        connection. `wait=False`: the writes finish on the lane's own thread."""
        self._pending = False
        self._warm_again = False
        self._warm_timer.stop()
        self._warm.close()
        self.lane.close(wait=wait)
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def _read_orders(conn: sqlite3.Connection, keys: list[str], *_for: object
                 ) -> dict[str, IdArray]:
    """(On the warm-up's thread.) The sort orders `keys` (for the cache and index version
    that the start names, handed back to `_warmed`)."""
    return {key: full_order(conn, key) for key in keys}
