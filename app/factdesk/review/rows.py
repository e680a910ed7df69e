"""The review queue as rows, and what each row's checks found (issue 24): the rules the
Proposals tab and `factdesk proposals` share. Pure: records in, records out.

- `unique`: each agent commit once (a local branch and its remote-tracking twin hold the
  same commits; the first read, the local one, keeps it); `waiting` counts the open ones.
- `rows`: the queue per commit (one row a proposal) or per fact (one row a fact a branch
  changes: the proposals touching it, its status aggregated, the branch's net change; a
  fact the branch leaves as it was — added, then deleted again — is no row).
- `findings`: what a row's checks say, counted — ✗ errors and ⚠ warnings the proposal would
  bring (problems the curated version has already are not its own), ⇄ a conflict with
  the curated branch, ↳ building on an open proposal that stays open (`review.clean`'s
  verdict: the one definition of clean). `matches` filters by them, `rank` orders
  them (the worst first).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from factdesk.review import clean
from factdesk.review.model import Proposal, ProposedFact, Queue

COMMIT = "commit"
FACT = "fact"
#: the status filter's choices (`wanted`)
STATUSES = ("open", "accepted", "rejected", "partial", "all")
#: the findings filter's choices (`matches`): any row, a kind of finding, any problem, none
FINDING_FILTERS = ("any", "error", "warning", "conflict", "depends", "problem", "clean")


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the queue: a proposal (per commit) or one fact of a branch (per fact)."""

    key: tuple[str, ...]
    branch: str
    #: the proposals a decision on this row takes (per fact: the open ones touching it)
    shas: tuple[str, ...]
    #: per fact: the fact; per commit: None (a decision takes the whole commit)
    path: str | None
    status: str
    #: per fact: the branch's net change to it (added, modified, deleted); per commit: ""
    change: str = ""


@dataclass(frozen=True, slots=True)
class Findings:
    """What a row's checks found, counted (`findings`)."""

    errors: int = 0
    warnings: int = 0
    conflict: bool = False
    #: it builds on an open proposal that stays open (`review.clean.DEPENDS`)
    depends: bool = False
    #: some of its facts are not checked yet
    unchecked: bool = False
    #: the codes of the errors, sorted
    codes: tuple[str, ...] = ()
    #: the row's verdict for "Accept all clean" (`review.clean`: CLEAN, OUTSIDE …; "" for
    #: a row with none: decided, or not read yet)
    verdict: str = ""

    @property
    def clean(self) -> bool:
        """Accept all clean takes it (`review.clean`, the one definition); a row without a
        verdict: checked, and nothing found."""
        if self.verdict:
            return self.verdict == clean.CLEAN
        return not self.problem and not self.unchecked

    @property
    def problem(self) -> bool:
        """Anything a curator should look at before accepting."""
        return bool(self.errors or self.warnings or self.conflict or self.depends)

    def rank(self) -> int:
        """The worse, the lower: errors, conflicts, depends, warnings, then the rest
        (unchecked last but one, clean last)."""
        if self.errors:
            return 0
        if self.conflict:
            return 1
        if self.depends:
            return 2
        if self.warnings:
            return 3
        return 4 if self.unchecked else 5

    def as_dict(self) -> dict[str, object]:
        return {"errors": self.errors, "warnings": self.warnings, "conflict": self.conflict,
                "depends": self.depends, "checked": not self.unchecked,
                "codes": list(self.codes), "clean": self.clean}


def unique(queue: Queue | None) -> list[Proposal]:
    """The queue's proposals, each agent commit once, in queue order."""
    if queue is None:
        return []
    seen: set[str] = set()
    out = []
    for p in queue.proposals:
        if p.sha not in seen:
            seen.add(p.sha)
            out.append(p)
    return out


def waiting(queue: Queue | None, pending: Iterable[str] = ()) -> int:
    """How many proposals wait for a decision (open or partly decided), those in
    `pending` (a decision on its way) left out."""
    busy = set(pending)
    return sum(p.status in ("open", "partial") and p.sha not in busy for p in unique(queue))


def with_checks(checked: Proposal | None, current: Proposal) -> Proposal:
    """`current` (its branch and status as the newest queue read gave them) with the
    problems a check found for the same commit."""
    if checked is None:
        return current
    statuses = {f.path: f.status for f in current.facts}
    return replace(current, facts=tuple(replace(f, status=statuses.get(f.path, f.status))
                                        for f in checked.facts))


def fact_status(proposal: Proposal, fact: ProposedFact) -> str:
    """One fact's status: its own decision, else its proposal's (partial: still open)."""
    if fact.status != "open":
        return fact.status
    return "open" if proposal.status == "partial" else proposal.status


def wanted(status: str, choice: str) -> bool:
    """Whether a row of `status` is shown under the status filter `choice`."""
    if choice == "all":
        return True
    if choice == "open":
        return status in ("open", "partial")
    return status == choice


def shown(queue: Queue | None, branch: str | None, checked: Mapping[str, Proposal]
          ) -> list[Proposal]:
    """The proposals of `branch` (None: every branch, each commit once), with their checks
    once known."""
    if queue is None:
        return []
    source = unique(queue) if branch is None else [p for p in queue.proposals if p.branch == branch]
    return [with_checks(checked.get(p.sha), p) for p in source]


def net_change(queue: Queue | None, branch: str, path: str | None) -> str | None:
    """What the branch as a whole does to `path` (None: nothing, or not known)."""
    if queue is None or path is None:
        return None
    return next((n.change for n in queue.net.get(branch, ()) if n.path == path), None)


def rows(queue: Queue | None, proposals: Sequence[Proposal], *, mode: str = COMMIT,
         status: str = "open") -> list[Row]:
    """The queue's rows (module doc) under the status filter `status`."""
    if mode == COMMIT:
        return [Row(("c", p.sha), p.branch, (p.sha,), None, p.status)
                for p in proposals if wanted(p.status, status)]
    groups: dict[tuple[str, str], list[tuple[Proposal, ProposedFact]]] = {}
    for p in proposals:
        for f in p.facts:
            groups.setdefault((p.branch, f.path), []).append((p, f))
    nets = {b: {n.path: n.change for n in facts} for b, facts in (queue.net if queue else {}).items()}
    out = []
    for (branch, path), members in groups.items():
        net = nets.get(branch)
        if net is not None and path not in net:
            continue  # the branch leaves it as it was (added, then deleted again)
        statuses = [fact_status(p, f) for p, f in members]
        agg = "open" if "open" in statuses else statuses[-1]
        if not wanted(agg, status):
            continue
        shas = tuple(p.sha for p, f in members if fact_status(p, f) == "open") or \
            tuple(p.sha for p, _f in members)
        change = (net or {}).get(path) or members[-1][1].change
        out.append(Row(("f", branch, path), branch, shas, path, agg, change))
    return out


def row_facts(row: Row, by_sha: Mapping[str, Proposal]) -> list[ProposedFact]:
    """The facts a row stands for: its proposal's (per commit), or that fact in each of
    its proposals (per fact)."""
    return [f for sha in row.shas if sha in by_sha for f in by_sha[sha].facts
            if row.path is None or f.path == row.path]


def still_open(queue: Queue, key: tuple[str, ...]) -> bool:
    """Whether the row `key` still waits for a decision in `queue` (a decision's row is
    done once the queue read after it says so)."""
    if key[0] == "c":
        return any(p.status in ("open", "partial") for p in queue.proposals if p.sha == key[1])
    return any(p.branch == key[1] and f.path == key[2] and fact_status(p, f) == "open"
               for p in queue.proposals for f in p.facts)


def verdict_of(verdicts: Mapping[str, clean.Verdict], shas: Sequence[str]) -> clean.Verdict | None:
    """A row's verdict: the first of its proposals' that is not clean, else a clean one
    (None while one of them has none: not read yet, or decided)."""
    found = [verdicts.get(sha) for sha in shas]
    if not found or any(v is None for v in found):
        return None
    return next((v for v in found if v is not None and not v.clean), found[0])


def findings(facts: Sequence[ProposedFact], verdict: clean.Verdict | None = None) -> Findings:
    """What the checks of `facts` found (a proposal's, or one fact's), with the row's
    clean verdict for what the facts alone do not say (depends, a conflict with what the
    clean ones before leave)."""
    new = [p for f in facts for p in (f.problems or ()) if p.new]
    errors = [p for p in new if p.severity == "error"]
    kind = verdict.kind if verdict is not None else ""
    return Findings(
        errors=len(errors), warnings=sum(p.severity == "warning" for p in new),
        conflict=any(f.conflict for f in facts) or kind == clean.CONFLICT,
        depends=kind == clean.DEPENDS,
        unchecked=any(f.problems is None and f.change != "deleted" for f in facts),
        codes=tuple(sorted({p.code for p in errors})), verdict=kind)


def matches(found: Findings, choice: str) -> bool:
    """Whether a row with `found` is shown under the findings filter `choice`."""
    if choice == "error":
        return found.errors > 0
    if choice == "warning":
        return found.warnings > 0
    if choice == "conflict":
        return found.conflict
    if choice == "depends":
        return found.depends
    if choice == "problem":
        return found.problem
    if choice == "clean":
        return found.clean
    return True


def worst_first(items: Sequence[Row], found: Mapping[tuple[str, ...], Findings]) -> list[Row]:
    """The rows, the worst findings first (`Findings.rank`), queue order within a rank."""
    return sorted(items, key=lambda r: found[r.key].rank() if r.key in found else 4)
