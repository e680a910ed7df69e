"""Suspected mislabels: heuristics that propose a legal relabel for a fact (issue 4, the queue).

Pure: facts and a small context in, `Suggestion`s out. Each suggestion names its evidence
(the hedge word and where it was found, the commit author, the refs counted) and proposes
a change of frontmatter fields that the model allows; a proposal never invents what only a
curator can supply (a settlement criterion, a missing source), it asks for it through
`needs_input`. Codes, most serious first:

    tool-asserts-user          a tool/persona/peer asserts the user's identity (A1 forbids)
    asserts-other-agent        a tool/persona/peer asserts another agent's identity
    claimant-mismatch          the claimant disagrees with the commit author and the registry
    message-in-memory          an addressed message ("@codex please …") filed as memory: move to messages
    hedged-observation         a guess ("probably", "I think", "should be around") typed observation
    imperative-epistemic       a rule ("Always …", "Never …", "Must …") typed as epistemic
    single-source-synthesis    a synthesis resting on fewer than two local facts
    observation-without-refs   an observation that cites nothing
    persona-without-refs       a persona's claim with empty refs (a persona must cite)
    legacy-envelope            `claim_type: legacy`, or provenance that cannot be derived
    no-envelope                no claim envelope at all (opt-in: `include_no_envelope`)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from factdesk.model.authority import forbidden_reason
from factdesk.model.enums import (
    ClaimantType,
    ClaimType,
    FactType,
    Kind,
    SubjectKind,
    default_origin,
    derived_claim_type,
    is_legal_kind_type,
    is_legal_origin_for_type,
    legal_claim_types_for_type,
)
from factdesk.model.fact import ENVELOPE_KEYS, Fact
from factdesk.model.message_heuristic import addressed
from factdesk.model.refs import RefKind, RepoIds, classify_ref
from factdesk.model.registry import Registry, agent_id_from_email
from factdesk.model.words import an, count

#: Every code `suggest` can return, in queue order (most serious first).
CODES: tuple[str, ...] = (
    "tool-asserts-user",
    "asserts-other-agent",
    "claimant-mismatch",
    "message-in-memory",
    "hedged-observation",
    "imperative-epistemic",
    "single-source-synthesis",
    "observation-without-refs",
    "persona-without-refs",
    "legacy-envelope",
    "no-envelope",
)
RANK: dict[str, int] = {code: i for i, code in enumerate(CODES)}

#: A proposed value of None means: remove the key (knomit then reads its default).
Changes = Mapping[str, str | None]

# Hedges and future wording that make a statement a guess. "likely" does not match
# "unlikely"; "should be" is a guess only with an estimate after it ("around", "about", …).
_HEDGE_RE = re.compile(
    r"(?i)\b("
    r"probably|presumably|likely|might|perhaps|maybe"
    r"|(?:i|we)\s+(?:think|believe|suspect|guess|expect)"
    r"|should\s+be\s+(?:around|about|roughly|approximately|near|close\s+to|fine|enough)"
    r"|(?:is|are)\s+expected\s+to|(?:is|are)\s+going\s+to"
    r")\b"
)
# Quoted material is someone else's wording: a hedge inside it is not the claimant's guess.
_QUOTED_RE = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|«[^»\n]*»|`[^`\n]*`")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_IMPERATIVE_RE = re.compile(r"(?i)^\s*(always|never|must|do\s+not|don['’]t|avoid)\b")
#: Soft instructions read as heuristics; the rest as policies.
_SOFT_IMPERATIVES = frozenset({"avoid"})


@dataclass(frozen=True, slots=True)
class Proposal:
    """One way to fix a suggestion: field changes, and what only the curator can supply.

    `action` is the curation operation that applies it: `relabel`, `edit` (refs) or
    `attest` (confirming a derived or legacy envelope).
    """

    changes: Changes
    needs_input: tuple[str, ...] = ()
    action: str = "relabel"
    label: str = ""


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A suspected mislabel of one fact, with its evidence and proposals (first = preferred)."""

    path: str
    code: str
    #: 1-based line of the evidence in the file (the title, a key, or the body's start).
    line: int
    #: One line naming the evidence: the hedge word and where it was found, etc.
    explanation: str
    proposals: tuple[Proposal, ...]

    @property
    def proposal(self) -> Changes:
        """The preferred relabel: frontmatter field -> new value (None: remove the key)."""
        return self.proposals[0].changes

    @property
    def needs_input(self) -> tuple[str, ...]:
        return self.proposals[0].needs_input

    @property
    def rank(self) -> int:
        return RANK.get(self.code, len(CODES))

    def as_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "code": self.code,
            "line": self.line,
            "explanation": self.explanation,
            "proposals": [
                {"changes": dict(p.changes), "needs_input": list(p.needs_input),
                 "action": p.action, "label": p.label}
                for p in self.proposals
            ],
        }


@dataclass(frozen=True)
class MislabelContext:
    """What the heuristics may look at besides the fact. Pure data, no I/O."""

    repo_id: RepoIds = None
    registry: Registry = field(default_factory=Registry)
    #: author e-mail of the commit that created each path (as `CheckContext.creators`)
    creators: Mapping[str, str] = field(default_factory=dict)
    #: also suggest attesting facts that carry no envelope at all (half of many corpora)
    include_no_envelope: bool = False
    _by_email: dict[str, tuple[str | None, str | None]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    def author_of(self, path: str) -> tuple[str | None, str | None]:
        """(agent id, registered type) of the author of the commit that created `path`."""
        email = self.creators.get(path)
        if not email:
            return None, None
        known = self._by_email.get(email)
        if known is None:
            agent = self.registry.agent_for_email(email)
            if agent is not None:
                known = agent.id, agent.type
            else:
                aid = agent_id_from_email(email)
                known = aid, (self.registry.type_of(aid) if aid else None)
            self._by_email[email] = known
        return known


# ---------------------------------------------------------------- legality


def resulting_state(fact: Fact, changes: Changes, ctx: MislabelContext) -> dict[str, str | None]:
    """The envelope values a fact would have after `changes` (derived values filled in)."""
    env = fact.envelope
    state: dict[str, str | None] = {
        "kind": fact.kind,
        "type": fact.type,
        # as written: an unwritten origin is the new type's default, not the old one's
        "origin": fact.origin_raw,
        "claim_type": env.claim_type,
        "claimant_agent_id": env.claimant_agent_id,
        "claimant_type": env.claimant_type,
        "subject_kind": env.subject_kind,
        "settle_by": env.settle_by,
        "settlement": env.settlement,
    }
    state.update(changes)
    type_ = state["type"] or FactType.OBSERVATION
    if state["kind"] is None:
        state["kind"] = Kind.EPISTEMIC.value
    if state["origin"] is None:
        state["origin"] = default_origin(type_).value
    if state["claim_type"] is None:
        state["claim_type"] = derived_claim_type(type_).value
    if state["claimant_type"] is None:
        aid, atype = ctx.author_of(fact.path)
        claimant = state["claimant_agent_id"] or aid
        state["claimant_type"] = ctx.registry.type_of(claimant) if claimant else atype
    return state


def illegal_reasons(fact: Fact, proposal: Proposal, ctx: MislabelContext) -> list[str]:
    """Why applying `proposal` would give a combination the model forbids ([] when legal)."""
    s = resulting_state(fact, proposal.changes, ctx)
    kind, type_, origin, claim = s["kind"] or "", s["type"] or "", s["origin"] or "", s["claim_type"] or ""
    out: list[str] = []
    if not is_legal_kind_type(kind, type_):
        out.append(f"kind {kind} does not allow type {type_}")
    if not is_legal_origin_for_type(origin, type_):
        out.append(f"origin {origin} is not legal for type {type_}")
    if claim not in legal_claim_types_for_type(type_):
        out.append(f"claim_type {claim} does not fit type {type_}")
    if claim == ClaimType.HYPOTHESIS and type_ != FactType.HYPOTHESIS:
        out.append(f"claim_type hypothesis on type {type_}")
    if s["claimant_type"] and s["subject_kind"]:
        why = forbidden_reason(s["claimant_type"], s["subject_kind"], claim)
        if why:
            out.append(f"{s['claimant_type']} may not make {an(claim)} about {s['subject_kind']}: {why}")
    if (type_ == FactType.HYPOTHESIS and not (s["settle_by"] or s["settlement"])
            and not _has_body_criterion(fact) and "settlement" not in proposal.needs_input):
        out.append("a hypothesis needs a settlement criterion")
    return out


def introduced_reasons(fact: Fact, proposal: Proposal, ctx: MislabelContext) -> list[str]:
    """The illegalities `proposal` would introduce (those the fact already has are not its doing)."""
    before = set(illegal_reasons(fact, Proposal({}), ctx))
    return [r for r in illegal_reasons(fact, proposal, ctx) if r not in before]


def _has_body_criterion(fact: Fact) -> bool:
    return bool(re.search(r"(?im)^\s*\**settles?\s+by\s+\d{4}-\d{2}-\d{2}", fact.body))


def _legal(fact: Fact, proposals: Iterable[Proposal], ctx: MislabelContext) -> tuple[Proposal, ...]:
    return tuple(p for p in proposals if not introduced_reasons(fact, p, ctx))


def _retype(fact: Fact, new_type: str, ctx: MislabelContext) -> dict[str, str | None]:
    """Changes for a new type: kind follows, an origin the type forbids is removed, and a
    recorded claim type follows the type when it was the type's own (never made forbidden)."""
    changes: dict[str, str | None] = {"type": str(new_type)}
    kind = Kind.PRAGMATIC if new_type in (FactType.POLICY, FactType.HEURISTIC) else Kind.EPISTEMIC
    if fact.kind != kind:
        changes["kind"] = kind.value
    if fact.origin_raw is not None and not is_legal_origin_for_type(fact.origin_raw, new_type):
        changes["origin"] = None
    recorded = fact.envelope.claim_type
    legal = legal_claim_types_for_type(new_type)
    follows = derived_claim_type(new_type).value
    tied = recorded == derived_claim_type(fact.type) or recorded == ClaimType.HYPOTHESIS
    if recorded is not None and recorded != follows and (tied or recorded not in legal):
        changes["claim_type"] = follows
    probe = Proposal(changes, ("settlement",))
    if any("may not make" in r for r in illegal_reasons(fact, probe, ctx)):
        for alt in (ClaimType.REPORT, ClaimType.INFERENCE, ClaimType.OBSERVATION):
            if alt in legal:
                changes["claim_type"] = alt.value
                break
    return changes


# ---------------------------------------------------------------- text helpers


def _first_sentence(body: str) -> str:
    """The first sentence of the first prose paragraph (headings, lists, quotes skipped)."""
    for para in re.split(r"\n\s*\n", body[:4000]):
        text = para.strip()
        if not text or text.startswith(("#", ">", "|", "```", "- ", "* ", "<")) or re.match(r"\d+\.\s", text):
            continue
        text = " ".join(text.split())
        m = _SENTENCE_END.search(text)
        return text[: m.end()] if m else text
    return ""


def find_hedge(text: str) -> str | None:
    """The first hedge outside quoted material, or None."""
    m = _HEDGE_RE.search(_QUOTED_RE.sub(" ", text))
    return " ".join(m.group(1).lower().split()) if m else None


def _has_criterion(fact: Fact) -> bool:
    """A structured criterion: settle_by / settlement, or knomit's 'Settles by DATE' body line."""
    return bool(fact.envelope.settle_by or fact.envelope.settlement or _has_body_criterion(fact))


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _claimant_type(fact: Fact, ctx: MislabelContext) -> str | None:
    env = fact.envelope
    if env.claimant_type:
        return env.claimant_type
    aid, atype = ctx.author_of(fact.path)
    claimant = env.claimant_agent_id or aid
    return (ctx.registry.type_of(claimant) if claimant else None) or atype


def _has_envelope(fact: Fact) -> bool:
    env = fact.envelope
    return any(getattr(env, k) is not None for k in ENVELOPE_KEYS)


# ---------------------------------------------------------------- heuristics


def _authority(fact: Fact, ctx: MislabelContext) -> Iterable[Suggestion]:
    env = fact.envelope
    if fact.claim_type != ClaimType.ASSERTION or env.subject_kind not in (SubjectKind.USER,
                                                                          SubjectKind.OTHER_AGENT):
        return
    ctype = _claimant_type(fact, ctx)
    if ctype in (None, ClaimantType.USER, ClaimantType.VIEW):
        return
    code = "tool-asserts-user" if env.subject_kind == SubjectKind.USER else "asserts-other-agent"
    who = env.claimant_agent_id or ctx.author_of(fact.path)[0] or "the claimant"
    about = env.subject_ref or env.subject_kind
    props = _legal(fact, (
        Proposal({"claim_type": ClaimType.REPORT.value}, label="a report: someone told the claimant"),
        Proposal({"claim_type": ClaimType.INFERENCE.value}, label="an inference from what it saw"),
        Proposal({"claim_type": ClaimType.OBSERVATION.value}, label="an observation it made itself"),
    ), ctx)
    if props:
        yield Suggestion(fact.path, code, fact.line_of("claim_type"),
                         f"{who} ({ctype}) asserts about {about} (subject_kind {env.subject_kind}); only "
                         f"the subject may assert its own identity — it can report or infer it", props)


def _claimant_mismatch(fact: Fact, ctx: MislabelContext) -> Iterable[Suggestion]:
    env = fact.envelope
    if not env.claimant_agent_id and not env.claimant_type:
        return
    aid, atype = ctx.author_of(fact.path)
    if aid is None:
        return
    registered = atype or ctx.registry.type_of(aid)
    changes: dict[str, str | None] = {}
    if env.claimant_agent_id and env.claimant_agent_id != aid:
        changes["claimant_agent_id"] = aid
        evidence = f"claimant_agent_id {env.claimant_agent_id}, but {aid} ({registered}) wrote the file"
        if env.subject_kind == SubjectKind.SELF:
            # "self" meant the named claimant; after the fix it would mean the author.
            old_type = env.claimant_type or ctx.registry.type_of(env.claimant_agent_id)
            changes["subject_kind"] = (SubjectKind.USER if old_type == ClaimantType.USER
                                       else SubjectKind.OTHER_AGENT).value
            if not env.subject_ref:
                prefix = "user:" if old_type == ClaimantType.USER else "agent:"
                changes["subject_ref"] = prefix + env.claimant_agent_id
    elif env.claimant_type and registered and env.claimant_type != registered:
        evidence = f"claimant_type {env.claimant_type}, but {aid} is registered as {registered}"
    else:
        return
    if registered and env.claimant_type != registered:
        changes["claimant_type"] = registered
    if env.claimant_type is None and "claimant_type" in changes:
        del changes["claimant_type"]
    probe = Proposal(changes)
    if any("may not make" in r for r in illegal_reasons(fact, probe, ctx)):
        for alt in (ClaimType.REPORT, ClaimType.INFERENCE):
            if alt in legal_claim_types_for_type(fact.type):
                changes["claim_type"] = alt.value
                break
    props = _legal(fact, (Proposal(changes, label="name the agent that wrote it"),), ctx)
    if props:
        key = "claimant_agent_id" if "claimant_agent_id" in changes else "claimant_type"
        yield Suggestion(fact.path, "claimant-mismatch", fact.line_of(key),
                         f"{evidence} (the commit that created it)", props)


def _hedged(fact: Fact, ctx: MislabelContext) -> Iterable[Suggestion]:
    if fact.type != FactType.OBSERVATION:
        return
    where, line, word = "title", fact.title_line, find_hedge(fact.title)
    if word is None:
        sentence = _first_sentence(fact.body)
        word = find_hedge(sentence)
        where, line = f"first sentence of the body ({_short(sentence)!r})", fact.title_line + 2
    if word is None:
        return
    changes = _retype(fact, FactType.HYPOTHESIS, ctx)
    needs = () if _has_criterion(fact) else ("settlement",)
    props = _legal(fact, (Proposal(changes, needs, label="a guess: file it as a hypothesis"),), ctx)
    if props:
        yield Suggestion(fact.path, "hedged-observation", line,
                         f"hedge {word!r} in the {where}: a guess typed as observation", props)


def _imperative(fact: Fact, ctx: MislabelContext) -> Iterable[Suggestion]:
    if fact.kind != Kind.EPISTEMIC or fact.type in (FactType.HYPOTHESIS, FactType.SYNTHESIS):
        return
    m = _IMPERATIVE_RE.match(fact.title)
    if not m:
        return
    word = " ".join(m.group(1).split())
    first = "heuristic" if word.lower() in _SOFT_IMPERATIVES else "policy"
    second = "policy" if first == "heuristic" else "heuristic"
    props = _legal(fact, (
        Proposal(_retype(fact, first, ctx), label=f"a rule: pragmatic {first}"),
        Proposal(_retype(fact, second, ctx), label=f"a rule: pragmatic {second}"),
    ), ctx)
    if props:
        yield Suggestion(fact.path, "imperative-epistemic", fact.title_line,
                         f"title opens with the instruction {word!r}: a rule typed as epistemic "
                         f"{fact.type}", props)


def _single_source(fact: Fact, ctx: MislabelContext) -> Iterable[Suggestion]:
    if fact.type != FactType.SYNTHESIS:
        return
    own = fact.path.lower()
    kinds = [classify_ref(r, ctx.repo_id) for r in fact.refs]
    local = {r.target for r in kinds if r.kind is RefKind.LOCAL_FACT and r.target and r.target != own}
    if len(local) >= 2:
        return
    foreign = sum(1 for r in kinds if r.kind is RefKind.FOREIGN_FACT)
    urls = sum(1 for r in kinds if r.kind is RefKind.EXTERNAL_URL)
    extra = ", ".join(count(n, what) for n, what in ((urls, "URL"), (foreign, "foreign kb ref")) if n)
    evidence = count(len(local), "local fact ref") + (f" (plus {extra})" if extra else "")
    props = _legal(fact, (
        Proposal(_retype(fact, FactType.INSIGHT, ctx), label="one source: an insight, not a synthesis"),
        Proposal({}, ("refs",), action="edit", label="keep the synthesis and cite its other sources"),
    ), ctx)
    if props:
        yield Suggestion(fact.path, "single-source-synthesis", fact.line_of("refs"),
                         f"synthesis rests on {evidence}: a synthesis needs two or more", props)


def _observation_without_refs(fact: Fact, ctx: MislabelContext) -> Iterable[Suggestion]:
    if fact.type != FactType.OBSERVATION or fact.refs:
        return
    changes = _retype(fact, FactType.HYPOTHESIS, ctx)
    props = _legal(fact, (
        Proposal(changes, ("settlement",), label="unsupported: a hypothesis until evidence is cited"),
        Proposal({}, ("refs",), action="edit", label="keep the observation and cite the evidence"),
    ), ctx)
    if props:
        yield Suggestion(fact.path, "observation-without-refs", fact.line_of("refs"),
                         "observation with refs: [] — evidence that cites nothing", props)


def _persona_without_refs(fact: Fact, ctx: MislabelContext) -> Iterable[Suggestion]:
    if fact.refs or _claimant_type(fact, ctx) != ClaimantType.PERSONA:
        return
    who = fact.envelope.claimant_agent_id or ctx.author_of(fact.path)[0] or "the claimant"
    props = _legal(fact, (Proposal({}, ("refs",), action="edit", label="cite the sources"),), ctx)
    if props:
        yield Suggestion(fact.path, "persona-without-refs", fact.line_of("refs"),
                         f"{who} is a persona and a persona must cite, but refs is empty", props)


def _legacy(fact: Fact, ctx: MislabelContext) -> Iterable[Suggestion]:
    env = fact.envelope
    explicit = env.claim_type == ClaimType.LEGACY
    enveloped = _has_envelope(fact)
    if enveloped and not explicit:
        return
    aid, atype = ctx.author_of(fact.path)
    if explicit:
        code, evidence, line = "legacy-envelope", "claim_type: legacy (provenance unknown)", fact.line_of(
            "claim_type")
    elif not enveloped and aid is None and ctx.creators.get(fact.path):
        code, evidence, line = ("legacy-envelope", "no envelope, and no agent can be derived from the "
                                f"author of the commit that created it ({ctx.creators[fact.path]})",
                                fact.title_line)
    elif not enveloped and ctx.include_no_envelope:
        code, evidence, line = ("no-envelope", f"no claim envelope; derived from git: {aid} "
                                f"({atype or 'type unknown'})", fact.title_line)
    else:
        return
    changes: dict[str, str | None] = {"claim_type": derived_claim_type(fact.type).value}
    needs: list[str] = []
    if not env.claimant_agent_id:
        if aid:
            changes["claimant_agent_id"] = aid
        else:
            needs.append("claimant_agent_id")
    if not env.claimant_type:
        if atype:
            changes["claimant_type"] = atype
        else:
            needs.append("claimant_type")
    if not env.subject_kind:
        needs.append("subject_kind")
    if fact.type == FactType.HYPOTHESIS and not _has_criterion(fact):
        needs.append("settlement")
    who = changes.get("claimant_agent_id") or env.claimant_agent_id
    proposals = [Proposal(changes, tuple(needs), action="attest",
                          label=f"attest: claimant {who or '(to name)'}, claim_type {changes['claim_type']}")]
    report_ok = ClaimType.REPORT in legal_claim_types_for_type(fact.type)
    if changes["claim_type"] != ClaimType.REPORT and report_ok:
        proposals.append(Proposal({**changes, "claim_type": ClaimType.REPORT.value}, tuple(needs),
                                  action="attest", label="attest as a report relayed from elsewhere"))
    # Authority is checked by the curation layer once the curator has supplied the subject.
    props = tuple(p for p in proposals
                  if not [r for r in illegal_reasons(fact, p, ctx) if "may not make" not in r or not needs])
    if props:
        yield Suggestion(fact.path, code, line, evidence, props)


def _message_in_memory(fact: Fact, ctx: MislabelContext) -> Iterable[Suggestion]:
    """An addressed message filed as memory (issue 17, model.message_heuristic): the fix is
    no relabel but `move to messages` (`Curation.move_to_messages`), the recipient asked
    for (prefilled with the one the text names)."""
    found = addressed(fact.title, fact.body)
    if found is None:
        return
    to = f" to {found.to}" if found.to else ""
    label = f"an addressed message: move to messages{to}"
    yield Suggestion(fact.path, "message-in-memory", fact.title_line,
                     f"{found.cue} {_short(found.evidence, 50)!r}: a message{to}, not a claim",
                     (Proposal({}, ("to",), action="move-to-messages", label=label),))


_HEURISTICS = (
    _authority, _claimant_mismatch, _message_in_memory, _hedged, _imperative, _single_source,
    _observation_without_refs, _persona_without_refs, _legacy,
)


def suggest(fact: Fact, ctx: MislabelContext) -> list[Suggestion]:
    """Every suspected mislabel of one fact, most serious first."""
    out: list[Suggestion] = []
    for heuristic in _HEURISTICS:
        out.extend(heuristic(fact, ctx))
    out.sort(key=lambda s: s.rank)
    return out


def suggest_all(facts: Iterable[Fact], ctx: MislabelContext) -> list[Suggestion]:
    """Suggestions over many facts, in queue order: by code rank, then path."""
    out = [s for fact in facts for s in suggest(fact, ctx)]
    out.sort(key=lambda s: (s.rank, s.path))
    return out
