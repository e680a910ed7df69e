"""Calibration as data (issue 16), pure: predictions with outcomes, the Brier score and the
reliability bins. Definitions (docs/agents.md):

* a *prediction* is a hypothesis with a confidence in its first version (the confidence it
  was written with);
* its *outcome* is 1 when it was confirmed — retracted as confirmed, confirmed by a citing
  observation (and kept), or promoted in place — and 0 when refuted; an open hypothesis, one
  extended and still open, and one withdrawn without a verdict (subsumed, retracted
  otherwise) have none;
* the Brier score is the mean of (confidence − outcome)² over the predictions with an
  outcome (`settled`); None with none;
* the reliability bins split [0, 1] into `BINS` equal bins by confidence (the last one
  closed), each with its number of settled predictions and the share that held.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

BINS = 10
#: a decisive transition's outcome (reflect.model.Transition.outcome) → the prediction's
OUTCOME_VALUE: dict[str, int] = {"confirmed": 1, "promoted": 1, "refuted": 0}


@dataclass(frozen=True, slots=True)
class Prediction:
    path: str
    confidence: float | None  #: in the first version (None: none there, no prediction)
    outcome: int | None  #: 1 held, 0 refuted, None no verdict (open / withdrawn)


@dataclass(frozen=True, slots=True)
class Bin:
    lo: float
    hi: float
    settled: int  #: settled predictions with a confidence in [lo, hi)
    held: int  #: of them, those with outcome 1
    mean_confidence: float | None

    @property
    def share_held(self) -> float | None:
        return self.held / self.settled if self.settled else None

    def as_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["share_held"] = None if self.share_held is None else round(self.share_held, 4)
        if self.mean_confidence is not None:
            out["mean_confidence"] = round(self.mean_confidence, 4)
        return out


def settled(predictions: Iterable[Prediction]) -> list[tuple[float, int]]:
    """(confidence, outcome) of every prediction that has both."""
    return [(p.confidence, p.outcome) for p in predictions
            if p.confidence is not None and p.outcome is not None]


def brier(predictions: Iterable[Prediction]) -> float | None:
    pairs = settled(predictions)
    if not pairs:
        return None
    return sum((c - o) ** 2 for c, o in pairs) / len(pairs)


def bin_of(confidence: float, bins: int = BINS) -> int:
    return min(bins - 1, max(0, int(confidence * bins)))


def reliability(predictions: Iterable[Prediction], bins: int = BINS) -> list[Bin]:
    counts = [[0, 0, 0.0] for _ in range(bins)]
    for c, o in settled(predictions):
        row = counts[bin_of(c, bins)]
        row[0] += 1
        row[1] += o
        row[2] += c
    return [Bin(round(i / bins, 4), round((i + 1) / bins, 4), int(n), int(h),
                (s / n) if n else None) for i, (n, h, s) in enumerate(counts)]
