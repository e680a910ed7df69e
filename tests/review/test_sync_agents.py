"""Sync's guard (issue 22 #2): agent commits pushed straight to the curated branch never
arrive without a decision. The join stops, naming each one, and changes nothing; with
`as_proposals` they are taken in as proposals on a local `agent/<id>` branch while the
curated branch stays where the curators left it. Non-agent commits that are no decision (a
hand commit, a hosting site's merge) are adopted and named."""

from __future__ import annotations

from pathlib import Path

import pytest

from factdesk.core import open_corpus
from factdesk.curation import Identity, Refused
from factdesk.review.decide import Review
from factdesk.review.proposals import load_queue
from factdesk.review.sync import AgentCommits, sync
from tests.conftest import GOOD_FACT, git
from tests.review.test_sync import A, B, Team, clone_as, team, tip  # noqa: F401  (the fixture)

AGENT = "box-0123abcd"
AGENT_EMAIL = f"{AGENT}+learn@agents.knomit.io"
D = "kb/gotchas/db/d4d4d4d4.md"
E = "kb/gotchas/db/e5e5e5e5.md"


def _write(repo: Path, rel: str, title: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(GOOD_FACT.format(type="observation", title=title, refs="",
                                     body="Body text with 3 numbers."))


def _commit(repo: Path, message: str, *, author: tuple[str, str],
            committer: tuple[str, str] | None = None) -> str:
    committer = committer or author
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message, author=author[0], email=author[1],
        env={"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]})
    return tip(repo)


def _agent_pushes_main(team: Team, tmp_path: Path, facts: dict[str, str], *,  # noqa: F811  # noqa: F811
                       committer: tuple[str, str] | None = None) -> list[str]:
    """An agent clone commits each fact on main as the agent and pushes main itself."""
    agent = tmp_path / "agent"
    if not agent.exists():
        clone_as(team.bare, agent, AGENT)
    git(agent, "pull", "-q", "--ff-only", "origin", "main")
    made = []
    for rel, title in facts.items():
        _write(agent, rel, title)
        made.append(_commit(agent, f"learn: {title}", author=(AGENT, AGENT_EMAIL),
                            committer=committer or (AGENT, f"{AGENT}@agents.knomit.io")))
    git(agent, "push", "-q", "origin", "main")
    return made


def _open(repo: Path) -> int:
    return sum(1 for p in load_queue(repo).proposals if p.status == "open")


def test_agent_commits_pushed_to_main_stop_the_join_and_change_nothing(
        team: Team, tmp_path: Path) -> None:  # noqa: F811
    made = _agent_pushes_main(team, tmp_path, {D: "Pool size is 200", E: "Lock lasts 40 s"})
    before, remote = tip(team.ana), tip(team.bare, "main")
    with pytest.raises(AgentCommits) as caught:
        sync(team.ana)
    said = str(caught.value)
    assert isinstance(caught.value, Refused)
    assert [c.commit for c in caught.value.commits] == list(reversed(made))  # newest first
    for sha in made:
        assert sha[:12] in said
    assert AGENT_EMAIL in said and "as proposals" in said and "nothing" in said.lower()
    assert tip(team.ana) == before and tip(team.bare, "main") == remote
    assert not (team.ana / D).exists()
    assert git(team.ana, "status", "--porcelain") == ""


def test_only_the_committer_being_an_agent_stops_the_join_too(
        team: Team, tmp_path: Path) -> None:  # noqa: F811
    agent = tmp_path / "agent"
    clone_as(team.bare, agent, AGENT)
    _write(agent, D, "Pool size is 200")
    made = _commit(agent, "learn: forged author", author=("ana", "ana@example.org"),
                   committer=(AGENT, f"{AGENT}@agents.knomit.io"))
    git(agent, "push", "-q", "origin", "main")
    with pytest.raises(AgentCommits, match=made[:12]):
        sync(team.ana)


def test_as_proposals_keeps_main_and_queues_the_agent_commits(
        team: Team, tmp_path: Path) -> None:  # noqa: F811
    made = _agent_pushes_main(team, tmp_path, {D: "Pool size is 200", E: "Lock lasts 40 s"})
    before, remote = tip(team.ana), tip(team.bare, "main")
    waiting = _open(team.ana)
    done = sync(team.ana, as_proposals=True)
    assert tip(team.ana) == before  # main stays at the curated state
    assert done.proposal_branch == f"agent/{AGENT}"
    assert tip(team.ana, f"refs/heads/agent/{AGENT}") == made[-1]
    assert [c.commit for c in done.proposals] == list(reversed(made))
    assert _open(team.ana) == waiting + 2
    # nothing was pushed over the remote's main (it holds what the agent pushed)
    assert tip(team.bare, "main") == remote
    assert done.pushed is None and any("proposal" in w for w in done.warnings)
    # deciding them records the review merge; then main reaches the remote's and pushes
    ix = open_corpus(team.ana)
    ix.update()
    review = Review(ix, Identity("ana", "ana@example.org"))
    review.accept([made[0]], "checked")
    review.reject([made[1]], "not this one")
    assert _open(team.ana) == waiting
    again = sync(team.ana)
    assert again.pushed is not None and again.pushed.status == "pushed"
    assert tip(team.bare, "main") == tip(team.ana)
    assert (team.ana / D).exists() and not (team.ana / E).exists()


def test_a_non_agent_prefix_is_adopted_and_the_agent_rest_becomes_proposals(
        team: Team, tmp_path: Path) -> None:  # noqa: F811
    bob_hand = tmp_path / "bob-hand"
    clone_as(team.bare, bob_hand, "bob")
    (bob_hand / "README.md").write_text("# notes by hand\n")
    hand = _commit(bob_hand, "docs: readme by hand", author=("bob", "bob@example.org"))
    git(bob_hand, "push", "-q", "origin", "main")
    made = _agent_pushes_main(team, tmp_path, {D: "Pool size is 200"})
    with pytest.raises(AgentCommits) as caught:
        sync(team.ana)
    assert [c.commit for c in caught.value.commits] == made  # the hand commit is not named
    done = sync(team.ana, as_proposals=True)
    assert tip(team.ana) == hand  # the hand commit came in, the agent's did not
    assert [c.commit for c in done.adopted] == [hand]
    assert [c.commit for c in done.proposals] == made


def test_hand_commits_and_curator_decisions_are_adopted_and_named(team: Team) -> None:  # noqa: F811
    team.curation(team.bob).relabel([A], {"type": "insight"}, "bob's call")
    (team.bob / "README.md").write_text("# by hand\n")
    hand = _commit(team.bob, "docs: readme by hand", author=("bob", "bob@example.org"))
    sync(team.bob)
    done = sync(team.ana)
    assert done.joined == "fast-forward" and tip(team.ana) == hand
    assert [c.commit for c in done.adopted] == [hand]  # the decision is not listed
    assert "docs: readme by hand" in done.adopted[0].subject


def test_a_curators_sync_merge_brings_a_clean_line(team: Team) -> None:  # noqa: F811
    """bob's sync merge (ana's line and his own) reaches ana as a fast-forward: no agent
    commit on either line, nothing stops."""
    team.curation(team.ana).relabel([A], {"type": "insight"}, "ana's call")
    team.curation(team.bob).relabel([B], {"type": "insight"}, "bob's call")
    sync(team.ana)
    sync(team.bob)
    done = sync(team.ana)
    assert done.joined == "fast-forward" and done.adopted == ()


def test_the_command_line_refuses_in_words_and_takes_them_in_with_as_proposals(
        team: Team, tmp_path: Path) -> None:  # noqa: F811
    from tests.review.test_sync_cli import cli

    made = _agent_pushes_main(team, tmp_path, {D: "Pool size is 200"})
    before = tip(team.ana)
    stopped = cli(team.ana, "sync")
    assert stopped.returncode == 1
    assert made[0][:12] in stopped.stderr and "--as-proposals" in stopped.stderr
    assert "Traceback" not in stopped.stderr and tip(team.ana) == before
    as_json = cli(team.ana, "sync", "--format", "json")
    assert as_json.returncode == 1
    import json
    assert [c["commit"] for c in json.loads(as_json.stdout)["agent_commits"]] == made
    taken = cli(team.ana, "sync", "--as-proposals")
    assert taken.returncode == 0, taken.stderr
    assert f"1 agent commit taken in as proposals on agent/{AGENT}" in taken.stdout
    assert made[0][:12] in taken.stdout and tip(team.ana) == before
    assert "not pushed" in taken.stderr


def test_the_command_line_names_each_adopted_commit(team: Team) -> None:  # noqa: F811
    from tests.review.test_sync_cli import cli

    (team.bob / "README.md").write_text("# by hand\n")
    hand = _commit(team.bob, "docs: readme by hand", author=("bob", "bob@example.org"))
    sync(team.bob)
    done = cli(team.ana, "sync")
    assert done.returncode == 0, done.stderr
    assert "1 commit adopted that is no decision:" in done.stdout
    assert f"{hand[:12]} bob@example.org: docs: readme by hand" in done.stdout


def test_a_plain_sync_after_taking_them_in_does_not_stop_again(team: Team, tmp_path: Path) -> None:  # noqa: F811
    """Once queued, the same agent commits are the curator's choice already: a plain sync
    keeps them as proposals (and says so) instead of stopping again."""
    made = _agent_pushes_main(team, tmp_path, {D: "Pool size is 200"})
    before = tip(team.ana)
    sync(team.ana, as_proposals=True)
    again = sync(team.ana)
    assert tip(team.ana) == before and again.proposal_branch == f"agent/{AGENT}"
    assert [c.commit for c in again.proposals] == made and again.pushed is None
