"""Every tab usable at 1366×768, with the default font and at 1.5× the application font
(issue 18: the Hypotheses tab was crushed to "Raising pg…", badges and type labels cut).

Each tab names the widgets that must never be cut: its `key_widgets()` (gui/panel.py's
`key_widgets`: without one, the tab's lists and buttons), so a new tab (Proposals, Agents,
Messages) is checked by the same test once registered in `later_tabs` (gui/later_panel.py). The
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
from PySide6.QtCore import QPoint, QRect, Qt
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


# -- every button and title, on the demo corpus (issue 24 item 8) -----------------------------

#: (screen, font scale): a 1366×768 laptop at 1× and at 1.5× the font, and a 1920×1080 screen
#: under QT_SCALE_FACTOR=1.5, which leaves 1280×720 logical pixels (the fonts stay in points)
SCREENS = [((1366, 768), 1.0), ((1366, 768), 1.5), ((1280, 720), 1.0)]


def _text_width(widget: QWidget, text: str) -> int:
    """The advance of `text` as the widget draws it (a mnemonic's & is not drawn)."""
    shown = text.replace("&&", "\0").replace("&", "").replace("\0", "&")
    return max((widget.fontMetrics().horizontalAdvance(line) for line in shown.split("\n")),
               default=0)


def _in_sight(widget: QWidget, window: QWidget) -> bool:
    """Inside the window (or inside a scroll area, which can bring it into sight)."""
    rect = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
    return _scrolled(widget, window) or window.rect().contains(rect)


def button_and_title_cuts(window: QWidget) -> list[str]:
    """Every visible button whose label is wider than the button (QFontMetrics of its text,
    its icon and the style's margins) or that lies outside the window; every visible
    one-line label narrower than its text."""
    from PySide6.QtWidgets import QCheckBox, QRadioButton, QStyle, QTabBar

    out = []
    style = window.style()
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or widget.window() is not window:
            continue
        if isinstance(widget, QAbstractButton) and widget.text().strip():
            text = _text_width(widget, widget.text())
            icon = widget.iconSize().width() + 4 if not widget.icon().isNull() else 0
            if isinstance(widget, (QCheckBox, QRadioButton)):
                pad = style.pixelMetric(QStyle.PixelMetric.PM_IndicatorWidth) + \
                    style.pixelMetric(QStyle.PixelMetric.PM_CheckBoxLabelSpacing)
            else:  # (the frame and the label's margins: Fusion's are 2 + 2 each side)
                pad = 2 * style.pixelMetric(QStyle.PixelMetric.PM_ButtonMargin) // 3
            need = text + icon + pad
            if widget.width() < need:
                out.append(f"{_name(widget)} {widget.text()!r}: {widget.width()} wide, "
                           f"its label needs {need}")
            if not _in_sight(widget, window):
                rect = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
                out.append(f"{_name(widget)} {widget.text()!r}: outside the window at "
                           f"{rect.getRect()} (window {window.width()}×{window.height()})")
        elif isinstance(widget, QLabel) and widget.text().strip() and not widget.wordWrap() \
                and widget.textFormat() != Qt.TextFormat.RichText and widget.pixmap().isNull():
            need = _text_width(widget, widget.text()) + 2 * widget.margin() + \
                widget.contentsMargins().left() + widget.contentsMargins().right()
            if widget.width() < need or not _in_sight(widget, window):
                out.append(f"{_name(widget)} {widget.text()[:60]!r}: {widget.width()} wide at "
                           f"{widget.mapTo(window, QPoint(0, 0)).x()}, its text needs {need}")
        elif isinstance(widget, QTabBar):
            for i in range(widget.count()):
                if widget.elideMode() != Qt.TextElideMode.ElideNone and \
                        widget.tabRect(i).width() < _text_width(widget, widget.tabText(i)):
                    out.append(f"{_name(widget)} tab {widget.tabText(i)!r} is elided")
                # (behind the bar's scroll arrows a tab cannot be seen, only scrolled to)
                if widget.isTabVisible(i) and not widget.rect().contains(widget.tabRect(i)):
                    out.append(f"{_name(widget)} tab {widget.tabText(i)!r} is out of sight "
                               f"(the bar is {widget.width()} wide, the tab ends at "
                               f"{widget.tabRect(i).right()})")
    return out


@pytest.mark.parametrize(("screen", "scale"), SCREENS,
                         ids=["1366x768", "1366x768-font-1.5x", "1280x720-scale-1.5"])
def test_every_button_and_title_fits_on_every_tab(qtbot, demo_repo, data_dir, qapp,
                                                  screen: tuple[int, int], scale: float) -> None:
    """On the demo corpus (every tab with real rows, an item selected), each tab in front:
    every visible button's label fits its width and lies inside the window, every one-line
    label shows its whole text (issue 24 item 8: "Edit, accept… (E)" and "Skip (S)" off
    screen, titles reading "up…" — the check above looked only at a tab's key widgets)."""
    from tests.gui.tabs import TABS, bring_forward

    before = QFont(qapp.font())
    if scale != 1.0:
        bigger = QFont(before)
        bigger.setPointSizeF(before.pointSizeF() * scale)
        qapp.setFont(bigger)
    win = open_window(qtbot, demo_repo)
    try:
        win.resize(*screen)
        qtbot.wait(30)
        assert (win.width(), win.height()) == screen
        problems: list[str] = []
        for tab in TABS:
            bring_forward(qtbot, win, tab)
            with contextlib.suppress(qtbot.TimeoutError, AssertionError):
                qtbot.waitUntil(lambda: not button_and_title_cuts(win), timeout=1000)
            problems += [f"{tab}: {p}" for p in button_and_title_cuts(win)]
        assert problems == [], "\n".join(dict.fromkeys(problems))
    finally:
        win.close()
        qapp.setFont(before)


def test_the_button_check_sees_a_squeezed_label(window, qtbot) -> None:
    """(The test can fail: a button narrower than its label, a title cut.)"""
    assert not [p for p in button_and_title_cuts(window) if "confirm" in p.lower()]
    window.center.setCurrentWidget(window.settlement)
    _settle(qtbot, window, window.settlement)
    button = window.settlement.buttons["confirm"]
    button.setFixedWidth(button.fontMetrics().horizontalAdvance(button.text()) - 4)
    assert any("Confirm" in p and "its label needs" in p for p in button_and_title_cuts(window))
    label = window.inspector.badges["type"]
    window.center.setCurrentWidget(window.facts)
    window.show_fact(fact_id(window, "pool"))
    label.setFixedWidth(20)
    assert any("20 wide" in p for p in button_and_title_cuts(window))


def test_the_mislabels_title_grows_with_the_font(window, qtbot, qapp) -> None:
    """A heading sized in pixels stayed 14 px at 1.5x the font, smaller than its body."""
    title = window.mislabels.title
    body = window.mislabels.path_label
    assert title.font().pointSizeF() > body.font().pointSizeF() > 0
    assert title.font().bold()


def facet_cuts(win: MainWindow) -> list[str]:
    """Facet values the sidebar draws elided ("observ…"): the text's advance plus the
    cell's margins wider than the value's cell."""
    tree = win.sidebar.facets
    fm = tree.fontMetrics()
    out = []
    for g in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(g)
        if group is None or not group.isExpanded():
            continue
        for i in range(group.childCount()):
            item = group.child(i)
            cell = tree.visualRect(tree.indexFromItem(item, 0))
            need = fm.horizontalAdvance(item.text(0)) + 8
            if cell.isValid() and cell.width() < need:
                out.append(f"{item.text(0)!r}: {cell.width()} wide, needs {need}")
    return out


@pytest.mark.parametrize(("screen", "scale"), SCREENS,
                         ids=["1366x768", "1366x768-font-1.5x", "1280x720-scale-1.5"])
def test_facet_values_are_not_elided(qtbot, demo_repo, data_dir, qapp,
                                     screen: tuple[int, int], scale: float) -> None:
    """At 1.5× the font the sidebar read "observ…", "hypoth…", "metho…" (issue 24 item 8)."""
    before = QFont(qapp.font())
    if scale != 1.0:
        bigger = QFont(before)
        bigger.setPointSizeF(before.pointSizeF() * scale)
        qapp.setFont(bigger)
    win = open_window(qtbot, demo_repo)
    try:
        win.resize(*screen)
        qtbot.waitUntil(lambda: win.sidebar.facets.topLevelItemCount() > 0, timeout=10_000)
        qtbot.wait(50)
        assert win.sidebar.facets.topLevelItem(0).childCount() > 5  # (the Type values)
        assert facet_cuts(win) == []
    finally:
        win.close()
        qapp.setFont(before)


def painted_cuts(widget: QWidget) -> list[str]:
    """Texts a chart painted (gui/painted.py) that run past its edges or into each other."""
    texts = [(r, t) for r, t in getattr(widget, "painted_text", []) if t.strip()]
    whole = widget.rect()
    out = [f"{t!r} at {r.getRect()} runs past the chart ({whole.width()}×{whole.height()})"
           for r, t in texts if not whole.contains(r)]
    for i, (r, t) in enumerate(texts):
        out += [f"{t!r} runs into {u!r}" for s, u in texts[i + 1:] if r.intersects(s)]
    return out


@pytest.mark.parametrize(("screen", "scale"), SCREENS,
                         ids=["1366x768", "1366x768-font-1.5x", "1280x720-scale-1.5"])
def test_the_agents_chart_text_fits(qtbot, demo_repo, data_dir, qapp,
                                    screen: tuple[int, int], scale: float) -> None:
    """At 1.5× the font the reliability chart's title ran past both edges (elided in the
    plain font, drawn bold) and its ticks read "0.00.10.20.3…"."""
    from tests.gui.tabs import bring_forward

    before = QFont(qapp.font())
    if scale != 1.0:
        bigger = QFont(before)
        bigger.setPointSizeF(before.pointSizeF() * scale)
        qapp.setFont(bigger)
    win = open_window(qtbot, demo_repo)
    try:
        win.resize(*screen)
        bring_forward(qtbot, win, "Agents")
        chart = win.agents.chart
        chart.repaint()
        qtbot.wait(20)
        assert chart.painted_text  # (it drew)
        assert painted_cuts(chart) == []
    finally:
        win.close()
        qapp.setFont(before)
