"""The Agents tab's action dialog: register an unknown claimant, change an agent's type
(its record shown first), retire it, add an agent type with its authority row. Every one
asks for the reason the commit will carry; OK stays disabled until there is one.

The dialog only gathers values (`values()`); the panel runs the action through the
window's operations (the writer lane). All text is plain."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from factdesk.gui import theme
from factdesk.model.enums import ClaimType, SubjectKind
from factdesk.model.registry import strip_op

VERDICTS = ("attributed", "forbidden", "ground_truth")
TITLES = {"register": "Register agent", "set-type": "Change agent type",
          "retire": "Retire agent", "add-type": "Add agent type"}


def plain(text: str, parent: QWidget) -> QLabel:
    label = QLabel(parent)
    label.setTextFormat(label.textFormat().PlainText)
    label.setText(text)
    label.setWordWrap(True)
    return label


class AgentActionDialog(QDialog):
    """One registry action's form."""

    def __init__(self, action: str, *, agent: dict[str, Any] | None, types: Sequence[str],
                 evidence: str = "", to_type: str | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("agentActionDialog")
        self.action = action
        self.setWindowTitle(TITLES[action])
        agent = agent or {}
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.agent_id = QLineEdit(agent.get("id", ""), self)
        self.agent_id.setObjectName("agentId")
        self.type_box = QComboBox(self)
        self.type_box.setObjectName("agentType")
        self.type_box.addItems(list(types))
        self.email = QLineEdit(self)
        self.email.setObjectName("agentEmail")
        self.branch = QLineEdit(self)
        self.branch.setObjectName("agentBranch")
        self.name = QLineEdit(self)
        self.name.setObjectName("typeName")
        self.description = QLineEdit(self)
        self.description.setObjectName("typeDescription")
        self.verdicts: dict[str, QComboBox] = {}
        self.exceptions = QLineEdit(self)
        self.exceptions.setObjectName("typeExceptions")
        self.evidence = QPlainTextEdit(self)
        self.evidence.setObjectName("agentEvidence")
        self.evidence.setReadOnly(True)
        self.evidence.setPlainText(evidence)
        if action == "register":
            # (the registry matches an e-mail without its `+op` part)
            emails = list(dict.fromkeys(strip_op(e) for e in agent.get("emails", [])))
            self.email.setText(emails[0] if emails else "")
            branches = list(agent.get("branches", []))
            self.branch.setText(branches[0] if branches else "")
            self.type_box.setCurrentText("tool")
            form.addRow("Agent id:", self.agent_id)
            form.addRow("Type:", self.type_box)
            form.addRow("Git e-mail:", self.email)
            form.addRow("Branch:", self.branch)
        elif action == "set-type":
            self.agent_id.setReadOnly(True)
            form.addRow("Agent:", self.agent_id)
            self.type_box.setCurrentText(to_type or "")
            form.addRow("New type:", self.type_box)
            layout.addWidget(plain("Its record, before you decide:", self))
            self.evidence.setMinimumHeight(180)
            layout.addWidget(self.evidence)
        elif action == "retire":
            self.agent_id.setReadOnly(True)
            form.addRow("Agent:", self.agent_id)
            layout.addWidget(plain("A retired agent stays listed and its facts stay "
                                   "attributed to it; no suggestion is made for it.", self))
        else:  # add-type
            form.addRow("Type name:", self.name)
            form.addRow("Description:", self.description)
            box = QGroupBox("Its row in the authority table (per subject kind, every claim "
                            "type)", self)
            grid = QGridLayout(box)
            for i, subject in enumerate(s.value for s in SubjectKind):
                combo = QComboBox(box)
                combo.setObjectName(f"verdict_{subject}")
                combo.addItems(VERDICTS)
                self.verdicts[subject] = combo
                grid.addWidget(plain(subject, box), i // 2, (i % 2) * 2)
                grid.addWidget(combo, i // 2, (i % 2) * 2 + 1)
            layout.addWidget(box)
            self.exceptions.setPlaceholderText("user:report=attributed, self:assertion=ground_truth")
            form.addRow("Exceptions:", self.exceptions)
        self.reason = QLineEdit(self)
        self.reason.setObjectName("agentReason")
        self.reason.setPlaceholderText("required: the commit message says why")
        form.addRow("Reason:", self.reason)
        layout.addLayout(form)
        # a field this action does not lay out is hidden: left a child of the dialog, it
        # was drawn at its top-left corner, a white box over the agent id (issue 24 #13)
        for field in (self.agent_id, self.type_box, self.email, self.branch, self.name,
                      self.description, self.exceptions, self.evidence):
            if form.indexOf(field) < 0 and layout.indexOf(field) < 0:
                field.hide()
        self.problem = plain("", self)
        theme.styled(self.problem, lambda: f"color: {theme.ERROR.color};")
        layout.addWidget(self.problem)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        self.ok_button: QPushButton = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText({"register": "Register", "set-type": "Change type",
                                "retire": "Retire", "add-type": "Add type"}[action])
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        for edit in (self.reason, self.agent_id, self.name, self.description, self.exceptions):
            edit.textChanged.connect(self._validate)
        self.type_box.currentTextChanged.connect(self._validate)
        self._validate()
        self.reason.setFocus()
        self.resize(560, 520 if action in ("set-type", "add-type") else 260)

    def rows(self) -> dict[tuple[str, str], str]:
        """The authority row: each subject kind's verdict (attributed is the default, not
        written), then the exceptions typed."""
        out: dict[tuple[str, str], str] = {
            (subject, "*"): combo.currentText() for subject, combo in self.verdicts.items()
            if combo.currentText() != "attributed"}
        for part in self.exceptions.text().split(","):
            part = part.strip()
            if not part:
                continue
            where, _eq, verdict = part.partition("=")
            subject, _colon, claim = where.partition(":")
            out[(subject.strip(), claim.strip() or "*")] = verdict.strip()
        return out

    def problem_text(self) -> str:
        """Why OK is disabled (empty: it is not)."""
        if not self.reason.text().strip():
            return "A reason is required."
        if self.action == "register" and not self.agent_id.text().strip():
            return "The agent id is required."
        if self.action == "add-type":
            if not self.name.text().strip():
                return "The type needs a name."
            if not self.description.text().strip():
                return "The type needs a description."
            subjects = {s.value for s in SubjectKind} | {"*"}
            claims = {c.value for c in ClaimType} | {"*"}
            for (subject, claim), verdict in self.rows().items():
                if subject not in subjects or claim not in claims or verdict not in VERDICTS:
                    return (f"Exception {subject}:{claim}={verdict}: write SUBJECT:CLAIM=VERDICT "
                            f"(verdict one of {', '.join(VERDICTS)})")
        return ""

    def _validate(self) -> None:
        problem = self.problem_text()
        self.problem.setText(problem if self.reason.text().strip() or problem !=
                             "A reason is required." else "")
        self.ok_button.setEnabled(not problem)

    def _accept(self) -> None:
        if not self.problem_text():
            self.accept()

    def values(self) -> dict[str, Any]:
        return {"action": self.action, "agent_id": self.agent_id.text().strip(),
                "type": self.type_box.currentText(), "email": self.email.text().strip() or None,
                "branch": self.branch.text().strip() or None, "name": self.name.text().strip(),
                "description": self.description.text().strip(), "rows": self.rows(),
                "reason": self.reason.text().strip()}
