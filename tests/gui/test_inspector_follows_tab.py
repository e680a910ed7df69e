"""The inspector shows what the tab in front has selected (issue 24 #1): on a tab switch,
after a decision, after an undo — and R (relabel) acts on that fact, never on one an
earlier tab left in the inspector. Driven by keys on a real corpus."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from factdesk.gui.main_window import MainWindow
from tests.conftest import git
from tests.gui.conftest import IDS, relabel_dialog
from tests.gui.test_mislabels import IMPERATIVE, add_mislabels, go_to
from tests.gui.test_settlement import HYP, LATER, prepare


def ctrl(qtbot, window: MainWindow, key: Qt.Key) -> None:  # type: ignore[no-untyped-def]
    window.activateWindow()  # (a dialog just closed: the window's shortcuts need it active)
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    qtbot.keyClick(window.center.currentWidget(), key, Qt.KeyboardModifier.ControlModifier)


def loaded(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.reindex()


def test_switching_tabs_brings_the_front_tabs_fact_to_the_inspector(
        qtbot, window: MainWindow, repo: Path) -> None:
    prepare(repo)
    add_mislabels(repo)
    loaded(qtbot, window)
    with qtbot.waitSignal(window.mislabels.queue_did_load, timeout=20_000):
        ctrl(qtbot, window, Qt.Key.Key_4)
    mis = window.mislabels
    mis.setFocus()
    qtbot.keyClick(mis, Qt.Key.Key_J)
    assert window.inspector.path == mis.current().path
    with qtbot.waitSignal(window.settlement.did_load, timeout=10_000):
        ctrl(qtbot, window, Qt.Key.Key_5)
    settle = window.settlement
    assert window.center.currentWidget() is settle
    assert window.inspector.path == settle.current_item().path == HYP
    # R: the relabel editor opens on the queue's fact, the one the inspector shows
    settle.list.setFocus()
    qtbot.keyClick(settle.list, Qt.Key.Key_R)
    dialog = relabel_dialog(qtbot, window)
    assert dialog.paths == [HYP]
    dialog.reject()
    # back to Mislabels: its fact again (it was loaded already: no reload to emit it)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=3000)
    ctrl(qtbot, window, Qt.Key.Key_4)
    assert window.center.currentWidget() is mis
    assert window.inspector.path == mis.current().path
    # and the Facts tab: the table's row
    ctrl(qtbot, window, Qt.Key.Key_1)
    row = window.table.selected_ids()
    if row:
        assert window.inspector.fact_id in row


def test_after_a_refute_the_inspector_shows_the_queues_next_fact(
        qtbot, window: MainWindow, repo: Path) -> None:
    prepare(repo)
    loaded(qtbot, window)
    with qtbot.waitSignal(window.settlement.did_load, timeout=10_000):
        ctrl(qtbot, window, Qt.Key.Key_5)
    settle = window.settlement
    assert settle.select_path(HYP)
    window.ask_text = lambda *a: "no lock in three migrations"  # type: ignore[method-assign]
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(settle.list, Qt.Key.Key_F)
    qtbot.waitUntil(lambda: [i.path for i in settle.items] == [LATER], timeout=10_000)
    qtbot.wait(300)  # (the queue's own reload comes after the index update)
    assert settle.current_item().path == LATER
    assert window.inspector.path == LATER
    # an undo brings the hypothesis back; the inspector follows what the queue selects
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(settle.list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: HYP in [i.path for i in settle.items], timeout=10_000)
    qtbot.wait(300)
    assert window.inspector.path == settle.current_item().path


def test_after_an_undo_in_mislabels_the_inspector_shows_the_queues_fact(
        qtbot, window: MainWindow, repo: Path) -> None:
    add_mislabels(repo)
    loaded(qtbot, window)
    with qtbot.waitSignal(window.mislabels.queue_did_load, timeout=20_000):
        ctrl(qtbot, window, Qt.Key.Key_4)
    mis = window.mislabels
    mis.setFocus()
    go_to(qtbot, mis, IMPERATIVE)
    head = git(repo, "rev-parse", "HEAD")
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(mis, Qt.Key.Key_A)
    assert git(repo, "rev-parse", "HEAD") != head
    qtbot.wait(300)
    assert mis.current() is not None and window.inspector.path == mis.current().path
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(mis, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: git(repo, "rev-parse", "HEAD") != head, timeout=5000)
    with qtbot.waitSignal(mis.queue_did_load, timeout=20_000, raising=False):
        pass
    qtbot.wait(300)
    assert mis.current() is not None
    assert window.inspector.path == mis.current().path, (window.inspector.path, IDS)


def test_a_queue_reloading_behind_the_facts_tab_leaves_the_inspector_alone(
        qtbot, window: MainWindow, repo: Path) -> None:
    prepare(repo)
    loaded(qtbot, window)
    with qtbot.waitSignal(window.settlement.did_load, timeout=10_000):
        ctrl(qtbot, window, Qt.Key.Key_5)
    ctrl(qtbot, window, Qt.Key.Key_1)
    window.show_path(IDS["policy"])
    assert window.inspector.path == IDS["policy"]
    (repo / "kb/gotchas/db/0a0a0a0a.md").write_text(
        "---\ntype: observation\ndomain: [db]\nconfidence: 0.7\nsources: 1\nrefs: []\n---\n"
        "# Lag spikes at 9:00\n\nSeen twice.\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "learn: one more")
    with qtbot.waitSignal(window.settlement.did_load, timeout=10_000):  # (behind the Facts tab)
        loaded(qtbot, window)
    assert window.center.currentWidget() is not window.settlement
    assert window.inspector.path == IDS["policy"]
