"""Agents write over MCP while a curator decides in the window and a sync runs (issue 26's
load test at a small size; `bench/agent_write_bench.py --curator` runs the issue's ten
agents and measures the curator's keys): two agents, each its own `factdesk mcp --agent`
server driven by the official MCP SDK's client, write proposals; the window (watching, as
a user runs it) lists them with no F5; the curator accepts and rejects some with the
keys while they still arrive; `factdesk sync` runs in a loop in another process. Nothing
is lost, the planted illegal writes are refused with their rule, `fsck --strict` is clean,
the remote ends with our agent branches, and the window's queue is exactly the legal
writes not yet decided."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from factdesk.gui.app import make_settings
from factdesk.gui.main_window import MainWindow
from factdesk.review.proposals import load_queue
from tests.agentwrite.test_agents_at_once import H1
from tests.agentwrite.test_mcp_write import ENV, _payload
from tests.conftest import git
from tests.gui.test_proposals import press

pytestmark = pytest.mark.gui

AGENTS = ("a0", "a1")
WRITES = 5


def _calls(agent: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"title": f"Agent {agent} saw the pool drain in deploy {n}",
         "body": f"Deploy {n}: the pool drained after 40 minutes.", "type": "observation",
         "topic": "gotchas", "category": f"fleet/{agent}", "claim_type": "observation",
         "subject_kind": "codebase"} for n in range(WRITES)]
    out.insert(2, dict(H1))
    return out


async def _paced(repo: Path, agent: str, env: dict[str, str], first_decision: threading.Event
                 ) -> list[tuple[bool, Any]]:
    """One agent's server and client; after its first three calls it waits for the
    curator's first decision, so that the rest are written while the curator decides."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "factdesk.cli", "mcp", "--kb", str(repo), "--agent", agent], env=env)
    out = []
    async with Client(params, read_timeout_seconds=120) as client:
        for n, call in enumerate(_calls(agent)):
            if n == 3:
                assert await asyncio.to_thread(first_decision.wait, 120)
            out.append(_payload(await client.call_tool("propose_fact", call)))
            await asyncio.sleep(0.2)
    return out


def _sync_loop(repo: Path, env: dict[str, str], stop: threading.Event,
               runs: list[tuple[int, str]]) -> None:
    while not stop.is_set():
        done = subprocess.run([sys.executable, "-m", "factdesk.cli", "sync", "--kb", str(repo)],
                              capture_output=True, text=True, env=env, check=False, timeout=120)
        runs.append((done.returncode, (done.stdout + done.stderr)[-400:]))
        stop.wait(0.5)


def _open_rows(win: MainWindow) -> set[str]:
    return {r.key[1] for r in win.proposals.items if r.key[0] == "c"}


def _clean_row_of(win: MainWindow, agent: str, taken: set[str]) -> str | None:
    panel = win.proposals
    busy = taken | {k[1] for k in panel.pending}
    for n, row in enumerate(panel.items):
        if (row.key[0] == "c" and row.key[1] not in busy and f"agent/{agent}" in
                panel.model.by_sha[row.key[1]].branch and panel.model.text(n, 3) == "✓ clean"):
            return row.key[1]
    return None


def test_agents_write_while_the_curator_decides_and_a_sync_runs(qtbot, repo, data_dir, tmp_path) -> None:  # type: ignore[no-untyped-def]
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "fetch", "-q", "origin")
    git(repo, "branch", "-q", "--set-upstream-to=origin/main", "main")
    start = git(repo, "rev-parse", "main").strip()
    env = {**ENV, "FACTDESK_DATA_DIR": str(data_dir)}

    win = MainWindow(repo, make_settings(), watch=True, update_on_open=False, semantic=False)
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    with qtbot.waitSignals([win.index_did_update, win.watcher.did_watch], timeout=20_000):
        win.reindex()
    assert win.watcher.live, win.watcher.trouble
    panel = win.proposals
    win.center.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.loaded, timeout=20_000)
    win.ask_text = lambda *_a: "a duplicate of the pool fact"  # type: ignore[method-assign]

    results: dict[str, list[tuple[bool, Any]]] = {}
    first = threading.Event()

    def agents() -> None:
        async def everyone() -> list[list[tuple[bool, Any]]]:
            return list(await asyncio.gather(*(_paced(repo, a, env, first) for a in AGENTS)))

        for agent, out in zip(AGENTS, asyncio.run(everyone()), strict=True):
            results[agent] = out

    stop = threading.Event()
    syncs: list[tuple[int, str]] = []
    writer = threading.Thread(target=agents, daemon=True)
    syncer = threading.Thread(target=_sync_loop, args=(repo, env, stop, syncs), daemon=True)
    writer.start()
    syncer.start()
    decided: dict[str, str] = {}  # sha → "accept" | "reject"
    try:
        # the curator: as each agent's first clean proposal shows up (no F5), decide it
        # with one key — a0's accepted, a1's rejected — while the agents still write
        for agent, key, what in (("a0", Qt.Key.Key_A, "accept"), ("a1", Qt.Key.Key_R, "reject"),
                                 ("a0", Qt.Key.Key_A, "accept")):
            found: list[str] = []
            qtbot.waitUntil(lambda a=agent, f=found: bool(
                (s := _clean_row_of(win, a, set(decided))) and not f.append(s)), timeout=90_000)
            sha = found[-1]
            assert panel.select_sha(sha)
            panel.list.setFocus()
            before = git(repo, "rev-parse", "main").strip()
            press(qtbot, panel, key)
            decided[sha] = what
            qtbot.waitUntil(lambda b=before: git(repo, "rev-parse", "main").strip() != b,
                            timeout=30_000)
            first.set()
        writer.join(timeout=180)
        assert not writer.is_alive(), "the agents did not finish"
    finally:
        stop.set()
        syncer.join(timeout=180)
    last = subprocess.run([sys.executable, "-m", "factdesk.cli", "sync", "--kb", str(repo)],
                          capture_output=True, text=True, env=env, check=False, timeout=120)
    assert last.returncode == 0, last.stdout + last.stderr
    assert syncs and all(rc == 0 for rc, _ in syncs), syncs

    written: dict[str, set[str]] = {}
    for agent in AGENTS:
        out = results[agent]
        refused = [text for err, text in out if err]
        assert len(refused) == 1 and refused[0].startswith("[H1]"), refused
        written[agent] = {data["sha"] for err, data in out if not err}
        assert len(written[agent]) == WRITES
        # no commit lost, none extra, whatever the curator and the sync did meanwhile
        on_branch = set(git(repo, "rev-list", f"agent/{agent}", f"^{start}").split())
        # (a write after the sync's review merge took in the whole branch starts from the
        # curated tip: main's commits are then on it too)
        extra = on_branch - written[agent] - set(git(repo, "rev-list", "main", f"^{start}").split())
        assert on_branch >= written[agent], git(repo, "log", "--oneline", f"agent/{agent}")
        assert not extra, git(repo, "log", "--no-walk", "--format=%h %an %s", *extra)
    legal = set().union(*written.values())
    assert set(decided) <= legal and len(decided) == 3
    # each decision is on main, as the curator made it
    log = git(repo, "log", "--format=%B", f"{start}..main")
    for sha, what in decided.items():
        assert f"Factdesk-Proposal: {sha}" in log
        assert f"Factdesk-Action: {what}" in log
    assert "a duplicate of the pool fact" in log
    fsck = subprocess.run(["git", "-C", str(repo), "fsck", "--strict", "--no-dangling"],
                          capture_output=True, text=True, check=False)
    assert fsck.returncode == 0 and "error" not in fsck.stderr, fsck.stderr
    # the queue, read anew and in the window, is exactly the legal writes not decided
    still_open = legal - set(decided)
    queue = load_queue(repo).proposals
    assert {p.sha for p in queue if p.status == "open"} == still_open
    assert {p.sha: p.status for p in queue if p.sha in decided} == {
        sha: "accepted" if what == "accept" else "rejected" for sha, what in decided.items()}
    qtbot.waitUntil(lambda: _open_rows(win) == still_open, timeout=30_000)
    # the remote has our agent branches, and the checkout holds no stray change
    for agent in AGENTS:
        assert git(bare, "rev-parse", f"agent/{agent}") == git(repo, "rev-parse", f"agent/{agent}")
    assert git(repo, "status", "--porcelain") == ""
    win.close()
