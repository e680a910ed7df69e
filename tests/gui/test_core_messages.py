"""What the core says about a committed action reaches the window (issue 14): a commit's
warnings (the commit stands, but e.g. the checkout switched branches during the action) in
the status bar and a dialog; an index that could not follow at once (mode "behind": another
updater held it) in the status bar, and the window catches up afterwards."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from factdesk import faults
from factdesk.index import locking
from tests.conftest import git
from tests.gui.conftest import IDS, fact_id


def retract_pool_by_keys(window, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(window, "ask_text", lambda *_a: "a duplicate")
    window.table.view.setFocus()
    assert window.table.select_id(fact_id(window, "pool"))
    qtbot.keyClick(window.table.view, Qt.Key.Key_Delete, Qt.KeyboardModifier.ControlModifier)


def boxes(window) -> list[QMessageBox]:  # type: ignore[no-untyped-def]
    return [b for b in window.findChildren(QMessageBox, "errorBox") if b.isVisible()]


def test_a_commit_with_a_warning_says_it(window, qtbot, repo: Path, monkeypatch) -> None:
    # another program switches the checkout to a new branch right after factdesk's commit
    with faults.at("commit.ref_updated", lambda: git(repo, "checkout", "-q", "-b", "other")), \
            qtbot.waitSignal(window.index_did_update, timeout=20_000):
        retract_pool_by_keys(window, qtbot, monkeypatch)
    qtbot.waitUntil(lambda: bool(boxes(window)), timeout=5000)
    text = boxes(window)[0].text()
    assert "switched to refs/heads/other" in text
    assert "with a warning" in boxes(window)[0].windowTitle()
    assert "switched to refs/heads/other" in window.statusBar().currentMessage()
    assert window.commit_notice.isVisible()  # the commit stands: its sha, with Undo


def test_an_index_left_behind_says_it_will_catch_up(window, qtbot, monkeypatch) -> None:
    import factdesk.index.indexer as indexer

    monkeypatch.setattr(indexer, "AFTER_COMMIT_WAIT", 0.3)
    said: list[str] = []
    window.statusBar().messageChanged.connect(said.append)
    index_path = window.session.indexer.path
    with locking.update_lock(index_path, None):  # another process updates the index
        with qtbot.waitSignal(window.index_did_update, timeout=20_000) as behind:
            retract_pool_by_keys(window, qtbot, monkeypatch)
        assert behind.args[0].mode == "behind"
        assert any("the index will catch up" in m for m in said), said
        assert not boxes(window)
    # the other updater is done: the window's own update catches up
    qtbot.waitUntil(lambda: window.session.conn is not None and window.session.conn.execute(
        "SELECT status FROM facts WHERE path = ?", (IDS["pool"],)).fetchone()[0] == "retracted",
        timeout=20_000)
