"""Track records: how each claimant's predictions turned out, overall and per month, and
methodology facts with their reinforcement counts. Pure data for the GUI's charts.

Each hypothesis counts once, with its first decisive outcome (by commit order):
`promoted` (settled in place), `confirmed` (an observation cites it, or it was retracted
because one did), `refuted`, `retracted` (removed otherwise, e.g. merged by review). A
hypothesis still open at HEAD with no outcome is `open`; `overdue` counts those of them
past their settle-by date (a subset of `open`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

from factdesk.reflect.model import Transition

OUTCOMES = ("confirmed", "refuted", "retracted", "promoted")
UNKNOWN = "(unknown)"


@dataclass(slots=True)
class TrackRecord:
    key: str
    confirmed: int = 0
    refuted: int = 0
    retracted: int = 0
    promoted: int = 0
    open: int = 0
    overdue: int = 0

    @property
    def settled(self) -> int:
        return self.confirmed + self.refuted + self.retracted + self.promoted

    @property
    def hit_rate(self) -> float | None:
        """Share of judged predictions that held: (confirmed + promoted) / (those + refuted)."""
        held = self.confirmed + self.promoted
        judged = held + self.refuted
        return held / judged if judged else None

    def add(self, outcome: str, n: int = 1) -> None:
        setattr(self, outcome, getattr(self, outcome) + n)

    def as_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["settled"] = self.settled
        out["hit_rate"] = None if self.hit_rate is None else round(self.hit_rate, 4)
        return out


@dataclass(frozen=True, slots=True)
class MonthPoint:
    month: str  #: YYYY-MM (UTC) of the deciding commit
    group: str  #: agent / type / all
    key: str
    counts: Mapping[str, int]

    def as_dict(self) -> dict[str, object]:
        return {"month": self.month, "group": self.group, "key": self.key,
                "counts": dict(self.counts)}


@dataclass(frozen=True, slots=True)
class Reinforcement:
    path: str
    title: str
    transitions: int  #: transitions whose fact cites it
    citing: int  #: all live facts citing it (knomit's reinforcement count, §5.5)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class OpenClaim:
    """What the stats need from a queue item (keeps this module free of the index)."""

    path: str
    claimant: str | None
    claimant_type: str | None
    overdue: bool


@dataclass(slots=True)
class Reflection:
    by_agent: dict[str, TrackRecord] = field(default_factory=dict)
    by_type: dict[str, TrackRecord] = field(default_factory=dict)
    total: TrackRecord = field(default_factory=lambda: TrackRecord("all"))
    monthly: list[MonthPoint] = field(default_factory=list)
    methodologies: list[Reinforcement] = field(default_factory=list)
    outcomes: dict[str, str] = field(default_factory=dict)  #: hypothesis path → outcome

    def as_dict(self) -> dict[str, object]:
        return {"total": self.total.as_dict(),
                "by_agent": [r.as_dict() for r in self.by_agent.values()],
                "by_type": [r.as_dict() for r in self.by_type.values()],
                "monthly": [p.as_dict() for p in self.monthly],
                "methodologies": [m.as_dict() for m in self.methodologies]}


def month_of(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m")


def decisive(transitions: Iterable[Transition]) -> dict[str, Transition]:
    """Each hypothesis's first transition with an outcome, by commit order."""
    out: dict[str, Transition] = {}
    for t in sorted(transitions, key=lambda t: t.seq):
        if t.outcome is not None and t.path not in out:
            out[t.path] = t
    return out


def track_records(transitions: Sequence[Transition], open_claims: Iterable[OpenClaim] = (),
                  methodologies: Iterable[tuple[str, str, int]] = ()) -> Reflection:
    """Track records per claimant agent and type, per month, and methodology reinforcement.

    `open_claims` are the open hypotheses at HEAD (from the queue); `methodologies` are
    (path, title, live facts citing it) from the index."""
    ref = Reflection()

    def rec(table: dict[str, TrackRecord], key: str | None) -> TrackRecord:
        k = key or UNKNOWN
        if k not in table:
            table[k] = TrackRecord(k)
        return table[k]

    months: dict[tuple[str, str, str], dict[str, int]] = {}
    for path, t in decisive(transitions).items():
        outcome = t.outcome
        assert outcome is not None
        ref.outcomes[path] = outcome
        for table, key in ((ref.by_agent, t.claimant), (ref.by_type, t.claimant_type)):
            rec(table, key).add(outcome)
        ref.total.add(outcome)
        month = month_of(t.time)
        for group, key in (("agent", t.claimant), ("type", t.claimant_type), ("all", "all")):
            counts = months.setdefault((month, group, key or UNKNOWN), {o: 0 for o in OUTCOMES})
            counts[outcome] += 1
    for claim in open_claims:
        if claim.path in ref.outcomes:
            continue
        for r in (rec(ref.by_agent, claim.claimant), rec(ref.by_type, claim.claimant_type),
                  ref.total):
            r.open += 1
            if claim.overdue:
                r.overdue += 1
    ref.monthly = [MonthPoint(m, g, k, c) for (m, g, k), c in sorted(months.items())]
    ref.by_agent = dict(sorted(ref.by_agent.items()))
    ref.by_type = dict(sorted(ref.by_type.items()))
    cited: dict[str, int] = {}
    for t in transitions:
        for m in t.methodologies:
            cited[m] = cited.get(m, 0) + 1
    rows = {path: (title, n) for path, title, n in methodologies}
    for path in set(cited) - set(rows):
        rows[path] = ("", 0)
    ref.methodologies = sorted(
        (Reinforcement(p, title, cited.get(p, 0), n) for p, (title, n) in rows.items()),
        key=lambda r: (-r.transitions, -r.citing, r.path))
    return ref
