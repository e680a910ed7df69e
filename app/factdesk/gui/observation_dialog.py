"""The new observation that confirms a hypothesis, asked in one dialog (issue 24 #3): its
title on one line, its body in a multi-line editor (Enter is a new line there), its
confidence with 0.8 offered and shown. Three one-line modal dialogs in a row asked it
before. The dialog checks only that a title and a body are there: the curation layer
checks the confidence and the rest, and says why in words.

All text is plain: the hypothesis's title is corpus text, shown in a plain label.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from factdesk.gui import theme
from factdesk.gui.inspector import plain_label

#: offered, never chosen for the curator (issue 14: 0.8 was written unasked)
DEFAULT_CONFIDENCE = "0.8"


class ObservationDialog(QDialog):
    """Title, body and confidence of the observation that settles a hypothesis."""

    def __init__(self, parent: QWidget | None, hypothesis: str) -> None:
        super().__init__(parent)
        self.setObjectName("observationDialog")
        self.setWindowTitle("Confirm with a new observation")
        layout = QVBoxLayout(self)
        said = plain_label(f"What was observed that settles “{theme.clip(hypothesis, 200)}”? "
                           "It is written as an observation by you (a user claimant), citing "
                           "the hypothesis, which is retracted as confirmed.", self)
        said.setWordWrap(True)
        layout.addWidget(said)
        form = QFormLayout()
        self.title = QLineEdit(self)
        self.title.setObjectName("observationTitle")
        self.title.setAccessibleName("Title of the observation")
        self.body = QPlainTextEdit(self)
        self.body.setObjectName("observationBody")
        self.body.setAccessibleName("What was observed (the observation's body)")
        self.body.setTabChangesFocus(True)
        self.body.setMinimumHeight(140)
        self.confidence = QLineEdit(DEFAULT_CONFIDENCE, self)
        self.confidence.setObjectName("observationConfidence")
        self.confidence.setAccessibleName("Confidence, 0 to 1")
        self.confidence.setToolTip("0 to 1; written with sources: 1 (you)")
        form.addRow("&Title:", self.title)
        form.addRow("&What was observed:", self.body)
        form.addRow("&Confidence (0–1):", self.confidence)
        layout.addLayout(form, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel, self)
        self.ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText("Confirm")
        self.ok.setObjectName("observationOk")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        for edit in (self.title, self.confidence):
            edit.textChanged.connect(self._ready)
        self.body.textChanged.connect(self._ready)
        self._ready()
        self.resize(560, 380)
        self.title.setFocus()

    def _ready(self) -> None:
        self.ok.setEnabled(bool(self.title.text().strip() and self.body.toPlainText().strip()
                                and self.confidence.text().strip()))

    def answer(self) -> tuple[str, str, str]:
        return (self.title.text().strip(), self.body.toPlainText().strip() + "\n",
                self.confidence.text().strip())


def ask_observation(parent: QWidget | None, hypothesis: str) -> tuple[str, str, str] | None:
    """(title, body, confidence as typed) of the confirming observation; None if cancelled."""
    dialog = ObservationDialog(parent, hypothesis)
    ok = dialog.exec() == QDialog.DialogCode.Accepted
    answer = dialog.answer()
    dialog.deleteLater()
    return answer if ok else None
