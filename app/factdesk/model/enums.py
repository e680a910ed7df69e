"""The closed vocabularies of a fact's envelope (DESIGN.md §2, FORMAT.md §3 and §13).

Values are case-sensitive strings on disk. A value that is not one of these is kept as
the raw string by the reader and reported by the checker; it is never coerced.
"""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    EPISTEMIC = "epistemic"
    PRAGMATIC = "pragmatic"


class FactType(StrEnum):
    OBSERVATION = "observation"
    CONCEPT = "concept"
    PROCESS = "process"
    PRINCIPLE = "principle"
    PATTERN = "pattern"
    REFERENCE = "reference"
    SYNTHESIS = "synthesis"
    INSIGHT = "insight"
    HYPOTHESIS = "hypothesis"
    METHODOLOGY = "methodology"
    POLICY = "policy"
    HEURISTIC = "heuristic"


class Origin(StrEnum):
    AUTHORED = "authored"
    DISTILLED = "distilled"
    DISCOVERED = "discovered"


class ClaimType(StrEnum):
    ASSERTION = "assertion"
    OBSERVATION = "observation"
    REPORT = "report"
    INFERENCE = "inference"
    SYNTHESIS = "synthesis"
    HYPOTHESIS = "hypothesis"
    LEGACY = "legacy"


class ClaimantType(StrEnum):
    TOOL = "tool"
    PERSONA = "persona"
    VIEW = "view"
    PEER = "peer"
    USER = "user"


class SubjectKind(StrEnum):
    SELF = "self"
    USER = "user"
    OTHER_AGENT = "other_agent"
    CODEBASE = "codebase"
    WORLD = "world"
    META = "meta"


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


TYPES_BY_KIND: dict[Kind, frozenset[FactType]] = {
    Kind.EPISTEMIC: frozenset(
        {
            FactType.OBSERVATION,
            FactType.CONCEPT,
            FactType.PROCESS,
            FactType.PRINCIPLE,
            FactType.PATTERN,
            FactType.REFERENCE,
            FactType.SYNTHESIS,
            FactType.INSIGHT,
            FactType.HYPOTHESIS,
            FactType.METHODOLOGY,
        }
    ),
    Kind.PRAGMATIC: frozenset({FactType.POLICY, FactType.HEURISTIC}),
}

#: Origin × type legality (FORMAT.md §2.3, knomit `origin.go` ValidateForType).
LEGAL_TYPES_BY_ORIGIN: dict[Origin, frozenset[FactType] | None] = {
    Origin.AUTHORED: None,  # every type
    Origin.DISTILLED: frozenset({FactType.SYNTHESIS}),
    Origin.DISCOVERED: frozenset({FactType.SYNTHESIS, FactType.HYPOTHESIS}),
}


def is_legal_kind_type(kind: str, type_: str) -> bool:
    return kind in Kind.__members__.values() and type_ in TYPES_BY_KIND[Kind(kind)]


def is_legal_origin_for_type(origin: str, type_: str) -> bool:
    if origin not in Origin.__members__.values():
        return False
    legal = LEGAL_TYPES_BY_ORIGIN[Origin(origin)]
    return legal is None or type_ in legal


def default_origin(type_: str) -> Origin:
    """knomit's type-aware origin default: distilled for synthesis, else authored."""
    return Origin.DISTILLED if type_ == FactType.SYNTHESIS else Origin.AUTHORED


_DERIVED_CLAIM_TYPE: dict[str, ClaimType] = {
    FactType.HYPOTHESIS: ClaimType.HYPOTHESIS,
    FactType.SYNTHESIS: ClaimType.SYNTHESIS,
    FactType.INSIGHT: ClaimType.INFERENCE,
    FactType.METHODOLOGY: ClaimType.INFERENCE,
    FactType.OBSERVATION: ClaimType.OBSERVATION,
}


def derived_claim_type(type_: str) -> ClaimType:
    """The claim type factdesk derives from a knomit type when the envelope is absent."""
    return _DERIVED_CLAIM_TYPE.get(type_, ClaimType.ASSERTION)


def legal_claim_types_for_type(type_: str) -> frozenset[ClaimType]:
    """FORMAT.md §13 consistency: hypothesis ⇔ hypothesis; synthesis → synthesis|inference."""
    if type_ == FactType.HYPOTHESIS:
        return _HYPOTHESIS_CLAIMS
    if type_ == FactType.SYNTHESIS:
        return _SYNTHESIS_CLAIMS
    return _OTHER_CLAIMS


_HYPOTHESIS_CLAIMS = frozenset({ClaimType.HYPOTHESIS})
_SYNTHESIS_CLAIMS = frozenset({ClaimType.SYNTHESIS, ClaimType.INFERENCE, ClaimType.LEGACY})
_OTHER_CLAIMS = frozenset(set(ClaimType) - {ClaimType.HYPOTHESIS})
