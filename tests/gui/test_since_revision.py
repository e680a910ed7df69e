"""`since:` a branch name (issue 14): git resolves it off the GUI thread (the watchdog
fixture fails the test when the table's compile runs `git rev-parse` on it), then the
table shows the facts changed after that branch's commit."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import git
from tests.gui.conftest import fact_id, submit


def test_since_a_branch_resolves_off_the_gui_thread(window, qtbot, repo: Path) -> None:
    git(repo, "branch", "first-facts", "HEAD~2")  # (before the pool fact's update)
    submit(window, qtbot, "since:first-facts")
    qtbot.waitUntil(lambda: window.table.model.ids == [fact_id(window, "pool")], timeout=10_000)
    assert not window.search.error.isVisible()
    assert window.search.text() == "since:first-facts"  # the user's words stay
    # an unknown revision says so, in the bar's words, without git on the GUI thread
    submit(window, qtbot, "since:no-such-branch")
    qtbot.waitUntil(window.search.error.isVisible, timeout=10_000)
    assert "no-such-branch" in window.search.error.text()
    assert window.table.model.ids == [fact_id(window, "pool")]  # (rows kept)
    # the branch moves on: after the next index update the query follows it
    git(repo, "branch", "-f", "first-facts", "HEAD")
    submit(window, qtbot, "since:first-facts type:observation")
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.reindex()
    qtbot.waitUntil(lambda: window.table.model.rowCount() == 0, timeout=10_000)
