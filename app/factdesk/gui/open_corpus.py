"""Opening corpora in the running app: File ▸ Open corpus…, Open recent, Clone from URL…,
and the switch from one corpus to another without a relaunch.

Nothing here runs git or reads the disk on the GUI thread: a chosen folder is checked
(`core.open_corpus`: the repository's top, a `kb/` folder) on a background thread; the
recent list's folders are looked at there too; a clone runs there (`corpus.gitclone.clone`,
with progress and Cancel). A corpus that opens replaces the window (`replace_window`): the
new window is built around the checked `Indexer` and shown first, then the old one closes
without waiting — its watcher and workers stop at once, its writer lane finishes the writes
it has queued on its own thread (joined only at the app's exit), and only then is it deleted.
A folder that is not a corpus gets the same dialog as at launch, and the current corpus
stays open. The window's title names the corpus and its checked-out branch (`TitleKeeper`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QSettings, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QWidget,
)
from shiboken6 import isValid

from factdesk.core import open_corpus
from factdesk.corpus import gitclone
from factdesk.errors import FactdeskError

if TYPE_CHECKING:
    from factdesk.gui.main_window import MainWindow
    from factdesk.gui.welcome import NewCorpusDialog
    from factdesk.index.indexer import Indexer

#: how many corpora Open recent keeps
RECENT_LIMIT = 10
RECENT_KEY = "corpora/recent"
CLONE_PARENT_KEY = "corpora/cloneParent"


# -- background calls ----------------------------------------------------------------------

class _Delivery(QObject):
    """Brings a background thread's answer to the GUI thread (a queued signal)."""

    did_end = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.did_end.connect(self._call, Qt.ConnectionType.QueuedConnection)

    @staticmethod
    def _call(call: Callable[[], None]) -> None:
        call()


_delivery: _Delivery | None = None


def in_background(job: Callable[[], Any], *, done: Callable[[Any], None],
                  failed: Callable[[BaseException], None], name: str) -> threading.Thread:
    """Run `job()` on a new daemon thread; `done(answer)` or `failed(exc)` on the GUI thread
    (the app's exit never waits for it)."""
    global _delivery
    if _delivery is None:
        _delivery = _Delivery()
    delivery = _delivery

    def run() -> None:
        try:
            answer = job()
        except BaseException as exc:  # handed to the GUI thread, which decides
            delivery.did_end.emit(functools.partial(failed, exc))
            return
        delivery.did_end.emit(functools.partial(done, answer))

    thread = threading.Thread(target=run, name=f"factdesk-{name}", daemon=True)
    thread.start()
    return thread


# -- the recent list -------------------------------------------------------------------------

class RecentCorpora:
    """The corpora opened last, newest first, kept in settings (`corpora/recent`)."""

    def __init__(self, settings: QSettings) -> None:
        self._settings = settings

    def paths(self) -> list[Path]:
        value = self._settings.value(RECENT_KEY, [])
        if isinstance(value, str):  # (an ini file hands back a one-entry list as a string)
            value = [value]
        values = value if isinstance(value, list) else []
        return [Path(str(p)) for p in values if str(p)]

    def _store(self, paths: list[Path]) -> None:
        self._settings.setValue(RECENT_KEY, [str(p) for p in paths[:RECENT_LIMIT]])
        self._settings.sync()

    def add(self, path: Path) -> None:
        path = Path(os.path.abspath(path))
        self._store([path, *(p for p in self.paths() if p != path)])

    def remove(self, paths: list[Path]) -> None:
        gone = set(paths)
        self._store([p for p in self.paths() if p not in gone])

    def clear(self) -> None:
        self._store([])


def corpus_folders(paths: list[Path]) -> dict[Path, bool]:
    """(Off the GUI thread.) Whether each recent path still looks like a corpus (a folder
    with `.git` and `kb/`; the full check runs when it is opened)."""
    return {p: (p / ".git").exists() and (p / "kb").is_dir() for p in paths}


# -- the title --------------------------------------------------------------------------------

def window_title(name: str, branch: str | None, *, known: bool = True) -> str:
    """`kbrepo (main) — factdesk`; a detached HEAD says so."""
    if not known:
        return f"{name} — factdesk"
    return f"{name} ({branch or 'detached HEAD'}) — factdesk"


class TitleKeeper(QObject):
    """Names the corpus and its checked-out branch in the window's title; the branch is read
    on the writer lane after each index update (a checkout elsewhere is seen)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window
        self.branch: str | None = None
        window.setWindowTitle(window_title(window.session.repo.name, None, known=False))
        window.session.index_did_update.connect(lambda _stats: self.read())
        self.read()

    def read(self) -> None:
        from factdesk.corpus.gitobjects import current_branch

        repo = self._window.session.repo
        self._window.session.lane.submit(lambda: current_branch(repo), done=self._show,
                                         failed=lambda _exc: None, interruptible=True)

    def _show(self, branch: str | None) -> None:
        self.branch = branch
        self._window.setWindowTitle(window_title(self._window.session.repo.name, branch))


# -- opening ----------------------------------------------------------------------------------

#: the windows alive (the app holds them; a replaced one until its writer lane ended)
WINDOWS: list[MainWindow] = []


def keep(window: MainWindow) -> None:
    if window not in WINDOWS:
        WINDOWS.append(window)


def replace_window(old: MainWindow, indexer: Indexer) -> MainWindow:
    """Open `indexer`'s corpus in a new window in `old`'s place (same size and splitters,
    same options), then close `old` without waiting for its writes (module docstring)."""
    from factdesk.gui.main_window import MainWindow

    old.save_state()
    new = MainWindow(indexer.repo, old.settings, indexer=indexer, watch=old.options["watch"],
                     semantic=old.options["semantic"])
    keep(new)
    if old.isMaximized():
        new.showMaximized()
    else:
        new.show()
    new.activateWindow()
    old.leave()
    return new


class CorpusOpener(QObject):
    """The File menu's corpus entries for one window."""

    #: a corpus was opened (the new window), or an open failed (its message)
    did_open = Signal(object)
    did_fail = Signal(str)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window
        self.recent = RecentCorpora(window.settings)
        self.recent.add(window.session.repo)
        self.title = TitleKeeper(window)
        #: the recent folders' last look (path → still a corpus), read in the background
        self.present: dict[Path, bool] = {}
        self.clone_dialog: CloneDialog | None = None
        self.new_dialog: NewCorpusDialog | None = None
        self.folder_dialog: QFileDialog | None = None
        self.error_box: QMessageBox | None = None
        self.opening: Path | None = None
        self.look_at_recent()

    # File ▸ Open corpus…
    def choose_folder(self) -> QFileDialog:
        """A folder chooser (window-modal, not blocking: `fileSelected` opens the folder)."""
        start = str(self._window.session.repo.parent)
        dialog = QFileDialog(self._window, "Open corpus — choose the corpus's folder", start)
        dialog.setObjectName("openCorpusDialog")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        if _platform() in ("offscreen", "minimal"):
            dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda chosen: self.open_path(Path(chosen)))
        self.folder_dialog = dialog
        dialog.open()
        return dialog

    def open_path(self, path: Path) -> None:
        """Check `path` in the background; open it in this window's place when it is a
        corpus, else say why (the current corpus stays)."""
        path = Path(os.path.abspath(path.expanduser()))
        if self.opening is not None:
            return
        self.opening = path
        self._window.status.working(f"opening {path.name}…")
        in_background(lambda: open_corpus(path), done=self._opened,
                      failed=lambda exc: self._not_opened(path, exc), name="open-corpus")

    def _here(self) -> bool:
        """The window is still there to answer in (it may have been closed meanwhile)."""
        return isValid(self._window) and self._window.isVisible()

    def _opened(self, indexer: Indexer) -> None:
        self.opening = None
        if not self._here():
            return
        self._window.status.done()
        if indexer.repo == self._window.session.repo:
            self._window.status.say(f"{indexer.repo.name} is already open", 4000)
            return
        self.recent.add(indexer.repo)
        new = replace_window(self._window, indexer)
        self.did_open.emit(new)

    def _not_opened(self, path: Path, exc: BaseException) -> None:
        self.opening = None
        if not isinstance(exc, (FactdeskError, OSError)):
            raise exc
        if not self._here():
            return
        self._window.status.done()
        box = QMessageBox(QMessageBox.Icon.Critical, "factdesk", "", parent=self._window)
        box.setObjectName("openErrorBox")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(f"Cannot open the knowledge base:\n{exc}")  # (the words of the launch)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.error_box = box
        box.open()
        self.present[path] = False
        self.did_fail.emit(str(exc))

    # File ▸ Open recent
    def look_at_recent(self) -> None:
        """Look at the recent folders in the background (the menu marks the missing)."""
        paths = self.recent.paths()
        in_background(lambda: corpus_folders(paths), done=self.present.update,
                      failed=lambda _exc: None, name="recent-corpora")

    def fill_recent(self, menu: QMenu) -> None:
        """(Open recent's aboutToShow.) One entry per recent corpus, newest first; one no
        longer there is shown greyed, "(missing)"; the current one is checked."""
        menu.clear()
        paths = self.recent.paths()
        for n, path in enumerate(paths, start=1):
            missing = self.present.get(path) is False
            label = f"{path.name} — {path.parent}".replace("&", "&&") + ("  (missing)" if missing else "")
            action = QAction(f"&{n}  {label}" if n <= 9 else label, menu)
            action.setObjectName(f"recent_{n}")
            action.setData(str(path))
            action.setEnabled(not missing and path != self._window.session.repo)
            action.setCheckable(path == self._window.session.repo)
            action.setChecked(path == self._window.session.repo)
            action.triggered.connect(lambda _=False, p=path: self.open_path(p))
            menu.addAction(action)
        if not paths:
            empty = menu.addAction("(none yet)")
            empty.setEnabled(False)
        menu.addSeparator()
        prune = menu.addAction("Remove missing", self.remove_missing)
        prune.setObjectName("recentRemoveMissing")
        prune.setEnabled(any(self.present.get(p) is False for p in paths))
        clear = menu.addAction("Clear list", self.clear_recent)
        clear.setObjectName("recentClear")
        self.look_at_recent()  # (seen the next time the menu opens)

    def remove_missing(self) -> None:
        self.recent.remove([p for p in self.recent.paths() if self.present.get(p) is False])

    def clear_recent(self) -> None:
        self.recent.clear()
        self.recent.add(self._window.session.repo)

    # File ▸ New corpus…
    def new_corpus(self) -> NewCorpusDialog:
        """The New knowledge base dialog (gui/welcome.py); the corpus it creates opens here."""
        from factdesk.gui.welcome import NewCorpusDialog

        if self.new_dialog is None:
            self.new_dialog = NewCorpusDialog(self._window.settings, self._window.ops.identity_file,
                                              self._window)
            self.new_dialog.did_create.connect(self.open_path)
        self.new_dialog.open()
        self.new_dialog.name.setFocus()
        return self.new_dialog

    # File ▸ Clone from URL…
    def clone_from_url(self) -> CloneDialog:
        if self.clone_dialog is None:
            self.clone_dialog = CloneDialog(self._window.settings, self._window)
            self.clone_dialog.did_clone.connect(self.open_path)
        self.clone_dialog.open()
        self.clone_dialog.url.setFocus()
        return self.clone_dialog


def _platform() -> str:
    from PySide6.QtGui import QGuiApplication

    return QGuiApplication.platformName()


def folder_rows(dialog: QDialog, form: QFormLayout, start: str, name: str,
                labels: tuple[str, str]) -> tuple[QLineEdit, QLabel]:
    """A dialog's "folder to put it in" row (a line and Choose…) and the "what it makes" row
    under it (plain text, wrapped); object names `<name>Parent`, `<name>ChooseParent`,
    `<name>Target`."""
    folder = QLineEdit(start, dialog)
    folder.setObjectName(f"{name}Parent")
    choose = QPushButton("Choose…", dialog)
    choose.setObjectName(f"{name}ChooseParent")

    def chosen() -> None:
        picked = QFileDialog.getExistingDirectory(dialog, labels[0].replace("&", ""), folder.text())
        if picked:
            folder.setText(picked)

    choose.clicked.connect(chosen)
    row = QHBoxLayout()
    row.addWidget(folder, 1)
    row.addWidget(choose)
    caption = QLabel(labels[0], dialog)
    caption.setBuddy(folder)
    form.addRow(caption, row)
    target = QLabel("", dialog)
    target.setObjectName(f"{name}Target")
    target.setTextFormat(Qt.TextFormat.PlainText)
    target.setWordWrap(True)
    form.addRow(labels[1], target)
    return folder, target


class CloneDialog(QDialog):
    """Clone from URL…: the URL, the folder to clone into, a progress bar and Cancel. The
    clone runs in the background; when it ends the corpus opens in the window's place."""

    did_clone = Signal(Path)
    #: (stage, fraction) from the clone's thread
    _progress = Signal(str, float)

    def __init__(self, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("cloneDialog")
        self.setWindowTitle("Clone a corpus from a URL")
        self._settings = settings
        self._cancel = threading.Event()
        self.running = False
        form = QFormLayout(self)
        note = QLabel("A git repository of knomit facts: an https or ssh URL "
                      "(user@host:path), a file:// URL or a local folder.", self)
        note.setWordWrap(True)
        form.addRow(note)
        self.url = QLineEdit(self)
        self.url.setObjectName("cloneUrl")
        self.url.setPlaceholderText("https://example.org/team/kb.git")
        form.addRow("&URL", self.url)
        self.parent_folder, self.target = folder_rows(
            self, form, str(self._default_parent()), "clone", ("Clone &into", "Folder"))
        self.progress = QProgressBar(self)
        self.progress.setObjectName("cloneProgress")
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.setFormat("")
        form.addRow(self.progress)
        self.message = QLabel("", self)
        self.message.setObjectName("cloneMessage")
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setWordWrap(True)
        form.addRow(self.message)
        self.buttons = QDialogButtonBox(self)
        self.clone_button = self.buttons.addButton("&Clone", QDialogButtonBox.ButtonRole.AcceptRole)
        self.clone_button.setObjectName("cloneStart")
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.cancel_button.setObjectName("cloneCancel")
        self.clone_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.reject)
        self.clone_button.setDefault(True)
        form.addRow(self.buttons)
        self.url.textChanged.connect(self._show_target)
        self.parent_folder.textChanged.connect(self._show_target)
        self._progress.connect(self._show_progress)
        cancel = self._cancel
        self.destroyed.connect(lambda *_: cancel.set())  # (the window closed: stop the clone)
        self.setMinimumWidth(560)
        self._show_target()

    def _default_parent(self) -> Path:
        saved = self._settings.value(CLONE_PARENT_KEY, "")
        return Path(str(saved)) if saved else Path.home() / "factdesk"

    def destination(self) -> Path | None:
        url, parent = self.url.text().strip(), self.parent_folder.text().strip()
        if not url or not parent:
            return None
        return Path(os.path.abspath(os.path.expanduser(parent))) / gitclone.folder_name(url)

    def _show_target(self) -> None:
        dest = self.destination()
        self.target.setText(str(dest) if dest is not None else "—")
        self.clone_button.setEnabled(dest is not None and not self.running)

    def start(self) -> None:
        """Clone (the Clone button, or Enter)."""
        if self.running:
            return
        dest = self.destination()
        if dest is None:
            return
        try:
            url = gitclone.check_url(self.url.text())
        except gitclone.CloneRefused as exc:
            self.message.setText(f"Not cloned: {exc}")
            return
        self._settings.setValue(CLONE_PARENT_KEY, str(dest.parent))
        self._cancel.clear()
        self._set_running(True)
        self.message.setText(f"Cloning {url} …")
        self.progress.setValue(0)
        signal = self._progress
        cancelled = self._cancel.is_set

        def emit(stage: str, share: float) -> None:
            with contextlib.suppress(RuntimeError):  # (the dialog is gone: it was cancelled)
                signal.emit(stage, share)

        def job() -> Path:
            done = gitclone.clone(url, dest, progress=lambda stage, share: emit(stage, share),
                                  cancelled=cancelled)
            if cancelled():  # (git ended between two looks: Cancel still means nothing kept)
                shutil.rmtree(done, ignore_errors=True)
                raise gitclone.CloneCancelled(f"the clone of {url} was cancelled")
            return done

        in_background(job, done=self._cloned, failed=self._failed, name="clone")

    def _set_running(self, running: bool) -> None:
        self.running = running
        for widget in (self.url, self.parent_folder):
            widget.setReadOnly(running)
        self.clone_button.setEnabled(not running and self.destination() is not None)
        self.cancel_button.setText("Cancel clone" if running else "Close")

    def _show_progress(self, stage: str, share: float) -> None:
        if not self.running:
            return
        self.progress.setValue(int(share * 1000))
        self.progress.setFormat(f"{stage[:1].upper()}{stage[1:]} %p%")

    def _cloned(self, dest: Path) -> None:
        if not isValid(self):  # (its window closed meanwhile, which cancelled the clone)
            return
        self._set_running(False)
        self.progress.setValue(1000)
        self.message.setText(f"Cloned into {dest}; opening it…")
        self.accept()
        self.did_clone.emit(dest)

    def _failed(self, exc: BaseException) -> None:
        if not isValid(self):
            return
        self._set_running(False)
        self.progress.setValue(0)
        self.progress.setFormat("")
        if isinstance(exc, gitclone.CloneCancelled):
            self.message.setText("Cancelled: nothing was kept.")
        elif isinstance(exc, (FactdeskError, OSError)):
            self.message.setText(f"Not cloned: {exc}")
        else:
            raise exc

    def reject(self) -> None:
        """Cancel (or Escape): stops a running clone first (the dialog stays to say so)."""
        if self.running:
            self._cancel.set()
            self.message.setText("Cancelling…")
            return
        super().reject()
