"""Starting out (issue 25): File ▸ New corpus… and the first run's welcome.

`NewCorpusDialog` asks for a name, a folder and the top-level topics, creates the corpus in
the background (`curation.newcorpus.create_corpus`, one commit by the curator) and hands
its folder back (`did_create`), which the window opens in its place. `WelcomeBanner` is
shown above the tabs of the first window a new user sees (the demo): New, Open, Clone, or
stay with the demo; once dismissed (or once any of them is chosen) it never comes back.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from factdesk.curation.identity import MissingIdentity, curator_identity
from factdesk.curation.newcorpus import create_corpus, slug, topic_names
from factdesk.errors import FactdeskError
from factdesk.gui.open_corpus import folder_rows, in_background

NEW_PARENT_KEY = "corpora/new_parent"
WELCOME_KEY = "welcome/done"


class NewCorpusDialog(QDialog):
    """File ▸ New corpus…: name, folder, topics; Create runs in the background."""

    did_create = Signal(Path)

    def __init__(self, settings: QSettings, identity_file: Path | None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("newCorpusDialog")
        self.setWindowTitle("New knowledge base")
        self._settings = settings
        self._identity_file = identity_file
        self.running = False
        form = QFormLayout(self)
        note = QLabel("A new git repository of knomit facts: agents learn into kb/<topic>/, "
                      "you curate here. Name at least one topic (agents file each fact "
                      "under one); you can add more to .knomit/ontology.yaml later.", self)
        note.setWordWrap(True)
        form.addRow(note)
        self.name = QLineEdit(self)
        self.name.setObjectName("newName")
        self.name.setPlaceholderText("Ledger team memory")
        form.addRow("&Name", self.name)
        self.topics = QLineEdit("gotchas, decisions", self)
        self.topics.setObjectName("newTopics")
        form.addRow("&Topics", self.topics)
        saved = str(settings.value(NEW_PARENT_KEY, "") or "")
        self.parent_folder, self.target = folder_rows(
            self, form, saved or str(Path.home() / "factdesk"), "new", ("&In folder", "Creates"))
        self.message = QLabel("", self)
        self.message.setObjectName("newMessage")
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setWordWrap(True)
        form.addRow(self.message)
        buttons = QDialogButtonBox(self)
        self.create_button = buttons.addButton("&Create", QDialogButtonBox.ButtonRole.AcceptRole)
        self.create_button.setObjectName("newCreate")
        self.create_button.setDefault(True)
        cancel = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.create_button.clicked.connect(self.start)
        cancel.clicked.connect(self.reject)
        form.addRow(buttons)
        for line in (self.name, self.parent_folder):
            line.textChanged.connect(self._show_target)
        self.setMinimumWidth(520)
        self._show_target()

    def destination(self) -> Path | None:
        name, parent = self.name.text().strip(), self.parent_folder.text().strip()
        if not name or not parent:
            return None
        return Path(os.path.abspath(os.path.expanduser(parent))) / slug(name)

    def _show_target(self) -> None:
        dest = self.destination()
        self.target.setText(str(dest) if dest is not None else "—")
        self.adjustSize()
        self.create_button.setEnabled(dest is not None and not self.running)

    def start(self) -> None:
        """Create (the button, or Enter): checks the topics at once, the rest in the background."""
        dest = self.destination()
        if dest is None or self.running:
            return
        try:
            topics = topic_names(self.topics.text())
        except FactdeskError as exc:
            self._say(f"Not created: {exc}")
            return
        name, identity_file = self.name.text(), self._identity_file
        self._settings.setValue(NEW_PARENT_KEY, str(dest.parent))
        self.running = True
        self.create_button.setEnabled(False)
        self._say(f"Creating {dest} …")

        def job() -> Path:
            dest.parent.mkdir(parents=True, exist_ok=True)
            curator = curator_identity(dest.parent, identity_file)
            return create_corpus(dest, name=name, topics=topics, curator=curator)

        in_background(job, done=self._created, failed=self._failed, name="new-corpus")

    def _say(self, text: str) -> None:
        self.message.setText(text)
        self.adjustSize()  # (room for a message of two or three lines)

    def _created(self, dest: Path) -> None:
        if not isValid(self):
            return
        self.running = False
        self.message.setText(f"Created {dest}; opening it…")
        self.accept()
        self.did_create.emit(dest)

    def _failed(self, exc: BaseException) -> None:
        if not isValid(self):
            return
        if not isinstance(exc, (FactdeskError, OSError)):
            raise exc
        self.running = False
        self._show_target()
        extra = (" (git's user.name and user.email, or FACTDESK_CURATOR_NAME and "
                 "FACTDESK_CURATOR_EMAIL, name the curator)") if isinstance(exc, MissingIdentity) else ""
        self._say(f"Not created: {exc}{extra}")


class WelcomeBanner(QFrame):
    """The first run's offer, above the tabs: New, Open, Clone, or the demo."""

    def __init__(self, settings: QSettings, *, new: object, open_: object, clone: object,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcomeBanner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._settings = settings
        box = QVBoxLayout(self)
        text = QLabel("<b>Welcome to factdesk.</b> This is a demo knowledge base to try things "
                      "on. Start your own, open one you have, or clone your team's:", self)
        text.setTextFormat(Qt.TextFormat.RichText)  # (our own words only: no corpus text)
        text.setWordWrap(True)
        box.addWidget(text)
        row = QHBoxLayout()
        self.buttons: dict[str, QPushButton] = {}
        for key, label, slot in (("new", "&New knowledge base…", new),
                                 ("open", "&Open a folder…", open_),
                                 ("clone", "C&lone from a URL…", clone),
                                 ("demo", "Explore the &demo", None)):
            button = QPushButton(label, self)
            button.setObjectName(f"welcome_{key}")
            if slot is not None:
                button.clicked.connect(slot)
            button.clicked.connect(self.dismiss)
            row.addWidget(button)
            self.buttons[key] = button
        row.addStretch(1)
        box.addLayout(row)

    def dismiss(self) -> None:
        self._settings.setValue(WELCOME_KEY, True)
        self._settings.sync()
        self.hide()


def wants_welcome(settings: QSettings, repo: Path, demo_repo: Path) -> bool:
    """The first window on the demo, until the welcome was answered once."""
    done = settings.value(WELCOME_KEY, False)
    answered = done is True or str(done).lower() == "true"
    return not answered and os.path.abspath(repo) == os.path.abspath(demo_repo)
