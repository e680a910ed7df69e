"""Similarity thresholds calibrated for this app's models (docs/semantic.md has the method).

knomit's thresholds belong to embeddinggemma's cosine distribution (FORMAT.md §7) and do
not carry over. These were measured per backend on the generated corpus's near-duplicate
pairs (hypothesis ↔ the observation paraphrasing it) against each hypothesis's best
non-partner in a pool of 1,600 facts: the threshold is the best non-partner's maximum
plus a 0.05 margin, rounded up to 0.05; the published corpus's dedup merges and
nearest-neighbour distribution are reported beside them.
"""

from __future__ import annotations

#: Cosine at or above which two facts are proposed as near-duplicates, per backend
#: (static: on mean-shifted vectors, see vectors.VectorIndex).
DUPLICATE = {"static": 0.65, "full": 0.87}
#: Pairs are cached by the duplicate scan down to this cosine, so raising or slightly
#: lowering the threshold later needs no rescan.
SCAN_FLOOR = {"static": 0.55, "full": 0.80}
#: Below this a `similar:` result is not shown (noise floor), per backend.
SIMILAR_FLOOR = {"static": 0.20, "full": 0.30}
#: Backends whose index is mean-shifted before cosine.
CENTRED = frozenset({"static"})


def backend_of(model_id: str) -> str:
    return model_id.split(":", 1)[0]


def duplicate_threshold(model_id: str) -> float:
    return DUPLICATE.get(backend_of(model_id), DUPLICATE["full"])


def scan_floor(model_id: str) -> float:
    return SCAN_FLOOR.get(backend_of(model_id), SCAN_FLOOR["full"])


def similar_floor(model_id: str) -> float:
    return SIMILAR_FLOOR.get(backend_of(model_id), SIMILAR_FLOOR["full"])


def centred(model_id: str) -> bool:
    return backend_of(model_id) in CENTRED
