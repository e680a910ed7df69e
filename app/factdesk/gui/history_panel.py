"""HistoryPanel: the commits that touched one fact file, and a diff between two versions.

Rows come from the index (`changes` joined with `commits`); blobs are read with the
core's `BlobReader` and compared with difflib. Everything shown is plain text.
"""

from __future__ import annotations

import difflib
import sqlite3
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
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
from factdesk.corpus.gitrepo import ZERO, BlobReader
from factdesk.gui import theme
from factdesk.gui.safe_browser import raw_text
from factdesk.index.history import commits_touching

BLOB_ROLE = Qt.ItemDataRole.UserRole + 1
_STATUS = {"A": "added", "M": "modified", "D": "deleted"}


class HistoryPanel(QWidget):
    """A commit list (newest first) over a unified diff of the selected version(s)."""

    def __init__(self, repo: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._repo = repo
        self._path = ""
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
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
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
        self.diff.setPlainText(self.diff_text(before, after, labels))

    def diff_text(self, before: str | None, after: str | None, labels: tuple[str, str]) -> str:
        """Unified diff of two blobs of the current path (the all-zero id is an empty file)."""
        with BlobReader(self._repo) as reader:
            old_data = reader.read(before) if before and before != ZERO else b""
            new_data = reader.read(after) if after and after != ZERO else b""
        size = max(len(old_data or b""), len(new_data or b""))
        if size > MAX_BYTES:  # the corpus refuses such files too (too_large): no diff of them
            return f"(a version is {size:,} bytes, over the {MAX_BYTES:,}-byte limit: not compared)"
        old, new = _text(old_data), _text(new_data)
        lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     f"{labels[0]}:{self._path}", f"{labels[1]}:{self._path}")
        text, cut = raw_text("".join(lines))  # RELIABILITY H09: no huge line in the editor
        if cut:
            text = "[diff cut for display: long lines and the tail are not shown]\n" + text
        return text or "(no textual difference)"


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", "replace")
