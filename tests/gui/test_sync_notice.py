"""Feedback that stays (issue 24 item 11): a sync's summary is shown above the tabs until the
curator dismisses it — never only the status bar's passing message or a label the next
queue read overwrites — its progress text is never clipped, and nothing in the status bar
is cut or drawn over at 1366 pixels."""

from __future__ import annotations

import contextlib
from itertools import pairwise

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFontMetrics

from tests.conftest import git
from tests.gui.conftest import open_window
from tests.gui.test_proposals import _fact, _team

pytestmark = pytest.mark.gui


def test_a_sync_summary_stays_until_dismissed(qtbot, repo, data_dir, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _bare, other = _team(repo, tmp_path)
    # another curator's commit on the remote: the sync fast-forwards over it
    (other / "kb/gotchas/db/c9c9c9c9.md").write_text(_fact(
        "type: observation\ndomain: [ledger-api]\nconfidence: 0.7\nsources: 1\nrefs: []",
        "Retries double the load", "Seen twice."), encoding="utf-8")
    git(other, "add", "-A")
    git(other, "commit", "-qm", "learn: Retries double the load", author="Bob",
        email="bob@example.org")
    git(other, "push", "-q", "origin", "main")
    win = open_window(qtbot, repo)
    try:
        win.resize(1366, 768)
        with qtbot.waitSignal(win.proposals.sync_did_finish, timeout=30_000) as done:
            win.actions_by_name["sync"].trigger()
        assert not isinstance(done.args[0], BaseException), done.args[0]
        notice = win.notice
        qtbot.waitUntil(notice.isVisible, timeout=5000)
        said = notice.label.text()
        assert said.startswith("Synced: ") and "1 commit came in" in said, said
        # the reindex, the queue read and the index's own status message come and go
        with qtbot.waitSignal(win.index_did_update, timeout=20_000):
            pass
        qtbot.wait(1500)
        assert notice.isVisible() and notice.label.text() == said
        # it is in the window, fully readable, above the tabs
        rect = QRect(notice.mapTo(win, QPoint(0, 0)), notice.size())
        assert win.rect().contains(rect)
        assert notice.label.width() >= min(QFontMetrics(notice.label.font()).horizontalAdvance(said),
                                           notice.label.width()) and notice.label.wordWrap()
        qtbot.mouseClick(notice.dismiss_button, Qt.MouseButton.LeftButton)
        assert not notice.isVisible()
    finally:
        win.close()


def test_the_sync_progress_text_is_never_clipped(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.resize(1366, 768)
    status = window.status
    status.sync_progress("fetch origin: resolving deltas, counting objects", 0.4)
    qtbot.wait(50)
    bar = status.sync_bar
    text = bar.text()
    assert "fetch origin: resolving deltas, counting objects" in text
    assert bar.width() >= QFontMetrics(bar.font()).horizontalAdvance(text) + 16, (bar.width(), text)


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_nothing_in_the_status_bar_is_cut_at_1366(qtbot, repo, data_dir, qapp, scale: float) -> None:  # type: ignore[no-untyped-def]
    """Every permanent widget at least as wide as its text, none over another, at 1× and
    1.5× the font: the type legend gives way (it is in Help ▸ Legend) when there is no room."""
    from PySide6.QtGui import QFont

    before = QFont(qapp.font())
    bigger = QFont(before)
    bigger.setPointSizeF(before.pointSizeF() * scale)
    qapp.setFont(bigger)
    win = open_window(qtbot, repo)
    try:
        win.resize(1366, 768)
        win.status.proposals_counted("main", 6)
        win.status.sync_progress("fetch origin", 0.5)
        win.statusBar().clearMessage()
        s = win.status

        def problems() -> list[str]:
            shown = [w for w in (s.commit_notice, s.review_label, s.legend_label, s.sync_bar,
                                 s.progress, s.count_label) if w.isVisible()]
            out = []
            for w in shown:
                text = w.text() if hasattr(w, "text") else ""
                need = QFontMetrics(w.font()).horizontalAdvance(text)
                if w.width() < need + (16 if w is s.sync_bar else 0):
                    out.append(f"{w.objectName() or type(w).__name__} {w.width()} < {need}: "
                               f"{text[:40]}")
            boxes = sorted(w.geometry().getRect() for w in shown)
            for (x1, _y1, w1, _h1), (x2, _y2, _w2, _h2) in pairwise(boxes):
                if x1 + w1 > x2:
                    out.append(f"overlap at {x2}")
            return out

        # (the queue's own count may arrive meanwhile: the bar lays out again; a cut stays)
        with contextlib.suppress(qtbot.TimeoutError):
            qtbot.waitUntil(lambda: not problems(), timeout=2000)
        assert problems() == []
        shown = [w for w in (s.review_label, s.count_label) if w.isVisible()]
        assert shown == [s.review_label, s.count_label]
    finally:
        win.close()
        qapp.setFont(before)
