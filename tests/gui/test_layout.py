"""Every tab usable at 1366×768, with the default font and at 1.5× the application font
(issue 18: the Hypotheses tab was crushed to "Raising pg…", badges and type labels cut).

Each tab names the widgets that must never be cut: its `key_widgets()` (gui/panel.py's
`key_widgets`: without one, the tab's lists and buttons), so a new tab (Proposals, Agents,
Messages) is checked by the same test once registered in `MainWindow._make_panels`. The
table's Title and Type columns and the inspector's badges, settlement line and
attribution are checked on every tab (they stay on screen beside it).

"Cut" means: hidden, outside the window (unless inside a scroll area, where it can be
scrolled to), narrower or shorter than its minimum size hint; a button narrower than its
text; a label narrower than its text (or, wrapped, shorter than its lines); a list
narrower than 12 characters or shorter than three rows; a table column outside the view
or narrower than its widest label; a tab that scrolls sideways (its right edge is out of
sight: it scrolls down only).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractScrollArea,
    QApplication,
    QLabel,
    QWidget,
)

from factdesk.gui import theme
from factdesk.gui.main_window import MainWindow
from factdesk.gui.panel import key_widgets
from tests.gui.conftest import fact_id, open_window

pytestmark = pytest.mark.gui

SCREEN = (1366, 768)


def _scrolled(widget: QWidget, window: QWidget) -> bool:
    """Inside a scroll area below the window (it can be scrolled into view)."""
    parent = widget.parentWidget()
    while parent is not None and parent is not window:
        if isinstance(parent, QAbstractScrollArea) and not isinstance(parent, QAbstractItemView):
            return True
        parent = parent.parentWidget()
    return False


def cut(widget: QWidget, window: QWidget) -> str | None:
    """Why `widget` is cut, or None when a person can read and use all of it."""
    if not widget.isVisible():
        return "hidden"
    rect = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
    if not _scrolled(widget, window) and not window.rect().contains(rect):
        return f"outside the window: {rect.getRect()} in {window.rect().getRect()}"
    fm = widget.fontMetrics()
    if isinstance(widget, QAbstractItemView):
        if widget.width() < 12 * fm.averageCharWidth():
            return f"a list {widget.width()} pixels wide"
        if widget.viewport().height() < 3 * fm.height():
            return f"a list {widget.viewport().height()} pixels high"
        return None
    if isinstance(widget, QAbstractButton):
        if widget.width() < widget.sizeHint().width():
            return f"a button {widget.width()} wide, its text needs {widget.sizeHint().width()}"
        return None
    if isinstance(widget, QLabel):
        if widget.wordWrap():
            need = widget.heightForWidth(widget.width())
            if widget.height() < need:
                return f"a wrapped label {widget.height()} high, its lines need {need}"
        elif widget.width() < widget.sizeHint().width():
            return f"a label {widget.width()} wide, its text needs {widget.sizeHint().width()}"
        return None
    hint = widget.minimumSizeHint()
    if widget.width() < hint.width() or widget.height() < hint.height():
        return f"{widget.width()}×{widget.height()}, under its minimum {hint.width()}×{hint.height()}"
    return None


def _name(widget: QWidget) -> str:
    return f"{type(widget).__name__} {widget.objectName() or widget.accessibleName()!r}"


def table_cuts(win: MainWindow) -> list[str]:
    """The table's Title and Type columns: inside the view, wide enough to read."""
    view = win.table.view
    header = view.horizontalHeader()
    out = []
    bold = QFont(view.font())
    bold.setBold(True)
    widest_type = max(QFontMetrics(bold).horizontalAdvance(theme.labelled("type", t))
                      for t in theme.TYPE_MARKS)
    for key, need in (("title", 15 * view.fontMetrics().averageCharWidth()), ("type", widest_type)):
        i = win.table.state.column_index(key)
        pos, size = header.sectionViewportPosition(i), header.sectionSize(i)
        if header.isSectionHidden(i):
            out.append(f"the {key} column is hidden")
        elif pos < 0 or pos + size > view.viewport().width():
            out.append(f"the {key} column at {pos}+{size} is outside the view "
                       f"({view.viewport().width()} wide)")
        elif size < need:
            out.append(f"the {key} column is {size} wide, its text needs {need}")
    return out


def inspector_widgets(win: MainWindow) -> list[QWidget]:
    ins = win.inspector
    return [*ins.badges.values(), ins.attribution, ins.settlement, ins.tabs]


def _settle(qtbot, win: MainWindow, panel: object) -> None:
    """Let a tab load what it shows (the queues and charts read in the background)."""
    for signal in ("did_load", "queue_did_load"):
        sig = getattr(panel, signal, None)
        if sig is not None and not getattr(panel, "loaded", True):
            with qtbot.waitSignal(sig, timeout=20_000):
                pass
    qtbot.wait(30)


@pytest.fixture(params=[1.0, 1.5], ids=["default-font", "font-1.5x"])
def font_scale(request, qapp) -> Iterator[float]:  # type: ignore[no-untyped-def]
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = QFont(app.font())
    if request.param != 1.0:
        bigger = QFont(before)
        bigger.setPointSizeF(before.pointSizeF() * request.param)
        app.setFont(bigger)
    yield request.param
    app.setFont(before)


def test_every_tab_is_usable_at_1366x768(qtbot, repo, data_dir, font_scale: float) -> None:
    win = open_window(qtbot, repo)
    try:
        win.resize(*SCREEN)
        qtbot.wait(30)
        assert (win.width(), win.height()) == SCREEN, "the window cannot be made 1366×768"
        win.show_fact(fact_id(win, "hyp"))  # (a hypothesis: its settlement line shows)
        problems: list[str] = []
        for panel in win.panels:
            win.center.setCurrentWidget(panel.tab_widget())
            _settle(qtbot, win, panel)
            if win.inspector.fact_id != fact_id(win, "hyp"):  # (a queue showed its own fact)
                win.inspector.show_fact(fact_id(win, "hyp"))  # (the tab stays in front)
                qtbot.wait(10)
            assert win.center.currentWidget() is panel.tab_widget()

            def tab_problems(panel: object = panel) -> list[str]:
                out = []
                frame = panel.tab_widget()  # type: ignore[attr-defined]
                bar = frame.horizontalScrollBar() if isinstance(frame, QAbstractScrollArea) else None
                if bar is not None and bar.maximum() > 0:
                    out.append(f"{panel.caption} ({font_scale}×): the tab scrolls sideways "  # type: ignore[attr-defined]
                               f"({bar.maximum()} pixels): its right edge is cut")
                widgets = key_widgets(panel)
                assert widgets, f"{panel.caption}: no key widget"  # type: ignore[attr-defined]
                for widget in [*widgets, *inspector_widgets(win)]:
                    why = cut(widget, win)
                    if why:
                        out.append(f"{panel.caption} ({font_scale}×): {_name(widget)}: {why}")  # type: ignore[attr-defined]
                return out

            # (a layout settles over a few turns of the event loop: a real cut stays)
            with contextlib.suppress(qtbot.TimeoutError, AssertionError):
                qtbot.waitUntil(lambda: not tab_problems(), timeout=2000)
            problems += tab_problems()
            if panel is win.facts:
                problems += [f"Facts ({font_scale}×): {p}" for p in table_cuts(win)]
        assert not problems, "\n".join(problems)
    finally:
        win.close()


def test_the_check_catches_a_cut_widget(window, qtbot) -> None:
    """(The test can fail: a button squeezed under its text, a badge narrower than its
    words, a table whose Type column is pushed out of view.)"""
    button = window.settlement.buttons["confirm"]
    window.center.setCurrentWidget(window.settlement)
    _settle(qtbot, window, window.settlement)
    assert cut(button, window) is None
    button.setFixedWidth(20)
    assert "a button 20 wide" in (cut(button, window) or "")
    badge = window.inspector.badges["type"]
    window.center.setCurrentWidget(window.facts)
    window.show_fact(fact_id(window, "pool"))
    qtbot.wait(10)
    assert cut(badge, window) is None
    badge.setFixedWidth(30)
    assert "a label 30 wide" in (cut(badge, window) or "")
    header = window.table.view.horizontalHeader()
    header.resizeSection(window.table.state.column_index("title"), 3000)
    assert any("type column" in p for p in table_cuts(window))
