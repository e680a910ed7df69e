"""Undo and redo from the window: Ctrl+Z / Ctrl+Shift+Z, the Edit menu's labels (read on
the writer lane after each update, never with `git log` on the GUI thread) and the status
bar's Undo button, which undoes exactly the action it names."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction

from factdesk.curation import Refused
from factdesk.gui.operations import Operations


class UndoStack(QObject):
    """The window's view of factdesk's undo and redo stacks (git's history is the truth)."""

    def __init__(self, ops: Operations, undo_action: QAction, redo_action: QAction,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ops = ops
        self._actions = {"undo": undo_action, "redo": redo_action}
        #: the tops' labels (undo, redo), once read; None before the first read
        self.labels: tuple[str | None, str | None] | None = None

    def undo(self) -> None:
        self._ops.run(lambda cur: cur.undo())

    def redo(self) -> None:
        self._ops.run(lambda cur: cur.redo())

    def undo_exactly(self, action_id: str) -> None:
        """Undo the action `action_id`, only while it is the last one."""
        def op(cur):  # type: ignore[no-untyped-def]
            undo, _redo = cur.stacks()
            if not undo or undo[-1].action_id != action_id:
                raise Refused("that action is no longer the last one: use Edit ▸ Undo", rule="undo")
            return cur.undo()

        self._ops.run(op)

    def reread(self) -> None:
        """Read the stacks again (after every index update: ours, or an agent's commit)."""
        self._ops.read(lambda cur: cur.stacks(), done=self._read)

    def _read(self, stacks: tuple[list, list]) -> None:
        undo, redo = stacks
        self.labels = (undo[-1].label if undo else None, redo[-1].label if redo else None)
        self.name_actions(greyed=False)

    def name_actions(self, *, greyed: bool) -> None:
        """`Undo relabel of 3 facts`. Greyed out (when empty) only while the menu shows:
        a disabled action's shortcut is dead, and the stacks change with every commit."""
        undo, redo = self.labels or (None, None)
        for name, top in (("undo", undo), ("redo", redo)):
            action = self._actions[name]
            action.setText(f"{name.capitalize()} {top}" if top else name.capitalize())
            action.setEnabled(not greyed or top is not None or self.labels is None)
