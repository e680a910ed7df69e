"""Pure helpers behind the Transitions tab's charts and the inspector's track-record line
(no Qt): how an agent's predictions turned out, the segments of a track-record bar, the
decisive outcomes bucketed over time, and the words of a transitions row."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from factdesk.model.words import count
from factdesk.reflect.model import CONFIRMED_BY, MOVE, Transition
from factdesk.reflect.stats import OUTCOMES, UNKNOWN, Reflection, TrackRecord, decisive, month_of

#: the periods a chart of outcomes over time may use ("auto": the first that gives enough)
BUCKETS = ("auto", "month", "week", "day")
MIN_BUCKETS = 4


def track_record_line(reflection: Reflection | None, agent_id: str | None) -> str | None:
    """One line on how an agent's predictions turned out, for the inspector, e.g.
    "codex: 12 predictions — 7 confirmed, 2 refuted, 1 retracted, 2 open (1 overdue); 78% held".
    None when the agent made no predictions (or there is no reflection yet)."""
    if reflection is None or not agent_id:
        return None
    r = reflection.by_agent.get(agent_id)
    if r is None:
        return None
    total = r.settled + r.open
    if total == 0:
        return None
    parts = [f"{getattr(r, o)} {o}" for o in ("confirmed", "promoted", "refuted", "retracted")
             if getattr(r, o)]
    if r.open:
        parts.append(f"{r.open} open" + (f" ({r.overdue} overdue)" if r.overdue else ""))
    line = f"{agent_id}: {count(total, 'prediction')} — {', '.join(parts)}"
    if r.hit_rate is not None:
        line += f"; {r.hit_rate:.0%} held"
    return line


def segment_counts(record: TrackRecord) -> dict[str, int]:
    """The stacked segments of one bar: the four outcomes, open-overdue, open-not-yet-due."""
    out = {o: getattr(record, o) for o in OUTCOMES}
    out["overdue"] = record.overdue
    out["pending"] = record.open - record.overdue
    return out


def bucket_of(ts: int, bucket: str) -> str:
    """The period of a commit time (UTC, like `stats.month_of`): YYYY-MM, YYYY-Www, YYYY-MM-DD."""
    if bucket == "month":
        return month_of(ts)
    moment = datetime.fromtimestamp(ts, UTC)
    if bucket == "week":
        year, week, _ = moment.isocalendar()
        return f"{year}-W{week:02d}"
    return moment.strftime("%Y-%m-%d")


def outcomes_over_time(transitions: Sequence[Transition], bucket: str = "auto",
                       group: str = "all", key: str = "all") -> tuple[str, list[tuple[str, dict[str, int]]]]:
    """(bucket used, [(period, outcome counts)]) of each hypothesis's decisive outcome
    (`stats.decisive`, as the track records count them), for all claimants or one claimant
    agent / type. With `bucket` "auto": months, else weeks, else days, whichever first gives
    at least MIN_BUCKETS periods. Periods without outcomes are left out."""
    chosen = list(decisive(transitions).values())
    if group != "all":
        chosen = [t for t in chosen
                  if ((t.claimant if group == "agent" else t.claimant_type) or UNKNOWN) == key]
    times = [t.time for t in chosen]
    if bucket == "auto":
        bucket = "day"
        for candidate in ("month", "week"):
            if len({bucket_of(ts, candidate) for ts in times}) >= MIN_BUCKETS:
                bucket = candidate
                break
    table: dict[str, dict[str, int]] = {}
    for t in chosen:
        counts = table.setdefault(bucket_of(t.time, bucket), {o: 0 for o in OUTCOMES})
        counts[t.outcome or "retracted"] += 1
    return bucket, sorted(table.items())


def period_label(period: str, bucket: str, count: int) -> str:
    """A short axis label: weeks as W07, days as MM-DD, months as YYYY-MM (YY-MM when many)."""
    if bucket == "week":
        return period[5:]
    if bucket == "day":
        return period[5:]
    return period[2:] if count > 8 else period


def outcome_text(t: Transition) -> str:
    """The 'Outcome / change' cell."""
    if t.kind == MOVE:
        return f"→ {t.new_path or ''}"
    if t.reason:
        return t.reason
    if t.kind == CONFIRMED_BY:
        return "confirmed"
    if t.old_value is not None or t.new_value is not None:
        return f"{t.old_value or '?'} → {t.new_value or '?'}"
    return t.outcome or ""


def target_path(t: Transition) -> str:
    """The fact a row opens: where a moved fact went, else the transition's fact."""
    return t.new_path or t.path
