"""The embedding cache: vectors in SQLite keyed by (model_id, content_hash).

A separate database next to the index (`<git dir>/factdesk/embeddings.db`), so the
index stays a cache whose schema its owners can change freely. Live facts are read from
the index (`Indexer.connect(readonly=True)`); a fact whose blob is unchanged is not even
re-read, a fact whose text (title + body) is unchanged is never embedded again, a model
change re-embeds, and facts that left the corpus drop out.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factdesk.corpus import gitrepo
from factdesk.errors import FactdeskError
from factdesk.index.indexer import Indexer
from factdesk.semantic.backends import Embedder, fact_text

STORE_VERSION = 2
#: Vectors are stored as float16 (the static model's own precision; cosine moves by
#: < 0.001) and searched as float32: 100k facts take 77 MB instead of 154 MB.
STORED = np.float16
BATCH = 512

EmbedProgress = Callable[[int, int], None]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS paths (
    path TEXT PRIMARY KEY, blob TEXT, content_hash TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS paths_hash ON paths(content_hash);
CREATE TABLE IF NOT EXISTS vectors (
    model_id TEXT NOT NULL, content_hash TEXT NOT NULL, dim INTEGER NOT NULL,
    vec BLOB NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS vectors_key ON vectors(model_id, content_hash);
"""


class EmbeddingStoreError(FactdeskError):
    """The embeddings database cannot be used (it is moved aside and rebuilt)."""


@dataclass
class EmbedStats:
    """What one `embed_pending` run did."""

    model_id: str
    facts: int = 0
    embedded: int = 0
    reused: int = 0
    removed: int = 0
    cancelled: bool = False
    seconds: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {"model_id": self.model_id, "facts": self.facts, "embedded": self.embedded,
                "reused": self.reused, "removed": self.removed, "cancelled": self.cancelled,
                "seconds": round(self.seconds, 3)}


def content_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()


def store_path(repo: Path) -> Path:
    return gitrepo.git_dir(repo.resolve()) / "factdesk" / "embeddings.db"


class EmbeddingStore:
    """One corpus's embedding cache. Open one per thread (SQLite connections are per thread)."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo.resolve()
        self.path = store_path(self.repo)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            row = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
            if row is None:
                conn.execute("INSERT INTO meta VALUES ('version', ?)", (str(STORE_VERSION),))
                conn.commit()
            elif row[0] != str(STORE_VERSION):
                raise sqlite3.DatabaseError(f"embeddings store version {row[0]}")
        except sqlite3.DatabaseError:
            conn.close()
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            self.path.replace(aside)
            for suffix in ("-wal", "-shm"):
                self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            conn.execute("INSERT INTO meta VALUES ('version', ?)", (str(STORE_VERSION),))
            conn.commit()
        return conn

    def close(self) -> None:
        self._conn.close()

    # -- synchronising with the index ------------------------------------------------------

    def sync_paths(self, indexer: Indexer) -> tuple[int, int]:
        """Bring the path → content hash map in line with the index's live facts.

        Only facts whose blob changed are read. Returns (live facts, removed paths).
        """
        index = indexer.connect(readonly=True)
        try:
            live = {r[0]: r[1] for r in index.execute(
                "SELECT path, blob FROM facts WHERE status = 'live'")}
            known = {r[0]: r[1] for r in self._conn.execute("SELECT path, blob FROM paths")}
            gone = [p for p in known if p not in live]
            stale = [p for p, b in live.items() if b is None or known.get(p, "\0") != b]
            updates: list[tuple[str, str | None, str]] = []
            for chunk in _chunks(stale, 500):
                marks = ",".join("?" * len(chunk))
                for path, blob, title, body in index.execute(
                        f"SELECT path, blob, title, body FROM facts WHERE path IN ({marks})",
                        chunk):
                    updates.append((path, blob, content_hash(fact_text(title, body))))
        finally:
            index.close()
        with self._conn:
            self._conn.executemany("DELETE FROM paths WHERE path = ?", [(p,) for p in gone])
            self._conn.executemany("INSERT OR REPLACE INTO paths VALUES (?, ?, ?)", updates)
            # Vectors no fact uses any more drop out (every model's).
            self._conn.execute("DELETE FROM vectors WHERE content_hash NOT IN "
                               "(SELECT content_hash FROM paths)")
        return len(live), len(gone)

    def pending(self, model_id: str) -> list[str]:
        """One path per content hash of live facts without a vector for `model_id`."""
        return [r[0] for r in self._conn.execute(
            "SELECT MIN(p.path) FROM paths p WHERE NOT EXISTS (SELECT 1 FROM vectors v "
            "WHERE v.model_id = ? AND v.content_hash = p.content_hash) "
            "GROUP BY p.content_hash ORDER BY MIN(p.path)", (model_id,))]

    def embed_pending(self, indexer: Indexer, backend: Embedder, *,
                      progress: EmbedProgress | None = None,
                      cancel: threading.Event | None = None) -> EmbedStats:
        """Embed every live fact that has no vector for this backend yet.

        Work is committed batch by batch, so a cancelled run keeps what it did.
        """
        started = time.perf_counter()
        stats = EmbedStats(model_id=backend.model_id)
        stats.facts, stats.removed = self.sync_paths(indexer)
        todo = self.pending(backend.model_id)
        distinct = self._conn.execute("SELECT COUNT(DISTINCT content_hash) FROM paths"
                                      ).fetchone()[0]
        stats.reused = int(distinct) - len(todo)
        total = len(todo)
        if progress:
            progress(0, total)
        index = indexer.connect(readonly=True)
        try:
            for chunk in _chunks(todo, BATCH):
                if cancel is not None and cancel.is_set():
                    stats.cancelled = True
                    break
                marks = ",".join("?" * len(chunk))
                texts = [fact_text(title, body) for title, body in index.execute(
                    f"SELECT title, body FROM facts WHERE path IN ({marks})", chunk)]
                vectors = backend.encode(texts)
                # Stored under the hash of the text actually embedded: if the index moved
                # on meanwhile, the path's new hash stays pending for the next run.
                with self._conn:
                    self._conn.executemany(
                        "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
                        [(backend.model_id, content_hash(t), backend.dim,
                          vectors[i].astype(STORED).tobytes())
                         for i, t in enumerate(texts)])
                stats.embedded += len(chunk)
                if progress:
                    progress(stats.embedded, total)
        finally:
            index.close()
        stats.seconds = time.perf_counter() - started
        return stats

    # -- reading ---------------------------------------------------------------------------

    def matrix(self, model_id: str) -> tuple[list[str], list[str], np.ndarray]:
        """(paths, content hashes, float32 matrix) of every live fact embedded by `model_id`."""
        paths: list[str] = []
        hashes: list[str] = []
        blobs: list[bytes] = []
        dim = 0
        for path, digest, d, vec in self._conn.execute(
                "SELECT p.path, p.content_hash, v.dim, v.vec FROM paths p JOIN vectors v "
                "ON v.content_hash = p.content_hash AND v.model_id = ? ORDER BY p.path",
                (model_id,)):
            paths.append(path)
            hashes.append(digest)
            blobs.append(vec)
            dim = d
        if not blobs:
            return paths, hashes, np.zeros((0, dim), dtype=np.float32)
        matrix = np.frombuffer(b"".join(blobs), dtype=STORED).reshape(len(blobs), dim)
        return paths, hashes, matrix.astype(np.float32)

    def vector_for(self, model_id: str, path: str) -> np.ndarray | None:
        row = self._conn.execute(
            "SELECT v.vec FROM paths p JOIN vectors v ON v.content_hash = p.content_hash "
            "AND v.model_id = ? WHERE p.path = ?", (model_id, path)).fetchone()
        return None if row is None else np.frombuffer(row[0], dtype=STORED).astype(np.float32)

    def counts(self, model_id: str) -> tuple[int, int]:
        """(live facts known, of which embedded by `model_id`)."""
        total = self._conn.execute("SELECT COUNT(*) FROM paths").fetchone()[0]
        done = self._conn.execute(
            "SELECT COUNT(*) FROM paths p JOIN vectors v ON v.content_hash = p.content_hash "
            "AND v.model_id = ?", (model_id,)).fetchone()[0]
        return int(total), int(done)

    @property
    def connection(self) -> sqlite3.Connection:
        """For the duplicate-scan cache (same file, same thread)."""
        return self._conn


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def embed_pending(indexer: Indexer, backend: Embedder, *, progress: EmbedProgress | None = None,
                  cancel: threading.Event | None = None) -> EmbedStats:
    """Bring a corpus's embeddings up to date for `backend` (opens and closes the store)."""
    store = EmbeddingStore(indexer.repo)
    try:
        return store.embed_pending(indexer, backend, progress=progress, cancel=cancel)
    finally:
        store.close()
