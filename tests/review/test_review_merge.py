"""The review merge (review/merge.py, docs/review.md): its shape, knomit's reading rules on
the result (first-parent history of each fact file), `factdesk check`, `git fsck`, the
agent's job state carried over, the next review starting from the new merge base, and an
undone decision reopening its proposal after the merge."""

from __future__ import annotations

import subprocess

import pytest

from factdesk.cli import main
from factdesk.curation.trust import trusted_decisions
from tests.conftest import Corpus, git
from tests.review.decide_helpers import (
    BRANCH,
    JOB,
    A,
    N,
    agent_commit,
    fact_text,
    review_of,
    show,
    trailers,
)


def first_parent_log(repo, path: str) -> list[str]:  # type: ignore[no-untyped-def]
    """knomit's reading: the first-parent history of one fact file (`%an %s`)."""
    return git(repo, "log", "--first-parent", "--format=%an|%s", "--", path).splitlines()


def test_the_review_merge_shape_and_knomits_reading(corpus: Corpus, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    repo = corpus.root
    p1 = agent_commit(corpus, "learn: replica lag", {N: fact_text("Replica lag is 3 s"),
                                                     JOB: '{"step": 1}\n'})
    j1 = agent_commit(corpus, "distill: job state", {JOB: '{"step": 2}\n',
                                                     # (the curators' own: decided)
                                                     ".factdesk/agents.yaml": "agents: {}\n"})
    p2 = agent_commit(corpus, "update: pool", {A: fact_text("Pool exhausts at 250 clients")},
                      op="update")
    review = review_of(corpus)
    a = review.accept([p1], "measured")
    assert not getattr(a, "merges", ())  # p2 is open: the branch is not wholly decided
    assert not getattr(review.reject([j1], "the registry is the curators'"), "merges", ())
    r = review.reject([p2], "no load test")
    [merge] = r.merges  # type: ignore[attr-defined]
    assert show(repo, "%H") == merge
    assert show(repo, "%P").split() == [r.commit, p2]  # first: the curated tip; second: X
    assert show(repo, "%s") == f"merge: {BRANCH} into main (review up to {p2[:12]})"
    assert show(repo, "%ae / %ce") == "ana+merge@example.org / ana@example.org"
    assert trailers(repo)[:2] == [f"Factdesk-Review-Merge: {BRANCH}",
                                  f"Factdesk-Reviewed-Up-To: {p2}"]
    # tree: the curated result, with the agent's job state as it wrote it at X
    assert git(repo, "diff", "--name-only", "HEAD^1", "HEAD").split() == [JOB]
    assert git(repo, "show", f"HEAD:{JOB}") == '{"step": 2}\n' == (repo / JOB).read_text()
    assert git(repo, "show", f"HEAD:{A}") == git(repo, "show", f"HEAD^1:{A}")  # rejected: curated
    # no decision: trust rule 2 (merges are never decisions); the stacks are unchanged
    assert [d.action for d in trusted_decisions(repo)] == ["reject", "reject", "accept"]
    assert not (repo / ".factdesk/agents.yaml").exists()
    # knomit's first-parent reading: each fact's history is the curated line's
    assert first_parent_log(repo, N) == ["host-8ef0cd32|accept: learn: replica lag"]
    assert first_parent_log(repo, A) == ["claude-code|learn: first facts"]
    assert git(repo, "rev-list", "--count", f"HEAD..{BRANCH}").strip() == "0"  # reachable
    assert git(repo, "merge-base", "HEAD", BRANCH).strip() == p2  # the next review starts here
    assert j1 in git(repo, "rev-list", "HEAD")
    fsck = subprocess.run(["git", "-C", str(repo), "fsck", "--no-dangling"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr
    assert git(repo, "status", "--porcelain") == ""
    monkeypatch.setenv("FACTDESK_CURATOR_NAME", "ana")
    monkeypatch.setenv("FACTDESK_CURATOR_EMAIL", "ana@example.org")
    assert main(["check", "--kb", str(repo)]) == 0, capsys.readouterr()
    # the next review: only the agent's new commit is ahead
    p3 = agent_commit(corpus, "learn: more", {"kb/gotchas/db/abababab.md": fact_text("More")})
    assert git(repo, "rev-list", f"HEAD..{BRANCH}").split() == [p3]


def test_an_undone_decision_reopens_its_proposal_after_the_review_merge(corpus: Corpus) -> None:
    repo = corpus.root
    p1 = agent_commit(corpus, "learn: replica lag", {N: fact_text("Replica lag is 3 s")})
    review = review_of(corpus)
    cs = review.accept([p1], "measured")
    assert getattr(cs, "merges", ())
    review.curation.undo()  # the accept (the merge is no action: not on the stack)
    assert not (repo / N).exists()
    assert review.decided().of(p1, N) is None and p1 in review.decided().named
    again = review.accept([p1[:8]], "after all")  # decidable again, though merged
    assert (repo / N).exists() and not getattr(again, "merges", ())  # X is merged already
    assert git(repo, "status", "--porcelain") == ""


def test_a_private_file_the_curated_branch_changed_too_keeps_the_curated_version(
        corpus: Corpus) -> None:
    repo = corpus.root
    p1 = agent_commit(corpus, "learn: lag", {JOB: "agent's\n", N: fact_text("Replica lag")})
    corpus.write(JOB, "curator's\n")
    corpus.commit("docs: curator's job note", author="ana", op="update")
    review = review_of(corpus)
    review.accept([p1], "ok")
    assert (repo / JOB).read_text() == "curator's\n"
    assert f"Factdesk-Kept: {JOB}" in trailers(repo)


def test_prefix_policy_merges_after_each_completed_prefix(corpus: Corpus) -> None:
    repo = corpus.root
    p1 = agent_commit(corpus, "learn: one", {N: fact_text("One")})
    p2 = agent_commit(corpus, "learn: two", {"kb/gotchas/db/abababab.md": fact_text("Two")})
    review = review_of(corpus, merge_policy="prefix")
    cs = review.reject([p2], "no")
    assert not getattr(cs, "merges", ())  # p1 before it is open
    cs = review.accept([p1], "yes")
    assert show(repo, "%P").split() == [cs.commit, p2]
    review2 = review_of(corpus, merge_policy="never")
    p3 = agent_commit(corpus, "learn: three", {"kb/gotchas/db/cdcdcdcd.md": fact_text("Three")})
    cs = review2.accept([p3], "yes")
    assert not getattr(cs, "merges", ()) and show(repo, "%H") == cs.commit
    merge = review2.merge_reviewed(BRANCH)
    assert merge and show(repo, "%P").split() == [cs.commit, p3]
    assert review2.merge_reviewed(BRANCH) is None  # nothing more to record


def test_load_queue_reads_the_decisions_and_reopens_an_undone_one_after_the_merge(
        corpus: Corpus) -> None:
    """End to end with REVQ's reader (review.proposals.load_queue): statuses from the
    decision commits factdesk wrote, the merge dropping decided commits from the range, and
    an undone accept reopening its proposal although the merge made it reachable."""
    from factdesk.review.proposals import load_queue

    repo = corpus.root
    p1 = agent_commit(corpus, "learn: two", {N: fact_text("Lag"), "kb/gotchas/db/abababab.md":
                                             fact_text("Two")})
    p2 = agent_commit(corpus, "update: pool", {A: fact_text("Pool exhausts at 250 clients")})
    review = review_of(corpus)
    review.accept([p1], "the lag only", paths=[N])
    q = load_queue(repo)
    assert {p.sha: p.status for p in q.proposals} == {p1: "partial", p2: "open"}
    review.reject([p1], "no", paths=["kb/gotchas/db/abababab.md"])
    cs = review.reject([p2], "no load test")
    assert getattr(cs, "merges", ())
    q = load_queue(repo)
    statuses = {p.sha: p.status for p in q.proposals}
    assert statuses.get(p2) == "rejected" and statuses.get(p1) == "partial"
    review.curation.undo()  # the reject of p2, after the merge
    q = load_queue(repo)
    assert {p.sha: p.status for p in q.proposals}[p2] == "open"
    assert q.find(p2[:8]).sha == p2
