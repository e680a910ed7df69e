"""What every tab draws is readable in both themes (issue 24 item 6), and stays readable
when the theme is switched while the window runs (item 7).

Each tab of the demo corpus comes to the front with an item selected (its detail pane
showing a real fact, agent, message, hypothesis…: tests/gui/tabs.py), the window is
grabbed, and every line of text is measured against the background it is drawn on
(tests/gui/drawn.py) — not the palette's tones (test_contrast.py) but the pixels, so a
colour an HTML detail, a style sheet or a model bakes in is caught too. The tabs are one
parametrized list (`TABS`): the Proposals tab is measured by the same test.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from factdesk.gui import theme
from factdesk.gui.app import make_settings
from factdesk.gui.main_window import MainWindow
from tests.gui.conftest import open_window
from tests.gui.drawn import contrast_failures, drawn_text, lines_of
from tests.gui.tabs import TABS, bring_forward

pytestmark = pytest.mark.gui

OTHER = {"light": "dark", "dark": "light"}


@pytest.fixture
def restore_theme(qapp) -> Iterator[None]:  # type: ignore[no-untyped-def]
    yield
    theme.apply("system")


def _opened_in(qtbot, repo, choice: str) -> MainWindow:  # type: ignore[no-untyped-def]
    """The window over `repo`, started in the theme `choice` (kept in settings, as a
    curator's choice from an earlier session is)."""
    make_settings().setValue(theme.SETTINGS_KEY, choice)
    win = open_window(qtbot, repo)
    win.resize(1366, 768)
    assert theme.mode() == choice
    return win


GROUPS = [pytest.param(TABS, id="tabs")]


def _measured(qtbot, win: MainWindow, tabs: tuple[str, ...]) -> list[str]:  # type: ignore[no-untyped-def]
    """Each tab of `tabs` in front in turn: every line it draws under 4.5:1."""
    out = []
    for tab in tabs:
        bring_forward(qtbot, win, tab)
        assert len(drawn_text(win)) > 20, tab  # (the tab and its detail drew text)
        out += [f"{tab}: {d}" for d in contrast_failures(win)]
    return list(dict.fromkeys(out))


@pytest.mark.parametrize("choice", ["light", "dark"])
@pytest.mark.parametrize("tabs", GROUPS)
def test_every_tab_draws_readable_text(qtbot, demo_repo, data_dir, restore_theme,
                                       tabs: tuple[str, ...], choice: str) -> None:
    """Started in a theme: every line of every tab, its detail included, at 4.5:1."""
    win = _opened_in(qtbot, demo_repo, choice)
    try:
        assert _measured(qtbot, win, tabs) == []
    finally:
        win.close()


@pytest.mark.parametrize("choice", ["light", "dark"])
@pytest.mark.parametrize("tabs", GROUPS)
def test_a_theme_switch_redraws_every_tab(qtbot, demo_repo, data_dir, restore_theme,
                                          tabs: tuple[str, ...], choice: str) -> None:
    """Started in the other theme, every tab shown once (each builds and colours its
    widgets), then View ▸ Theme switched while running: what is drawn follows at once —
    no colour of the old scheme left on the new background (issue 24 item 7: the Problems
    tab's headings, the facet labels, a style-sheeted title kept the old scheme)."""
    win = _opened_in(qtbot, demo_repo, OTHER[choice])
    try:
        for name in tabs:
            bring_forward(qtbot, win, name)
        win.actions_by_name[f"theme_{choice}"].trigger()
        qtbot.wait(50)
        assert theme.mode() == choice
        assert _measured(qtbot, win, tabs) == []
    finally:
        win.close()


def test_the_measure_sees_a_pale_line() -> None:
    """(The test can fail: a grey line on the light window, black on the dark tab pane.)"""
    light = np.full((30, 80, 3), 0xEF, dtype=np.uint8)
    light[5:15, 10:60] = (0xAA, 0xAA, 0xAA)  # (a line of #aaaaaa: 2.1:1)
    light[18:27, 10:60] = (0x1F, 0x1F, 0x1F)  # (a line of body text: 14.6:1)
    (ink1, bg1, r1), (ink2, _bg2, r2) = lines_of(light)
    assert (ink1, bg1) == ("#aaaaaa", "#efefef") and r1 < 4.5 and ink2 == "#1f1f1f" and r2 > 14
    dark = np.full((12, 40, 3), 0x46, dtype=np.uint8)
    dark[2:10, 5:30] = 0
    assert [round(r, 2) for _i, _b, r in lines_of(dark)] == [2.22]
    assert lines_of(np.full((10, 10, 3), 0x46, dtype=np.uint8)) == []  # (nothing drawn)


def test_the_charts_painted_text_is_measured(qtbot, demo_repo, data_dir, restore_theme,
                                             monkeypatch) -> None:
    """The Agents tab's reliability chart and the Transitions charts paint their own text (titles,
    axes, legends): it is measured like any label, and a pale axis colour fails (a chart's
    text was not measured before: only widgets' own texts were)."""
    from tests.gui.drawn import drawn_text as drawn

    win = _opened_in(qtbot, demo_repo, "light")
    try:
        for tab in ("Agents", "Transitions"):
            bring_forward(qtbot, win, tab)
            painted = [d for d in drawn(win) if " painted" in d.where]
            assert len(painted) >= 3, (tab, painted)  # (a title, the axes' numbers, a legend)
        bring_forward(qtbot, win, "Agents")
        monkeypatch.setattr(theme, "CHART_AXIS", theme.Tone("#c8c8c8", "#3a3a3a", on=theme.BASE))
        win.agents.update()
        for chart in win.findChildren(type(win.agents.chart)):
            chart.repaint()
        qtbot.wait(50)
        assert any(" painted" in d.where for d in contrast_failures(win))
    finally:
        win.close()
