"""CorpusWatcher: notices commits, new agent tips and file edits made outside factdesk
(agents, editors, a fetch) and tells the window what changed (issue 23 #2, issue 26 #5).

The watching itself is `corpus.watch.CorpusWatch` (watchdog: inotify, FSEvents,
ReadDirectoryChangesW) over `kb/` and git's refs — `refs/heads/agent/*`, the
remote-tracking `refs/remotes/*/agent/*`, the checked-out branch, `HEAD`, `packed-refs` —
recursively, with no walk of the folders. Its thread only posts a signal; here, on the
GUI thread, a short debounce gathers a burst of events (a commit writes objects, then the
ref) and `corpus_did_change` fires once. The window then asks `take()` what was seen and
updates the index for those paths alone (`Seen.paths`: a hint, no `git status`), or
looks at everything when the watch cannot say (`Seen.whole`: it could not be set up —
the platform's watch limit, `fs.inotify.max_user_watches` on Linux —, its queue
overflowed, a folder was moved or removed; `why` says which, in words). A watch that
cannot start leaves the window as it was before watching: F5 and every action still
bring the index up to date.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from factdesk.corpus.watch import CorpusWatch, Seen

#: a burst of events (objects, index, ref) settles within this; the change is searchable
#: well under a second after it lands (bench/gui_watch_bench.py)
DEBOUNCE_MS = 120


class CorpusWatcher(QObject):
    """Debounced change notification for one repository."""

    corpus_did_change = Signal()
    #: the watch is set up (or could not be: `trouble` says why)
    did_watch = Signal()
    #: (from the watch's own thread: queued onto the GUI thread)
    _poked = Signal()

    def __init__(self, repo: Path, git_dir: Path, parent: QObject | None = None, *,
                 root: str = "kb") -> None:
        super().__init__(parent)
        self._repo = repo
        self._git_dir = git_dir
        self._root = root
        self._watch: CorpusWatch | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._fire)
        self._poked.connect(self._poke)
        self.enabled = True
        #: why the watch is not live, in words (None: it is)
        self.trouble: str | None = None

    def watch(self) -> None:
        """Start watching (once; the watch is recursive, so folders that come later are
        watched too). Emits `did_watch`."""
        if self._watch is None and self.enabled:
            self._watch = CorpusWatch(self._repo, self._git_dir, root=self._root,
                                      on_change=self._poked.emit).start()
            self.trouble = None if self._watch.live else self._watch.take().why
        self.did_watch.emit()

    @property
    def live(self) -> bool:
        return self._watch is not None and self._watch.live

    def take(self) -> Seen:
        """What was seen since the last call; without a live watch, `whole` (look at
        everything)."""
        if self._watch is None:
            return Seen(whole=True, why="the corpus is not being watched")
        return self._watch.take()

    def lost(self, why: str) -> None:
        """What was taken was not used (the update failed): the next look is a whole one."""
        if self._watch is not None:
            self._watch.lost(why)

    def close(self) -> None:
        """Stop watching (the window is closing; the watch thread is joined)."""
        self.enabled = False
        self._timer.stop()
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.stop()

    def _poke(self) -> None:
        if self.enabled:
            self._timer.start()

    def _fire(self) -> None:
        if self.enabled:
            self.corpus_did_change.emit()
