"""Which envelopes a curator may produce, and why the others are refused (issue 4).

Pure functions over plain values, shared by the relabel editor (which offers only the
legal values and shows the rule that excludes each other one) and the curation layer
(which refuses an illegal relabel with the rule named). No I/O, no Qt.

The rules, each with a stable code:

  kind×type      kind follows type: policy and heuristic are pragmatic, all else epistemic
  origin×type    distilled only on synthesis; discovered only on synthesis or hypothesis
  claim×type     hypothesis ⇔ claim type hypothesis; synthesis → synthesis or inference
  A1             the authority table (a view writes nothing; only the user asserts the
                 user's identity; an agent is canonical about itself only)
  A1-persona     a persona must cite (refs not empty)
  A1-registry    the claimant type must be the one the registry gives the claimant
  A1-ground      ground truth (a user asserting about self) comes only from a curator's
                 attestation, never from a relabel
  H1             a hypothesis needs a settlement criterion
  sources        a synthesis needs at least one local source
  value          the value is not in the vocabulary
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from factdesk.model.authority import Authority, authority, forbidden_reason
from factdesk.model.enums import (
    TYPES_BY_KIND,
    ClaimantType,
    ClaimType,
    FactType,
    Kind,
    Origin,
    SubjectKind,
    derived_claim_type,
    is_legal_origin_for_type,
    legal_claim_types_for_type,
)
from factdesk.model.fact import Fact
from factdesk.model.registry import Registry
from factdesk.model.rules import criterion_in_text, is_iso_date
from factdesk.model.words import an

#: The envelope fields a relabel may change, in the order the editor shows them.
RELABEL_FIELDS: tuple[str, ...] = (
    "type", "kind", "origin", "claim_type", "claimant_agent_id", "claimant_type",
    "subject_kind", "subject_ref", "settle_by", "settlement",
)
#: Fields with a closed vocabulary, and that vocabulary.
VOCABULARY: dict[str, tuple[str, ...]] = {
    "type": tuple(t.value for t in FactType),
    "kind": tuple(k.value for k in Kind),
    "origin": tuple(o.value for o in Origin),
    "claim_type": tuple(c.value for c in ClaimType),
    "claimant_type": tuple(c.value for c in ClaimantType),
    "subject_kind": tuple(s.value for s in SubjectKind),
}

Values = Mapping[str, str | None]


@dataclass(frozen=True, slots=True)
class Violation:
    """One reason an envelope may not be produced."""

    field: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


@dataclass(frozen=True, slots=True)
class Context:
    """What the rules look at besides the envelope values."""

    registry: Registry
    local_refs: int = 0
    any_refs: bool = False
    #: title and body, for a settlement criterion written knomit-style in the text
    text: str = ""
    #: True for a curator's attestation, the one way to ground truth
    attesting: bool = False
    #: the fact was ground truth already (a relabel may keep it so, not make it so)
    was_ground_truth: bool = False


def values_of(fact: Fact) -> dict[str, str | None]:
    """A fact's relabel fields as written (None where the file has no such key; `origin`
    is the raw value, so a default origin is not mistaken for a written one)."""
    env = fact.envelope
    return {
        "type": fact.type, "kind": fact.kind, "origin": fact.origin_raw,
        "claim_type": env.claim_type, "claimant_agent_id": env.claimant_agent_id,
        "claimant_type": env.claimant_type, "subject_kind": env.subject_kind,
        "subject_ref": env.subject_ref, "settle_by": env.settle_by, "settlement": env.settlement,
    }


def claim_of(values: Values) -> str:
    """The claim type the envelope makes: the one written, else the one its type derives."""
    return values.get("claim_type") or derived_claim_type(values.get("type") or "").value


def is_ground_truth(values: Values) -> bool:
    claimant_type, subject = values.get("claimant_type"), values.get("subject_kind")
    if not (claimant_type and subject):
        return False
    claim = claim_of(values)
    return authority(claimant_type, subject, claim) is Authority.GROUND_TRUTH


def kind_for_type(type_: str) -> str | None:
    for kind, types in TYPES_BY_KIND.items():
        if type_ in types:
            return kind.value
    return None


def follow(before: Values, changes: Values) -> dict[str, str | None]:
    """The envelope after `changes`, with the fields that follow a type change moved along
    (knomit's update path): kind follows the type; a recorded claim type the new type
    does not allow becomes the new type's (a legal one is kept: a relabel never upgrades
    an observation into an assertion); an origin the new type forbids is dropped back to
    the type's default. Fields named in `changes` are never overridden."""
    after = dict(before)
    after.update(changes)
    new_type = after.get("type") or ""
    if "type" in changes and changes["type"] != before.get("type"):
        if "kind" not in changes:
            after["kind"] = kind_for_type(new_type) or after.get("kind")
        if "claim_type" not in changes:
            old = before.get("claim_type")
            if old is not None and old not in legal_claim_types_for_type(new_type):
                after["claim_type"] = derived_claim_type(new_type).value
        if "origin" not in changes:
            origin = after.get("origin")
            if origin and not is_legal_origin_for_type(origin, new_type):
                after["origin"] = None
    return after


#: closed-vocabulary fields a file may leave out (the claim type is then derived from the
#: type; the kind and the type always have a value)
MAY_BE_ABSENT = ("origin", "claimant_type", "subject_kind")


def changes_from_choices(written: Values, chosen: Values) -> dict[str, str | None]:
    """What to write for one fact when a curator set `chosen` fields: a value as written is
    no change (unless it keeps a field against what a new type would bring: `follow`), and
    a claim type the new type derives anyway is not written into a file that has none."""
    out: dict[str, str | None] = {}
    new_type = chosen.get("type", written.get("type"))
    for key, value in chosen.items():
        if key == "claim_type" and written.get(key) is None \
                and value == derived_claim_type(new_type or "").value:
            continue
        if value == written.get(key) and (key == "type" or new_type == written.get("type")):
            continue
        out[key] = value
    return out


def violations(values: Values, ctx: Context) -> list[Violation]:
    """Every rule the envelope `values` breaks (empty when it may be produced)."""
    out: list[Violation] = []
    type_ = values.get("type") or ""
    for name, vocab in VOCABULARY.items():
        value = values.get(name)
        if value is not None and value not in vocab and not (
                name == "claimant_type" and value in ctx.registry.agent_types):
            out.append(Violation(name, "value", f"{name} {value!r} is not one of {', '.join(vocab)}"))
    kind = values.get("kind") or Kind.EPISTEMIC.value
    want_kind = kind_for_type(type_)
    if want_kind and kind != want_kind:
        out.append(Violation("kind", "kind×type",
                             f"type {type_} is {want_kind}, not {kind} (FORMAT.md §3.4)"))
    origin = values.get("origin")
    if origin and origin in VOCABULARY["origin"] and not is_legal_origin_for_type(origin, type_):
        out.append(Violation("origin", "origin×type",
                             f"origin {origin} is not allowed for type {type_} "
                             f"({_origin_rule(origin)})"))
    claim = claim_of(values)
    if type_ in VOCABULARY["type"] and claim in VOCABULARY["claim_type"] \
            and claim not in legal_claim_types_for_type(type_):
        out.append(Violation("claim_type", "claim×type", _claim_rule(type_, claim)))
    out.extend(_authority(values, claim, ctx))
    if type_ == FactType.HYPOTHESIS and not _has_criterion(values, ctx.text):
        out.append(Violation("settlement", "H1",
                             "a hypothesis needs a settlement criterion: a settle_by date or a "
                             "settlement condition"))
    settle_by = values.get("settle_by")
    if settle_by and not is_iso_date(settle_by):
        out.append(Violation("settle_by", "value", f"settle_by {settle_by!r} is not a real YYYY-MM-DD date"))
    if type_ == FactType.SYNTHESIS and ctx.local_refs < 1:
        out.append(Violation("type", "sources", "a synthesis needs at least one local source in refs"))
    return out


def _authority(values: Values, claim: str, ctx: Context) -> list[Violation]:
    out: list[Violation] = []
    claimant_type = values.get("claimant_type")
    subject = values.get("subject_kind")
    agent = values.get("claimant_agent_id")
    if claimant_type == ClaimantType.VIEW:
        out.append(Violation("claimant_type", "A1", "a view claimant writes nothing"))
    elif claimant_type and subject:
        rows = ctx.registry.authority_rows
        reason = forbidden_reason(claimant_type, subject, claim, rows)
        if reason:
            out.append(Violation("claim_type", "A1",
                                 f"{an(claimant_type)} may not make {an(claim)} about {subject}: {reason}"))
        elif authority(claimant_type, subject, claim, rows) is Authority.GROUND_TRUTH \
                and not (ctx.attesting or ctx.was_ground_truth):
            out.append(Violation("claim_type", "A1-ground",
                                 "a user's assertion about themself is ground truth: only a "
                                 "curator's attestation (factdesk attest) can record it"))
    if claimant_type == ClaimantType.PERSONA and not ctx.any_refs:
        out.append(Violation("claimant_type", "A1-persona", "a persona's claim must cite (refs is empty)"))
    if agent and claimant_type:
        registered = ctx.registry.type_of(agent)
        if registered and registered != claimant_type:
            out.append(Violation("claimant_type", "A1-registry",
                                 f"the registry lists {agent} as {an(registered)}, not {an(claimant_type)}"))
    return out


def _has_criterion(values: Values, text: str) -> bool:
    return bool(values.get("settle_by") or values.get("settlement")) or criterion_in_text(text)


def _origin_rule(origin: str) -> str:
    if origin == Origin.DISTILLED:
        return "distilled facts are syntheses"
    return "discovered facts are syntheses or hypotheses"


def _claim_rule(type_: str, claim: str) -> str:
    if type_ == FactType.HYPOTHESIS:
        return f"a hypothesis has claim type hypothesis, not {claim}"
    if claim == ClaimType.HYPOTHESIS:
        return f"claim type hypothesis belongs to type hypothesis, not {type_}"
    return f"a synthesis has claim type synthesis or inference, not {claim}"


def options(field: str, values: Values, ctx: Context) -> dict[str, str | None]:
    """For the editor: each value of a closed-vocabulary `field`, mapped to None when the
    envelope stays legal with it (after `follow`), else to the first rule it breaks.
    A value only breaks a rule if that rule does not already fail with the current one."""
    vocab = list(VOCABULARY[field])
    if field == "claimant_type":
        vocab += [t for t in ctx.registry.agent_types if t not in vocab]
    baseline = {(v.rule, v.field) for v in violations(values, ctx)}
    out: dict[str, str | None] = {}
    for value in vocab:
        trial = follow(values, {field: value})
        new = [v for v in violations(trial, ctx) if (v.rule, v.field) not in baseline
               or v.field == field]
        out[value] = str(new[0]) if new else None
    return out
