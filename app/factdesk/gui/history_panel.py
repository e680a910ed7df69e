"""HistoryPanel: the commits that touched one fact file, and a diff between two versions.

Rows come from the index (`changes` joined with `commits`); two versions are compared
by the core (`gitrepo.diff_versions`: `git diff`, the corpus's size limit) on a thread of
a `BackgroundRead`, so the window never waits for it, and closing the window stops it. One
diff runs at a time; selections made meanwhile leave only the newest waiting, and an
answer for a selection that has since changed is dropped. Everything shown is plain text.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
    QTextOption,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from factdesk.corpus.codec import MAX_BYTES
from factdesk.corpus.gitrepo import ZERO, BlobDiff, BlobTooLarge, diff_versions
from factdesk.gui import theme
from factdesk.gui.safe_browser import raw_text
from factdesk.gui.workers import BackgroundRead
from factdesk.index.history import commits_touching

if TYPE_CHECKING:
    import sqlite3

BLOB_ROLE = Qt.ItemDataRole.UserRole + 1
_STATUS = {"A": "added", "M": "modified", "D": "deleted"}
COMPARING = "Comparing the two versions…"
STOPPED = "(the comparison was stopped)"


class DiffColours(QSyntaxHighlighter):
    """A unified diff in the theme's colours: added lines on green, removed on red, hunk
    headers and file headers muted (gui/theme.py, light or dark; 4.5:1 in both)."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.formats: dict[str, QTextCharFormat] = {}
        self._make_formats()
        theme.on_change(self._scheme_did_change)

    def _make_formats(self) -> None:
        for key, tone in (("+", theme.DIFF_ADDED), ("-", theme.DIFF_REMOVED),
                          ("@", theme.DIFF_HUNK), ("h", theme.DIFF_HEADER)):
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(tone.color))
            if key in "+-" and tone.on is not None:
                fmt.setBackground(QColor(tone.on.color))
            self.formats[key] = fmt

    def _scheme_did_change(self) -> bool:
        from shiboken6 import isValid

        if not isValid(self):
            return False
        self._make_formats()
        self.rehighlight()
        return True

    @staticmethod
    def kind(text: str) -> str | None:
        """The format of one line: h (file header), @ (hunk), + or -, None (context)."""
        if text.startswith(("+++", "---", "diff ", "index ", "[diff cut")):
            return "h"
        if text.startswith("@@"):
            return "@"
        if text[:1] in ("+", "-"):
            return text[0]
        return None

    def highlightBlock(self, text: str) -> None:
        kind = self.kind(text)
        if kind is not None:
            self.setFormat(0, len(text), self.formats[kind])


class HistoryPanel(QWidget):
    """A commit list (newest first) over a unified diff of the selected version(s)."""

    #: the diff of the current selection is on screen
    diff_did_show = Signal()

    def __init__(self, repo: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._repo = repo
        self._path = ""
        # one diff at a time, off the GUI thread; an answer is shown when it is still the
        # one wanted (the selection may have moved on)
        self._differ = BlobDiff(repo)  # (close_worker stops the `git diff` it runs)
        self._wanted: tuple[str, str | None, str | None, tuple[str, str]] | None = None
        self._diffs = BackgroundRead(None, self._diff_of, done=self._on_diff,
                                     failed=self._on_diff_failed, parent=self)
        self.commits = QTreeWidget(self)
        self.commits.setObjectName("historyCommits")
        self.commits.setHeaderLabels(["When", "Author", "Op", "Change", "Subject"])
        self.commits.setRootIsDecorated(False)
        self.commits.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.commits.itemSelectionChanged.connect(self._show_diff)
        self.hint = QLabel("Select one commit for its change, or two to compare them.", self)
        self.hint.setTextFormat(Qt.TextFormat.PlainText)
        self.hint.setWordWrap(True)
        self.diff = QPlainTextEdit(self)
        self.diff.setObjectName("historyDiff")
        self.diff.setReadOnly(True)
        # wrapped, anywhere when a word is too long: a long `refs:` line's change stays on
        # screen (issue 18: it was cut off at the right edge)
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.diff.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.diff.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.diff.setAccessibleName("Change of the selected version")
        self.colours = DiffColours(self.diff.document())
        self.commits.setAccessibleName("Commits that touched this fact")
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.commits)
        splitter.addWidget(self.diff)
        splitter.setSizes([140, 260])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.hint)
        layout.addWidget(splitter)

    def show_path(self, conn: sqlite3.Connection | None, path: str) -> None:
        """List the commits touching `path`; select the newest to show its change."""
        self._path = path
        self._wanted = None
        self.commits.clear()
        self.diff.clear()
        if conn is None:
            return
        for r in commits_touching(conn, path):
            when = datetime.fromtimestamp(r["time"]).strftime("%Y-%m-%d %H:%M") if r["time"] else ""
            item = QTreeWidgetItem([when, r["author"] or "", r["op"] or "",
                                    _STATUS.get(r["status"], r["status"]), r["subject"] or ""])
            # (blob before, blob after) of this change; a deletion shows what was removed.
            item.setData(0, BLOB_ROLE, (r["old_blob"], r["new_blob"], r["sha"]))
            item.setToolTip(4, theme.tooltip(f"{r['sha'][:12]} {r['subject'] or ''}"))
            self.commits.addTopLevelItem(item)
        for col in range(4):
            self.commits.resizeColumnToContents(col)
        if self.commits.topLevelItemCount():
            self.commits.topLevelItem(0).setSelected(True)

    def _show_diff(self) -> None:
        items = self.commits.selectedItems()
        if not items:
            self._wanted = None
            self.diff.clear()
            return
        rows = sorted(items, key=lambda it: self.commits.indexOfTopLevelItem(it), reverse=True)
        old_entry, new_entry = rows[0].data(0, BLOB_ROLE), rows[-1].data(0, BLOB_ROLE)
        if len(rows) == 1:
            before, after = old_entry[0], old_entry[1]
            labels = (f"{old_entry[2][:10]}^", old_entry[2][:10])
        else:
            before = old_entry[1] if old_entry[1] != ZERO else old_entry[0]
            after = new_entry[1] if new_entry[1] != ZERO else new_entry[0]
            labels = (old_entry[2][:10], new_entry[2][:10])
        self.diff.setPlainText(COMPARING)
        self._wanted = (self._path, before, after, labels)
        self._diffs.start(self._wanted)

    def _diff_of(self, wanted: tuple[str, str | None, str | None, tuple[str, str]]) -> str:
        """(On the diff's thread.) The text to show for one selection."""
        return version_diff(self._repo, *wanted, differ=self._differ)

    def _on_diff(self, text: str, wanted: object) -> None:
        if wanted == self._wanted:
            self.diff.setPlainText(text)
            self.diff_did_show.emit()

    def _on_diff_failed(self, message: str, wanted: object) -> None:  # shown, never a crash
        self._on_diff(f"(could not compare the versions: {message})", wanted)

    @property
    def comparing(self) -> bool:
        """A diff is being worked out, or waits its turn."""
        return self._diffs.running

    def close_worker(self) -> None:
        """Stop the diff still running (its `git diff` is killed) and reap it (window
        closing); drop the one waiting. Its answer, if already queued, is not shown."""
        self._differ.cancel()
        self._diffs.close()


def version_diff(repo: Path, path: str, before: str | None, after: str | None,
                 labels: tuple[str, str], *, differ: BlobDiff | None = None) -> str:
    """`gitrepo.diff_versions`, in words and cut for display."""
    try:
        diff = diff_versions(repo, path, before, after, labels, differ=differ)
    except BlobTooLarge as exc:  # the corpus refuses such files too (too_large)
        return f"(a version is {exc.size:,} bytes, over the {MAX_BYTES:,}-byte limit: not compared)"
    if diff is None:
        return STOPPED
    text, cut = raw_text(diff)  # RELIABILITY H09: no huge line in the editor
    if cut:
        text = "[diff cut for display: long lines and the tail are not shown]\n" + text
    return text or "(no textual difference)"
