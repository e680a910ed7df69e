"""The checker: DESIGN.md §3's rules as functions over facts, like a type checker.

Every finding is a `Problem` with a stable code. Codes:

    R1  error    a synthesis cites a hypothesis or a pragmatic fact
    R2  warning  recorded evidence weight differs from the weight computed now (stale)
    R3  error    a discovered fact cites a discovered fact
    H1  warning  a hypothesis with no settlement criterion, or past its settle_by date
    A1  error    the authority table forbids the envelope; a persona without refs;
                 the claimant disagrees with the registry and the commit author
    E1  error/warning  envelope values unknown or inconsistent with the type (§13)
    ref-*  warning     refs to retracted or never-written facts, self-references, bad shapes
    sources-zero warning  a fact that adds nothing to any evidence weight
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date

from factdesk.model.authority import forbidden_reason
from factdesk.model.enums import (
    ClaimantType,
    ClaimType,
    FactType,
    Kind,
    Origin,
    Severity,
    SubjectKind,
    legal_claim_types_for_type,
)
from factdesk.model.fact import Fact, Problem
from factdesk.model.refs import (
    DRIVE_RE,
    RefKind,
    RepoIds,
    classify_ref,
    local_targets,
    uncontained,
)
from factdesk.model.registry import Registry, agent_id_from_email
from factdesk.model.weight import evidence_weight, is_stale
from factdesk.model.words import an

_DATE_RE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_SETTLES_RE = re.compile(r"(?im)^\s*\**settles?\s+by\s+(\d{4}-\d{2}-\d{2})")
_MONTHS = ("jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
           "sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?")
#: a date: ISO, a month and a year, a quarter
_DATE_CRITERION = re.compile(rf"(?i)\b(\d{{4}}-\d{{2}}-\d{{2}}|(?:{_MONTHS})\.?\s+\d{{4}}|"
                             r"q[1-4]\s+\d{4}|\d{1,2}\s+(?:" + _MONTHS + r")\.?\s+\d{4})\b")
_NUMBER = r"\d+(?:[.,]\d+)?"
_UNITS = ("%|percent|x|×|ms|msec|milliseconds?|s|secs?|seconds?|min|mins|minutes?|h|hrs?|hours?|"
          "days?|weeks?|months?|years?|[kmgt]i?b|bytes?|kb|mb|gb|tb|rps|qps|tps|req(?:uest)?s?|"
          "tokens?|calls?|clients?|users?|connections?|errors?|failures?|retries|runs?|times|"
          "facts?|commits?|lines?|files?|points?|pp|sigma|σ")
#: a threshold: a number after a comparison, or a number with a unit
_THRESHOLD = re.compile(
    r"(?i)(?:[<>≤≥]=?|\b(?:more|fewer|less|greater|higher|lower)\s+than|\bat\s+(?:least|most)|"
    r"\b(?:above|below|under|over|exceeds?|within|drops?\s+(?:to|below)|rises?\s+(?:to|above)|"
    rf"reach(?:es)?)\b)\s*~?\s*{_NUMBER}|(?<![\w.]){_NUMBER}\s?(?:{_UNITS})(?![\w])")
#: a named observable: a percentile, an explicit label (`observable:`, `metric:`), or an
#: observation made the condition (`if … is measured`, `watch for`); a bare "latency" or
#: "measured" in the prose is none
_OBSERVABLE = re.compile(
    r"(?i)\bp(?:50|90|95|99|999)\b|\b(?:observable|metric|signal)\s*:|\bwatch\s+for\b|"
    r"\b(?:if|unless|when|once)\b[^.?!\n]{0,80}?\b(?:observed|measured|reproduced|seen)\b")
_CRITERION_WORDS = re.compile(r"(?i)\b(settles? by|falsif\w*|settlement|criterion|refuted if|confirmed if)\b")


@dataclass(frozen=True)
class CheckContext:
    """What the rules may look at besides the fact itself. Pure data, no I/O."""

    facts: Mapping[str, Fact]
    repo_id: RepoIds = None
    registry: Registry = field(default_factory=Registry)
    today: date = field(default_factory=date.today)
    #: last live versions of facts deleted in history (retracted), by lower-case path
    retracted: Mapping[str, Fact] = field(default_factory=dict)
    #: whether git history was read: only then can a missing ref target be called "never written"
    history_known: bool = False
    #: author e-mail of the commit that created each path (non-merge, oldest)
    creators: Mapping[str, str] = field(default_factory=dict)
    #: for a synthesis path: {cited path: type of the cited fact when the synthesis was written}
    cited_types_then: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def lookup(self, path: str) -> Fact | None:
        return self.facts.get(path)

    def lookup_any(self, path: str) -> Fact | None:
        return self.facts.get(path) or self.retracted.get(path)


def is_iso_date(text: str) -> bool:
    """`YYYY-MM-DD` naming a day that exists (not `2024-02-30`: RELIABILITY B07)."""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def read_settle_answer(text: str) -> tuple[str | None, str | None]:
    """A curator's one answer to "a new settle-by date or criterion": (settle_by,
    settlement). Text shaped like a date is a date, written `YYYY-MM-DD` (`2027-3-1` →
    `2027-03-01`), and a ValueError when no such day exists: a mistyped date must never
    replace the criterion as if it were one."""
    text = text.strip()
    shaped = re.fullmatch(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})", text)
    if shaped is None:
        return None, text
    try:
        day = date(int(shaped[1]), int(shaped[2]), int(shaped[3]))
    except ValueError:
        raise ValueError(f"{text} is not a day that exists (write the date as YYYY-MM-DD)") from None
    return day.isoformat(), None


def settle_by_date(fact: Fact) -> str | None:
    """The settlement date: frontmatter `settle_by`, else a 'Settles by DATE' body line."""
    if fact.envelope.settle_by:
        return fact.envelope.settle_by
    m = _SETTLES_RE.search(fact.body)
    return m.group(1) if m else None


def has_settlement_criterion(fact: Fact) -> bool:
    """A falsifiable criterion: a date, a threshold (a number) or a named observable."""
    if fact.envelope.settle_by or fact.envelope.settlement:
        return True
    return criterion_in_text(f"{fact.title}\n{fact.body}")


def criterion_in_text(text: str) -> bool:
    """A criterion written knomit-style in the prose: 'settles by', 'falsified if', …, a
    date, a threshold (a number with a comparison or a unit: `< 200 ms`, `at least 3`,
    `40 %`, `10x`) or a named observable (`p95 latency`, `error rate`, `measured`). A bare
    digit is none: "PR10", "v2", "3 agents said so"."""
    return bool(_CRITERION_WORDS.search(text) or _DATE_CRITERION.search(text)
                or _THRESHOLD.search(text) or _OBSERVABLE.search(text))


def check_fact(fact: Fact, ctx: CheckContext) -> list[Problem]:
    """All rule findings for one well-formed fact."""
    out: list[Problem] = []
    for rule in _FACT_RULES:
        out.extend(rule(fact, ctx))
    return out


def _p(fact: Fact, key: str, code: str, sev: Severity, msg: str) -> Problem:
    line = fact.line_of(key) if key != "title" else fact.title_line
    return Problem(fact.path, line, code, sev, msg)


def _r1(fact: Fact, ctx: CheckContext) -> Iterable[Problem]:
    if fact.type != FactType.SYNTHESIS:
        return
    then = ctx.cited_types_then.get(fact.path, {})
    for target in _local(fact, ctx):
        cited = ctx.lookup_any(target)
        types = {t for t in (cited.type if cited else None, then.get(target)) if t}
        if FactType.HYPOTHESIS in types:
            when = "" if cited and cited.type == FactType.HYPOTHESIS else " (when it was written)"
            yield _p(fact, "refs", "R1", Severity.ERROR,
                     f"synthesis cites hypothesis {target}{when}: hypotheses never seed synthesis")
        elif cited is not None and cited.kind == Kind.PRAGMATIC:
            yield _p(fact, "refs", "R1", Severity.ERROR,
                     f"synthesis cites pragmatic {cited.type} {target}: "
                     "pragmatic facts never seed synthesis")


def _r2(fact: Fact, ctx: CheckContext) -> Iterable[Problem]:
    if fact.evidence_weight is None:
        return
    computed = evidence_weight(fact, ctx.lookup, ctx.repo_id)
    if is_stale(fact.evidence_weight, computed):
        yield _p(fact, "evidence_weight", "R2", Severity.WARNING,
                 f"evidence weight is stale: recorded {fact.evidence_weight:.6g}, "
                 f"computed now {computed:.6g}")


def _r3(fact: Fact, ctx: CheckContext) -> Iterable[Problem]:
    if fact.resolved_origin != Origin.DISCOVERED:
        return
    for target in _local(fact, ctx):
        cited = ctx.lookup_any(target)
        if cited is not None and cited.resolved_origin == Origin.DISCOVERED:
            yield _p(fact, "refs", "R3", Severity.ERROR,
                     f"discovered fact cites discovered fact {target}: "
                     "discovered facts never seed discovery")


def _h1(fact: Fact, ctx: CheckContext) -> Iterable[Problem]:
    if fact.type != FactType.HYPOTHESIS:
        return
    if not has_settlement_criterion(fact):
        yield _p(fact, "type", "H1", Severity.WARNING,
                 "hypothesis has no settlement criterion (a date, a threshold or an observable)")
        return
    due = settle_by_date(fact)
    if due and is_iso_date(due) and due < ctx.today.isoformat():  # (E1 reports a bad date)
        yield _p(fact, "settle_by" if fact.envelope.settle_by else "type", "H1", Severity.WARNING,
                 f"hypothesis is overdue: settle by {due}")


def _a1(fact: Fact, ctx: CheckContext) -> Iterable[Problem]:
    env = fact.envelope
    if env.claimant_type and env.subject_kind:
        reason = forbidden_reason(env.claimant_type, env.subject_kind, fact.claim_type,
                                  ctx.registry.authority_rows)
        if reason:
            key = "claimant_type" if env.claimant_type == ClaimantType.VIEW else "subject_kind"
            yield _p(fact, key, "A1", Severity.ERROR,
                     f"{env.claimant_type} may not make {an(fact.claim_type or '')} about "
                     f"{env.subject_kind}: {reason}")
    if env.claimant_type == ClaimantType.PERSONA and not fact.refs:
        yield _p(fact, "refs", "A1", Severity.ERROR, "a persona's claim must cite (refs is empty)")
    yield from _claimant_mismatch(fact, ctx)


def _claimant_mismatch(fact: Fact, ctx: CheckContext) -> Iterable[Problem]:
    env = fact.envelope
    if not env.claimant_agent_id and not env.claimant_type:
        return
    reg = ctx.registry
    email = ctx.creators.get(fact.path)
    author = reg.agent_for_email(email) if email else None
    author_id = author.id if author else (agent_id_from_email(email) if email else None)
    if env.claimant_agent_id and author_id and env.claimant_agent_id != author_id:
        yield _p(fact, "claimant_agent_id", "A1", Severity.ERROR,
                 f"claimant mismatch: the file names {env.claimant_agent_id} but "
                 f"{author_id} wrote it")
        return
    claimant = env.claimant_agent_id or author_id
    registered = reg.type_of(claimant) if claimant else None
    if env.claimant_type and registered and env.claimant_type != registered:
        yield _p(fact, "claimant_type", "A1", Severity.ERROR,
                 f"claimant mismatch: {claimant} is registered as {registered}, "
                 f"the file says {env.claimant_type}")
    elif env.claimant_agent_id and reg.agents and registered is None:
        yield _p(fact, "claimant_agent_id", "A1", Severity.WARNING,
                 f"claimant {env.claimant_agent_id} is not in the agent registry")


_CLAIM_TYPES = frozenset(c.value for c in ClaimType)
_SUBJECT_KINDS = frozenset(s.value for s in SubjectKind)


def _envelope_values(fact: Fact, ctx: CheckContext) -> Iterable[Problem]:
    env = fact.envelope
    closed: dict[str, tuple[str | None, Collection[str]]] = {
        "claim_type": (env.claim_type, _CLAIM_TYPES),
        "subject_kind": (env.subject_kind, _SUBJECT_KINDS),
        "claimant_type": (env.claimant_type, ctx.registry.agent_types),
    }
    for key, (value, legal) in closed.items():
        if value is not None and value not in legal:
            yield _p(fact, key, "E1", Severity.ERROR,
                     f"unknown {key} {value!r}: must be one of {', '.join(sorted(legal))}")
    if env.claim_type and env.claim_type not in legal_claim_types_for_type(fact.type):
        yield _p(fact, "claim_type", "E1", Severity.WARNING,
                 f"claim_type {env.claim_type} does not fit type {fact.type}")
    if env.claim_type == ClaimType.HYPOTHESIS and fact.type != FactType.HYPOTHESIS:
        yield _p(fact, "claim_type", "E1", Severity.WARNING,
                 f"claim_type hypothesis on a fact typed {fact.type}")
    if env.settle_by and not is_iso_date(env.settle_by):
        yield _p(fact, "settle_by", "E1", Severity.ERROR,
                 f"settle_by must be a real date YYYY-MM-DD, got {env.settle_by!r}")


def _origin(fact: Fact, ctx: CheckContext) -> Iterable[Problem]:
    raw = fact.origin_raw
    if raw is not None and raw != fact.origin:
        yield _p(fact, "origin", "origin", Severity.WARNING,
                 f"origin {raw!r} is not legal for type {fact.type}; "
                 f"knomit reads it as {fact.origin}")


def _refs(fact: Fact, ctx: CheckContext) -> Iterable[Problem]:
    own = fact.path.lower()
    for raw in fact.refs:
        ref = classify_ref(raw, ctx.repo_id)
        if ref.warning:
            yield _p(fact, "refs", "ref-malformed", Severity.WARNING, ref.warning)
        if ref.kind is RefKind.EXTERNAL_URL and raw.lower().startswith("file:"):
            yield _p(fact, "refs", "ref-absolute", Severity.WARNING,
                     f"ref {raw!r} names a local file; refs are repo paths or URLs")
        elif ref.kind is RefKind.EXTERNAL_URL and DRIVE_RE.match(raw):  # knomit: a "scheme"
            if raw[2:3] in ("\\", "/"):
                yield _p(fact, "refs", "ref-absolute", Severity.WARNING,
                         f"ref {raw!r} is a Windows path; refs are repo paths or URLs")
            else:
                yield _p(fact, "refs", "ref-syntax", Severity.WARNING,
                         f"ref {raw!r} is a drive-relative Windows path; refs are repo paths "
                         "or URLs")
        if ref.kind is not RefKind.LOCAL_FACT or ref.target is None:
            continue
        if why := uncontained(ref.target):
            yield _p(fact, "refs", why[0], Severity.WARNING,
                     f"ref {raw!r} {why[1]}; it is never opened")
        elif ref.target == own:
            yield _p(fact, "refs", "ref-self", Severity.WARNING, "fact cites itself")
        elif ref.target not in ctx.facts:
            if ref.target in ctx.retracted:
                if _settled_by(fact, ctx.retracted[ref.target]):
                    continue  # knomit's own settlement link (FORMAT §6.6), not a stale ref
                yield _p(fact, "refs", "ref-retracted", Severity.WARNING,
                         f"ref to retracted fact {ref.target}")
            elif ctx.history_known:
                yield _p(fact, "refs", "ref-broken", Severity.WARNING,
                         f"ref to a fact that never existed: {ref.target}")


def _settled_by(fact: Fact, gone: Fact) -> bool:
    """A non-hypothesis citing a retracted hypothesis: the link a settlement leaves between
    the hypothesis and the fact that settled it (knomit's collision path, FORMAT §6.6, and
    factdesk's confirm), which is meant to outlive the hypothesis."""
    return gone.type == FactType.HYPOTHESIS and fact.type != FactType.HYPOTHESIS


def _sources(fact: Fact, ctx: CheckContext) -> Iterable[Problem]:
    if fact.sources == 0 and fact.type != FactType.HYPOTHESIS:
        yield _p(fact, "sources", "sources-zero", Severity.WARNING,
                 "sources: 0 — this fact adds nothing to any evidence weight")


def _local(fact: Fact, ctx: CheckContext) -> list[str]:
    return [t for t in local_targets(fact.refs, ctx.repo_id) if t != fact.path.lower()]


_FACT_RULES: tuple[Callable[[Fact, CheckContext], Iterable[Problem]], ...] = (
    _r1, _r2, _r3, _h1, _a1, _envelope_values, _origin, _refs, _sources,
)
