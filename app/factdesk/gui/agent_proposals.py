"""Open (and rejected) proposals per agent, from the review queue (issue 16: "open
proposals (once proposal review exists)"). No Qt: the CLI's `factdesk agents` uses it too.

`reflect` may not import `review` (the layers), so the count joins the records here, in
the views: a proposal counts for the agent its commit's author names — the registry's id
for its e-mail, else knomit's `<id>@agents.knomit.io`, else the author's name, as
`reflect.agents.identity_id` names everyone in the records. Git only (`load_queue` runs
no checks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from factdesk.corpus.registry_io import load_registry
from factdesk.reflect.agents import identity_id


@dataclass(frozen=True, slots=True)
class ProposalCounts:
    open: dict[str, int] = field(default_factory=dict)
    rejected: dict[str, int] = field(default_factory=dict)


def proposal_counts(repo: Path) -> ProposalCounts:
    """Per agent id: its open proposals, and those a curator rejected (in effect)."""
    from factdesk.review.proposals import load_queue

    registry = load_registry(repo)
    queue = load_queue(repo, registry=registry)
    out = ProposalCounts()
    for p in queue.proposals:
        table = out.open if p.status == "open" else out.rejected if p.status == "rejected" \
            else None
        if table is None:
            continue
        who = identity_id(registry, p.author_email, p.author_name)
        table[who] = table.get(who, 0) + 1
    return out


def open_proposals(repo: Path) -> dict[str, int]:
    """Open proposals per agent id (the Agents tab's column)."""
    return proposal_counts(repo).open
