"""Rule A1: who may claim what about whom, as a table (RELIABILITY.md §4).

The table maps (claimant type × subject kind × claim type) to one of three verdicts:
ground truth, attributed (shown with "<agent> (<type>) reports: …"), or forbidden.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from factdesk.model.enums import ClaimantType, ClaimType, SubjectKind


class Authority(StrEnum):
    GROUND_TRUTH = "ground_truth"
    ATTRIBUTED = "attributed"
    FORBIDDEN = "forbidden"


_IDENTITY_SUBJECTS = frozenset({SubjectKind.USER, SubjectKind.OTHER_AGENT})


def _verdict(claimant: ClaimantType, subject: SubjectKind, claim: ClaimType) -> Authority:
    if claimant is ClaimantType.VIEW:
        return Authority.FORBIDDEN  # a view writes nothing
    if claimant is ClaimantType.USER:
        if subject is SubjectKind.SELF and claim is ClaimType.ASSERTION:
            return Authority.GROUND_TRUTH
        return Authority.ATTRIBUTED
    if claim is ClaimType.ASSERTION and subject in _IDENTITY_SUBJECTS:
        # A tool, persona or peer never canonically claims the user's (or another
        # agent's) identity; it may observe, report or infer it, attributed.
        return Authority.FORBIDDEN
    return Authority.ATTRIBUTED


_SEEDED = frozenset(c.value for c in ClaimantType)

#: The whole table, enumerated once so it can be shown, exported and reviewed.
AUTHORITY_TABLE: dict[tuple[str, str, str], Authority] = {
    (c.value, s.value, k.value): _verdict(c, s, k)
    for c in ClaimantType
    for s in SubjectKind
    for k in ClaimType
}

REASONS: dict[tuple[str, str], str] = {
    ("view", "*"): "a view claimant writes nothing",
    ("*", "user"): "only the user may assert the user's identity; others observe or report it",
    ("*", "other_agent"): "an agent is canonical about itself only; others report about it",
}


#: an added type's rows, as the registry gives them: {(subject kind | "*", claim type | "*"):
#: verdict} (`Registry.authority_rows[type]`, issue 16)
Rows = Mapping[tuple[str, str], str]


def authority(claimant_type: str, subject_kind: str, claim_type: str,
              rows: Mapping[str, Rows] | None = None) -> Authority:
    """The verdict for a combination. A seeded type's is the table's (a registry cannot
    change it); an added type's comes from its rows in `rows` (the most specific match:
    exact, subject with any claim, any subject with the claim, `*`/`*`); without a row,
    attributed."""
    found = AUTHORITY_TABLE.get((claimant_type, subject_kind, claim_type))
    if found is not None:
        return found
    own = (rows or {}).get(claimant_type)
    if own:
        for key in ((subject_kind, claim_type), (subject_kind, "*"), ("*", claim_type),
                    ("*", "*")):
            if key in own:
                try:
                    return Authority(own[key])
                except ValueError:
                    break
    return Authority.ATTRIBUTED


def forbidden_reason(claimant_type: str, subject_kind: str, claim_type: str,
                     rows: Mapping[str, Rows] | None = None) -> str | None:
    """Why the table forbids a combination, or None when it is allowed."""
    if authority(claimant_type, subject_kind, claim_type, rows) is not Authority.FORBIDDEN:
        return None
    if claimant_type == ClaimantType.VIEW:
        return REASONS[("view", "*")]
    if claimant_type not in _SEEDED:
        return f"the registry's authority row for type {claimant_type} forbids it"
    return REASONS[("*", subject_kind)]


def attribution(
    title: str,
    *,
    claimant: str | None,
    claimant_type: str | None,
    subject_kind: str | None,
    claim_type: str,
) -> str:
    """The sentence an agent is shown: plain for ground truth, attributed otherwise."""
    if claimant_type and subject_kind:
        verdict = authority(claimant_type, subject_kind, claim_type)
        if verdict is Authority.GROUND_TRUTH:
            return title
    who = claimant or "unknown agent"
    what = claimant_type or "unverified"
    verb = _VERBS.get(claim_type, "claims")
    return f"{who} ({what}) {verb}: {title}"


_VERBS: dict[str, str] = {
    ClaimType.ASSERTION: "asserts",
    ClaimType.OBSERVATION: "observed",
    ClaimType.REPORT: "reports",
    ClaimType.INFERENCE: "infers",
    ClaimType.SYNTHESIS: "synthesised",
    ClaimType.HYPOTHESIS: "hypothesises",
    ClaimType.LEGACY: "claims (unattested)",
}

