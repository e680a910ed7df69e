"""Open (and rejected) proposals per agent, from the review queue (issue 16: "open
proposals (once proposal review exists)"), for the Agents tab.

`reflect` may not import `review` (the layers), so the count joins the records here, in
the view: the queue is read (`review.proposals.load_queue`, git only, no checks) and
`reflect.agents.count_proposals` names each proposal's agent as the records name
everyone. (`cli/agents_cmds.py` does the same for `factdesk agents --proposals`.)"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from factdesk.corpus.registry_io import load_registry
from factdesk.reflect.agents import count_proposals


@dataclass(frozen=True, slots=True)
class ProposalCounts:
    open: dict[str, int] = field(default_factory=dict)
    rejected: dict[str, int] = field(default_factory=dict)


def proposal_counts(repo: Path) -> ProposalCounts:
    """Per agent id: its open proposals, and those a curator rejected (in effect)."""
    from factdesk.review.proposals import load_queue

    registry = load_registry(repo)
    queue = load_queue(repo, registry=registry)
    return ProposalCounts(*count_proposals(registry, (
        (p.status, p.author_email, p.author_name) for p in queue.proposals)))


def open_proposals(repo: Path) -> dict[str, int]:
    """Open proposals per agent id (the Agents tab's column)."""
    return proposal_counts(repo).open
