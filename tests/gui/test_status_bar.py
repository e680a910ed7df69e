"""The status bar at 1366×768 (issue 24 item 11): a temporary message is never cut or drawn
over by the permanent widgets (the type legend gives it its room while it shows)."""

from __future__ import annotations

from PySide6.QtGui import QFontMetrics

from factdesk.gui.main_window import MainWindow


def _room(window: MainWindow) -> int:
    """The width the status bar leaves its message: left of every visible permanent widget."""
    bar = window.statusBar()
    widgets = [window.status.commit_notice, window.status.review_label,
               window.status.legend_label, window.status.sync_bar, window.status.progress,
               window.status.count_label]
    lefts = [w.geometry().left() for w in widgets if w.isVisible()]
    return min(lefts, default=bar.width())


def test_a_message_has_room_at_1366_pixels(window: MainWindow, qtbot) -> None:
    window.resize(1366, 768)
    window.status.proposals_counted("main", 6)
    window.statusBar().clearMessage()  # (the first index update's message)
    qtbot.waitUntil(lambda: window.status.legend_label.isVisible(), timeout=3000)
    message = "Semantic search ready (65 facts embedded now)"
    window.status.say(message, 60_000)
    qtbot.waitUntil(lambda: not window.status.legend_label.isVisible(), timeout=3000)
    qtbot.wait(50)  # (the bar lays out again)
    needed = QFontMetrics(window.statusBar().font()).horizontalAdvance(message)
    assert _room(window) >= needed + 8, (_room(window), needed)
    window.statusBar().clearMessage()
    qtbot.waitUntil(lambda: window.status.legend_label.isVisible(), timeout=3000)
