"""Single-key shortcuts of a panel (A/E/D in the mislabel queue, C/F/E/P in the
settlement queue): active while focus is inside the panel, so the same letter can mean
something else in another tab."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget


def panel_keys(panel: QWidget, bindings: Iterable[tuple[str, Callable[[], object]]]) -> None:
    for key, slot in bindings:
        shortcut = QShortcut(QKeySequence(key), panel)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(slot)
