"""Exact cosine search over a normalised float32 matrix: neighbours and near-duplicate scans.

At 100,000 facts × 384 dimensions the matrix is 150 MB; one fact's neighbours are one
matrix-vector product (~10 ms), and the full duplicate scan is a blocked upper-triangle
matrix product (the issue measured ANN libraries at no better than this). The scan's
pairs are cached in the embeddings database per model, so later scans compare only new or
changed facts against the rest.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from factdesk.semantic.backends import normalise
from factdesk.semantic.store import EmbeddingStore
from factdesk.semantic.thresholds import centred, scan_floor

#: Rows per block of the incremental scan, and the full scan's block budget in matrix
#: elements (2**26 floats = 256 MB: about 670 rows per block at 100k facts). Bigger blocks
#: are faster (fewer, larger products), up to the memory a desktop app should take.
BLOCK = 256
BLOCK_ELEMENTS = 1 << 26

ScanProgress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Neighbour:
    path: str
    score: float

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "score": round(self.score, 4)}


@dataclass(frozen=True, slots=True)
class DuplicatePair:
    a: str
    b: str
    score: float

    def as_dict(self) -> dict[str, object]:
        return {"a": self.a, "b": self.b, "score": round(self.score, 4)}


@dataclass
class ScanStats:
    facts: int = 0
    compared: int = 0
    pairs: int = 0
    incremental: bool = False
    cancelled: bool = False
    seconds: float = 0.0


class VectorIndex:
    """The embedded live facts of one corpus under one model, ready for cosine search.

    For backends whose vectors share a large common direction (the static one: any two
    texts score above 0.9), the corpus mean is subtracted and rows re-normalised, so that
    cosine separates paraphrases from mere same-corpus text again; query vectors go through
    `project` for the same shift. The stored vectors stay raw, so the cache does not
    depend on the corpus.
    """

    def __init__(self, model_id: str, paths: list[str], hashes: list[str],
                 matrix: np.ndarray, *, centre: bool | None = None) -> None:
        self.model_id = model_id
        self.paths = paths
        self.hashes = hashes
        raw = np.asarray(matrix, dtype=np.float32)
        use_mean = centred(model_id) if centre is None else centre
        self.mean: np.ndarray | None = None
        if use_mean and len(raw):
            self.mean = raw.mean(axis=0)
            raw = normalise(raw - self.mean)
        self.matrix = np.ascontiguousarray(raw, dtype=np.float32)
        self.row = {p: i for i, p in enumerate(paths)}

    def project(self, vector: np.ndarray) -> np.ndarray:
        """A backend's vector in this index's space (mean-shifted where the index is)."""
        v = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        out: np.ndarray = normalise(v - self.mean if self.mean is not None else v)[0]
        return out

    @classmethod
    def load(cls, store: EmbeddingStore, model_id: str) -> VectorIndex:
        paths, hashes, matrix = store.matrix(model_id)
        return cls(model_id, paths, hashes, matrix)

    def __len__(self) -> int:
        return len(self.paths)

    def top(self, vector: np.ndarray, k: int, *, exclude: Iterable[int] = ()
            ) -> list[Neighbour]:
        """The k rows most similar to `vector` (already normalised), best first."""
        if not self.paths or k <= 0:
            return []
        scores = self.matrix @ np.asarray(vector, dtype=np.float32)
        for i in exclude:
            scores[i] = -np.inf
        k = min(k, len(scores))
        idx = np.argpartition(-scores, k - 1)[:k]
        idx = idx[np.argsort(-scores[idx], kind="stable")]
        return [Neighbour(self.paths[i], float(scores[i])) for i in idx if np.isfinite(scores[i])]

    def neighbours(self, path: str, k: int = 10) -> list[Neighbour]:
        """The k facts nearest to `path` (itself and identical-text copies' order aside)."""
        i = self.row.get(path)
        if i is None:
            return []
        return self.top(self.matrix[i], k, exclude=(i,))

    def duplicate_scan(self, threshold: float, *, rows: Iterable[int] | None = None,
                       progress: ScanProgress | None = None,
                       cancel: threading.Event | None = None, block: int | None = None
                       ) -> tuple[list[DuplicatePair], bool]:
        """Every pair with cosine ≥ threshold; (pairs, completed).

        With `rows`, only those rows are compared against every row (incremental scan);
        without, the whole upper triangle in blocks.
        """
        n = len(self.paths)
        pairs: list[DuplicatePair] = []
        m = self.matrix
        if block is None:
            block = BLOCK if rows is not None else max(BLOCK, BLOCK_ELEMENTS // max(1, n))
        if rows is None:
            starts = list(range(0, n, block))
            # One reused buffer for the block products and one for the mask: allocating a
            # fresh 100 MB array per block costs more in page faults than the product.
            buf = np.empty(block * n, dtype=np.float32)
            hit = np.empty(block * n, dtype=bool)
            for done, s in enumerate(starts):
                if cancel is not None and cancel.is_set():
                    return pairs, False
                e = min(n, s + block)
                rows_n, cols = e - s, n - s
                sims = buf[:rows_n * cols].reshape(rows_n, cols)
                np.matmul(m[s:e], m[s:].T, out=sims)
                # Keep only the strict upper triangle (j > i): mask the block's own square.
                square = sims[:, :rows_n]
                square[np.tri(rows_n, dtype=bool)] = -1.0
                mask = hit[:rows_n * cols].reshape(rows_n, cols)
                np.greater_equal(sims, threshold, out=mask)
                ii, jj = np.nonzero(mask)
                pairs.extend(self._pair(s + i, s + j, float(sims[i, j]))
                             for i, j in zip(ii.tolist(), jj.tolist(), strict=True))
                if progress:
                    progress(done + 1, len(starts))
            return pairs, True
        chosen = sorted(set(rows))
        chosen_set = set(chosen)
        for done, s in enumerate(range(0, len(chosen), block)):
            if cancel is not None and cancel.is_set():
                return pairs, False
            part = chosen[s:s + block]
            sims = m[part] @ m.T
            ii, jj = np.nonzero(sims >= threshold)
            for i, j in zip(ii.tolist(), jj.tolist(), strict=True):
                a, b = part[i], j
                # A pair of two chosen rows is found twice: keep it once.
                if a == b or (b in chosen_set and b < a):
                    continue
                pairs.append(self._pair(a, b, float(sims[i, j])))
            if progress:
                progress(done + 1, (len(chosen) + block - 1) // block)
        return pairs, True

    def _pair(self, i: int, j: int, score: float) -> DuplicatePair:
        a, b = sorted((self.paths[i], self.paths[j]))
        return DuplicatePair(a, b, min(score, 1.0))


_SCAN_SCHEMA = """
CREATE TABLE IF NOT EXISTS dup_scanned (
    model_id TEXT NOT NULL, content_hash TEXT NOT NULL, floor REAL NOT NULL,
    PRIMARY KEY (model_id, content_hash)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dup_pairs (
    model_id TEXT NOT NULL, hash_a TEXT NOT NULL, hash_b TEXT NOT NULL, score REAL NOT NULL,
    PRIMARY KEY (model_id, hash_a, hash_b)) WITHOUT ROWID;
"""


def duplicate_scan(store: EmbeddingStore, model_id: str, threshold: float, *,
                   index: VectorIndex | None = None, progress: ScanProgress | None = None,
                   cancel: threading.Event | None = None) -> tuple[list[DuplicatePair], ScanStats]:
    """Near-duplicate pairs of live facts with cosine ≥ threshold, best first.

    Pairs are cached by content hash down to min(threshold, scan_floor(model)); a later call
    compares only facts whose text was not scanned before against all facts. (Where the
    index is mean-shifted, cached scores are those of the scan that found them; the floor
    sits well below the threshold so the small drift of the mean as facts come and go
    does not lose pairs.)
    """
    started = time.perf_counter()
    conn = store.connection
    conn.executescript(_SCAN_SCHEMA)
    index = index or VectorIndex.load(store, model_id)
    floor = min(threshold, scan_floor(model_id))
    stats = ScanStats(facts=len(index))
    scanned = {r[0] for r in conn.execute(
        "SELECT content_hash FROM dup_scanned WHERE model_id = ? AND floor <= ?",
        (model_id, floor))}
    fresh = [i for i, h in enumerate(index.hashes) if h not in scanned]
    stats.incremental = len(fresh) < len(index) and bool(scanned)
    if not stats.incremental:
        with conn:
            conn.execute("DELETE FROM dup_pairs WHERE model_id = ?", (model_id,))
            conn.execute("DELETE FROM dup_scanned WHERE model_id = ?", (model_id,))
        found, complete = index.duplicate_scan(floor, progress=progress, cancel=cancel)
    elif fresh:
        found, complete = index.duplicate_scan(floor, rows=fresh, progress=progress,
                                               cancel=cancel)
    else:
        found, complete = [], True
    stats.compared = len(fresh) if stats.incremental else len(index)
    stats.cancelled = not complete
    if complete:
        with conn:
            conn.executemany(
                "INSERT OR REPLACE INTO dup_pairs VALUES (?, ?, ?, ?)",
                [(model_id, *sorted((index.hashes[index.row[p.a]], index.hashes[index.row[p.b]])),
                  p.score) for p in found])
            conn.executemany("INSERT OR REPLACE INTO dup_scanned VALUES (?, ?, ?)",
                             [(model_id, index.hashes[i], floor) for i in
                              (fresh if stats.incremental else range(len(index)))])
        conn.execute("DELETE FROM dup_pairs WHERE model_id = ? AND (hash_a NOT IN (SELECT "
                     "content_hash FROM paths) OR hash_b NOT IN (SELECT content_hash FROM paths))",
                     (model_id,))
    by_hash: dict[str, list[str]] = {}
    for p, h in zip(index.paths, index.hashes, strict=True):
        by_hash.setdefault(h, []).append(p)
    # Cached pairs are re-scored against the current vectors (one dot product each), so a
    # mean shift since they were found moves their scores too.
    first = {h: index.row[ps[0]] for h, ps in by_hash.items()}
    cached = [(ha, hb) for ha, hb in conn.execute(
        "SELECT hash_a, hash_b FROM dup_pairs WHERE model_id = ?", (model_id,))
        if ha in first and hb in first]
    pairs: dict[tuple[str, str], float] = {}
    if cached:
        ia = np.fromiter((first[a] for a, _ in cached), dtype=np.int64, count=len(cached))
        ib = np.fromiter((first[b] for _, b in cached), dtype=np.int64, count=len(cached))
        scores = np.einsum("ij,ij->i", index.matrix[ia], index.matrix[ib])
        for (ha, hb), score in zip(cached, scores.tolist(), strict=True):
            if score < threshold:
                continue
            for a in by_hash[ha]:
                for b in by_hash[hb]:
                    if a != b:
                        pairs[(min(a, b), max(a, b))] = min(float(score), 1.0)
    out = [DuplicatePair(a, b, s) for (a, b), s in pairs.items()]
    out.sort(key=lambda p: (-p.score, p.a, p.b))
    stats.pairs = len(out)
    stats.seconds = time.perf_counter() - started
    return out, stats
