"""CorpusWatch: what changed in a corpus, told by the operating system instead of found by
walking it (issue 23 #2), for the long-running processes (the window, `factdesk mcp`).

Watched (watchdog: inotify on Linux, FSEvents on macOS, ReadDirectoryChangesW on Windows):
the fact folder (`kb/`, recursively), the git directory's own files (`HEAD`, `packed-refs`,
not recursively: never `factdesk/`, where the index itself is written, nor `objects/`)
and its `refs/` (recursively: `refs/heads/agent/*`, `refs/remotes/*/agent/*`, the checked-out
branch). `take()` hands over what was seen since the last call.

When the watch cannot be trusted — it could not be set up (the platform's watch limit:
`fs.inotify.max_user_watches` on Linux), its queue overflowed and events were lost, or
the library reported any other trouble — `take()` says so in words (`Seen.whole`, with
`why`), and the caller falls back to a full look at the work tree (`git status`) and the
refs. A fresh watch starts that way too: nothing was watched before it.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: the git directory's own files whose change moves HEAD or a branch
_GIT_FILES = frozenset({"HEAD", "packed-refs"})


@dataclass(frozen=True)
class Seen:
    """What changed since the last `take()`."""

    #: repo-relative paths under the fact folder that were written, made, removed or moved
    paths: frozenset[str] = frozenset()
    #: HEAD, packed-refs or a ref under refs/ changed (a commit, a new agent tip, a fetch)
    refs: bool = False
    #: the watch cannot say what changed: look at everything (and `why` says why)
    whole: bool = False
    why: str | None = None

    @property
    def nothing(self) -> bool:
        return not (self.paths or self.refs or self.whole)


@dataclass
class _Pending:
    paths: set[str] = field(default_factory=set)
    refs: bool = False
    why: str | None = None


class _Trouble(logging.Handler):
    """Any warning from the watch library (a queue overflow: "events were lost", a folder
    that could not be watched) means that events may be missing."""

    def __init__(self, lost: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self._lost = lost

    def emit(self, record: logging.LogRecord) -> None:
        self._lost(record.getMessage())


class CorpusWatch:
    """Collects the changes of one repository's work tree and refs from a watcher thread.
    `on_change` (optional) is called on that thread after each relevant event: a caller
    that must not block it (the window) posts a message to its own thread there."""

    def __init__(self, repo: Path, git_dir: Path, *, root: str = "kb",
                 on_change: Callable[[], None] | None = None) -> None:
        self.repo = repo.resolve()
        self.git_dir = git_dir.resolve()
        self.root = root
        self.on_change = on_change
        self._lock = threading.Lock()
        self._pending = _Pending(why="the watch has just started")
        self._observer: Any = None
        self._trouble: _Trouble | None = None
        #: why the watch is not live (each `take()` then asks for a full look)
        self._down = "the corpus is not being watched"

    @property
    def live(self) -> bool:
        return self._observer is not None

    def start(self) -> CorpusWatch:
        """Start watching; when the watch cannot be set up, stay not `live` and say why at
        the next `take()` (every `take()` then asks for a full look)."""
        try:
            from watchdog import events
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError as exc:  # (a dependency; an install without it still works)
            self._down = f"file watching is unavailable ({exc}): every read looks at everything"
            return self
        watch = self

        class _Handler(FileSystemEventHandler):  # type: ignore[misc, unused-ignore]
            def on_any_event(self, event: Any) -> None:
                watch._event(event)

        self._trouble = _Trouble(self._lost)
        logging.getLogger("watchdog").addHandler(self._trouble)
        observer = Observer()
        handler = _Handler()
        # only what writes make: a read's open and close are never asked of the kernel (each
        # read of a fact file was two events; an index update reading every file overflowed
        # the queue, the overflow asked for a whole look, which read every file again …)
        wanted = [events.FileCreatedEvent, events.FileModifiedEvent, events.FileDeletedEvent,
                  events.FileMovedEvent, events.FileClosedEvent, events.DirCreatedEvent,
                  events.DirDeletedEvent, events.DirMovedEvent]
        try:
            kb = self.repo / self.root
            if kb.is_dir():
                observer.schedule(handler, str(kb), recursive=True, event_filter=wanted)
            observer.schedule(handler, str(self.git_dir), recursive=False, event_filter=wanted)
            if (self.git_dir / "refs").is_dir():
                observer.schedule(handler, str(self.git_dir / "refs"), recursive=True,
                                  event_filter=wanted)
            observer.start()
        except OSError as exc:
            observer.stop()
            self._down = (f"the folders cannot all be watched ({exc.strerror or exc}; on Linux, "
                          "raise fs.inotify.max_user_watches): every read looks at everything")
            self._stop_logging()
            return self
        self._observer = observer
        return self

    def stop(self) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)
        self._stop_logging()

    def take(self) -> Seen:
        """What was seen since the last call (and forget it). When the watch is not live or
        lost events, `whole` is set, with `why` in words."""
        with self._lock:
            pending, self._pending = self._pending, _Pending()
        why = pending.why if self.live else self._down
        return Seen(frozenset(pending.paths), pending.refs, whole=why is not None, why=why)

    def lost(self, why: str) -> None:
        """The next `take()` asks for a full look (what was seen was not used)."""
        with self._lock:
            self._pending.why = self._pending.why or why

    # -- the watcher thread ------------------------------------------------------------------

    def _lost(self, why: str) -> None:
        with self._lock:
            self._pending.why = self._pending.why or why
        self._tell()

    def _event(self, event: Any) -> None:
        relevant = False
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if not raw:
                continue
            path = os.fsdecode(raw)
            relevant = self._note(path, event.event_type, is_dir=event.is_directory) or relevant
        if relevant:
            self._tell()

    def _note(self, path: str, kind: str, *, is_dir: bool) -> bool:
        git = str(self.git_dir)
        if path == git or path.startswith(git + os.sep):
            rel = path[len(git) + 1:]
            name = rel.split(os.sep)[-1]
            if name.endswith(".lock"):  # (git's lock files: the rename that follows counts)
                return False
            if rel in _GIT_FILES or rel.startswith("refs" + os.sep):
                with self._lock:
                    self._pending.refs = True
                return True
            return False
        try:
            rel = Path(path).relative_to(self.repo).as_posix()
        except ValueError:
            return False
        if not rel.startswith(self.root + "/"):
            return False
        if is_dir and kind == "modified":  # (a file in it came or went: told on its own)
            return False
        with self._lock:
            if is_dir and kind in ("deleted", "moved"):
                # what a removed or moved folder held is not told file by file
                self._pending.why = self._pending.why or f"a folder was moved or removed: {rel}"
            elif not is_dir:  # (a new folder's files are told as created, by watchdog)
                self._pending.paths.add(rel)
        return True

    def _tell(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def _stop_logging(self) -> None:
        if self._trouble is not None:
            logging.getLogger("watchdog").removeHandler(self._trouble)
            self._trouble = None
