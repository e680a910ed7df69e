"""Semantic search over one corpus: neighbours, `similar:` queries, hybrid FTS5 + vectors.

`SemanticSession` holds the loaded backend, the embedding store and the vector matrix for
one corpus; `session_for(indexer)` keeps one per corpus per process, so the GUI's search
bar can call `similar_paths(indexer, raw_query)` on every keystroke-commit cheaply.
Sessions are thread-safe for reads (one lock); build them off the GUI thread.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from factdesk.index import DatabaseError
from factdesk.index.indexer import Indexer
from factdesk.index.query import (
    compile_query,
    parse_similar,
    revision_resolver,
)
from factdesk.index.search import get_fact_row, search
from factdesk.index.semantic_reads import commit_times, paths_matching, title_and_body
from factdesk.semantic.backends import Embedder, ModelUnavailable, fact_text, load_backend
from factdesk.semantic.store import EmbeddingStore, EmbedProgress, EmbedStats
from factdesk.semantic.thresholds import duplicate_threshold, similar_floor
from factdesk.semantic.vectors import DuplicatePair, Neighbour, ScanStats, VectorIndex
from factdesk.semantic.vectors import duplicate_scan as _duplicate_scan

if TYPE_CHECKING:
    import sqlite3

#: Reciprocal-rank-fusion constant (Cormack et al.): damps the head of each list.
RRF_K = 60
_QUOTED = re.compile(r'^\s*"(.*)"\s*$', re.S)


@dataclass(frozen=True, slots=True)
class HybridHit:
    path: str
    score: float
    fts_rank: int | None
    cosine: float | None

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "score": round(self.score, 6), "fts_rank": self.fts_rank,
                "cosine": None if self.cosine is None else round(self.cosine, 4)}


class SemanticSession:
    """Backend + store + matrix for one corpus (load with `session_for`, off the GUI thread)."""

    def __init__(self, indexer: Indexer, backend: Embedder) -> None:
        self.indexer = indexer
        self.backend = backend
        self._lock = threading.RLock()
        self._index: VectorIndex | None = None

    @property
    def model_id(self) -> str:
        return self.backend.model_id

    def store(self) -> EmbeddingStore:
        return EmbeddingStore(self.indexer.repo)

    def embed_pending(self, *, progress: EmbedProgress | None = None,
                      cancel: threading.Event | None = None) -> EmbedStats:
        store = self.store()
        try:
            stats = store.embed_pending(self.indexer, self.backend, progress=progress,
                                        cancel=cancel)
        finally:
            store.close()
        with self._lock:
            self._index = None
        return stats

    def vectors(self) -> VectorIndex:
        """The current matrix (reloaded after each `embed_pending`)."""
        with self._lock:
            if self._index is None:
                store = self.store()
                try:
                    self._index = VectorIndex.load(store, self.model_id)
                finally:
                    store.close()
            return self._index

    def neighbours(self, path: str, k: int = 10) -> list[Neighbour]:
        """The k facts most similar to the fact at `path` (embedding it if it is new)."""
        index = self.vectors()
        if path in index.row:
            return index.neighbours(path, k)
        conn = self.indexer.connect(readonly=True)
        try:
            found = title_and_body(conn, path)
        finally:
            conn.close()
        if found is None:
            return []
        return index.top(index.project(self.backend.encode([fact_text(*found)])[0]), k)

    def similar_to_text(self, text: str, k: int = 10) -> list[Neighbour]:
        index = self.vectors()
        return index.top(index.project(self.backend.encode([text])[0]), k)

    def duplicates(self, threshold: float | None = None, *, progress: EmbedProgress | None = None,
                   cancel: threading.Event | None = None) -> tuple[list[DuplicatePair], ScanStats]:
        """Near-duplicate pairs (cached; only new or changed facts are compared)."""
        limit = duplicate_threshold(self.model_id) if threshold is None else threshold
        store = self.store()
        try:
            return _duplicate_scan(store, self.model_id, limit, index=self.vectors(),
                                   progress=progress, cancel=cancel)
        finally:
            store.close()

    def resolve(self, ref: str) -> str | None:
        """A fact path for an id, path or 8-hex name, else None (then it is text)."""
        conn = self.indexer.connect(readonly=True)
        try:
            row = get_fact_row(conn, ref)
        except DatabaseError:
            row = None
        finally:
            conn.close()
        return None if row is None else str(row["path"])

    def similar(self, target: str, k: int = 20) -> list[Neighbour]:
        """`similar:` semantics: a fact (id, path, 8-hex name) or, failing that, free text."""
        quoted = _QUOTED.match(target)
        path = None if quoted else self.resolve(target)
        hits = (self.neighbours(path, k) if path is not None
                else self.similar_to_text(quoted.group(1) if quoted else target, k))
        floor = similar_floor(self.model_id)
        return [h for h in hits if h.score >= floor]

    def hybrid(self, conn: sqlite3.Connection, query: str, k: int = 20) -> list[HybridHit]:
        """FTS5 bm25 ranks and vector ranks fused by reciprocal rank (filters apply to both)."""
        return hybrid_search(conn, query, k, session=self)


def hybrid_search(conn: sqlite3.Connection, query_text: str, k: int = 20, *,
                  session: SemanticSession) -> list[HybridHit]:
    """The best k facts for a query by FTS5 rank and vector similarity, fused (RRF).

    The query language's field filters restrict both lists; the free-text words are what
    is embedded. A query without free text is the FTS result alone.
    """
    depth = max(50, k * 5)
    fts = search(conn, query_text, limit=depth)
    commit_time = commit_times(conn) if "since:" in query_text else None
    compiled = compile_query(query_text, commit_time=commit_time,
                             resolve_rev=revision_resolver(conn))
    words = " ".join(compiled.terms).strip()
    fused: dict[str, list[float | int | None]] = {}
    for rank, hit in enumerate(fts, 1):
        fused[hit.path] = [1.0 / (RRF_K + rank), rank, None]
    if words:
        vec_hits = session.similar_to_text(words, depth * 4)
        allowed = paths_matching(conn, compiled, [h.path for h in vec_hits])
        rank = 0
        for near in vec_hits:
            if near.path not in allowed:
                continue
            rank += 1
            entry = fused.setdefault(near.path, [0.0, None, None])
            entry[0] = float(entry[0] or 0.0) + 1.0 / (RRF_K + rank)
            entry[2] = near.score
            if rank >= depth:
                break
    out = [HybridHit(p, float(v[0] or 0.0), None if v[1] is None else int(v[1]),
                     None if v[2] is None else float(v[2])) for p, v in fused.items()]
    out.sort(key=lambda h: (-h.score, h.path))
    return out[:k]


_sessions: dict[tuple[Path, str], SemanticSession] = {}
_sessions_lock = threading.Lock()


def session_for(indexer: Indexer, setting: str | None = None, *,
                progress: Callable[[str], None] | None = None) -> SemanticSession:
    """The process-wide session for a corpus and backend (loads the model on first use;
    `progress` hears about a first-use distillation).

    Raises ModelUnavailable when the model cannot be loaded.
    """
    backend = load_backend(setting, progress=progress)
    key = (indexer.repo, backend.model_id)
    with _sessions_lock:
        if key not in _sessions:
            _sessions[key] = SemanticSession(indexer, backend)
        return _sessions[key]


def similar_paths(indexer: Indexer, raw_query: str, *, limit: int = 200,
                  setting: str | None = None) -> list[str] | None:
    """For the search bar: fact paths for a `similar:` query, best first; None otherwise.

    `similar:kb/…md`, `similar:1234` (id) or `similar:3f9a0c12` (8-hex name) give that
    fact's neighbours; anything else (`similar:retry storms` or `similar:"…"`) is text.
    Raises ModelUnavailable (a FactdeskError) when semantic search is off.
    """
    target = parse_similar(raw_query)
    if target is None:
        return None
    session = session_for(indexer, setting)
    return [h.path for h in session.similar(target, limit)]


__all__ = ["HybridHit", "ModelUnavailable", "SemanticSession", "hybrid_search",
           "parse_similar", "session_for", "similar_paths"]
