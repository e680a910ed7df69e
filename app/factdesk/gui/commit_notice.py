"""The status bar's word after each action: the commit's short sha and subject, and a
button that undoes exactly that action (or redoes it, after an undo)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from factdesk.curation import ChangeSet


class CommitNotice(QWidget):
    """`abc1234 relabel: … [Undo]`; emits `undo_did_request(action_id)` or
    `redo_did_request()` (after an undo) when the button is clicked."""

    undo_did_request = Signal(str)
    redo_did_request = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("commitNotice")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel("", self)
        self.label.setObjectName("commitLabel")
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # a subject quotes corpus text
        self.button = QPushButton("Undo", self)
        self.button.setObjectName("commitUndo")
        self.button.setFlat(True)
        self.button.clicked.connect(self._clicked)
        layout.addWidget(self.label)
        layout.addWidget(self.button)
        self._changes: ChangeSet | None = None
        self.hide()

    def show_commit(self, changes: ChangeSet) -> None:
        self._changes = changes
        subject = changes.subject if len(changes.subject) <= 90 else changes.subject[:89] + "…"
        self.label.setText(f"{(changes.commit or '')[:7]} {subject}")
        self.button.setText("Redo" if changes.action == "undo" else "Undo")
        self.button.setEnabled(True)
        self.show()

    def _clicked(self) -> None:
        if self._changes is None:
            return
        self.button.setEnabled(False)  # once
        if self._changes.action == "undo":
            self.redo_did_request.emit()
        else:
            self.undo_did_request.emit(self._changes.action_id)
