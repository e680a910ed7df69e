"""The typed fact: what one knomit file says, parsed once at the boundary.

A `Fact` keeps raw values for every enumerated field (an unknown `type: factoid` stays
"factoid" and is reported by the checker) next to the resolved values knomit would use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from factdesk.model.enums import Severity, default_origin, derived_claim_type

ENVELOPE_KEYS = (
    "claim_type",
    "claimant_agent_id",
    "claimant_type",
    "subject_kind",
    "subject_ref",
    "settle_by",
    "settlement",
)
KNOMIT_KEYS = (
    "kind",
    "type",
    "domain",
    "confidence",
    "sources",
    "evidence_weight",
    "origin",
    "entities",
    "motifs",
    "refs",
    "expires",
)


@dataclass(frozen=True, slots=True)
class Envelope:
    """The two-axis claim envelope (FORMAT.md §13). Missing fields are None."""

    claim_type: str | None = None
    claimant_agent_id: str | None = None
    claimant_type: str | None = None
    subject_kind: str | None = None
    subject_ref: str | None = None
    settle_by: str | None = None
    settlement: str | None = None



@dataclass(frozen=True, slots=True)
class Fact:
    """One well-formed fact file, frozen. `path` is repo-relative POSIX (`kb/…/abcd1234.md`)."""

    path: str
    title: str
    body: str
    kind: str = "epistemic"
    type: str = "observation"
    origin: str = "authored"
    origin_raw: str | None = None
    domain: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    #: knomit's motif branch (FORMAT.md §2.8): the well-formed ones, as knomit keeps them
    motifs: tuple[str, ...] = ()
    confidence: float = 0.0
    sources: int = 0
    evidence_weight: float | None = None
    envelope: Envelope = field(default_factory=Envelope)
    extra: Mapping[str, object] = field(default_factory=dict)
    #: 1-based line of each frontmatter key, and of the title heading.
    key_lines: Mapping[str, int] = field(default_factory=dict)
    title_line: int = 1

    @property
    def resolved_origin(self) -> str:
        return self.origin or default_origin(self.type)

    @property
    def claim_type(self) -> str:
        """The recorded claim type, or the one derived from the type."""
        return self.envelope.claim_type or derived_claim_type(self.type)

    @property
    def claim_type_is_derived(self) -> bool:
        return self.envelope.claim_type is None

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, 1)


@dataclass(frozen=True, slots=True)
class Problem:
    """One checker finding, with a stable rule code and a `path:line` location."""

    path: str
    line: int
    code: str
    severity: Severity
    message: str

    def as_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "code": self.code,
            "severity": str(self.severity),
            "message": self.message,
        }

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.severity} [{self.code}] {self.message}"

