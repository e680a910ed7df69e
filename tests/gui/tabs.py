"""Bring a tab of the main window to the front with something selected in it, as a curator
would (its queue loaded, J twice: its detail pane shows real data), for the tests that look
at what every tab draws (test_drawn_contrast.py, test_layout.py) — one list of tabs, so a
tab added to `later_tabs` (gui/later_panel.py) is covered without being named here."""

from __future__ import annotations

import contextlib

from PySide6.QtWidgets import QAbstractItemView

from factdesk.gui.main_window import MainWindow

#: every tab, by caption stem (the caption may carry a count: "Hypotheses (3)")
TABS = ("Facts", "Problems", "Overview", "Mislabels", "Hypotheses", "Transitions",
        "Proposals", "Agents", "Messages")


def panel_named(win: MainWindow, name: str) -> object:
    """The panel whose caption starts with `name`."""
    found = [p for p in win.panels if p.caption.startswith(name)]
    assert found, f"no tab {name!r} among {[p.caption for p in win.panels]}"
    return found[0]


def _rows(tab: object) -> int:
    views = [v for v in tab.findChildren(QAbstractItemView)  # type: ignore[attr-defined]
             if v.isVisible() and v.model() is not None]
    return max((v.model().rowCount() for v in views), default=0)


def bring_forward(qtbot, win: MainWindow, name: str) -> object:  # type: ignore[no-untyped-def]
    """The tab `name` in front, loaded, its second item selected; returns its panel."""
    panel = panel_named(win, name)
    win.center.setCurrentWidget(panel.tab_widget())  # type: ignore[attr-defined]
    tab = panel.tab_widget()  # type: ignore[attr-defined]
    lists = any(isinstance(v, QAbstractItemView) and v.isVisibleTo(tab)
                for v in tab.findChildren(QAbstractItemView))
    with contextlib.suppress(qtbot.TimeoutError, AssertionError):
        qtbot.waitUntil(lambda: (_rows(tab) > 0 or not lists) and getattr(
            panel, "loaded", True) not in (None, False), timeout=6_000)
    panel.step(1)  # type: ignore[attr-defined]
    panel.step(1)  # type: ignore[attr-defined]
    qtbot.wait(400)  # (a detail pane reads what it shows in the background)
    return panel
