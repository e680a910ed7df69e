"""HistoryPanel: the commits that touched one fact file, and a diff between two versions.

Rows come from the index (`changes` joined with `commits`); two versions are compared
by `git diff` (the core's `BlobDiff`) on a thread, so the window never waits for it, and
closing the window stops it. One diff runs at a time; selections made meanwhile leave
only the newest waiting, and an answer for a selection that has since changed is dropped.
Everything shown is plain text.
"""

from __future__ import annotations

import difflib
import sqlite3
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QThread, Signal
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
from factdesk.corpus.gitrepo import ZERO, BlobDiff, BlobReader, BlobTooLarge
from factdesk.gui import theme
from factdesk.gui.safe_browser import raw_text
from factdesk.index.history import commits_touching

BLOB_ROLE = Qt.ItemDataRole.UserRole + 1
_STATUS = {"A": "added", "M": "modified", "D": "deleted"}
COMPARING = "Comparing the two versions…"
STOPPED = "(the comparison was stopped)"


class _DiffWorker(QThread):
    """One diff (`version_diff`) off the GUI thread; `ticket` says which request it answers;
    `cancel()` stops it."""

    did_finish = Signal(int, str)

    def __init__(self, ticket: int, repo: Path, path: str, before: str | None, after: str | None,
                 labels: tuple[str, str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ticket = ticket
        self._args = (repo, path, before, after, labels)
        self._differ = BlobDiff(repo)

    def run(self) -> None:
        text = STOPPED
        try:
            text = version_diff(*self._args, differ=self._differ)
        except Exception as exc:  # shown in the panel, never a crash
            text = f"(could not compare the versions: {type(exc).__name__}: {exc})"
        finally:  # always answered: the panel's queue waits for it
            self.did_finish.emit(self._ticket, text)

    def cancel(self) -> None:
        self._differ.cancel()


class HistoryPanel(QWidget):
    """A commit list (newest first) over a unified diff of the selected version(s)."""

    #: the diff of the current selection is on screen
    diff_did_show = Signal()

    def __init__(self, repo: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._repo = repo
        self._path = ""
        self._ticket = 0  # the newest diff request; older answers are dropped
        self._worker: _DiffWorker | None = None
        self._waiting: _DiffWorker | None = None  # the newest request, made while one ran
        self._closing = False
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
        self._ticket += 1
        self._drop_waiting()
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
        self._ticket += 1
        items = self.commits.selectedItems()
        if not items:
            self._drop_waiting()
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
        worker = _DiffWorker(self._ticket, self._repo, self._path, before, after, labels, self)
        worker.did_finish.connect(self._on_diff)
        if self._worker is None:
            self._worker = worker
            worker.start()
        else:
            self._drop_waiting()
            self._waiting = worker

    def _drop_waiting(self) -> None:
        if self._waiting is not None:
            self._waiting.deleteLater()
            self._waiting = None

    def _on_diff(self, ticket: int, text: str) -> None:
        if self.sender() is not self._worker or self._worker is None:
            return  # (answered after close_worker reaped it)
        self._worker.wait()
        self._worker.deleteLater()
        self._worker = None
        if self._closing:
            return
        if self._waiting is not None:
            self._worker, self._waiting = self._waiting, None
            self._worker.start()
        if ticket == self._ticket:
            self.diff.setPlainText(text)
            self.diff_did_show.emit()

    @property
    def comparing(self) -> bool:
        """A diff is being worked out, or waits its turn."""
        return self._worker is not None or self._waiting is not None

    def close_worker(self) -> None:
        """Stop the diff still running and reap it (window closing); drop the one waiting.
        Its answer, if already queued, is not shown."""
        self._closing = True
        self._drop_waiting()
        if self._worker is not None:
            self._worker.cancel()
            self._worker.wait()
            self._worker.deleteLater()
            self._worker = None


def version_diff(repo: Path, path: str, before: str | None, after: str | None,
                 labels: tuple[str, str], *, differ: BlobDiff | None = None) -> str:
    """Unified diff of two blobs of `path` (None or the all-zero id: an empty file), cut for
    display. A version over the corpus's size limit is not read into memory, let alone
    compared. Two non-empty versions are compared by `git diff` (`differ`, which another
    thread may cancel); against an empty one every line is added or removed (difflib,
    linear there)."""
    try:
        with BlobReader(repo) as reader:
            old_data = reader.read(before, limit=MAX_BYTES) if before and before != ZERO else b""
            new_data = reader.read(after, limit=MAX_BYTES) if after and after != ZERO else b""
    except BlobTooLarge as exc:  # the corpus refuses such files too (too_large)
        return f"(a version is {exc.size:,} bytes, over the {MAX_BYTES:,}-byte limit: not compared)"
    heading = f"--- {labels[0]}:{path}\n+++ {labels[1]}:{path}\n"
    if old_data and new_data:
        assert before is not None and after is not None
        hunks = (differ or BlobDiff(repo)).run(before, after)
        if hunks is None:
            return STOPPED
        diff = heading + _text(hunks) if hunks else ""
    else:
        old, new = _text(old_data), _text(new_data)
        diff = "".join(difflib.unified_diff(old.splitlines(keepends=True),
                                            new.splitlines(keepends=True),
                                            f"{labels[0]}:{path}", f"{labels[1]}:{path}"))
    text, cut = raw_text(diff)  # RELIABILITY H09: no huge line in the editor
    if cut:
        text = "[diff cut for display: long lines and the tail are not shown]\n" + text
    return text or "(no textual difference)"


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", "replace")
