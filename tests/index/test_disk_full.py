"""Issue 22 #10 on a real full disk (a 5 MiB tmpfs; needs root and mount, else skipped):
a full disk is no damage. The index is kept (never set aside as `.corrupt`), the command
says "full" in words (never a traceback), and once there is room the index is updated in
place; `accept` with 40, 12, 4 or 0 KiB free ends in words too."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ONTOLOGY, Corpus, git
from tests.review.decide_helpers import BRANCH, agent_commit, fact_text

APP = Path(__file__).resolve().parents[2] / "app"


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "fs"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=5m", "tmpfs", str(mnt)],
            capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(APP), "FACTDESK_CURATOR_NAME": "ana",
           "FACTDESK_CURATOR_EMAIL": "ana@example.org"}
    return subprocess.run([sys.executable, "-m", "factdesk.cli", *args, "--kb", str(repo)],
                          capture_output=True, text=True, env=env, timeout=300)


def fill(mnt: Path, free_kib: int) -> Path:
    """Leave about `free_kib` KiB free on the file system (a real ENOSPC after that)."""
    filler = mnt / f"filler-{free_kib}"
    st = os.statvfs(mnt)
    with open(filler, "wb") as f, contextlib.suppress(OSError):
        f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - free_kib * 1024))
        f.flush()
    return filler


def corpus_on(mnt: Path, facts: int = 60) -> Corpus:
    repo = mnt / "kb"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    c = Corpus(repo)
    c.write(".knomit/ontology.yaml", ONTOLOGY)
    for i in range(facts):
        c.fact(f"kb/gotchas/db/{i:08x}.md", title=f"Fact number {i} about pools")
    c.commit("learn: facts")
    return c


def test_a_full_disk_keeps_the_index_and_says_so(tmpfs: Path) -> None:
    corpus = corpus_on(tmpfs)
    repo = corpus.root
    assert cli(repo, "index").returncode == 0
    for i in range(60, 70):
        corpus.fact(f"kb/gotchas/db/{i:08x}.md", title=f"Fact number {i} about pools")
    filler = fill(tmpfs, 16)
    for args in (["index"], ["search", "pools"], ["check"]):
        proc = cli(repo, *args)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode == 1 or "full" in proc.stderr, (args, proc.stderr)
        assert "disk" in proc.stderr and "full" in proc.stderr, (args, proc.stderr)
        assert not list((repo / ".git" / "factdesk").glob("*.corrupt*")), (args, proc.stderr)
        assert (repo / ".git" / "factdesk" / "index.v9.db").exists() or list(
            (repo / ".git" / "factdesk").glob("index.v*.db"))
    filler.unlink()
    proc = cli(repo, "index")
    assert proc.returncode == 0 and proc.stdout.startswith("incremental"), proc.stdout + proc.stderr
    assert "70 facts" in proc.stdout


@pytest.mark.parametrize("free_kib", [40, 12, 4, 0])
def test_accept_with_little_free_space_ends_in_words(tmpfs: Path, free_kib: int) -> None:
    corpus = corpus_on(tmpfs, 30)
    repo = corpus.root
    agent_commit(corpus, "learn: five facts",
                 {f"kb/gotchas/db/{i:08x}.md": fact_text(f"Replica lag {i} is 3 s")
                  for i in range(100, 105)})
    assert cli(repo, "index").returncode == 0
    head0 = git(repo, "rev-parse", "HEAD").strip()
    filler = fill(tmpfs, free_kib)
    proc = cli(repo, "accept", "--all-clean", "--branch", BRANCH, "--reason", "full disk")
    assert "Traceback" not in proc.stderr, proc.stderr
    moved = git(repo, "rev-parse", "HEAD").strip() != head0
    assert proc.returncode == (0 if moved else 1), proc.stderr
    if not moved:
        assert proc.stderr.startswith(("Error: ", "failed: ")), proc.stderr
    filler.unlink()
    after = cli(repo, "index")  # (recovers first) and the index is the corpus's again
    assert after.returncode == 0, after.stderr
    assert git(repo, "status", "--porcelain", "kb") == ""
    assert not list((repo / ".git" / "factdesk").glob("*.corrupt*"))
