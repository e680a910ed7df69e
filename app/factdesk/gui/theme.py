"""Visual vocabulary: one colour and one glyph per type, kind and origin.

Only presentation lives here; the vocabularies themselves come from `factdesk.model.enums`.
Unknown (registry-extended or misspelt) values get a neutral grey and a `·` glyph.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from factdesk.model.visible import visible


@dataclass(frozen=True, slots=True)
class Mark:
    """How one value is drawn: a glyph and a foreground colour (hex)."""

    glyph: str
    color: str


UNKNOWN = Mark("·", "#757575")

TYPE_MARKS: dict[str, Mark] = {
    "observation": Mark("●", "#2e7d32"),
    "hypothesis": Mark("?", "#b26a00"),
    "synthesis": Mark("Σ", "#1565c0"),
    "policy": Mark("§", "#6a1b9a"),
    "heuristic": Mark("≈", "#8e24aa"),
    "concept": Mark("◆", "#00838f"),
    "process": Mark("→", "#37474f"),
    "principle": Mark("¶", "#5d4037"),
    "pattern": Mark("▦", "#00695c"),
    "reference": Mark("↗", "#455a64"),
    "insight": Mark("✦", "#c62828"),
    "methodology": Mark("⚙", "#4e342e"),
}
KIND_MARKS: dict[str, Mark] = {
    "epistemic": Mark("E", "#1565c0"),
    "pragmatic": Mark("P", "#6a1b9a"),
}
ORIGIN_MARKS: dict[str, Mark] = {
    "authored": Mark("✎", "#37474f"),
    "distilled": Mark("⚗", "#1565c0"),
    "discovered": Mark("✧", "#b26a00"),
}
STATUS_MARKS: dict[str, Mark] = {
    "live": Mark("", "#2e7d32"),
    "broken": Mark("✗", "#c62828"),
    "retracted": Mark("⌫", "#757575"),
}
SEVERITY_COLORS = {"error": "#c62828", "warning": "#b26a00", "info": "#455a64"}
ERROR_COLOR = "#c62828"
DERIVED_COLOR = "#757575"

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
