"""The settlement queue's data: every open hypothesis with its criterion, in work order, and
the facts that could settle one (read-only; the write actions live in the curation layer).

Order (issue 5, rule H1): overdue first (oldest due date first), then due later (soonest
first), then hypotheses with a criterion but no date, then those with no criterion at all
(their own group: the action there is to add one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import date
from typing import TYPE_CHECKING

from factdesk.index import reflect_reads
from factdesk.index.indexer import Indexer
from factdesk.index.rows import fact_from_row
from factdesk.index.search import cited_by
from factdesk.model.derivation import Standing, standing
from factdesk.model.enums import FactType
from factdesk.model.rules import has_settlement_criterion, settle_by_date
from factdesk.reflect.model import criterion_of

if TYPE_CHECKING:
    import sqlite3

OVERDUE = "overdue"
DUE = "due"
UNDATED = "undated"
NO_CRITERION = "no-criterion"
GROUPS = (OVERDUE, DUE, UNDATED, NO_CRITERION)

#: `similar(path)` → [(path, cosine)], best first: the semantic layer's near-duplicates
Similar = Callable[[str], Sequence[tuple[str, float]]]


@dataclass(frozen=True, slots=True)
class QueueItem:
    path: str
    title: str
    group: str  #: overdue / due / undated / no-criterion
    settle_by: str | None
    settlement: str | None
    criterion_in: str  #: frontmatter / body / text / none
    criterion_line: int | None  #: 1-based line in the file of a body 'Settles by' line
    days_left: int | None  #: negative when overdue
    claimant: str | None
    claimant_type: str | None
    confidence: float | None
    created_at: int | None
    created_sha: str | None

    @property
    def overdue(self) -> bool:
        return self.group == OVERDUE

    def as_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["overdue"] = self.overdue
        return out


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str
    title: str
    type: str | None
    cites: bool  #: its refs name the hypothesis
    score: float | None  #: similarity, when the semantic layer found it
    created_at: int | None
    after: bool | None  #: written after the hypothesis (None: unknown)
    kind: str | None = None
    #: its refs reach the hypothesis: a derivative of the prediction (model.derivation)
    derived: bool = False
    #: it may confirm the hypothesis (not derived, not a hypothesis, not pragmatic)
    eligible: bool = True
    why: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def judged(self, verdict: Standing) -> Candidate:
        return replace(self, derived=verdict.derived, eligible=verdict.eligible, why=verdict.why)


def _conn(source: Indexer | sqlite3.Connection) -> sqlite3.Connection:
    return source.connect(readonly=True) if isinstance(source, Indexer) else source


def _parse_day(value: str | None) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def _sort_key(item: QueueItem) -> tuple[int, str, str]:
    return (GROUPS.index(item.group), item.settle_by or "", item.path)


def queue_item(row: sqlite3.Row, today: date) -> QueueItem | None:
    """One hypothesis row as a queue item (None when the row is not a readable hypothesis)."""
    fact = fact_from_row(row)
    if fact is None or fact.type != FactType.HYPOTHESIS:
        return None
    has = has_settlement_criterion(fact)
    crit = criterion_of(fact, has_criterion=has, settle_by=settle_by_date(fact))
    due = _parse_day(crit.settle_by)
    if due is not None:
        group = OVERDUE if due < today else DUE
    elif crit.where == "frontmatter" and crit.settle_by:
        group = UNDATED  # a settle_by that is not an ISO date: the checker reports it
    else:
        group = UNDATED if crit.where != "none" else NO_CRITERION
    line = _body_line(row, crit.line) if crit.line is not None else None
    return QueueItem(
        path=fact.path, title=fact.title, group=group, settle_by=crit.settle_by,
        settlement=crit.settlement, criterion_in=crit.where, criterion_line=line,
        days_left=(due - today).days if due else None,
        claimant=row["claimant"], claimant_type=row["claimant_type"],
        confidence=fact.confidence, created_at=row["created_at"], created_sha=row["created_sha"])


def _body_line(row: sqlite3.Row, body_line: int) -> int:
    """The file line of the body's `body_line`-th line: the body is the text after the title
    line with leading blank lines stripped (codec), so count them back from the title."""
    title_line = int(row["title_line"] or 1)
    return title_line + 1 + body_line  # one blank line after the title, knomit's layout


def open_hypotheses(source: Indexer | sqlite3.Connection, today: date | None = None
                    ) -> list[QueueItem]:
    """Every live hypothesis at HEAD (the index), overdue first, then by due date; undated
    criteria next; no criterion at all last."""
    today = today or date.today()
    conn = _conn(source)
    rows = reflect_reads.live_hypotheses(conn)
    items = [item for item in (queue_item(row, today) for row in rows) if item is not None]
    return sorted(items, key=_sort_key)


def candidates(conn: sqlite3.Connection | Indexer, hypothesis_path: str,
               similar: Similar | None = None, *, limit: int = 20) -> list[Candidate]:
    """Facts that could settle the hypothesis: live facts citing it, and — given the semantic
    layer's `similar` — near-duplicate observations written after it (rule R4), with score.
    Each is judged (`model.derivation.standing`): one whose refs reach the hypothesis is its
    derivative and cannot confirm it, nor can a hypothesis or a pragmatic fact; they are
    listed all the same, marked, with why. Eligible ones first, then citing facts, then by
    score; a fact both citing and similar appears once."""
    conn = _conn(conn)
    hyp = reflect_reads.fact_brief(conn, hypothesis_path)
    born = hyp["created_at"] if hyp else None
    found: dict[str, Candidate] = {}
    for row in cited_by(conn, hypothesis_path):
        if row["path"] == hypothesis_path or row["status"] != "live":
            continue
        found[row["path"]] = Candidate(row["path"], row["title"], row["type"], True, None,
                                       row["created_at"], _after(row["created_at"], born),
                                       kind=row["kind"])
    if similar is not None:
        for path, score in similar(hypothesis_path):
            if path == hypothesis_path:
                continue
            brief = reflect_reads.fact_brief(conn, path)
            if brief is None or brief["status"] != "live":
                continue
            prev = found.get(path)
            if prev is not None:
                found[path] = replace(prev, score=float(score))
                continue
            after = _after(brief["created_at"], born)
            if brief["type"] != FactType.OBSERVATION or after is False:
                continue
            found[path] = Candidate(brief["path"], brief["title"], brief["type"], False, float(score),
                                    brief["created_at"], after, kind=brief["kind"])
    refs, titles = reflect_reads.refs_toward(conn, hypothesis_path)
    judged = [c.judged(standing(c.path, hypothesis_path, refs, type_=c.type, kind=c.kind,
                                cites=c.cites, titles=titles)) for c in found.values()]
    ranked = sorted(judged, key=lambda c: (not c.eligible, not c.cites, -(c.score or 0.0), c.path))
    return ranked[:limit]


def _after(created: int | None, born: int | None) -> bool | None:
    if created is None or born is None:
        return None
    return created >= born


def methodology_counts(conn: sqlite3.Connection | Indexer) -> list[tuple[str, str, int]]:
    """(path, title, live facts citing it) for every live methodology fact (§5.5)."""
    return reflect_reads.methodology_citations(_conn(conn))
