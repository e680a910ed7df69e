"""The agent-type registry and agents (`.factdesk/agents.yaml`, FORMAT.md §13), as data."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from factdesk.model.enums import ClaimantType
from factdesk.model.fact import Problem

SEEDED_TYPES: dict[str, str] = {
    ClaimantType.TOOL: "may observe and report; never canonically claims the user's identity",
    ClaimantType.PERSONA: "must cite (non-empty refs)",
    ClaimantType.VIEW: "writes nothing",
    ClaimantType.PEER: "canonical about itself only",
    ClaimantType.USER: "a user's assertion about themself is ground truth",
}


@dataclass(frozen=True, slots=True)
class Agent:
    id: str
    type: str
    email: str | None = None
    branch: str | None = None
    #: retired by a curator (`retired: <date or reason>`): listed, never suggested
    retired: bool = False


@dataclass(frozen=True, slots=True)
class Registry:
    agent_types: Mapping[str, str] = field(default_factory=lambda: dict(SEEDED_TYPES))
    agents: Mapping[str, Agent] = field(default_factory=dict)
    #: what is wrong with the file it was read from (what could be read is still used)
    problems: tuple[Problem, ...] = ()
    #: added types' rows of the authority table (issue 16): type → {(subject kind or "*",
    #: claim type or "*"): verdict}; the seeded types' rows are fixed (model.authority)
    authority_rows: Mapping[str, Mapping[tuple[str, str], str]] = field(default_factory=dict)

    def agent_for_email(self, email: str) -> Agent | None:
        """Match a git identity by e-mail with any `+op` part removed."""
        bare = strip_op(email).lower()
        for agent in self.agents.values():
            if agent.email and agent.email.lower() == bare:
                return agent
        return None

    def type_of(self, agent_id: str) -> str | None:
        agent = self.agents.get(agent_id)
        return agent.type if agent else None


def strip_op(email: str) -> str:
    """`claude-code+learn@agents.knomit.io` → `claude-code@agents.knomit.io`."""
    local, at, domain = email.partition("@")
    return local.split("+", 1)[0] + at + domain


def op_token(email: str) -> str | None:
    """knomit's `parseOperation`: the text between the first `+` and the `@`."""
    local = email.partition("@")[0]
    return local.split("+", 1)[1] if "+" in local else None


def agent_id_from_email(email: str) -> str | None:
    """The agent id knomit encodes in `<id>+<op>@agents.knomit.io`, else None."""
    local, _, domain = email.partition("@")
    if domain.lower() != "agents.knomit.io":
        return None
    return local.split("+", 1)[0] or None
