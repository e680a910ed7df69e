"""Sync pushes the `agent/*` branches written here (issue 26 #3): an agent's proposals made
through `factdesk mcp --agent` reach the other curators with the curated branch — fast-
forward only; a branch the remote has moved elsewhere is named and skipped, never forced."""

from __future__ import annotations

from pathlib import Path

from factdesk.core import open_corpus
from factdesk.review.agent_write import AgentWriter, agent_identity
from factdesk.review.proposals import load_queue
from factdesk.review.sync import sync
from tests.conftest import git
from tests.review.test_sync import Team, fsck, team, tip  # noqa: F401  (the fixture)


def _propose(repo: Path, agent: str, title: str) -> dict[str, str]:
    w = AgentWriter(open_corpus(repo), agent_identity(repo, agent))
    return w.propose_fact(title, "Seen in three deploys.", "observation", topic="gotchas")


def test_sync_pushes_local_agent_branches_fast_forward(team: Team) -> None:  # noqa: F811
    first = _propose(team.ana, "codex", "Pool drains after 40 minutes")
    done = sync(team.ana)
    assert [(p.branch, p.status) for p in done.agent_pushed] == [("agent/codex", "pushed")]
    assert tip(team.bare, "agent/codex") == first["sha"]
    # bob sees codex's proposal after his own sync
    sync(team.bob)
    assert [p.sha for p in load_queue(team.bob).proposals] == [first["sha"]]
    # a second write is a fast-forward; an unchanged branch is not pushed again
    second = _propose(team.ana, "codex", "Retries double the load")
    assert [(p.branch, p.status) for p in sync(team.ana).agent_pushed] == [("agent/codex",
                                                                            "pushed")]
    assert tip(team.bare, "agent/codex") == second["sha"]
    assert sync(team.ana).agent_pushed == ()
    fsck(team.bare)


def test_a_diverged_agent_branch_is_named_and_never_forced(team: Team) -> None:  # noqa: F811
    _propose(team.ana, "codex", "Ana's copy")
    sync(team.ana)
    # bob's server for codex writes on bob's copy of the branch, and pushes first
    sync(team.bob)
    git(team.bob, "branch", "agent/codex", "origin/agent/codex")
    bobs = _propose(team.bob, "codex", "Bob's copy")
    sync(team.bob)
    assert tip(team.bare, "agent/codex") == bobs["sha"]
    # ana's codex branch goes another way (a rewrite): never forced over bob's
    git(team.ana, "update-ref", "refs/heads/agent/codex", "main")
    _propose(team.ana, "codex", "Ana's other copy")
    done = sync(team.ana)
    assert done.agent_pushed == ()
    assert tip(team.bare, "agent/codex") == bobs["sha"]
    assert any("agent/codex" in w and "not pushed" in w and "fast-forward" in w
               for w in done.warnings), done.warnings
    # a branch behind the remote's (bob wrote more) is simply not pushed, without a warning
    git(team.ana, "update-ref", "refs/heads/agent/codex", bobs["sha"])
    _propose(team.bob, "codex", "Bob again")
    sync(team.bob)
    done = sync(team.ana)
    assert done.agent_pushed == () and not any("agent/codex" in w for w in done.warnings)
