"""The embedding lifecycle of one window: embed new or changed facts in the background (the
model loads there too), switch models, and answer `similar:` once embeddings are ready.

The window asks `start()` after each index update and reads `similar_function()` /
`similar_ids()`; what happens meanwhile (progress, readiness, failure) is said through
`status_did_change` and `did_become_ready`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSettings, QThread, Signal

from factdesk.errors import QueryError
from factdesk.gui.semantic_worker import EmbeddingWorker, start_in_thread
from factdesk.index.indexer import Indexer
from factdesk.index.query import parse_similar
from factdesk.index.search import ids_of_paths

if TYPE_CHECKING:
    import sqlite3

MODELS = (("static", "Fast (static, distilled from MiniLM)"),
          ("full", "Full MiniLM (slow on a CPU, best neighbours)"))


def enabled_by_environment() -> bool:
    """Semantic search is on unless FACTDESK_SEMANTIC=off."""
    return os.environ.get("FACTDESK_SEMANTIC", "on").lower() not in ("off", "0", "no")


class SemanticController(QObject):
    """Owns the embedding worker and the semantic session it produces."""

    status_did_change = Signal(str, int)  # message, milliseconds to show it
    did_become_ready = Signal()

    def __init__(self, indexer: Indexer, settings: QSettings, *, enabled: bool | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._indexer = indexer
        self._settings = settings
        self.enabled = enabled if enabled is not None else enabled_by_environment()
        self.session: object | None = None  # a SemanticSession once embeddings are ready
        #: why `similar:` cannot answer (off here, or the model failed), None when it can soon
        self.notice: str | None = None if self.enabled else (
            "semantic search is off in this window (FACTDESK_SEMANTIC=off): similar: needs it")
        self._worker: EmbeddingWorker | None = None
        self._thread: QThread | None = None
        self._again = False

    def model(self) -> str | None:
        """The chosen embedding model (kept in settings), else None for the default."""
        value = self._settings.value("semantic/model", "")
        return str(value) if value in ("static", "full") else None

    def start(self) -> None:
        """Embed new or changed facts in the background."""
        if not self.enabled or self._thread is not None:
            return
        worker = EmbeddingWorker(self._indexer, self.model())
        worker.progress.connect(self._progress)
        worker.status.connect(self._said)  # (the model's loading, a first run's preparation)
        worker.finished.connect(self._ready)
        worker.failed.connect(self._failed)
        self._worker = worker
        self._thread = start_in_thread(worker)
        self._thread.finished.connect(self._thread_done)

    def choose(self, name: str) -> None:
        """Switch models; re-embeds in the background (vectors of both are kept)."""
        self._settings.setValue("semantic/model", name)
        self.session = None
        self.enabled = True
        self.notice = None
        self.status_did_change.emit(f"Semantic search: switching to the {name} model…", 5000)
        if self._thread is None:
            self.start()
        else:  # after the running one ends (a flag, not a connection to `finished`: the
            # thread may have finished already, its done-handler still queued)
            self._again = True

    def close(self) -> None:
        """The window is closing: the embedding stops after its current batch (what is
        done is kept), a model still loading finishes loading unheard; nothing waits."""
        if self._worker is not None:
            self._worker.cancel()
            for signal, slot in ((self._worker.progress, self._progress),
                                 (self._worker.status, self._said),
                                 (self._worker.finished, self._ready),
                                 (self._worker.failed, self._failed)):
                signal.disconnect(slot)
        self._again = False
        self.enabled = False

    def _thread_done(self) -> None:
        self._worker = None
        self._thread = None
        if self._again:
            self._again = False
            self.start()

    def _said(self, text: str) -> None:
        self.status_did_change.emit(f"Semantic search: {text}", 0)  # (until the next word)

    def _progress(self, done: int, total: int) -> None:
        if total:
            self.status_did_change.emit(f"Embedding facts for semantic search: {done}/{total}", 2000)

    def _ready(self, stats: object) -> None:
        self.session = self._worker.session if self._worker is not None else None
        self.notice = None
        embedded = getattr(stats, "embedded", 0)
        self.status_did_change.emit(f"Semantic search ready ({embedded} facts embedded now)", 5000)
        self.did_become_ready.emit()

    def _failed(self, message: str) -> None:
        self.enabled = False
        self.notice = message
        self.status_did_change.emit(message, 10000)

    def similar_function(self) -> Callable[[str], list[tuple[str, float]]] | None:
        """Near-duplicates of a fact by path, when embeddings are ready."""
        session = self.session
        if session is None:
            return None

        def similar(path: str) -> list[tuple[str, float]]:
            try:
                return [(n.path, n.score) for n in session.neighbours(path, 20)]  # type: ignore[attr-defined]
            except Exception:  # a fact not embedded yet: no neighbours
                return []

        return similar

    def similar_hits(self, text: str) -> list[tuple[str, float]] | None:
        """The (path, similarity) pairs a `similar:` query names, nearest first; None for
        any other query. Raises QueryError while embeddings are not ready."""
        target = parse_similar(text)
        if target is None:
            return None
        if self.session is None:
            raise QueryError(self.notice or "semantic search is not ready yet: facts are being "
                             "embedded in the background")
        return [(h.path, float(h.score))
                for h in self.session.similar(target, 200)]  # type: ignore[attr-defined]

    def similar_paths(self, text: str) -> list[str] | None:
        """The paths a `similar:` query names, nearest first; None for any other query (the
        sidebar counts facets over them)."""
        hits = self.similar_hits(text)
        return None if hits is None else [path for path, _score in hits]

    def similar_ids(self, conn: sqlite3.Connection | None,
                    text: str) -> list[tuple[int, float]] | None:
        """The (id, similarity) pairs a `similar:` query names, nearest first (the table
        shows the score); None for any other query."""
        hits = self.similar_hits(text)
        if hits is None:
            return None
        if conn is None or not hits:
            return []
        ids = ids_of_paths(conn, [path for path, _score in hits])
        return [(ids[path], score) for path, score in hits if path in ids]
