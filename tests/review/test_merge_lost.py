"""The review merge lost to a crash (issue 22, item 6): a SIGKILL right after the decision's
ref moved, before its review merge. Recovery records it; so does the next decision (even on
another branch, when something else ran the recovery), and `factdesk merge-reviewed`."""

from __future__ import annotations

import signal

from factdesk.curation import recover
from tests.conftest import Corpus, git
from tests.review.decide_helpers import BRANCH, A, N, agent_commit, fact_text
from tests.review.test_decide_crash import run_cli


def _merges(repo) -> list[str]:  # type: ignore[no-untyped-def]
    return git(repo, "log", "--first-parent", "--merges", "--format=%s", "HEAD").splitlines()


def test_recovery_records_the_review_merge_a_crash_lost(corpus: Corpus) -> None:
    repo = corpus.root
    p1 = agent_commit(corpus, "learn: lag", {N: fact_text("Replica lag is 3 s")})
    p2 = agent_commit(corpus, "update: pool", {A: fact_text("Pool exhausts at 250")}, op="update")
    assert run_cli(repo, "accept", p1, "--reason", "ok").returncode == 0
    proc = run_cli(repo, "reject", p2, "--reason", "no", crash_at="commit.ref_updated")
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert git(repo, "log", "-1", "--format=%s").startswith("reject:") and _merges(repo) == []
    # the rerun: recovery completes the reject, and records the merge it lost
    again = run_cli(repo, "reject", p2, "--reason", "no")
    assert again.returncode == 1 and b"already" in again.stderr, again.stderr
    assert b"review merge recorded" in again.stderr, again.stderr
    assert _merges(repo) == [f"merge: {BRANCH} into main (review up to {p2[:12]})"]
    assert git(repo, "status", "--porcelain") == ""


def test_the_next_decision_records_a_lost_merge_of_another_branch(corpus: Corpus) -> None:
    repo = corpus.root
    p1 = agent_commit(corpus, "learn: lag", {N: fact_text("Replica lag is 3 s")})
    proc = run_cli(repo, "reject", p1, "--reason", "no", crash_at="commit.ref_updated")
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert recover(repo)  # (something else ran the recovery: the merge is still missing)
    other = agent_commit(corpus, "learn: other", {"kb/gotchas/db/abababab.md": fact_text("X")},
                         branch="agent/other-1")
    assert _merges(repo) == []
    done = run_cli(repo, "accept", other, "--reason", "ok")
    assert done.returncode == 0, done.stderr
    assert f"merge: {BRANCH} into main (review up to {p1[:12]})" in _merges(repo)
    assert "merge: agent/other-1 into main" in _merges(repo)[0]


def test_merge_reviewed_records_a_lost_merge(corpus: Corpus) -> None:
    repo = corpus.root
    p1 = agent_commit(corpus, "learn: lag", {N: fact_text("Replica lag is 3 s")})
    proc = run_cli(repo, "accept", p1, "--reason", "ok", crash_at="commit.ref_updated")
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert recover(repo) and _merges(repo) == []
    done = run_cli(repo, "merge-reviewed", "--branch", BRANCH)
    assert done.returncode == 0 and b"review merge recorded" in done.stderr, done.stderr
    assert _merges(repo) == [f"merge: {BRANCH} into main (review up to {p1[:12]})"]
    again = run_cli(repo, "merge-reviewed", "--branch", BRANCH)
    assert again.returncode == 0 and b"nothing to record" in again.stdout
