"""SIGKILL during an accept (and during the review merge that follows it): the files hold old
or new bytes, HEAD moved exactly when they hold the new ones, recovery finishes or rolls
back and says so, `git fsck` is clean (tests/curation/test_crash.py's protocol)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from factdesk import faults
from factdesk.curation import recover
from factdesk.curation.gitwrite import pending_actions
from tests.conftest import Corpus, git
from tests.review.decide_helpers import JOB, A, N, agent_commit, fact_text

POINTS = ("action.journal_written", "action.between_files", "action.file_replaced",
          "commit.commit_written", "commit.before_cas", "commit.ref_updated", "commit.published")


def run_cli(repo: Path, *args: str, crash_at: str | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "FACTDESK_CURATOR_NAME": "ana", "FACTDESK_CURATOR_EMAIL": "ana@example.org"}
    if crash_at:
        env[faults.ENV] = crash_at
    return subprocess.run([sys.executable, "-m", "factdesk.cli", *args, "--kb", str(repo)],
                          capture_output=True, env=env, timeout=120)


@pytest.mark.parametrize("point", POINTS)
def test_kill_during_accept(corpus: Corpus, point: str) -> None:
    repo = corpus.root
    sha = agent_commit(corpus, "learn: two facts", {N: fact_text("Replica lag is 3 s"),
                                                    A: fact_text("Pool exhausts at 250")})
    head0 = git(repo, "rev-parse", "HEAD").strip()
    old_a = (repo / A).read_bytes()
    new_a = git(repo, "show", f"{sha}:{A}").encode()
    proc = run_cli(repo, "accept", sha[:10], "--reason", "crash test", crash_at=point)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    report = recover(repo)
    assert not pending_actions(repo)
    now_a = (repo / A).read_bytes()
    assert now_a in (old_a, new_a)
    # all or nothing: both facts, and HEAD has them exactly when the files do
    accepted = now_a == new_a
    assert (repo / N).exists() == accepted, (point, report)
    chain = git(repo, "rev-list", "--first-parent", f"{head0}..HEAD").split()
    assert bool(chain) == accepted, (point, report)
    if accepted:
        assert git(repo, "show", f"HEAD:{A}").encode() == now_a
        assert "Factdesk-Action: accept" in git(repo, "log", "-1", "--format=%B", chain[-1])
    if point.startswith(("action.file_replaced", "commit.")):
        assert report, f"a crash at {point} must be reported at the next start"
    assert git(repo, "status", "--porcelain") == ""
    fsck = subprocess.run(["git", "-C", str(repo), "fsck", "--no-dangling"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr
    # whatever happened, the proposal is decidable (again, or already): no half state
    again = run_cli(repo, "accept", sha[:10], "--reason", "again")
    assert (again.returncode == 0) != accepted, again.stderr.decode()


def test_kill_during_the_review_merge_is_completed_as_a_merge(corpus: Corpus) -> None:
    """A kill in the accept's write, then one in the merge's own write after its job-state
    file was replaced: recovery completes each, the merge with both parents (from the
    journal)."""
    repo = corpus.root
    sha = agent_commit(corpus, "learn: lag", {N: fact_text("Replica lag is 3 s"),
                                              JOB: '{"step": 1}\n'})
    env_point = "action.file_replaced"  # the accept replaces kb/, the merge .knomit/jobs/
    # the accept passes the point first: crash only on the merge's pass (its file is JOB)
    proc = run_cli(repo, "accept", sha, "--reason", "ok", crash_at=env_point)
    assert proc.returncode == -signal.SIGKILL
    report = recover(repo)
    assert report and report[0].outcome == "completed"
    # the accept was the one killed (its point comes first): completed as a one-parent commit
    assert (repo / N).exists()
    assert git(repo, "log", "-1", "--format=%P", "HEAD").split().__len__() == 1
    # the merge killed after its file was replaced: recovery rebuilds it with both parents
    script = ("import sys; from pathlib import Path; from factdesk.core import open_corpus; "
              "from factdesk.review.decide import Review; ix = open_corpus(Path(sys.argv[1])); "
              "ix.update(); Review(ix).merge_reviewed('agent/host-8ef0cd32')")
    env = {**os.environ, "FACTDESK_CURATOR_NAME": "ana", "FACTDESK_CURATOR_EMAIL": "ana@example.org",
           faults.ENV: "action.file_replaced"}
    proc = subprocess.run([sys.executable, "-c", script, str(repo)], env=env, capture_output=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert (repo / JOB).read_text() == '{"step": 1}\n'  # replaced, not committed yet
    report = recover(repo)
    assert [r.outcome for r in report] == ["completed"], report
    parents = git(repo, "log", "-1", "--format=%P", "HEAD").split()
    assert len(parents) == 2 and parents[1] == sha
    assert git(repo, "log", "-1", "--format=%s", "HEAD").startswith("merge: agent/host-8ef0cd32")
    assert git(repo, "status", "--porcelain") == ""
    fsck = subprocess.run(["git", "-C", str(repo), "fsck", "--no-dangling"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr
