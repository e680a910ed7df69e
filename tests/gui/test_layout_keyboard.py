"""Accessibility (issue 18): every tab's controls reached with the keyboard alone (Tab, or
Ctrl+Tab out of a widget that keeps Tab for itself), every control reached has a name a
screen reader can say, and so has every custom widget (badges, chips, charts); Tab goes
through the tab in front before the inspector beside it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QLineEdit,
    QTabBar,
    QWidget,
)

from factdesk.gui.main_window import MainWindow
from factdesk.gui.panel import key_widgets
from tests.gui.conftest import fact_id, submit
from tests.gui.test_layout import _settle

pytestmark = pytest.mark.gui


def spoken(widget: QWidget) -> str:
    """What a screen reader says for a control: its accessible name, else its own text."""
    if widget.accessibleName():
        return widget.accessibleName()
    if isinstance(widget, QAbstractButton):
        return widget.text().replace("&", "")
    if isinstance(widget, QLineEdit):
        return widget.placeholderText()
    if isinstance(widget, QComboBox):
        return widget.currentText()
    if isinstance(widget, QTabBar):
        return widget.tabText(widget.currentIndex())
    return ""


def tab_chain(qtbot, win: MainWindow, start: QWidget, limit: int = 120) -> list[QWidget]:
    """The widgets focused by pressing Tab from `start` until the focus comes back."""
    start.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is start, timeout=2000)
    chain = [start]
    for _ in range(limit):
        before = QApplication.focusWidget()
        qtbot.keyClick(before, Qt.Key.Key_Tab)
        if QApplication.focusWidget() is before:  # (it keeps Tab: a table, a text view)
            qtbot.keyClick(before, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
        now = QApplication.focusWidget()
        if now is start or now is None:
            break
        if now not in chain:
            chain.append(now)
    return chain


def test_every_tab_is_reachable_and_named_by_keyboard(window: MainWindow, qtbot) -> None:
    window.show_fact(fact_id(window, "hyp"))
    problems = []
    for panel in window.panels:
        window.inspector.show_fact(fact_id(window, "hyp"))  # (what an earlier tab left there)
        window.center.setCurrentWidget(panel.tab_widget())
        _settle(qtbot, window, panel)
        chain = tab_chain(qtbot, window, window.tab_bar)
        selected = getattr(panel, "selected_path", None)
        empty = selected is not None and selected() is None
        if empty:  # a tab with nothing selected: an empty inspector, nothing to reach there
            assert window.inspector.fact_id is None, panel.caption  # (issue 24 #1)
        for widget in key_widgets(panel):
            if widget.isEnabled() and widget.focusPolicy() & Qt.FocusPolicy.TabFocus and widget not in chain:
                problems.append(f"{panel.caption}: {type(widget).__name__} {spoken(widget)!r} "
                                "is never reached by Tab")
        for widget in chain:
            if not spoken(widget).strip():
                problems.append(f"{panel.caption}: {type(widget).__name__} "
                                f"{widget.objectName()!r} has no accessible name")
        # the order follows the screen: the centre's tab (search, table or list), then the inspector
        inspector_at = [i for i, w in enumerate(chain) if window.inspector.isAncestorOf(w)]
        tab_at = [i for i, w in enumerate(chain) if panel.tab_widget().isAncestorOf(w)]
        if not tab_at or (not empty and (not inspector_at or min(inspector_at) < max(tab_at))):
            problems.append(f"{panel.caption}: Tab does not go through the tab, then the inspector: "
                            + ", ".join(spoken(w) or type(w).__name__ for w in chain))
    assert not problems, "\n".join(dict.fromkeys(problems))


def test_custom_widgets_have_accessible_names(window: MainWindow, qtbot) -> None:
    window.show_fact(fact_id(window, "pool"))
    for name, badge in window.inspector.badges.items():
        assert badge.accessibleName().startswith(f"{name}: ")
    submit(window, qtbot, "type:observation")
    chips = window.search.chips.findChildren(QAbstractButton, "chip")
    assert chips and all(c.accessibleName() == "Remove filter type:observation" for c in chips)
    window.center.setCurrentWidget(window.overview)
    chart = window.overview.charts["type"]
    assert chart.accessibleName() == "Type chart"
    assert "observation: 2" in chart.accessibleDescription()
    # a chart is operated by keys: Down picks a bar, Enter filters the table by it
    chart.setFocus()
    qtbot.keyClick(chart, Qt.Key.Key_Down)
    label = chart.bars[chart.current][0]
    with qtbot.waitSignal(window.query_did_apply, timeout=5000):
        qtbot.keyClick(chart, Qt.Key.Key_Return)
    assert window.search.text() == f"type:{label}"
    window.center.setCurrentWidget(window.transitions_tab)
    _settle(qtbot, window, window.transitions)
    for view in (window.transitions.records_view, window.transitions.months_view):
        assert view.accessibleName()
        assert view.focusPolicy() & Qt.FocusPolicy.TabFocus
