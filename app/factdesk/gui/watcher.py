"""CorpusWatcher: notices commits and file edits made outside factdesk (agents, editors).

Watches `.git/HEAD`, `.git/refs/heads` and the `kb/` folders (not `.git/factdesk`, where
the index itself is written) and emits `corpus_did_change` once per burst of events.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

DEBOUNCE_MS = 800
MAX_WATCHED_DIRS = 4000


class CorpusWatcher(QObject):
    """Debounced change notification for one repository."""

    corpus_did_change = Signal()

    def __init__(self, repo: Path, git_dir: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._repo = repo
        self._git_dir = git_dir
        self._watcher = QFileSystemWatcher(self)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.corpus_did_change)
        self._watcher.fileChanged.connect(self._poke)
        self._watcher.directoryChanged.connect(self._poke)
        self.enabled = True

    def watch(self) -> None:
        """(Re)register every path; call after each index update (folders come and go)."""
        old = self._watcher.files() + self._watcher.directories()
        if old:
            self._watcher.removePaths(old)
        paths = [self._git_dir / "HEAD", self._git_dir / "refs" / "heads"]
        kb = self._repo / "kb"
        if kb.is_dir():
            paths.append(kb)
            for root, dirs, _files in os.walk(kb):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                paths.extend(Path(root) / d for d in dirs)
                if len(paths) > MAX_WATCHED_DIRS:
                    break
        existing = [str(p) for p in paths if p.exists()]
        if existing:
            self._watcher.addPaths(existing)

    def watch_folders(self, folders: set[str]) -> None:
        """Add folders our own action created (cheaper than re-walking the tree)."""
        known = set(self._watcher.directories())
        new = [str(self._repo / f) for f in folders
               if (self._repo / f).is_dir() and str(self._repo / f) not in known]
        if new and len(known) < MAX_WATCHED_DIRS:
            self._watcher.addPaths(new)

    def _poke(self, _path: str) -> None:
        if self.enabled:
            self._timer.start()
