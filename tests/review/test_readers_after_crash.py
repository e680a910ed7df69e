"""Issue 22 #3 and #4: after a kill in the middle of an accept, no reader serves a fact that
was never accepted, and git's index matches HEAD for every path the action touched before
anything else runs (a plain `git commit -a` then deletes nothing)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from factdesk import faults
from factdesk.curation.gitwrite import pending_actions
from tests.conftest import Corpus, git
from tests.review.decide_helpers import BRANCH, agent_commit, fact_text

APP = Path(__file__).resolve().parents[2] / "app"
NEW = [f"kb/gotchas/db/{i:x}{i:x}{i:x}{i:x}{i:x}{i:x}{i:x}{i:x}.md" for i in range(5, 10)]


def run_cli(repo: Path, *args: str, crash_at: str | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "FACTDESK_CURATOR_NAME": "ana", "FACTDESK_CURATOR_EMAIL": "ana@example.org",
           "PYTHONPATH": str(APP)}
    env.pop(faults.ENV, None)
    if crash_at:
        env[faults.ENV] = crash_at
    return subprocess.run([sys.executable, "-m", "factdesk.cli", *args, "--kb", str(repo)],
                          capture_output=True, env=env, timeout=120)


def _crashed_accept(corpus: Corpus, point: str) -> Path:
    repo = corpus.root
    agent_commit(corpus, "learn: five facts",
                 {p: fact_text(f"Replica lag number {k} is 3 s") for k, p in enumerate(NEW)})
    assert run_cli(repo, "index").returncode == 0
    proc = run_cli(repo, "accept", "--all-clean", "--branch", BRANCH, "--reason", "crash",
                   crash_at=point)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert pending_actions(repo)
    return repo


def _at_head(repo: Path) -> set[str]:
    return set(git(repo, "ls-tree", "-r", "--name-only", "HEAD", "kb").split())


def test_show_and_search_never_serve_a_fact_a_killed_accept_half_wrote(corpus: Corpus) -> None:
    repo = _crashed_accept(corpus, "action.between_files")
    on_disk = [p for p in NEW if (repo / p).exists()]
    assert on_disk and not set(on_disk) & _at_head(repo)  # half-written: on disk, not in HEAD
    shown = run_cli(repo, "show", on_disk[0], "--format", "json")
    # the reader finished or rolled back the action first: what it serves is HEAD's
    at_head = _at_head(repo)
    if on_disk[0] not in at_head:
        assert shown.returncode != 0, shown.stdout.decode()
    found = json.loads(run_cli(repo, "search", "Replica lag", "--format", "json").stdout)
    assert {h["path"] for h in found["results"]} <= at_head
    assert not pending_actions(repo)
    assert git(repo, "status", "--porcelain") == ""


def test_recall_runs_recovery_first(corpus: Corpus) -> None:
    repo = _crashed_accept(corpus, "action.between_files")
    out = json.loads(run_cli(repo, "recall", "Replica lag", "--format", "json").stdout)
    assert {r["path"] for r in out["results"]} <= _at_head(repo)
    assert not pending_actions(repo)


def test_a_reader_that_cannot_take_the_lock_serves_head_and_says_pending(corpus: Corpus) -> None:
    """Another action holds the writer lock: the reader does not wait for it, and the
    pending journal's paths are served as HEAD has them (a new fact: absent; an edited one:
    HEAD's version), said in words; once the lock is free a reader finishes the action and
    the index reads the files again."""
    import fcntl

    repo = corpus.root
    a = "kb/gotchas/db/a1a1a1a1.md"
    agent_commit(corpus, "learn: edits", {a: fact_text("Pool exhausts at 250 clients"),
                                          **{p: fact_text(f"Lag {k} is 3 s") for k, p in enumerate(NEW)}})
    assert run_cli(repo, "index").returncode == 0
    proc = run_cli(repo, "accept", "--all-clean", "--branch", BRANCH, "--reason", "crash",
                   crash_at="action.between_files")
    assert proc.returncode == -signal.SIGKILL
    changed = [p for p in [a, *NEW] if (repo / p).exists() and (
        p not in _at_head(repo) or (repo / p).read_bytes() != git(repo, "show", f"HEAD:{p}").encode())]
    assert changed, "the kill left no file written"
    fd = os.open(repo / ".git" / "factdesk" / "write.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        for p in changed:
            shown = run_cli(repo, "show", p, "--format", "json")
            if p in _at_head(repo):
                data = json.loads(shown.stdout)
                assert data["title"] == "Connection pool exhausts at 200 clients"  # HEAD's
                assert "pending" in data["pending"]
            else:
                assert shown.returncode == 1 and b"pending" in shown.stderr, shown.stdout.decode()
        found = run_cli(repo, "search", "exhausts OR Lag", "--format", "json")
        assert {h["path"] for h in json.loads(found.stdout)["results"]} <= _at_head(repo)
        assert b"warning: a factdesk action is pending" in found.stderr
        assert pending_actions(repo)
    finally:
        os.close(fd)
    shown = run_cli(repo, "show", a, "--format", "json")  # the lock is free: recovered first
    assert b"recovered an interrupted action" in shown.stderr
    assert not pending_actions(repo)
    data = json.loads(shown.stdout)
    assert "pending" not in data
    assert (repo / a).read_bytes() == git(repo, "show", f"HEAD:{a}").encode()
    assert data["title"] in ("Connection pool exhausts at 200 clients", "Pool exhausts at 250 clients")
    assert (data["title"] == "Pool exhausts at 250 clients") == (b"250" in (repo / a).read_bytes())
    found = json.loads(run_cli(repo, "search", "exhausts OR Lag", "--format", "json").stdout)
    assert {h["path"] for h in found["results"]} == {p for p in [a, *NEW] if p in _at_head(repo)}


def test_mcp_show_never_serves_a_half_written_fact(corpus: Corpus) -> None:
    """The issue's reproduction over MCP (the SDK's stdio client): `show` of a fact a killed
    accept wrote but never committed is no live fact."""
    import asyncio

    import pytest

    pytest.importorskip("mcp")
    from tests.messages.test_mcp import _structured

    repo = _crashed_accept(corpus, "action.between_files")
    on_disk = [p for p in NEW if (repo / p).exists()]
    assert on_disk and not set(on_disk) & _at_head(repo)

    async def session() -> tuple[object, dict[str, object]]:
        from mcp import Client, StdioServerParameters

        env = {**os.environ, "PYTHONPATH": str(APP)}
        env.pop(faults.ENV, None)
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "factdesk.cli", "mcp", "--kb", str(repo)], env=env)
        async with Client(params, read_timeout_seconds=120) as client:
            shown = await client.call_tool("show", {"fact": on_disk[0]})
            found = _structured(await client.call_tool("search", {"query": "Replica lag"}))
        return shown, found

    shown, found = asyncio.run(session())
    at_head = _at_head(repo)
    if on_disk[0] not in at_head:  # rolled back: no such fact
        assert getattr(shown, "is_error", getattr(shown, "isError", None)) is True
    else:
        assert _structured(shown)["status"] == "live"
    assert {h["path"] for h in found["results"]} <= at_head  # type: ignore[union-attr]
    assert not pending_actions(repo)


def test_after_a_kill_once_the_ref_moved_a_reader_syncs_gits_index_first(corpus: Corpus) -> None:
    """Issue 22 #4: killed after the branch moved and before git's index was synced, then
    any factdesk command (here a search), then a plain `git commit -a`: the autosave
    deletes none of the accepted facts, since recovery left git's index matching HEAD for
    every path the action touched."""
    repo = _crashed_accept(corpus, "commit.ref_updated")
    accepted = set(NEW) & _at_head(repo)
    assert accepted == set(NEW)
    staged = git(repo, "diff", "--cached", "--name-only", "HEAD").split()
    assert set(staged) & accepted  # git's index is stale: the accepted files look deleted
    shown = run_cli(repo, "show", NEW[0], "--format", "json")
    assert json.loads(shown.stdout)["status"] == "live"
    assert not pending_actions(repo)
    assert git(repo, "diff", "--cached", "--name-only", "HEAD") == ""
    git(repo, "commit", "-qam", "autosave", "--allow-empty")
    assert git(repo, "diff", "--name-status", "HEAD~1", "HEAD") == ""
    assert set(NEW) <= _at_head(repo)


def test_a_path_in_a_pending_journal_is_never_an_ordinary_live_fact(corpus: Corpus) -> None:
    """Killed after the ref moved; another action holds the lock, so no reader can recover:
    the accepted fact is HEAD's, and `show` says an action on it is pending."""
    import fcntl

    repo = _crashed_accept(corpus, "commit.ref_updated")
    fd = os.open(repo / ".git" / "factdesk" / "write.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        shown = run_cli(repo, "show", NEW[0], "--format", "json")
        data = json.loads(shown.stdout)
        assert "a factdesk action is pending" in data["pending"]
        text = run_cli(repo, "show", NEW[0]).stdout.decode()
        assert "[live, pending]" in text and "note: a factdesk action is pending" in text
    finally:
        os.close(fd)
    assert "pending" not in json.loads(run_cli(repo, "show", NEW[0], "--format", "json").stdout)
