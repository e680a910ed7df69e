"""Transitions as data, and the pure rules that classify one fact's change (FORMAT.md §6.7).

No I/O here: `factdesk.reflect.transitions` walks git and hands parsed `Fact`s to these
functions. Kinds follow knomit's `findHypothesisTransitions` plus factdesk's own:

* `promoted`           a hypothesis whose type changed in place (detail: the new type);
* `confidence-updated` a hypothesis whose confidence changed (type unchanged);
* `retracted`          a file deleted; `reason` is `confirmed` (a live observation cites the
                       hypothesis: knomit's collision path, §6.6), `refuted` (any other
                       hypothesis deletion except a review merge), `subsumed` (a hypothesis
                       removed by a review merge / dedup, §6.8) or `retracted` (not a hypothesis);
* `confirmed-by`       an observation added (or updated) so that it cites a hypothesis;
* `relabel`            any non-hypothesis fact whose type changed;
* `move`               any fact renamed (same file name, or same content).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace

from factdesk.model.enums import FactType
from factdesk.model.fact import Fact

PROMOTED = "promoted"
CONFIDENCE = "confidence-updated"
RETRACTED = "retracted"
CONFIRMED_BY = "confirmed-by"
RELABEL = "relabel"
MOVE = "move"
KINDS = (PROMOTED, CONFIDENCE, RETRACTED, CONFIRMED_BY, RELABEL, MOVE)

#: reasons of a `retracted` transition
CONFIRMED = "confirmed"
REFUTED = "refuted"
SUBSUMED = "subsumed"
PLAIN = "retracted"

_SUBSUMED_RE = re.compile(r"(?i)^dedup:|subsumed by|merged into")
_REFUTE_RE = re.compile(r"(?i)\brefut")
_SETTLES_LINE = re.compile(r"(?im)^\s*\**settles?\s+by\s+(\d{4}-\d{2}-\d{2})\**\s*[:.\-–—]?\s*(.*)$")


@dataclass(frozen=True, slots=True)
class Transition:
    """One detected change of one fact in one first-parent commit."""

    kind: str
    path: str  #: the fact (for hypothesis transitions: the hypothesis), as it was before
    sha: str
    seq: int  #: position of the commit on the first-parent chain (the root commit is 0)
    time: int  #: commit author time, seconds since the epoch
    author: str | None  #: the committing agent's id (registry, else `<id>+op@agents.knomit.io`)
    author_email: str
    from_type: str | None = None
    to_type: str | None = None
    old_value: str | None = None
    new_value: str | None = None
    new_path: str | None = None  #: moves: where the fact went
    reason: str | None = None  #: retractions: confirmed / refuted / subsumed / retracted
    confirming: str | None = None  #: the observation that confirms the hypothesis
    claimant: str | None = None  #: who made the claim (hypothesis transitions: its claimant)
    claimant_type: str | None = None
    title: str = ""
    methodologies: tuple[str, ...] = ()  #: methodology facts the transition fact cites (§5.5)
    subject: str = ""  #: the commit's subject line

    @property
    def hypothesis(self) -> bool:
        return self.from_type == FactType.HYPOTHESIS or self.kind == CONFIRMED_BY

    @property
    def outcome(self) -> str | None:
        """What this transition says about the prediction: promoted / confirmed / refuted /
        retracted, or None (a confidence change, or not a hypothesis)."""
        if self.kind == PROMOTED:
            return "promoted"
        if self.kind == CONFIRMED_BY:
            return "confirmed"
        if self.kind == RETRACTED and self.from_type == FactType.HYPOTHESIS:
            return {CONFIRMED: "confirmed", REFUTED: "refuted"}.get(self.reason or "", "retracted")
        return None

    def as_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["methodologies"] = list(self.methodologies)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Transition:
        fields = dict(data)
        found = fields.get("methodologies")
        fields["methodologies"] = tuple(str(m) for m in found) if isinstance(found, list | tuple) else ()
        return cls(**fields)  # type: ignore[arg-type]

    def key(self) -> tuple[str, str, str, str | None]:
        """Identity for comparisons: kind, fact path, commit, and the other path involved."""
        return (self.kind, self.path, self.sha, self.new_path or self.confirming)


@dataclass(frozen=True, slots=True)
class CommitInfo:
    sha: str
    seq: int
    time: int
    author: str | None
    author_email: str
    subject: str
    body: str = ""


@dataclass(frozen=True, slots=True)
class Claimant:
    agent: str | None = None
    type: str | None = None


def _base(kind: str, path: str, commit: CommitInfo, fact: Fact | None, claimant: Claimant,
          **kw: object) -> Transition:
    title = kw.pop("title", None) or (fact.title if fact else "")
    return Transition(kind=kind, path=path, sha=commit.sha, seq=commit.seq, time=commit.time,
                      author=commit.author, author_email=commit.author_email,
                      claimant=claimant.agent, claimant_type=claimant.type,
                      title=str(title), subject=commit.subject,
                      **kw)  # type: ignore[arg-type]


def fmt_confidence(value: float) -> str:
    return f"{value:g}"


def classify_modify(path: str, old: Fact, new: Fact, commit: CommitInfo, claimant: Claimant,
                    ) -> list[Transition]:
    """A file changed in place: promoted / confidence-updated for hypotheses, relabel otherwise."""
    if old.type == FactType.HYPOTHESIS:
        if new.type != old.type:
            return [_base(PROMOTED, path, commit, new, claimant, from_type=old.type, to_type=new.type,
                          old_value=old.type, new_value=new.type)]
        if new.confidence != old.confidence:
            return [_base(CONFIDENCE, path, commit, new, claimant, from_type=old.type,
                          to_type=new.type, old_value=fmt_confidence(old.confidence),
                          new_value=fmt_confidence(new.confidence))]
        return []
    if new.type != old.type:
        return [_base(RELABEL, path, commit, new, claimant, from_type=old.type, to_type=new.type,
                      old_value=old.type, new_value=new.type)]
    return []


def retract_reason(old: Fact, commit: CommitInfo, confirmed: bool) -> str:
    """Why a file was deleted, as far as git can tell (the manifest's categories)."""
    if old.type != FactType.HYPOTHESIS:
        return PLAIN
    if confirmed:
        return CONFIRMED
    message = f"{commit.subject}\n{commit.body}"
    if _SUBSUMED_RE.search(commit.subject) and not _REFUTE_RE.search(message):
        return SUBSUMED
    return REFUTED


def classify_delete(path: str, old: Fact, commit: CommitInfo, claimant: Claimant,
                    confirming: str | None) -> Transition:
    reason = retract_reason(old, commit, confirming is not None)
    return _base(RETRACTED, path, commit, old, claimant, from_type=old.type, to_type=None,
                 reason=reason, confirming=confirming if reason == CONFIRMED else None)


def classify_move(old_path: str, new_path: str, fact: Fact | None, commit: CommitInfo,
                  claimant: Claimant) -> Transition:
    typ = fact.type if fact else None
    return _base(MOVE, old_path, commit, fact, claimant, from_type=typ, to_type=typ,
                 old_value=old_path, new_value=new_path, new_path=new_path)


def confirmation(hypothesis: str, observation: Fact, commit: CommitInfo, claimant: Claimant,
                 hypothesis_title: str = "") -> Transition:
    return _base(CONFIRMED_BY, hypothesis, commit, None, claimant, from_type=FactType.HYPOTHESIS,
                 to_type=FactType.HYPOTHESIS, confirming=observation.path,
                 new_value=observation.path, title=hypothesis_title)


def confirms(fact: Fact) -> bool:
    """Can this fact confirm a hypothesis by citing it? An observation (knomit's collision
    writes the incoming non-hypothesis; factdesk's confirm writes an observation)."""
    return fact.type == FactType.OBSERVATION


def with_methodologies(t: Transition, methodologies: tuple[str, ...]) -> Transition:
    return replace(t, methodologies=methodologies) if methodologies else t


@dataclass(frozen=True, slots=True)
class Criterion:
    """A hypothesis's settlement criterion, wherever it is written."""

    settle_by: str | None = None
    settlement: str | None = None
    where: str = "none"  #: frontmatter / body / text (a number or observable, no date) / none
    line: int | None = None  #: 1-based line in the body of a 'Settles by' line


def criterion_of(fact: Fact, *, has_criterion: bool, settle_by: str | None) -> Criterion:
    """The criterion, given the model's verdicts (`rules.has_settlement_criterion`,
    `rules.settle_by_date`) so the queue and the checker agree."""
    env = fact.envelope
    if env.settle_by or env.settlement:
        return Criterion(env.settle_by or settle_by, env.settlement, "frontmatter")
    m = _SETTLES_LINE.search(fact.body)
    if m:
        line = fact.body[: m.start(1)].count("\n") + 1
        text = m.group(2).strip() or None
        return Criterion(m.group(1), text, "body", line)
    if has_criterion:
        return Criterion(settle_by, None, "text")
    return Criterion()


@dataclass(frozen=True, slots=True)
class State:
    """What the walker must remember between commits (and between incremental runs)."""

    #: live hypotheses, lower-cased path → path
    hypotheses: dict[str, str] = field(default_factory=dict)
    #: live methodology facts, lower-cased path → path
    methodologies: dict[str, str] = field(default_factory=dict)
    #: hypothesis path → live observations citing it (the confirmers)
    confirmers: dict[str, list[str]] = field(default_factory=dict)
    #: hypothesis path → e-mail of the commit that created it
    creators: dict[str, str] = field(default_factory=dict)
    #: hypothesis path → [claimant agent, claimant type, title] of its latest version
    claims: dict[str, list[str | None]] = field(default_factory=dict)
    #: live fact path → methodology facts it cites (only facts citing one)
    links: dict[str, list[str]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {"hypotheses": self.hypotheses, "methodologies": self.methodologies,
                "confirmers": self.confirmers, "creators": self.creators, "claims": self.claims,
                "links": self.links}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> State:
        def d(key: str) -> dict[str, object]:
            value = data.get(key) or {}
            return dict(value) if isinstance(value, dict) else {}

        return cls({k: str(v) for k, v in d("hypotheses").items()},
                   {k: str(v) for k, v in d("methodologies").items()},
                   {k: [str(x) for x in v] if isinstance(v, list) else []
                    for k, v in d("confirmers").items()},
                   {k: str(v) for k, v in d("creators").items()},
                   {k: [None if x is None else str(x) for x in v] if isinstance(v, list) else []
                    for k, v in d("claims").items()},
                   {k: [str(x) for x in v] if isinstance(v, list) else []
                    for k, v in d("links").items()})
