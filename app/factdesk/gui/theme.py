"""Visual vocabulary: one colour and one glyph per type, kind and origin, in a light and a
dark scheme, and the application's palette (View ▸ Theme: System, Light or Dark).

Only presentation lives here; the vocabularies themselves come from `factdesk.model.enums`.
Unknown (registry-extended or misspelt) values get a neutral grey and a `·` glyph.

Every colour is a `Tone` (its light and its dark value). A text colour says which
`Surface` it is drawn on (`on`; none: the window's, the lists' and their alternate rows'
backgrounds); tests/gui/test_contrast.py finds every Tone defined here and checks each
text colour against its backgrounds at WCAG AA (4.5:1) in both schemes, so a colour added
here is checked without being listed anywhere. A `Fill` (a chart's bar) needs 3:1, the
non-text contrast of WCAG 2.1 (1.4.11). Under the System theme the platform's palette may
be anything: a tone that would fall under 4.5:1 on it is moved toward the palette's text
colour until it does not (`readable`).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from factdesk.model.visible import visible

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QAction, QPalette
    from PySide6.QtWidgets import QApplication, QMenu, QWidget

#: WCAG 2.1 AA: text (1.4.3) and non-text graphics (1.4.11)
AA_TEXT = 4.5
AA_GRAPHIC = 3.0
THEMES = (("system", "System"), ("light", "Light"), ("dark", "Dark"))
SETTINGS_KEY = "view/theme"


@dataclass(frozen=True, slots=True)
class Tone:
    """One colour in the light and in the dark scheme (hex). `on`: the Surface a text in
    this colour is drawn on (None: the window, the lists and their alternate rows)."""

    light: str
    dark: str
    on: Surface | None = field(default=None, compare=False)

    @property
    def color(self) -> str:
        """The colour of the scheme in use (made readable on the System palette)."""
        return _STATE.resolve(self)

    def of(self, dark: bool) -> str:
        """The colour as defined for one scheme."""
        return self.dark if dark else self.light


@dataclass(frozen=True, slots=True)
class Surface(Tone):
    """A background."""


@dataclass(frozen=True, slots=True)
class Fill(Tone):
    """A graphic's colour (a chart's bar): 3:1 against the surface it is drawn on."""


@dataclass(frozen=True, slots=True)
class Mark:
    """How one value is drawn: a glyph and a foreground colour."""

    glyph: str
    tone: Tone

    @property
    def color(self) -> str:
        """The foreground colour (hex) of the scheme in use."""
        return self.tone.color


# -- the palettes: (light, dark) per QPalette role ---------------------------------------------

WINDOW = Surface("#efefef", "#2b2b2b")
BASE = Surface("#ffffff", "#1e1e1e")
ALTERNATE_BASE = Surface("#f6f6f6", "#262626")
#: where every text colour without its own `on` is drawn
SURFACES = (WINDOW, BASE, ALTERNATE_BASE)
TEXT = Tone("#1f1f1f", "#e8e8e8")
BUTTON = Surface("#e6e6e6", "#383838")
BUTTON_TEXT = Tone("#1f1f1f", "#e8e8e8", on=BUTTON)
HIGHLIGHT = Surface("#2b5797", "#3563a8")  # (dark: white on it 6:1, drawn anti-aliased)
HIGHLIGHTED_TEXT = Tone("#ffffff", "#ffffff", on=HIGHLIGHT)
TOOLTIP_BASE = Surface("#ffffdc", "#3a3a3a")
TOOLTIP_TEXT = Tone("#1f1f1f", "#f0f0f0", on=TOOLTIP_BASE)
LINK = Tone("#0b57b0", "#8ab4f8")
PLACEHOLDER = Tone("#5f6368", "#a8a8a8", on=BASE)
DISABLED_TEXT = Tone("#666666", "#969696", on=WINDOW)  # (WCAG exempts it; kept readable anyway)

# -- the vocabulary's marks ---------------------------------------------------------------------

UNKNOWN = Mark("·", Tone("#616161", "#aaaaaa"))

TYPE_MARKS: dict[str, Mark] = {
    "observation": Mark("●", Tone("#27692b", "#81c784")),
    "hypothesis": Mark("?", Tone("#8a5300", "#ffb74d")),
    "synthesis": Mark("Σ", Tone("#1565c0", "#64b5f6")),
    "policy": Mark("§", Tone("#6a1b9a", "#ce93d8")),
    "heuristic": Mark("≈", Tone("#8e24aa", "#e1a6f0")),
    "concept": Mark("◆", Tone("#006b75", "#4dd0e1")),
    "process": Mark("→", Tone("#37474f", "#b0bec5")),
    "principle": Mark("¶", Tone("#5d4037", "#bcaaa4")),
    "pattern": Mark("▦", Tone("#00695c", "#4db6ac")),
    "reference": Mark("↗", Tone("#455a64", "#90a4ae")),
    "insight": Mark("✦", Tone("#c62828", "#ef9a9a")),
    "methodology": Mark("⚙", Tone("#4e342e", "#d7ccc8")),
}
KIND_MARKS: dict[str, Mark] = {
    "epistemic": Mark("E", Tone("#1565c0", "#64b5f6")),
    "pragmatic": Mark("P", Tone("#6a1b9a", "#ce93d8")),
}
ORIGIN_MARKS: dict[str, Mark] = {
    "authored": Mark("✎", Tone("#37474f", "#b0bec5")),
    "distilled": Mark("⚗", Tone("#1565c0", "#64b5f6")),
    "discovered": Mark("✧", Tone("#8a5300", "#ffb74d")),
}
STATUS_MARKS: dict[str, Mark] = {
    "live": Mark("", Tone("#27692b", "#81c784")),
    "broken": Mark("✗", Tone("#c62828", "#ef9a9a")),
    "retracted": Mark("⌫", Tone("#616161", "#aaaaaa")),
}
ERROR = Tone("#c62828", "#ef9a9a")
WARNING = Tone("#8a5300", "#ffb74d")
INFO = Tone("#455a64", "#90a4ae")
SEVERITY = {"error": ERROR, "warning": WARNING, "info": INFO}
DERIVED = Tone("#616161", "#aaaaaa")
#: the envelope's other badges (claimant, claim, subject)
NEUTRAL = Tone("#37474f", "#b0bec5")

# -- the inspector's boxes ----------------------------------------------------------------------

ATTRIBUTION_BG = Surface("#e8eef7", "#25303e")
ATTRIBUTION_TEXT = Tone("#1f1f1f", "#e8e8e8", on=ATTRIBUTION_BG)
RETRACTED_BG = Surface("#e6e6e6", "#383838")
RETRACTED_TEXT = Tone("#3c3c3c", "#dedede", on=RETRACTED_BG)
RETRACTED_EDGE = Fill("#757575", "#9e9e9e", on=RETRACTED_BG)
SETTLE_OVERDUE = Tone("#c62828", "#ef9a9a")
SETTLE_DUE = Tone("#27692b", "#81c784")

# -- diffs (History, the relabel preview) -------------------------------------------------------

DIFF_ADDED_BG = Surface("#e6f4e7", "#1d3320")
DIFF_ADDED = Tone("#1b5e20", "#a5d6a7", on=DIFF_ADDED_BG)
DIFF_REMOVED_BG = Surface("#fde8ea", "#3d1f22")
DIFF_REMOVED = Tone("#b71c1c", "#ffb3b3", on=DIFF_REMOVED_BG)
DIFF_HUNK = Tone("#455a64", "#90caf9", on=BASE)
DIFF_HEADER = Tone("#616161", "#aaaaaa", on=BASE)

# -- chips (the search bar's filters) -----------------------------------------------------------

CHIP_BG = Surface("#e3e8eb", "#37414a")
CHIP_TEXT = Tone("#1f1f1f", "#e8e8e8", on=CHIP_BG)
CHIP_EDGE = Fill("#5d7480", "#78909c", on=CHIP_BG)

# -- charts (Overview's bars, the Transitions charts) -------------------------------------------

CHART_BAR = Fill("#546e7a", "#90a4ae")
OUTCOME_FILLS = {
    "confirmed": Fill("#2e7d32", "#66bb6a"),
    "promoted": Fill("#558b2f", "#aed581"),
    "refuted": Fill("#c62828", "#ef5350"),
    "retracted": Fill("#757575", "#9e9e9e"),
    "overdue": Fill("#e65100", "#ffa726"),
    "pending": Fill("#1e88e5", "#64b5f6"),
}
HIT_RATE = Tone("#1a237e", "#9fa8da")

# -- the review, agents and messages tabs (issues 13, 16, 17) -----------------------------------

#: a proposal's status in the Proposals tab
PROPOSAL_STATUS = {"open": Tone("#37474f", "#b0bec5"), "accepted": Tone("#27692b", "#81c784"),
                   "rejected": Tone("#616161", "#aaaaaa"), "partial": Tone("#1565c0", "#64b5f6")}
#: a message's delivery state in the Messages tab (a glyph, so colour is never the only cue)
DELIVERY_MARKS = {"queued": Mark("○", Tone("#8a5300", "#ffb74d")),
                  "delivered": Mark("◐", Tone("#1565c0", "#64b5f6")),
                  "read": Mark("●", Tone("#37474f", "#b0bec5")),
                  "acknowledged": Mark("✔", Tone("#27692b", "#81c784"))}
#: an unregistered agent's type, and a suggested type change, in the Agents tab
UNREGISTERED = Tone("#8a5300", "#ffb74d")
SUGGESTION = Tone("#1565c0", "#64b5f6")
NOTICE_BG = Surface("#fff8e1", "#3a3320")
NOTICE_TEXT = Tone("#1f1f1f", "#e8e8e8", on=NOTICE_BG)
SUGGEST_BG = Surface("#e3f2fd", "#1f2f40")
SUGGEST_TEXT = Tone("#0d47a1", "#bbdefb", on=SUGGEST_BG)
SUGGEST_EDGE = Fill("#1565c0", "#64b5f6", on=SUGGEST_BG)
ALERT_BG = Surface("#ffebee", "#3d1f22")
ALERT_TEXT = Tone("#1f1f1f", "#e8e8e8", on=ALERT_BG)
#: the reliability chart (bars that held, axes and titles, the grid, the ideal diagonal)
CHART_HELD = Fill("#2e7d32", "#66bb6a", on=BASE)
CHART_AXIS = Tone("#424242", "#cfcfcf", on=BASE)
CHART_GRID = Fill("#8c8c8c", "#6f6f6f", on=BASE)
CHART_IDEAL = Fill("#757575", "#9e9e9e", on=BASE)
#: (Fill-vs-surface only; the bars' own text is the palette's text)


# -- the scheme in use --------------------------------------------------------------------------


def contrast(a: str, b: str) -> float:
    """WCAG 2.1 contrast ratio of two hex colours (1 to 21)."""
    def lum(hex_: str) -> float:
        h = hex_.lstrip("#")
        channels = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _mix(a: str, b: str, t: float) -> str:
    """`a` moved the fraction `t` of the way toward `b`."""
    pa = [int(a.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4)]
    pb = [int(b.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(pa, pb, strict=True))


def readable(color: str, backgrounds: tuple[str, ...], text: str, need: float = AA_TEXT) -> str:
    """`color`, moved toward `text` (the palette's text colour) until it reaches `need`
    against every one of `backgrounds` (unchanged when it already does)."""
    for step in range(11):
        candidate = _mix(color, text, step / 10)
        if all(contrast(candidate, bg) >= need for bg in backgrounds):
            return candidate
    return text


class _State:
    """Which scheme is in use, and the palette's real surfaces under the System theme."""

    def __init__(self) -> None:
        self.mode = "light"  #: system / light / dark (what was chosen)
        self.dark = False  #: the scheme in use
        #: the System palette's (window, base, alternate base, text); None for our palettes
        self.actual: tuple[str, str, str, str] | None = None
        self._cache: dict[tuple[str, bool], str] = {}
        #: called after each change; one answering False is dropped (its widget is gone)
        self.listeners: list[Callable[[], bool | None]] = []

    def set(self, mode: str, dark: bool, actual: tuple[str, str, str, str] | None) -> None:
        self.mode, self.dark, self.actual = mode, dark, actual
        self._cache.clear()

    def resolve(self, tone: Tone) -> str:
        color = tone.of(self.dark)
        if self.actual is None or tone.on is not None or isinstance(tone, Surface):
            return color  # (a background, or a text on our own background, stays as defined)
        key = (color, isinstance(tone, Fill))
        if key not in self._cache:
            window, base, alternate, text = self.actual
            need = AA_GRAPHIC if isinstance(tone, Fill) else AA_TEXT
            self._cache[key] = readable(color, (window, base, alternate), text, need)
        return self._cache[key]


_STATE = _State()
ERROR_COLOR = ERROR.color
DERIVED_COLOR = DERIVED.color
SEVERITY_COLORS = {name: tone.color for name, tone in SEVERITY.items()}


def _rebind() -> None:
    """The module's plain colour names follow the scheme (callers read them at use)."""
    global ERROR_COLOR, DERIVED_COLOR, SEVERITY_COLORS
    ERROR_COLOR = ERROR.color
    DERIVED_COLOR = DERIVED.color
    SEVERITY_COLORS = {name: tone.color for name, tone in SEVERITY.items()}


def is_dark() -> bool:
    """The dark scheme is in use."""
    return _STATE.dark


def mode() -> str:
    """The theme chosen: system, light or dark."""
    return _STATE.mode


def on_change(listener: Callable[[], bool | None]) -> None:
    """`listener()` after every change of scheme (widgets restyle themselves); a listener
    answering False is forgotten (its widget was deleted)."""
    _STATE.listeners.append(listener)


def styled(widget: QWidget, sheet: Callable[[], str]) -> None:
    """Give `widget` the style sheet `sheet()` now and again after each change of scheme
    (for as long as the widget lives)."""
    from shiboken6 import isValid

    def apply() -> bool:
        if not isValid(widget):
            return False
        widget.setStyleSheet(sheet())
        return True

    apply()
    on_change(apply)


#: the item data role keeping the Tone a list or tree item is drawn in (`paint_item`)
TONE_ROLE = 0x0100 + 0x7F00  # (Qt.ItemDataRole.UserRole + 0x7F00: clear of the views' own)


def paint_item(item: object, tone: Tone, columns: tuple[int, ...] = (0,)) -> None:
    """Draw a QTreeWidgetItem's `columns` (a QListWidgetItem: the item) in `tone`, now and,
    in a view that `follow_items`, again after each change of scheme (a colour set on an
    item once stayed the old scheme's: the Problems tab's red headings, issue 24 item 7)."""
    from PySide6.QtGui import QBrush, QColor
    from PySide6.QtWidgets import QListWidgetItem

    brush = QBrush(QColor(tone.color))
    if isinstance(item, QListWidgetItem):
        item.setForeground(brush)
        item.setData(TONE_ROLE, tone)
        return
    for column in columns:
        item.setForeground(column, brush)  # type: ignore[attr-defined]
        item.setData(column, TONE_ROLE, tone)  # type: ignore[attr-defined]


def follow_items(view: QWidget) -> None:
    """A QTreeWidget or QListWidget whose items `paint_item` coloured: they are coloured
    again in the new scheme after each change (for as long as the view lives)."""
    from PySide6.QtGui import QBrush, QColor
    from PySide6.QtWidgets import QListWidget, QTreeWidget, QTreeWidgetItemIterator
    from shiboken6 import isValid

    def recolour() -> bool:
        if not isValid(view):
            return False
        if isinstance(view, QListWidget):
            for row in range(view.count()):
                item = view.item(row)
                tone = item.data(TONE_ROLE)
                if isinstance(tone, Tone):
                    item.setForeground(QBrush(QColor(tone.color)))
        elif isinstance(view, QTreeWidget):
            it = QTreeWidgetItemIterator(view)
            while it.value() is not None:
                node = it.value()
                for column in range(node.columnCount()):
                    tone = node.data(column, TONE_ROLE)
                    if isinstance(tone, Tone):
                        node.setForeground(column, QBrush(QColor(tone.color)))
                it += 1
        return True

    on_change(recolour)


def palette(dark: bool) -> QPalette:
    """The application palette of one scheme (every role factdesk's widgets use)."""
    from PySide6.QtGui import QColor, QPalette

    p = QPalette()
    role = QPalette.ColorRole
    pairs = {
        role.Window: WINDOW, role.WindowText: TEXT, role.Base: BASE,
        role.AlternateBase: ALTERNATE_BASE, role.Text: TEXT, role.Button: BUTTON,
        role.ButtonText: BUTTON_TEXT, role.ToolTipBase: TOOLTIP_BASE,
        role.ToolTipText: TOOLTIP_TEXT, role.Highlight: HIGHLIGHT,
        role.HighlightedText: HIGHLIGHTED_TEXT, role.Link: LINK, role.LinkVisited: LINK,
        role.PlaceholderText: PLACEHOLDER, role.BrightText: HIGHLIGHTED_TEXT,
    }
    for r, tone in pairs.items():
        p.setColor(r, QColor(tone.of(dark)))
    window = QColor(WINDOW.of(dark))
    p.setColor(role.Light, window.lighter(150))
    p.setColor(role.Midlight, window.lighter(125))
    p.setColor(role.Mid, window.darker(130))
    p.setColor(role.Dark, window.darker(160) if not dark else window.darker(200))
    p.setColor(role.Shadow, QColor("#000000"))
    disabled = QPalette.ColorGroup.Disabled
    for r in (role.WindowText, role.Text, role.ButtonText):
        p.setColor(disabled, r, QColor(DISABLED_TEXT.of(dark)))
    return p


class _Original:
    """The platform's style, before any theme was applied (System)."""

    style: str = ""
    hooked = False


def apply(choice: str) -> None:
    """Use the theme `choice` (system / light / dark) for the whole application; widgets
    that styled themselves (`styled`, `on_change`) follow."""
    from PySide6.QtGui import QGuiApplication, QPalette
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return
    choice = choice if choice in dict(THEMES) else "system"
    if not _Original.style:
        _Original.style = app.style().name()
    if not _Original.hooked:  # the desktop switched between light and dark
        _Original.hooked = True
        QGuiApplication.styleHints().colorSchemeChanged.connect(
            lambda _scheme: apply("system") if _STATE.mode == "system" else None)
    if choice == "system":
        if _Original.style and app.style().name() != _Original.style:
            app.setStyle(_Original.style)
        app.setPalette(QPalette())  # (a default palette: the platform's again)
        live = app.palette()
        role = QPalette.ColorRole
        window = live.color(role.Window).name()
        dark = live.color(role.Window).lightness() < 128
        actual = (window, live.color(role.Base).name(), live.color(role.AlternateBase).name(),
                  live.color(role.Text).name())
        _STATE.set("system", dark, actual)
    else:
        dark = choice == "dark"
        if app.style().name().lower() != "fusion":  # (a native style may ignore a palette)
            app.setStyle("Fusion")
        app.setPalette(palette(dark))
        _STATE.set(choice, dark, None)
    _rebind()
    _STATE.listeners = [f for f in _STATE.listeners if f() is not False]
    _restyle(app)


def _restyle(app: QApplication) -> None:
    """Every widget with a style sheet of its own takes it again: a style sheet's widget
    keeps the palette it was polished under (a label styled only for its font kept the
    light scheme's black text on the dark tab pane, issue 24 items 6 and 7)."""
    for widget in app.allWidgets():
        sheet = widget.styleSheet()
        if sheet:
            widget.setStyleSheet("")
            widget.setStyleSheet(sheet)


def apply_saved(settings: QSettings) -> str:
    """The theme kept in settings (System when none), applied; returns it."""
    choice = str(settings.value(SETTINGS_KEY, "system") or "system")
    apply(choice)
    return mode()


def theme_menu(view: QMenu, add_action: Callable[..., QAction], settings: QSettings) -> QMenu:
    """View ▸ Theme: System, Light, Dark (checkable, kept in settings); applies the saved
    one. `add_action(menu, name, text, slot)` is the menu builder's (actions `theme_<key>`)."""
    menu = view.addMenu("Theme")
    menu.setObjectName("themeMenu")
    current = apply_saved(settings)
    actions: dict[str, QAction] = {}

    def choose(key: str) -> None:
        settings.setValue(SETTINGS_KEY, key)
        apply(key)
        for k, a in actions.items():
            a.setChecked(k == key)

    for key, text in THEMES:
        action = add_action(menu, f"theme_{key}", text, lambda k=key: choose(k))
        action.setCheckable(True)
        action.setChecked(key == current)
        actions[key] = action
    return menu


MARKS_BY_COLUMN: dict[str, dict[str, Mark]] = {
    "type": TYPE_MARKS, "kind": KIND_MARKS, "origin": ORIGIN_MARKS, "status": STATUS_MARKS,
}


def mark_for(column: str, value: str | None) -> Mark | None:
    """The mark of a value in a marked column, None for unmarked columns."""
    marks = MARKS_BY_COLUMN.get(column)
    if marks is None:
        return None
    return marks.get(value or "", UNKNOWN)


def labelled(column: str, value: str | None) -> str:
    """`glyph value` for marked columns (what the table and badges show)."""
    text = "" if value is None else clip(str(value), 200)  # (a broken file's raw type)
    mark = mark_for(column, value)
    if mark is None or not mark.glyph or not text:
        return text
    return f"{mark.glyph} {text}"


#: corpus text shown in a label or a cell is cut here (H09: a 1 MB title took seconds to lay out)
MAX_LABEL_CHARS = 1_000


def clip(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    """`text`, cut to `limit` characters with a note of how much was left out, and its
    invisible controls made visible (`visible`): every label of corpus text comes here."""
    text = visible(text)  # (first: the cut then holds for what is shown)
    if len(text) > limit:
        text = f"{text[:limit]} … [{len(text) - limit:,} more characters]"
    return text


def tooltip(text: str) -> str:
    """A tooltip that Qt can never interpret as markup from the corpus (RELIABILITY H01),
    cut at 2,000 characters (H09: a 1 MB title's tooltip took 3.9 s to show)."""
    return "<qt>" + html.escape(clip(text, 2_000)) + "</qt>"


def legend_lines() -> list[tuple[str, Mark]]:
    """(caption, mark) for every type, kind and origin, for the legend dialog."""
    lines: list[tuple[str, Mark]] = []
    for title, marks in (("type", TYPE_MARKS), ("kind", KIND_MARKS), ("origin", ORIGIN_MARKS)):
        lines.extend((f"{title}: {value}", mark) for value, mark in marks.items())
    return lines
