"""The trust rule and sync merges (curation/trust.py rule 1): a curator's sync merge on the
trusted line brings its second parent's decisions in; nothing else does."""

from __future__ import annotations

from pathlib import Path

import pytest

from factdesk.curation.trust import trusted_decisions
from tests.conftest import Corpus, git
from tests.review.test_sync import A, B, C, Team, team, tip  # noqa: F401  (the fixture)

FORGED_ID = "0123456789abcdef"


def _commit(repo: Path, parents: list[str], message: str, email: str, name: str = "x") -> str:
    tree = git(repo, "rev-parse", f"{parents[0]}^{{tree}}").strip()
    args = ["commit-tree", tree]
    for p in parents:
        args += ["-p", p]
    return git(repo, *args, "-m", message, author=name, email=email).strip()


def _forged_decision(repo: Path) -> str:
    """A commit that reads as ana's relabel (curator identity, well-formed trailers)."""
    return _commit(repo, ["HEAD"], "relabel: forged\n\nFactdesk-Action: relabel\n"
                   f"Factdesk-Action-Id: {FORGED_ID}", "ana+relabel@example.org", "ana")


def _sync_message() -> str:
    return "sync: merge origin/main into main (1 commit)\n\nFactdesk-Action: sync\n" \
           "Factdesk-Action-Id: fedcba9876543210"


@pytest.mark.parametrize("who,followed", [("ana+sync@example.org", True),
                                          ("codex+sync@agents.knomit.io", False),
                                          ("ana+relabel@example.org", False)])
def test_only_a_curators_sync_merge_is_followed(corpus: Corpus, who: str, followed: bool) -> None:
    repo = corpus.root
    forged = _forged_decision(repo)
    merge = _commit(repo, ["HEAD", forged], _sync_message(), who)
    git(repo, "update-ref", "refs/heads/main", merge)
    ids = [d.action_id for d in trusted_decisions(repo)]
    assert (FORGED_ID in ids) == followed


def test_a_merge_without_the_sync_trailer_is_not_followed(corpus: Corpus) -> None:
    repo = corpus.root
    forged = _forged_decision(repo)
    merge = _commit(repo, ["HEAD", forged], "Merge branch 'x'", "ana+sync@example.org")
    git(repo, "update-ref", "refs/heads/main", merge)
    assert FORGED_ID not in [d.action_id for d in trusted_decisions(repo)]


def test_a_forged_sync_merge_on_an_agent_branch_is_never_followed(corpus: Corpus) -> None:
    """The agent's branch holds a perfect "sync merge" of a forged decision; the curator's
    review merge brings it in as a second parent: never a trusted line."""
    repo = corpus.root
    base = tip(repo)
    forged = _forged_decision(repo)
    fake_sync = _commit(repo, [base, forged], _sync_message(), "ana+sync@example.org", "ana")
    review = _commit(repo, [base, fake_sync], "review: merge agent/box-0123abcd",
                     "ana@example.org", "ana")
    git(repo, "update-ref", "refs/heads/main", review)
    assert FORGED_ID not in [d.action_id for d in trusted_decisions(repo)]


def test_criss_cross_sync_merges_count_each_decision_once(team: Team) -> None:  # noqa: F811
    from factdesk.review.sync import sync
    made = []
    made.append(team.curation(team.ana).relabel([A], {"type": "insight"}, "a1").action_id)
    sync(team.ana)
    made.append(team.curation(team.bob).relabel([B], {"type": "insight"}, "b1").action_id)
    made.append(team.curation(team.ana).relabel([C], {"type": "insight"}, "a2").action_id)
    sync(team.bob)  # merge 1: bob's b1 + ana's a1
    sync(team.ana)  # merge 2: ana's a2 + merge 1
    sync(team.bob)  # fast-forward
    assert tip(team.ana) == tip(team.bob)
    for repo in (team.ana, team.bob):
        ids = [d.action_id for d in trusted_decisions(repo)]
        assert sorted(ids) == sorted(made)  # each once
        # newest first, what a sync merge brought in just below it (the merge is the newest
        # event): merge 2 brought b1 (through merge 1), then ana's a2, then a1
        assert ids == [made[1], made[2], made[0]]


def test_a_sync_merge_with_more_than_two_parents_is_not_followed(corpus: Corpus) -> None:
    """Issue 22, mutant b: an octopus "sync merge" is no sync merge (factdesk writes two
    parents), so the forged decision on its second parent stays untrusted."""
    repo = corpus.root
    base = tip(repo)
    forged = _forged_decision(repo)
    third = _commit(repo, [base], "x", "ana@example.org", "ana")
    merge = _commit(repo, [base, forged, third], _sync_message(), "ana+sync@example.org", "ana")
    git(repo, "update-ref", "refs/heads/main", merge)
    assert FORGED_ID not in [d.action_id for d in trusted_decisions(repo)]
    two = _commit(repo, [base, forged], _sync_message(), "ana+sync@example.org", "ana")
    git(repo, "update-ref", "refs/heads/main", two)  # (control: two parents are followed)
    assert FORGED_ID in [d.action_id for d in trusted_decisions(repo)]


def test_an_agent_authored_sync_merge_is_not_followed_even_with_a_curator_committer(
        corpus: Corpus) -> None:
    """Issue 22, mutant c: author and committer are checked apart."""
    repo = corpus.root
    forged = _forged_decision(repo)
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    merge = git(repo, "commit-tree", tree, "-p", "HEAD", "-p", forged, "-m", _sync_message(),
                author="codex", email="codex+sync@agents.knomit.io",
                env={"GIT_COMMITTER_NAME": "ana", "GIT_COMMITTER_EMAIL": "ana@example.org"}).strip()
    assert git(repo, "log", "-1", "--format=%ae|%ce", merge).strip() == \
        "codex+sync@agents.knomit.io|ana@example.org"
    git(repo, "update-ref", "refs/heads/main", merge)
    assert FORGED_ID not in [d.action_id for d in trusted_decisions(repo)]
    # and the committer alone: a curator author with an agent committer is not followed either
    other = git(repo, "commit-tree", tree, "-p", "HEAD", "-p", forged, "-m", _sync_message(),
                author="ana", email="ana+sync@example.org",
                env={"GIT_COMMITTER_NAME": "codex",
                     "GIT_COMMITTER_EMAIL": "codex@agents.knomit.io"}).strip()
    git(repo, "update-ref", "refs/heads/main", other)
    assert FORGED_ID not in [d.action_id for d in trusted_decisions(repo)]


def _review_message(upto: str) -> str:
    return ("merge: agent/box-0123abcd into main (review up to x)\n\nrecorded\n\n"
            f"Factdesk-Review-Merge: agent/box-0123abcd\nFactdesk-Reviewed-Up-To: {upto}\n"
            "Factdesk-Action-Id: 0011223344556677")


def test_arrivals_tell_review_merges_from_look_alikes(corpus: Corpus) -> None:
    """Sync's guard (issue 22 #2) reads each incoming commit with the trust rules: a review
    merge arrives; one with three parents, an agent author or committer, or naming another
    commit than its second parent is no review merge (an agent commit when an agent made
    it, else a merge adopted and named)."""
    from factdesk.curation.trust import AGENT, DECISION, OTHER, REVIEW_MERGE, arrivals

    repo = corpus.root
    base = tip(repo)
    agent = _commit(repo, [base], "learn: x", "codex+learn@agents.knomit.io", "codex")
    hand = _commit(repo, [base], "hand", "bob@example.org", "bob")
    cases = {
        "ok": (_commit(repo, [base, agent], _review_message(agent), "ana+merge@example.org",
                       "ana"), REVIEW_MERGE),
        "three": (_commit(repo, [base, agent, hand], _review_message(agent),
                          "ana+merge@example.org", "ana"), OTHER),
        "agent": (_commit(repo, [base, agent], _review_message(agent),
                          "codex+merge@agents.knomit.io", "codex"), AGENT),
        "elsewhere": (_commit(repo, [base, agent], _review_message(base),
                              "ana+merge@example.org", "ana"), OTHER),
        "op": (_commit(repo, [base, agent], _review_message(agent), "ana+sync@example.org",
                       "ana"), OTHER),
        "decision": (_forged_decision(repo), DECISION),
        "plain agent": (agent, AGENT),
    }
    for name, (sha, kind) in cases.items():
        (got,) = [a for a in arrivals(repo, sha, base) if a.commit == sha]
        assert got.kind == kind, name
    committer_only = git(repo, "commit-tree", git(repo, "rev-parse", "HEAD^{tree}").strip(),
                         "-p", base, "-p", agent, "-m", _review_message(agent), author="ana",
                         email="ana+merge@example.org",
                         env={"GIT_COMMITTER_EMAIL": "codex@agents.knomit.io"}).strip()
    (got,) = [a for a in arrivals(repo, committer_only, base) if a.commit == committer_only]
    assert got.kind == AGENT and got.agent == "codex@agents.knomit.io"


# -- what `arrivals` calls each incoming commit (the mutation run of issue 22 left these alive)


def test_merges_without_a_trailer_block_arrive_as_other_commits(corpus: Corpus) -> None:
    """A merge shaped like a curator's sync or review merge (two parents, a curator's
    `+sync` / `+merge` author) but with no trailer block at all is neither: it is adopted
    and named, and its second parent's forged decision is never read as trusted."""
    from factdesk.curation.trust import OTHER, arrivals

    repo = corpus.root
    base = tip(repo)
    forged = _forged_decision(repo)
    sync_like = _commit(repo, [base, forged], "Merge branch 'x'", "ana+sync@example.org", "ana")
    review_like = _commit(repo, [base, forged], "Merge agent/box-0123abcd", "ana+merge@example.org",
                          "ana")
    for merge in (sync_like, review_like):
        kinds = {a.commit: a.kind for a in arrivals(repo, merge, base)}
        assert kinds[merge] == OTHER, kinds


def test_what_a_sync_merge_brings_is_listed_under_it(corpus: Corpus) -> None:
    """Each commit of a trusted sync merge's second-parent line arrives with the merge as
    its `top` (the first-parent commit that brings it: sync's guard holds back by it)."""
    from factdesk.curation.trust import DECISION, SYNC_MERGE, arrivals

    repo = corpus.root
    base = tip(repo)
    forged = _forged_decision(repo)
    merge = _commit(repo, [base, forged], _sync_message(), "ana+sync@example.org", "ana")
    came = {a.commit: a for a in arrivals(repo, merge, base)}
    assert came[merge].kind == SYNC_MERGE and came[merge].top == merge
    assert came[forged].kind == DECISION and came[forged].top == merge
