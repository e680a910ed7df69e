"""Single-key shortcuts of a panel (A/E/D in the mislabel queue, C/F/E/P in the
settlement queue): active while focus is inside the panel, so the same letter can mean
something else in another tab. Each says what it does (`whatsThis`, from the slot's name:
`accept` → "Accept", `partial(accept, 1)` → "Accept option 2"), which Help ▸ Keyboard
shortcuts shows (gui/help.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget


def panel_keys(panel: QWidget, bindings: Iterable[tuple[str, Callable[[], object]]]) -> None:
    for key, slot in bindings:
        shortcut = QShortcut(QKeySequence(key), panel)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(slot)
        shortcut.setWhatsThis(describe(slot))


def describe(slot: Callable[[], object]) -> str:
    """What a key's slot does, in words, from its name."""
    args: tuple[object, ...] = ()
    if isinstance(slot, partial):
        args = tuple(slot.args)
        slot = slot.func
    name = getattr(slot, "__name__", "") or type(slot).__name__
    words = name.strip("_").replace("_", " ").capitalize() or "(unnamed)"
    if len(args) == 1 and isinstance(args[0], int):
        return f"{words} option {args[0] + 1}"
    return words
