"""SafeTextBrowser: renders corpus markdown with no HTML, no resource loading, no navigation.

RELIABILITY H02–H09: markdown without HTML, `loadResource` refuses everything (no file,
network or data: images), links never open by themselves; the owner decides per click.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QMessageBox, QTextBrowser, QWidget

MAX_RENDER_CHARS = 200_000
MAX_RENDER_LINES = 5_000
MAX_NESTING = 40
MARKDOWN_FEATURES = (QTextDocument.MarkdownFeature.MarkdownDialectGitHub
                     | QTextDocument.MarkdownFeature.MarkdownNoHTML)


def _too_deep(text: str) -> bool:
    for line in text.splitlines():
        stripped = line.lstrip(" \t>-*+")
        if len(line) - len(stripped) > MAX_NESTING * 2:
            return True
    return False


class SafeTextBrowser(QTextBrowser):
    """A read-only markdown view that never loads a resource and never follows a link."""

    link_did_activate = Signal(QUrl)
    link_did_hover = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setUndoRedoEnabled(False)
        self.blocked_resources: list[str] = []
        self.anchorClicked.connect(self.link_did_activate)
        self.highlighted.connect(lambda url: self.link_did_hover.emit(url.toString()))

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        """Refuse every resource: images, stylesheets, anything, from anywhere."""
        self.blocked_resources.append(name.toString() if isinstance(name, QUrl) else name)
        return None

    def show_markdown(self, text: str) -> bool:
        """Render `text` as markdown; returns False when it was shown raw (too large)."""
        lines = text.count("\n") + 1
        if len(text) > MAX_RENDER_CHARS or lines > MAX_RENDER_LINES or _too_deep(text):
            shown = text[:MAX_RENDER_CHARS]
            note = "[too large to render; showing raw text"
            note += ", truncated]\n\n" if len(text) > MAX_RENDER_CHARS else "]\n\n"
            self.setPlainText(note + shown)
            return False
        self.document().setMarkdown(text, MARKDOWN_FEATURES)
        return True


def confirm_open_url(parent: QWidget | None, url: QUrl) -> bool:
    """Ask before opening a web link, showing the real target (H05: no spoofed link text)."""
    box = QMessageBox(parent)
    box.setObjectName("confirmUrl")
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle("Open link in browser?")
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText("Open this address in your web browser?\n\n" + url.toString())
    box.setStandardButtons(QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    return box.exec() == QMessageBox.StandardButton.Open
