"""A running window learns of outside changes from the watch, not by walking (issue 23 #2,
issue 26 #5): a new tip of an agent branch — written with git's plumbing as `factdesk mcp`
writes it, never touching the work tree, or fetched as a remote-tracking branch — reaches
the Proposals tab, and an agent's edit under `kb/` reaches the table, with no F5. How fast
is measured in bench/gui_watch_bench.py, not here (a loaded machine is slow)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from factdesk.gui.app import make_settings
from factdesk.gui.main_window import MainWindow
from factdesk.gui.workers import GUI_SWITCH_INTERVAL_S
from tests.conftest import git
from tests.gui.conftest import FACT
from tests.gui.test_proposals import AGENT, add_agent_branch

pytestmark = pytest.mark.gui


def _plumbing_commit(repo: Path, ref: str, path: str, text: str, base: str | None = None) -> str:
    """A commit on `ref` adding `path`, made as the MCP write path makes it: objects, a
    tree from the ref's own, a compare-and-swap of the ref; no work tree, no git index."""
    env = {**os.environ, "GIT_INDEX_FILE": str(repo / ".git" / "scratch-index"),
           "GIT_AUTHOR_NAME": "mindev", "GIT_AUTHOR_EMAIL": "mindev.local-8ef0cd32+learn@agents.knomit.io",
           "GIT_COMMITTER_NAME": "mindev", "GIT_COMMITTER_EMAIL": "mindev.local-8ef0cd32@agents.knomit.io"}

    def run(*args: str, data: bytes | None = None) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], input=data, env=env, check=True,
                              capture_output=True).stdout.decode().strip()

    tip = run("rev-parse", base or ref)
    blob = run("hash-object", "-w", "--stdin", data=text.encode())
    run("read-tree", tip)
    run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    tree = run("write-tree")
    sha = run("commit-tree", tree, "-p", tip, "-m", "learn: written over MCP")
    run("update-ref", ref, sha, *([] if base else [tip]))
    os.unlink(env["GIT_INDEX_FILE"])
    return sha


@pytest.fixture
def watching(qtbot, repo: Path, data_dir: Path):  # type: ignore[no-untyped-def]
    add_agent_branch(repo)
    win = MainWindow(repo, make_settings(), watch=True, update_on_open=False, semantic=False)
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignals([win.index_did_update, win.watcher.did_watch], timeout=20_000):
        win.reindex()
    assert win.watcher.live, win.watcher.trouble
    yield win
    win.close()


def _listed(win: MainWindow, sha: str) -> bool:
    return any(sha in row.shas for row in win.proposals.items)


def test_a_new_agent_tip_written_with_plumbing_reaches_the_proposals_tab(qtbot, watching, repo) -> None:
    win = watching
    win.center.setCurrentWidget(win.proposals)
    qtbot.waitUntil(lambda: win.proposals.loaded and bool(win.proposals.items), timeout=20_000)
    before = len(win.proposals.items)
    head, status = git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain")
    sha = _plumbing_commit(repo, f"refs/heads/{AGENT}", "kb/gotchas/db/c9c9c9c9.md", FACT.format(
        front="type: observation\ndomain: [ledger-api]\nconfidence: 0.7\nsources: 1\nrefs: []",
        title="Checkpoint writes stall under vacuum", body="Seen twice."))
    # no F5: the watch saw refs/heads/agent/… move
    qtbot.waitUntil(lambda: _listed(win, sha), timeout=20_000)
    assert len(win.proposals.items) == before + 1
    # and the curator's checkout was never touched
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == status


def test_a_fetched_agent_branch_reaches_the_proposals_tab(qtbot, watching, repo) -> None:
    win = watching
    win.center.setCurrentWidget(win.proposals)
    qtbot.waitUntil(lambda: win.proposals.loaded and bool(win.proposals.items), timeout=20_000)
    # as a fetch writes it: a remote-tracking agent branch under refs/remotes/
    sha = _plumbing_commit(repo, "refs/remotes/origin/agent/second-0000aaaa", "kb/gotchas/db/c8c8c8c8.md",
                     FACT.format(front="type: observation\ndomain: [ledger-api]\nconfidence: 0.7\n"
                                 "sources: 1\nrefs: []", title="Fetched from a second agent",
                                 body="Seen once."), base="main")
    qtbot.waitUntil(lambda: _listed(win, sha), timeout=20_000)


def test_an_agents_edit_under_kb_reaches_the_table_by_its_path(qtbot, watching, repo) -> None:
    win = watching
    rows = win.table.model.rowCount()
    with qtbot.waitSignal(win.index_did_update, timeout=20_000):
        path = repo / "kb" / "gotchas" / "new-area" / "d4d4d4d4.md"  # (a folder made now)
        path.parent.mkdir(parents=True)
        path.write_text(FACT.format(
            front="type: observation\ndomain: [x]\nconfidence: 0.6\nsources: 1\nrefs: []",
            title="Written in a folder that did not exist", body="."), encoding="utf-8")
    qtbot.waitUntil(lambda: win.table.model.rowCount() == rows + 1, timeout=20_000)
    assert win.last_error is None


def test_a_watch_that_could_not_start_is_said_once(qtbot, watching) -> None:
    """(The platform's limit cannot be reached safely on a shared machine: the watcher's
    word is set as CorpusWatch sets it when `start` fails.)"""
    win = watching
    win.watcher.trouble = ("the folders cannot all be watched (No space left on device; on "
                           "Linux, raise fs.inotify.max_user_watches)")
    win.watcher.did_watch.emit()
    said = win.statusBar().currentMessage()
    assert "Not watching for outside changes" in said and "max_user_watches" in said
    win.statusBar().clearMessage()
    win.watcher.did_watch.emit()
    assert win.statusBar().currentMessage() == ""  # (once)


def test_a_new_agent_tip_redraws_only_the_branch_readers(qtbot, watching, repo, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Ten agents writing a proposal a second each move only git's refs: the table, the
    sidebar and the index-fed tabs are not redrawn for it (they were, ten times a second,
    and the curator's keys waited behind them: bench/agent_write_bench.py --curator)."""
    win = watching
    win.center.setCurrentWidget(win.proposals)
    qtbot.waitUntil(lambda: win.proposals.loaded and win.proposals.checks_done, timeout=30_000)
    # (the watch's first word after it started is "look at everything": a first tip moves)
    first = _plumbing_commit(repo, f"refs/heads/{AGENT}", "kb/gotchas/db/c6c6c6c6.md", FACT.format(
        front="type: observation\ndomain: [ledger-api]\nconfidence: 0.7\nsources: 1\nrefs: []",
        title="Autovacuum runs late on the ledger", body="Seen once."))
    qtbot.waitUntil(lambda: _listed(win, first) and win.proposals.checks_done, timeout=30_000)
    redrawn: list[str] = []
    for name, obj, method in (("sidebar", win.sidebar, "refresh_ontology"),
                              ("table", win.table, "refresh"), ("transitions", win.transitions,
                                                                "index_did_change")):
        real = getattr(obj, method)
        monkeypatch.setattr(obj, method, lambda *a, _r=real, _n=name, **k: (
            redrawn.append(_n), _r(*a, **k))[1])
    rows_changed: list[int] = []
    win.proposals.model.dataChanged.connect(lambda a, b, *_: rows_changed.append(b.row() - a.row() + 1))
    sha = _plumbing_commit(repo, f"refs/heads/{AGENT}", "kb/gotchas/db/c7c7c7c7.md", FACT.format(
        front="type: observation\ndomain: [ledger-api]\nconfidence: 0.7\nsources: 1\nrefs: []",
        title="Vacuum stalls the checkpoint writer", body="Seen twice."))
    qtbot.waitUntil(lambda: _listed(win, sha), timeout=20_000)
    qtbot.waitUntil(lambda: win.proposals.checks_done, timeout=30_000)
    assert redrawn == []
    # the re-read streamed every check again: only the new proposal's row (and the rows
    # whose verdict it changed) are redrawn, never the whole queue row by row
    assert sum(rows_changed) <= 2, rows_changed


def _kb_count(win: MainWindow) -> int:
    top = win.sidebar.ontology.topLevelItem(0)
    return int(top.text(1)) if top is not None else -1


def test_an_outside_commit_behind_another_tab_redraws_what_is_in_sight(  # type: ignore[no-untyped-def]
        qtbot, watching, repo, monkeypatch) -> None:
    """An agent's commit on the curated branch while the curator works in the Proposals
    tab: the sidebar's counts (in sight) follow at once; the Facts table and the
    Transitions tab (behind it) are redrawn when shown, not at every such commit — at each
    decision and each sync they were, and the curator's keys waited behind them."""
    win = watching
    win.center.setCurrentWidget(win.transitions.tab_widget())
    qtbot.waitUntil(lambda: win.transitions.loaded, timeout=30_000)
    win.center.setCurrentWidget(win.proposals)
    qtbot.waitUntil(lambda: win.proposals.loaded, timeout=30_000)
    rows, folders = win.table.model.rowCount(), _kb_count(win)
    filled: list[int] = []
    real = win.transitions._fill_table
    monkeypatch.setattr(win.transitions, "_fill_table", lambda: (filled.append(1), real())[1])
    win.transitions._behind.setInterval(300)  # (BEHIND_S: the track records follow, later)
    with qtbot.waitSignal(win.transitions.did_load, timeout=30_000):
        path = repo / "kb" / "gotchas" / "db" / "e5e5e5e5.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(FACT.format(
            front="type: observation\ndomain: [x]\nconfidence: 0.6\nsources: 1\nrefs: []",
            title="Committed while the curator reviews", body="."), encoding="utf-8")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "learn: committed while the curator reviews")
    qtbot.waitUntil(lambda: _kb_count(win) == folders + 1, timeout=20_000)
    assert win.table.model.rowCount() == rows and filled == []
    win.center.setCurrentWidget(win.facts)
    assert win.table.model.rowCount() == rows + 1
    win.center.setCurrentWidget(win.transitions.tab_widget())
    assert filled == [1]
    assert win.last_error is None


def test_the_window_gets_the_gil_back_within_a_fraction_of_a_millisecond(qtbot, repo, data_dir) -> None:  # type: ignore[no-untyped-def]
    """PySide6 lets go of the GIL around each Qt call: beside a worker running Python, the
    window's thread waited up to Python's switch interval (5 ms) after every one of them —
    300 small calls took 1.5 s (bench/gil_bench.py). A window shortens the interval."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    try:
        win = MainWindow(repo, make_settings(), watch=False, update_on_open=False, semantic=False)
        qtbot.addWidget(win)
        assert sys.getswitchinterval() <= GUI_SWITCH_INTERVAL_S
        win.close()
    finally:
        sys.setswitchinterval(before)
