"""WCAG AA contrast of every colour gui/theme.py defines, in the light and the dark scheme,
and of what the window really draws: badges, the attribution sentence, the table's glyphs
(issue 18: under a dark palette the badges and the attribution were nearly unreadable).

The pairs come from theme.py itself: every `Tone` reachable from its module globals (in
dicts, tuples and `Mark`s) is checked against the surface it says it is drawn on (its
`on`, else the window's, the lists' and the alternate rows' backgrounds), so a colour added
there is covered without being listed here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette

from factdesk.gui import theme
from tests.gui.conftest import fact_id

pytestmark = pytest.mark.gui


def _tones(value: object, name: str, seen: set[int]) -> Iterator[tuple[str, theme.Tone]]:
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, theme.Tone):
        yield name, value
    elif isinstance(value, theme.Mark):
        yield f"{name} ({value.glyph})", value.tone
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _tones(item, f"{name}[{key}]", seen)
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from _tones(item, f"{name}[{i}]", seen)


def defined_tones(module: object = theme) -> list[tuple[str, theme.Tone]]:
    """(name, tone) for every Tone the module defines, surfaces included."""
    seen: set[int] = set()
    out: list[tuple[str, theme.Tone]] = []
    for name, value in vars(module).items():
        if not name.startswith("_"):
            out.extend(_tones(value, name, seen))
    return out


def failures(dark: bool, tones: list[tuple[str, theme.Tone]] | None = None) -> list[str]:
    """Every text colour under 4.5:1 (a Fill under 3:1) against a background it is drawn on."""
    bad = []
    for name, tone in tones if tones is not None else defined_tones():
        if isinstance(tone, theme.Surface):
            continue
        need = theme.AA_GRAPHIC if isinstance(tone, theme.Fill) else theme.AA_TEXT
        for surface in (tone.on,) if tone.on is not None else theme.SURFACES:
            ratio = theme.contrast(tone.of(dark), surface.of(dark))
            if ratio < need:
                bad.append(f"{name} {tone.of(dark)} on {surface.of(dark)}: {ratio:.2f} < {need}")
    return bad


def test_the_definitions_cover_the_vocabulary() -> None:
    names = [n for n, _t in defined_tones()]
    assert len(names) > 40
    for column, marks in theme.MARKS_BY_COLUMN.items():  # every badge and glyph colour
        for value in marks:
            assert any(n.startswith(("TYPE_MARKS", "KIND_MARKS", "ORIGIN_MARKS", "STATUS_MARKS"))
                       and f"[{value}]" in n for n in names), (column, value)
    assert any(n == "ATTRIBUTION_TEXT" for n in names)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_every_text_colour_is_aa_on_its_background(dark: bool) -> None:
    assert failures(dark) == []


def test_the_check_fails_on_a_low_contrast_colour() -> None:
    """(The test can fail: a pale amber badge on the light window, a navy one on dark.)"""
    planted = [("TYPE_MARKS[new]", theme.Tone("#ffb74d", "#1a237e"))]
    assert len(failures(False, planted)) == 3 and len(failures(True, planted)) == 3
    on_chip = [("X", theme.Tone("#1f1f1f", "#555555", on=theme.CHIP_BG))]
    assert failures(False, on_chip) == [] and len(failures(True, on_chip)) == 1


def test_every_colour_in_theme_py_is_a_checked_tone() -> None:
    """No bare hex colour hides in theme.py outside a Tone (it would escape the check)."""
    source = Path(theme.__file__).read_text(encoding="utf-8")
    literals = {c.lower() for c in re.findall(r"#[0-9a-fA-F]{6}\b", source)}
    toned = {c for _n, t in defined_tones() for c in (t.light.lower(), t.dark.lower())}
    assert literals - toned <= {"#000000"}  # (the palette's shadow)


def test_no_gui_module_draws_a_colour_of_its_own() -> None:
    """Every colour the window draws comes from theme.py (light and dark, checked above): a
    hex literal in another gui module would stay the same under the dark palette (the
    Agents, Proposals and Messages tabs each had some when they were merged)."""
    gui = Path(theme.__file__).parent
    found = [f"{path.name}: {c}" for path in sorted(gui.glob("*.py")) if path.name != "theme.py"
             for c in re.findall(r"#[0-9a-fA-F]{6}\b", path.read_text(encoding="utf-8"))]
    assert found == []


def test_every_surface_is_drawn_on() -> None:
    """A background nobody declares text on would be unchecked."""
    tones = defined_tones()
    used = {id(t.on) for _n, t in tones if t.on is not None} | {id(s) for s in theme.SURFACES}
    for name, tone in tones:
        if isinstance(tone, theme.Surface):
            assert id(tone) in used or any(t.on == tone for _n, t in tones), name


def test_readable_moves_a_colour_until_it_passes() -> None:
    """Under the System theme the palette is the desktop's: a mark colour too close to its
    base is moved toward the text colour until it reaches 4.5:1."""
    out = theme.readable("#757575", ("#606060", "#5a5a5a"), "#ffffff")
    assert all(theme.contrast(out, bg) >= 4.5 for bg in ("#606060", "#5a5a5a"))
    assert theme.readable("#1565c0", ("#ffffff",), "#000000") == "#1565c0"  # (already fine)


@pytest.fixture
def restore_theme(qapp) -> Iterator[None]:  # type: ignore[no-untyped-def]
    yield
    theme.apply("system")


def _sheet_color(sheet: str, prop: str) -> str:
    match = re.search(rf"(?<![-\w]){prop}:\s*(#[0-9a-fA-F]{{6}})", sheet)
    assert match, (prop, sheet)
    return match.group(1)


@pytest.mark.parametrize("choice", ["light", "dark"])
def test_what_the_window_draws_is_aa(window, qtbot, restore_theme, choice: str) -> None:
    """View ▸ Theme ▸ Light/Dark, then the real badges, attribution and table glyphs
    against the backgrounds the widgets are painted on."""
    window.actions_by_name[f"theme_{choice}"].trigger()
    assert theme.is_dark() is (choice == "dark")
    qtbot.wait(20)  # (the palette reaches the widgets through events)
    pal = window.palette()
    assert pal.color(QPalette.ColorRole.Window).name() == theme.WINDOW.of(choice == "dark")
    window.show_fact(fact_id(window, "pool"))
    inspector = window.inspector
    window_bg = inspector.palette().color(QPalette.ColorRole.Window).name()
    for name, badge in inspector.badges.items():
        color = _sheet_color(badge.styleSheet(), "color")
        assert theme.contrast(color, window_bg) >= 4.5, (name, color, window_bg)
    sheet = inspector.attribution.styleSheet()
    ratio = theme.contrast(_sheet_color(sheet, "color"), _sheet_color(sheet, "background"))
    assert ratio >= 4.5
    assert inspector.attribution.text()
    view = window.table.view
    model = window.table.model
    backgrounds = [view.palette().color(role).name()
                   for role in (QPalette.ColorRole.Base, QPalette.ColorRole.AlternateBase)]
    checked = 0
    for column in range(model.columnCount()):
        for row in range(model.rowCount()):
            color = model.index(row, column).data(Qt.ItemDataRole.ForegroundRole)
            if color is not None:
                checked += 1
                for bg in backgrounds:
                    assert theme.contrast(color.name(), bg) >= 4.5, (row, column, color.name(), bg)
    assert checked > 5


def test_the_theme_is_kept_in_settings(window, qtbot, restore_theme) -> None:
    """Chosen from the View menu (by its keys), kept in settings; System puts the
    desktop's palette back."""
    menu = window.findChild(type(window.menuBar().actions()[0].menu()), "themeMenu")
    assert [a.text() for a in menu.actions()] == ["System", "Light", "Dark"]
    assert window.actions_by_name["theme_system"].isChecked()
    window.actions_by_name["theme_dark"].trigger()
    assert window.settings.value(theme.SETTINGS_KEY) == "dark"
    assert window.actions_by_name["theme_dark"].isChecked()
    assert not window.actions_by_name["theme_system"].isChecked()
    assert theme.ERROR.dark == theme.ERROR_COLOR  # (the plain names follow)
    window.actions_by_name["theme_system"].trigger()
    assert not theme.is_dark()
    assert window.settings.value(theme.SETTINGS_KEY) == "system"
    # (under the desktop's palette a background is never "made readable": it stays light)
    assert theme.ATTRIBUTION_BG.color == theme.ATTRIBUTION_BG.light
