"""Attributed recall (issue 17): what a downstream agent is shown for one fact.

Pure. Each fact is rendered through the authority table (`model.authority`): plain only
for ground truth — a user's assertion about themself, or a person's claim a curator has
attested as it stands — and attributed otherwise ("claude-code (tool) observed: …",
"codex (tool) reports: …"). Hypotheses are marked as open guesses with their settle-by,
syntheses carry their sources and evidence weight, and a stale recorded weight, a breach
of the rules or a combination the table forbids is said after the sentence.

No path here renders a claim whose claimant is not a person (`user`) without its
attribution, and none renders a claim about a subject other than the claimant's own self
plain unless a curator attested it (tests/model/test_recall.py checks both over generated
envelopes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from factdesk.model.authority import Authority, attribution, authority, forbidden_reason
from factdesk.model.enums import ClaimantType, ClaimType
from factdesk.model.messages import Message
from factdesk.model.weight import is_stale


@dataclass(frozen=True, slots=True)
class RecallFact:
    """The fields of a live fact that recall renders (an index row, or a parsed fact)."""

    id: int | None
    path: str
    title: str
    type: str | None
    claim_type: str | None
    claimant: str | None = None
    claimant_type: str | None = None
    subject_kind: str | None = None
    subject_ref: str | None = None
    settle_by: str | None = None
    settlement: str | None = None
    sources: int | None = None
    refs: tuple[str, ...] = ()
    evidence_weight: float | None = None
    evidence_weight_computed: float | None = None
    #: the codes of the rules the fact breaks (errors)
    breaches: tuple[str, ...] = ()
    #: who attested the fact as it is now (its current blob), if a curator did
    attested_by: str | None = None


@dataclass(frozen=True, slots=True)
class Recalled:
    """One recall result: the fact's identity, its envelope and the rendered sentence."""

    id: int | None
    path: str
    title: str
    type: str | None
    claimant: str | None
    claimant_type: str | None
    subject_kind: str | None
    claim_type: str | None
    ground_truth: bool
    text: str
    notes: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, object]:
        """The JSON shape of `factdesk recall --format json` (issue 17)."""
        return {"id": self.id, "path": self.path, "title": self.title, "type": self.type,
                "claimant": self.claimant, "claimant_type": self.claimant_type,
                "subject_kind": self.subject_kind, "claim_type": self.claim_type,
                "ground_truth": self.ground_truth, "text": self.text}


def is_ground_truth(fact: RecallFact) -> bool:
    """Plain, unattributed: the table's ground truth (a user asserting about themself), or
    a person's claim (claimant type `user`) that a curator attested as it stands. An
    agent's claim is never ground truth, attested or not: it is shown as theirs; nor is a
    fact breaking rule A1 (an agent writing as the user is a claimant mismatch)."""
    if not (fact.claimant_type and fact.subject_kind) or "A1" in fact.breaches:
        return False  # (A1: the authority rule, or a claimant the commit's author belies)
    claim = fact.claim_type or ClaimType.LEGACY
    verdict = authority(fact.claimant_type, fact.subject_kind, claim)
    if verdict is Authority.GROUND_TRUTH:
        return True
    return (fact.attested_by is not None and fact.claimant_type == ClaimantType.USER
            and verdict is not Authority.FORBIDDEN and claim != ClaimType.LEGACY)


def render(fact: RecallFact, *, today: date | None = None) -> Recalled:
    """The attributed sentence for one fact, with its marks."""
    claim = fact.claim_type or ClaimType.LEGACY
    title = " ".join(fact.title.split()) or fact.path
    truth = is_ground_truth(fact)
    if truth:
        sentence = title
    else:
        sentence = attribution(title, claimant=fact.claimant, claimant_type=fact.claimant_type,
                               subject_kind=None, claim_type=claim)
    notes: list[str] = []
    if fact.type == "hypothesis" or claim == ClaimType.HYPOTHESIS:
        notes.append(_open_guess(fact, today))
    if fact.type == "synthesis" or claim == ClaimType.SYNTHESIS:
        notes.append(_synthesis(fact))
    if is_stale(fact.evidence_weight, fact.evidence_weight_computed):
        notes.append(f"stale evidence weight: recorded {_num(fact.evidence_weight)}, "
                     f"{_num(fact.evidence_weight_computed)} computed now")
    if fact.claimant_type and fact.subject_kind and (
            why := forbidden_reason(fact.claimant_type, fact.subject_kind, claim)):
        notes.append(f"breaks the authority table: {why}")
    if fact.breaches:
        notes.append(f"breaks rules {', '.join(sorted(set(fact.breaches)))}")
    if truth and fact.attested_by and authority(
            fact.claimant_type or "", fact.subject_kind or "", claim) is not Authority.GROUND_TRUTH:
        notes.append(f"attested by {fact.attested_by}")
    text = sentence + "".join(f" [{n}]" for n in notes)
    return Recalled(fact.id, fact.path, fact.title, fact.type, fact.claimant, fact.claimant_type,
                    fact.subject_kind, fact.claim_type, truth, text, tuple(notes))


def _open_guess(fact: RecallFact, today: date | None) -> str:
    out = "open guess"
    if fact.settle_by:
        out += f", to settle by {fact.settle_by}"
        try:
            if today is not None and date.fromisoformat(fact.settle_by) < today:
                out += " (overdue)"
        except ValueError:
            pass
    else:
        out += ", no settle-by date"
    if fact.settlement:
        out += f": {' '.join(fact.settlement.split())}"
    return out


def _synthesis(fact: RecallFact) -> str:
    """What the corpus wrote (`sources: N`) and what the fact cites (its refs), each said as
    such: a synthesis whose count and refs differ must not read as a contradiction."""
    shown = ", ".join(fact.refs[:5]) + (f", +{len(fact.refs) - 5} more" if len(fact.refs) > 5 else "")
    cites = f"{len(fact.refs)} ref{'s' if len(fact.refs) != 1 else ''}"
    if fact.sources is None or fact.sources == len(fact.refs):
        n = len(fact.refs) if fact.sources is None else fact.sources
        out = f"synthesis of {n} source{'s' if n != 1 else ''}"
        if fact.refs:
            out += f" ({shown})"
    else:
        out = f"synthesis; the corpus records sources: {fact.sources}; it cites {cites}"
        if fact.refs:
            out += f" ({shown})"
    weight = fact.evidence_weight if fact.evidence_weight is not None else fact.evidence_weight_computed
    out += f", evidence weight {_num(weight)}"
    return out


def _num(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.2f}"


def render_message(message: Message) -> Recalled:
    """A message in recall (`--include-agent-comm`): always attributed, never ground truth."""
    to = ", ".join(message.to) or "nobody"
    line = message.first_line or message.context_explanation or "(empty)"
    text = (f"{message.sender or 'unknown agent'} wrote to {to} ({message.sent}, "
            f"{message.delivery or 'no delivery state'}): {' '.join(line.split())}")
    if message.referenced_memory_ids:
        text += f" [about {', '.join(message.referenced_memory_ids[:5])}]"
    return Recalled(None, message.path, line, "message", message.sender or None, None, None, None,
                    False, text)


def markdown(results: Sequence[Recalled], query: str) -> str:
    """The markdown a downstream agent reads."""
    if not results:
        return f"No curated memory matches `{query}`.\n"
    lines = [f"Curated memory for `{query}` ({len(results)} result"
             f"{'s' if len(results) != 1 else ''}; attributed unless ground truth):", ""]
    lines += [f"- {r.text} (`{r.path}`)" for r in results]
    return "\n".join(lines) + "\n"


def from_row(row: Mapping[str, object], *, breaches: Sequence[str] = (),
             attested_by: str | None = None, refs: Sequence[str] = ()) -> RecallFact:
    """A `RecallFact` from an index row (a mapping with the facts table's columns)."""
    def s(key: str) -> str | None:
        value = row[key]
        return None if value is None else str(value)

    def f(key: str) -> float | None:
        value = row[key]
        return None if value is None else float(value)  # type: ignore[arg-type]

    sources = row["sources"]
    return RecallFact(
        id=int(row["id"]) if row["id"] is not None else None,  # type: ignore[call-overload]
        path=str(row["path"]), title=str(row["title"]), type=s("type"),
        claim_type=s("claim_type"), claimant=s("claimant"), claimant_type=s("claimant_type"),
        subject_kind=s("subject_kind"), subject_ref=s("subject_ref"), settle_by=s("settle_by"),
        settlement=s("settlement"),
        sources=int(sources) if sources is not None else None,  # type: ignore[call-overload]
        refs=tuple(refs), evidence_weight=f("evidence_weight"),
        evidence_weight_computed=f("evidence_weight_computed"), breaches=tuple(breaches),
        attested_by=attested_by)
