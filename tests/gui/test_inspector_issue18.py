"""Issue 18's inspector: a hypothesis's settle-by (days left or overdue) and criterion,
accessible names on the badges, History's coloured and wrapped diff, and Reload after an
action refused because the fact changed on disk since it was shown."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QPlainTextEdit, QPushButton

from factdesk.gui import theme
from factdesk.gui.inspector import settle_text
from factdesk.gui.main_window import MainWindow
from tests.conftest import git
from tests.gui.conftest import IDS, fact_id

pytestmark = pytest.mark.gui


def test_settle_text_says_days_left_or_overdue() -> None:
    assert settle_text("2027-01-31", 61, "a lock is seen") == \
        "Settle by 2027-01-31 — 61 days left\nCriterion: a lock is seen"
    assert settle_text("2026-10-20", -42, "x").startswith("Settle by 2026-10-20 — overdue by 42 days")
    assert settle_text("2026-10-20", -1, "x").startswith("Settle by 2026-10-20 — overdue by 1 day\n")
    assert settle_text("2026-10-20", 0, "x").startswith("Settle by 2026-10-20 — due today")
    assert settle_text(None, None, "none").startswith("No settle-by date")


def test_a_hypothesis_shows_its_settlement_and_a_fact_does_not(window: MainWindow, qtbot) -> None:
    ins = window.inspector
    ins.today = date(2020, 1, 11)
    window.show_fact(fact_id(window, "hyp"))  # body: "Settles by 2020-01-01: a lock is observed."
    assert ins.settlement.isVisible()
    text = ins.settlement.text()
    assert "Settle by 2020-01-01 — overdue by 10 days" in text
    assert "Criterion:" in text
    assert theme.SETTLE_OVERDUE.color in ins.settlement.styleSheet()
    assert ins.settlement.accessibleName().startswith("Settlement: Settle by 2020-01-01")
    ins.today = date(2019, 12, 30)
    window.show_fact(fact_id(window, "pool"))
    assert not ins.settlement.isVisible()  # (an observation has none)
    window.show_fact(fact_id(window, "hyp"))
    assert "2 days left" in ins.settlement.text()
    assert theme.SETTLE_DUE.color in ins.settlement.styleSheet()


def test_badges_have_accessible_names(window: MainWindow) -> None:
    window.show_fact(fact_id(window, "pool"))
    names = {k: b.accessibleName() for k, b in window.inspector.badges.items()}
    assert names["type"] == "type: observation"  # (no glyph read aloud)
    assert names["kind"] == "kind: epistemic"
    assert names["claimant"].startswith("claimant: codex (tool)")
    assert window.inspector.attribution.accessibleName() == "Attribution"


def _diff_shown(qtbot, window: MainWindow) -> QPlainTextEdit:
    history = window.inspector.history
    with qtbot.waitSignal(history.diff_did_show, timeout=10_000):
        window.inspector.tabs.setCurrentWidget(history)
    qtbot.waitUntil(lambda: not history.comparing)
    return history.diff


@pytest.mark.parametrize("choice", ["light", "dark"])
def test_history_diff_is_coloured_in_the_theme_and_wrapped(window: MainWindow, qtbot, choice: str) -> None:
    window.actions_by_name[f"theme_{choice}"].trigger()
    try:
        window.show_fact(fact_id(window, "pool"))
        diff = _diff_shown(qtbot, window)
        doc = diff.document()
        seen = set()
        for i in range(doc.blockCount()):
            block = doc.findBlockByNumber(i)
            text = block.text()
            formats = block.layout().formats()
            if text.startswith("+") and not text.startswith("+++"):
                assert formats and formats[0].format.background().color().name() == theme.DIFF_ADDED_BG.color
                assert formats[0].format.foreground().color().name() == theme.DIFF_ADDED.color
                seen.add("+")
            elif text.startswith("-") and not text.startswith("---"):
                assert formats[0].format.background().color().name() == theme.DIFF_REMOVED_BG.color
                seen.add("-")
        assert seen == {"+", "-"}
        assert diff.lineWrapMode() == QPlainTextEdit.LineWrapMode.WidgetWidth
        # a long refs: line wraps within the view: its change stays on screen
        diff.setPlainText("+refs: [" + ", ".join(f"'kb/gotchas/db/{i:08x}.md'" for i in range(40)) + "]")
        # (laid out on the next event-loop turns: under load, more than 10 ms later)
        qtbot.waitUntil(lambda: doc.findBlockByNumber(0).layout().lineCount() > 1, timeout=5000)
        assert diff.horizontalScrollBar().maximum() == 0
    finally:
        window.actions_by_name["theme_system"].trigger()


def test_a_refusal_for_a_change_on_disk_offers_reload(window: MainWindow, qtbot, repo: Path) -> None:
    """Retract, after someone else changed the fact on disk: refused (nothing written);
    the dialog's Reload button reads the corpus again and the inspector shows the change."""
    window.show_fact(fact_id(window, "policy"))
    path = repo / IDS["policy"]
    path.write_text(path.read_text().replace("Never run migrations at peak",
                                             "Never run migrations at peak hours"))
    git(repo, "commit", "-qam", "edit: outside", author="someone", email="someone@x.invalid")
    head = git(repo, "rev-parse", "HEAD")
    window.retract_selected("dropped")
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "reloadBox") is not None, timeout=10_000)
    box = window.findChild(QMessageBox, "reloadBox")
    assert "changed on disk since you looked" in box.text() or "since you looked" in box.text()
    assert git(repo, "rev-parse", "HEAD") == head and path.exists()  # (nothing written)
    button = box.findChild(QPushButton, "reloadButton")
    assert button is box.defaultButton()
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.inspector.title.text() == "Never run migrations at peak hours"
    assert window.findChild(QMessageBox, "reloadBox") is None or not box.isVisible()


def test_the_relabel_editor_reloads_after_a_conflict(window: MainWindow, qtbot, repo: Path) -> None:
    """The editor's own refusal (a conflict): Reload reopens it on the fact as it now is,
    the curator's field and reason kept; Apply then commits against the new version."""
    from tests.gui.test_relabel import choose, open_on

    dialog = open_on(qtbot, window, "pool")
    choose(qtbot, dialog.combos["type"], "pattern")
    qtbot.keyClicks(dialog.reason_edit, "a pattern")
    path = repo / IDS["pool"]
    path.write_bytes(path.read_bytes().replace(b"confidence: 0.9", b"confidence: 0.4"))
    git(repo, "commit", "-qam", "update: agent")
    assert not dialog.reload_button.isVisible()
    dialog.apply()
    qtbot.waitUntil(dialog.reload_button.isVisible, timeout=5000)
    with qtbot.waitSignal(window.relabel.dialog_did_open, timeout=15_000):
        qtbot.mouseClick(dialog.reload_button, Qt.MouseButton.LeftButton)
    again = window.relabel_dialog
    assert again is not dialog and again.isVisible() and not dialog.isVisible()
    assert again.changes() == {"type": "pattern"} and again.reason_edit.text() == "a pattern"
    qtbot.waitUntil(lambda: again.apply_button.isEnabled(), timeout=5000)
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        again.apply()
    text = path.read_text()
    assert "type: pattern" in text and "confidence: 0.4" in text  # (the agent's change kept)
