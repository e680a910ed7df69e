"""SafeTextBrowser: renders corpus markdown with no HTML, no resource loading, no navigation.

RELIABILITY H02–H09: markdown without HTML, `loadResource` refuses everything (no file,
network or data: images), links never open by themselves; the owner decides per click.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QImage, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import QMessageBox, QTextBrowser, QWidget

from factdesk.gui.theme import clip

#: raw (plain-text) display: at most this many characters, each line cut at MAX_LINE_CHARS
MAX_RENDER_CHARS = 200_000
# Markdown is rendered only under these caps (RELIABILITY H08/H09); beyond them the body is
# shown as raw text. Measured on the 2-core dev machine, offscreen, 600 px wide:
# - an unbroken 190,000-char line took 7 s to lay out (markdown or plain); 10,000 take ~50 ms
# - 4,990 table rows took 6.3 s; 500 rows x 20 columns 4.1 s (~0.4 ms per cell)
# - 4,999 list items 1.2 s; 190,000 chars of unbalanced backticks 0.9 s; 1,000 images 0.7 s
MAX_MARKDOWN_CHARS = 50_000
MAX_RENDER_LINES = 2_000
MAX_LINE_CHARS = 10_000
MAX_TABLE_CELLS = 1_000
MAX_IMAGES = 200
MAX_NESTING = 40
MARKDOWN_FEATURES = (QTextDocument.MarkdownFeature.MarkdownDialectGitHub
                     | QTextDocument.MarkdownFeature.MarkdownNoHTML)


def _too_deep(lines: list[str]) -> bool:
    for line in lines:
        stripped = line.lstrip(" \t>-*+")
        if len(line) - len(stripped) > MAX_NESTING * 2:
            return True
    return False


def _cells(row: str) -> int:
    """Table cells in a row (`| a | b |` and `a | b` both have two)."""
    row = row.strip()
    return max(1, row.count("|") + 1 - row.startswith("|") - row.endswith("|"))


def too_large(text: str) -> str | None:
    """Why `text` is not rendered as markdown (RELIABILITY H08/H09), or None."""
    if len(text) > MAX_MARKDOWN_CHARS:
        return f"{len(text):,} characters"
    lines = text.split("\n")
    if len(lines) > MAX_RENDER_LINES:
        return f"{len(lines):,} lines"
    longest = max(len(line) for line in lines)
    if longest > MAX_LINE_CHARS:
        return f"a line of {longest:,} characters"
    cells = sum(_cells(line) for line in lines if "|" in line)
    if cells > MAX_TABLE_CELLS:
        return f"{cells:,} table cells"
    images = text.count("![")
    if images > MAX_IMAGES:
        return f"{images:,} images"
    if _too_deep(lines):
        return f"nesting deeper than {MAX_NESTING}"
    return None


def raw_text(text: str) -> tuple[str, bool]:
    """`text` cut for plain display: at most MAX_RENDER_CHARS, each line at most
    MAX_LINE_CHARS; and whether anything was cut."""
    shown = text[:MAX_RENDER_CHARS]
    cut = len(shown) < len(text)
    lines = shown.split("\n")
    for i, line in enumerate(lines):
        if len(line) > MAX_LINE_CHARS:
            lines[i] = clip(line, MAX_LINE_CHARS)
            cut = True
    return "\n".join(lines), cut


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
        """Refuse every resource: images, stylesheets, anything, from anywhere.

        The refusal must be a *value*, not None: when this returns a null variant,
        QTextDocument::loadResource falls back to opening the URL as a local file itself
        (file:///etc/passwd read, file:///dev/zero read until std::bad_alloc aborts — H02)
        and decodes data: URLs (H07). An empty image (or empty text) stops both."""
        self.blocked_resources.append(name.toString() if isinstance(name, QUrl) else name)
        if type == QTextDocument.ResourceType.ImageResource:
            return QImage()
        return ""

    def show_markdown(self, text: str) -> bool:
        """Render `text` as markdown; returns False when it was shown as (cut) raw text
        because rendering it would freeze the UI (too long, a huge line or table, too deep)."""
        reason = too_large(text)
        if reason is None:
            self.document().setMarkdown(text, MARKDOWN_FEATURES)
            return True
        shown, cut = raw_text(text)
        note = f"[too large to render ({reason}); showing raw text{', cut' if cut else ''}]\n\n"
        # setPlainText inserts with the cursor's format: left inside a link of the previous
        # body, the whole raw text became one anchor to that link
        self.setCurrentCharFormat(QTextCharFormat())
        self.setPlainText(note + shown)
        return False


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
