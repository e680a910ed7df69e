"""An agent writing to the same checkout while the app curates (RELIABILITY.md §3.5, D08,
E06, E09): every acknowledged commit survives, history stays linear, `git fsck` is clean,
nothing an agent wrote is lost, and the app either completes or refuses clearly."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
from pathlib import Path

from factdesk.core import open_corpus
from factdesk.curation import Conflict, Curation, CurationError
from tests.conftest import GOOD_FACT, Corpus

A = "kb/gotchas/db/a1a1a1a1.md"
B = "kb/gotchas/db/b2b2b2b2.md"
TYPES = ["pattern", "concept", "observation", "process"]
ROUNDS = 25


def _agent_git(repo: str, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "codex", "GIT_AUTHOR_EMAIL": "codex+learn@agents.knomit.io",
           "GIT_COMMITTER_NAME": "codex", "GIT_COMMITTER_EMAIL": "codex@agents.knomit.io"}
    for _ in range(50):
        proc = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-C", repo, *args],
                              capture_output=True, env=env)
        if proc.returncode == 0:
            return
        if b"index.lock" not in proc.stderr and b"cannot lock ref" not in proc.stderr:
            raise RuntimeError(proc.stderr.decode())
    raise RuntimeError("agent gave up on git locks")


def agent_other_files(repo: str, n: int, barrier: multiprocessing.synchronize.Barrier) -> None:
    for i in range(n):
        barrier.wait(30)
        rel = f"kb/gotchas/agent/{i:08x}.md"
        path = Path(repo) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(GOOD_FACT.format(type="observation", title=f"Agent fact {i}", refs="",
                                         body="Seen 3 times."))
        _agent_git(repo, "add", "--", rel)
        _agent_git(repo, "commit", "-qm", f"learn: agent fact {i}", "--", rel)


def agent_same_file(repo: str, n: int, barrier: multiprocessing.synchronize.Barrier) -> None:
    for i in range(n):
        barrier.wait(30)
        path = Path(repo) / A
        lines = path.read_text().split("\n")
        lines = [f"confidence: 0.{i % 9 + 1}" if line.startswith("confidence: ") else line
                 for line in lines]
        path.write_text("\n".join(lines))  # a plain, non-atomic write, as agents do
        _agent_git(repo, "add", "--", A)
        _agent_git(repo, "commit", "-qm", f"update: agent edit {i}", "--", A)


def _race(corpus: Corpus, target: object, paths: list[str]) -> tuple[list[str], int]:
    repo = corpus.root
    cur = Curation(open_corpus(repo), update_index=False)
    barrier = multiprocessing.get_context("fork").Barrier(2)
    proc = multiprocessing.get_context("fork").Process(target=target, args=(str(repo), ROUNDS, barrier))
    proc.start()
    acked: list[str] = []
    refused = 0
    for i in range(ROUNDS):
        barrier.wait(30)
        try:
            result = cur.relabel(paths, {"type": TYPES[i % 3]}, f"round {i}")
            assert result.commit
            acked.append(result.commit)
        except CurationError as exc:
            # refused clearly: a conflict, the agent's uncommitted edit, or a file caught
            # half-written by the agent (empty) — never a crash, never a silent overwrite
            assert isinstance(exc, Conflict) or any(
                s in str(exc) for s in ("nothing to change", "uncommitted", "unreadable")), exc
            refused += 1
    proc.join(60)
    assert proc.exitcode == 0
    return acked, refused


def _assert_healthy(repo: Path, acked: list[str]) -> None:
    log = subprocess.run(["git", "-C", str(repo), "rev-list", "--first-parent", "HEAD"],
                         capture_output=True, text=True, check=True).stdout.split()
    merges = subprocess.run(["git", "-C", str(repo), "rev-list", "--merges", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.split()
    assert not merges
    assert all(sha in log for sha in acked), "an acknowledged commit was lost"
    fsck = subprocess.run(["git", "-C", str(repo), "fsck", "--no-dangling"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr


def test_agent_commits_other_files_while_the_app_relabels(corpus: Corpus) -> None:
    acked, _ = _race(corpus, agent_other_files, [A])
    _assert_healthy(corpus.root, acked)
    # every agent fact is committed and on disk, nothing of theirs is lost
    for i in range(ROUNDS):
        rel = f"kb/gotchas/agent/{i:08x}.md"
        assert (corpus.root / rel).exists()
        check = subprocess.run(["git", "-C", str(corpus.root), "cat-file", "-e", f"HEAD:{rel}"])
        assert check.returncode == 0
    assert len(acked) >= ROUNDS // 2
    assert subprocess.run(["git", "-C", str(corpus.root), "status", "--porcelain"],
                          capture_output=True, text=True).stdout == ""


def test_agent_edits_the_same_file_while_the_app_relabels(corpus: Corpus) -> None:
    acked, _ = _race(corpus, agent_same_file, [A])
    _assert_healthy(corpus.root, acked)
    # the agent's last edit is in HEAD and on disk: never overwritten by the app
    text = (corpus.root / A).read_text()
    head = subprocess.run(["git", "-C", str(corpus.root), "show", f"HEAD:{A}"], capture_output=True,
                          text=True).stdout
    assert text == head
    assert f"confidence: 0.{(ROUNDS - 1) % 9 + 1}" in text


def test_staged_work_survives_every_relabel(corpus: Corpus) -> None:
    repo = corpus.root
    corpus.fact("kb/gotchas/db/e5e5e5e5.md", title="Agent staged this")
    subprocess.run(["git", "-C", str(repo), "add", "kb/gotchas/db/e5e5e5e5.md"], check=True)
    cur = Curation(open_corpus(repo), update_index=False)
    for i in range(5):
        cur.relabel([A, B], {"type": TYPES[i % 3]}, f"round {i}")
        staged = subprocess.run(["git", "-C", str(repo), "diff", "--cached", "--name-only"],
                                capture_output=True, text=True).stdout.split()
        assert staged == ["kb/gotchas/db/e5e5e5e5.md"]
        shown = subprocess.run(["git", "-C", str(repo), "show", "--name-only", "--format=", "HEAD"],
                               capture_output=True, text=True).stdout.split()
        assert sorted(shown) == [A, B]
