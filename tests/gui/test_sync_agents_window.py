"""The window's Sync with agent commits on the remote's curated branch (issue 22 #2): the
refusal in words, and "Take in as proposals" running the same operation as
`factdesk sync --as-proposals`."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from tests.conftest import git
from tests.gui.conftest import open_window
from tests.gui.test_proposals import _agent_commit, _fact, _team

pytestmark = pytest.mark.gui


def test_sync_names_agent_commits_and_takes_them_in_as_proposals(qtbot, repo, data_dir,  # type: ignore[no-untyped-def]
                                                                   tmp_path) -> None:
    _bare, other = _team(repo, tmp_path)
    sha = _agent_commit(other, "learn: Retries double the load", {
        "kb/gotchas/db/c9c9c9c9.md": _fact("type: observation\ndomain: [ledger-api]\n"
                                           "confidence: 0.7\nsources: 1\nrefs: []",
                                           "Retries double the load", "Seen twice.")})
    git(other, "push", "-q", "origin", "main")  # straight to the curated branch
    before = git(repo, "rev-parse", "main").strip()
    win = open_window(qtbot, repo)
    try:
        panel = win.proposals
        win.center.setCurrentWidget(panel)
        qtbot.waitUntil(lambda: panel.loaded, timeout=10_000)
        with qtbot.waitSignal(panel.sync_did_finish, timeout=30_000) as done:
            win.actions_by_name["sync"].trigger()
        assert type(done.args[0]).__name__ == "AgentCommits"
        boxes = [b for b in win.findChildren(QMessageBox, "offerBox") if b.isVisible()]
        assert boxes, "the refusal is shown"
        box = boxes[-1]
        assert sha[:12] in box.text() and "no curator" in box.text()
        assert git(repo, "rev-parse", "main").strip() == before
        take = next(b for b in box.buttons() if b.text() == "Take in as proposals")
        with qtbot.waitSignal(panel.sync_did_finish, timeout=30_000) as taken:
            take.click()
        assert not isinstance(taken.args[0], BaseException), taken.args[0]
        assert taken.args[0].proposal_branch == "agent/mindev.local-8ef0cd32"
        assert git(repo, "rev-parse", "main").strip() == before  # main as the curators left it
        qtbot.waitUntil(lambda: sha in {i.shas[0] for i in panel.items}, timeout=20_000)
    finally:
        win.close()


def test_sync_warnings_are_shown(qtbot, repo, data_dir, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A forced rewrite of the remote's branch (issue 22, minor) is said in the window too."""
    bare, other = _team(repo, tmp_path)
    git(other, "commit", "-q", "--amend", "--reset-author", "-m", "rewritten", author="bob",
        email="bob@example.org")
    git(other, "push", "-q", "--force", "origin", "main")
    win = open_window(qtbot, repo)
    try:
        with qtbot.waitSignal(win.proposals.sync_did_finish, timeout=30_000) as done:
            win.actions_by_name["sync"].trigger()
        assert not isinstance(done.args[0], BaseException), done.args[0]
        boxes = [b for b in win.findChildren(QMessageBox, "errorBox") if b.isVisible()]
        assert boxes and "rewrote main" in boxes[-1].text()
        assert git(bare, "rev-parse", "main") == git(repo, "rev-parse", "main")
    finally:
        win.close()
