"""File ▸ Open corpus…, Open recent and Clone from URL… (issue 18), driven by keys and
clicks: the corpus is checked off the GUI thread, the window is replaced without a relaunch
(the old one closes without waiting, its writer lane ends, it is deleted), a folder that is
not a corpus gets the launch's dialog and changes nothing, a clone shows its progress and
can be cancelled (nothing kept)."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QMessageBox
from shiboken6 import isValid

from factdesk.gui import open_corpus as opener_module
from factdesk.gui.app import make_settings
from factdesk.gui.main_window import MainWindow
from factdesk.gui.open_corpus import WINDOWS, RecentCorpora, keep

#: where the dialogs' pictures go to be looked at (FACTDESK_SHOTS=folder); else only grabbed
SHOTS = os.environ.get("FACTDESK_SHOTS")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _shot(widget, name: str) -> None:  # type: ignore[no-untyped-def]
    picture = widget.grab()
    assert not picture.isNull()
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        picture.save(str(Path(SHOTS) / f"{name}.png"))


@pytest.fixture
def desk(qtbot, repo: Path, data_dir: Path) -> Iterator[MainWindow]:
    """The main window over `repo`, indexed, held as the app holds it; at the end every
    window still alive is closed (a switch makes new ones)."""
    win = MainWindow(repo, make_settings(), watch=False, update_on_open=False, semantic=False)
    keep(win)
    win.resize(1200, 760)
    win.show()
    with qtbot.waitSignal(win.index_did_update, timeout=20_000):
        win.reindex()
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=3000)
    yield win
    for w in list(WINDOWS):
        if isValid(w):
            w.close()
    WINDOWS.clear()


@pytest.fixture
def other(corpus_template: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "second-kb"
    shutil.copytree(corpus_template, dest, symlinks=True)
    return dest


@pytest.fixture
def checked_on(monkeypatch: pytest.MonkeyPatch) -> list[threading.Thread]:
    """The threads `core.open_corpus` ran on for a switch (never the GUI thread)."""
    seen: list[threading.Thread] = []
    real = opener_module.open_corpus

    def spy(path: Path):  # type: ignore[no-untyped-def]
        seen.append(threading.current_thread())
        return real(path)

    monkeypatch.setattr(opener_module, "open_corpus", spy)
    return seen


def _switched(qtbot, old: MainWindow) -> MainWindow:
    """The window that replaced `old`, once indexed; `old` gone (deleted after its lane)."""
    qtbot.waitUntil(lambda: len(WINDOWS) >= 2 or not isValid(old) or old not in WINDOWS,
                    timeout=10_000)
    new = next(w for w in WINDOWS if w is not old)
    qtbot.waitUntil(lambda: new.session.conn is not None and new.table.model.rowCount() > 0,
                    timeout=20_000)
    qtbot.waitUntil(lambda: not isValid(old), timeout=10_000)  # its lane ended: deleted
    return new


def _menu_keys(qtbot, window: MainWindow, *keys: Qt.Key) -> None:
    """Alt+F, then `keys` typed into the menus as they open."""
    qtbot.keyClick(window.table.view, Qt.Key.Key_F, Qt.KeyboardModifier.AltModifier)
    for key in keys:
        qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None, timeout=3000)
        qtbot.keyClick(QApplication.activePopupWidget(), key)


def test_ctrl_o_opens_another_corpus_in_place(qtbot, desk: MainWindow, other: Path,
                                             checked_on: list[threading.Thread]) -> None:
    assert desk.windowTitle() == "kbrepo (main) — factdesk"
    _git(other, "checkout", "-q", "-b", "review")
    qtbot.keyClick(desk.table.view, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: desk.corpora.folder_dialog is not None
                    and desk.corpora.folder_dialog.isVisible(), timeout=5000)
    dialog = desk.corpora.folder_dialog
    assert dialog is not None
    _shot(dialog, "open-corpus-dialog")
    name = dialog.findChild(QLineEdit, "fileNameEdit")
    name.setText(str(other))  # (typed key by key, the path completer rewrites it)
    qtbot.keyClick(name, Qt.Key.Key_Return)
    new = _switched(qtbot, desk)
    assert new.session.repo == other.resolve()
    assert checked_on and all(t is not threading.main_thread() for t in checked_on)
    qtbot.waitUntil(lambda: new.windowTitle() == "second-kb (review) — factdesk", timeout=5000)
    assert new.isVisible() and new.table.model.rowCount() == 5
    assert RecentCorpora(new.settings).paths()[:2] == [other.resolve(), desk_path(new, other)]
    _shot(new, "switched-window")


def desk_path(new: MainWindow, other: Path) -> Path:
    """The first corpus (the one before `other` in the recent list)."""
    return next(p for p in RecentCorpora(new.settings).paths() if p != other.resolve())


def test_a_folder_that_is_not_a_corpus_gets_the_launch_dialog(qtbot, desk: MainWindow,
                                                             tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    _git(plain, "init", "-q")
    desk.corpora.open_path(plain)
    qtbot.waitUntil(lambda: desk.corpora.error_box is not None
                    and desk.corpora.error_box.isVisible(), timeout=5000)
    box = desk.corpora.error_box
    assert box is not None
    assert box.text() == ("Cannot open the knowledge base:\n"
                          f"{plain} has no kb/ folder: it is not a knomit corpus")
    assert box.icon() == QMessageBox.Icon.Critical
    _shot(box, "open-error")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert [desk] == WINDOWS and desk.isVisible()
    assert desk.session.repo.name == "kbrepo"


def test_open_recent_by_keys_and_a_missing_one_is_shown_so(qtbot, desk: MainWindow, other: Path,
                                                          tmp_path: Path) -> None:
    gone = tmp_path / "gone-kb"
    recent = RecentCorpora(desk.settings)
    recent.add(gone)
    recent.add(other)
    recent.add(desk.session.repo)  # newest first: kbrepo, second-kb, gone-kb
    desk.corpora.look_at_recent()
    qtbot.waitUntil(lambda: desk.corpora.present.get(gone) is False, timeout=5000)
    _menu_keys(qtbot, desk, Qt.Key.Key_R)
    menu = QApplication.activePopupWidget()
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None
                    and QApplication.activePopupWidget().objectName() == "recentMenu", timeout=3000)
    menu = QApplication.activePopupWidget()
    texts = [(a.text(), a.isEnabled()) for a in menu.actions() if a.text()]
    assert texts[0] == (f"&1  kbrepo — {desk.session.repo.parent}", False)  # (the one open)
    assert texts[1] == (f"&2  second-kb — {other.parent}", True)
    assert texts[2] == (f"&3  gone-kb — {gone.parent}  (missing)", False)
    assert ("Remove missing", True) in texts
    _shot(menu, "open-recent-menu")
    qtbot.keyClick(menu, Qt.Key.Key_2)
    new = _switched(qtbot, desk)
    assert new.session.repo == other.resolve()
    new.corpora.remove_missing()
    assert gone not in RecentCorpora(new.settings).paths()


@pytest.fixture
def bare(corpus_template: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "remote" / "team-kb.git"
    dest.parent.mkdir()
    _git(tmp_path, "clone", "-q", "--bare", str(corpus_template), str(dest))
    return dest


@pytest.fixture
def big_bare(tmp_path: Path) -> Path:
    """A bare repository with 40 MB of incompressible data: its clone takes a while."""
    src = tmp_path / "bigsrc"
    (src / "kb").mkdir(parents=True)
    _git(src, "init", "-q", "-b", "main")
    for n in range(4):
        (src / "kb" / f"blob{n}.bin").write_bytes(os.urandom(10_000_000))
    _git(src, "add", "-A")
    _git(src, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "big")
    dest = tmp_path / "remote" / "big.git"
    dest.parent.mkdir(exist_ok=True)
    _git(tmp_path, "clone", "-q", "--bare", str(src), str(dest))
    return dest


def _clone_dialog(qtbot, desk: MainWindow):  # type: ignore[no-untyped-def]
    _menu_keys(qtbot, desk, Qt.Key.Key_C)
    qtbot.waitUntil(lambda: desk.corpora.clone_dialog is not None
                    and desk.corpora.clone_dialog.isVisible(), timeout=5000)
    return desk.corpora.clone_dialog


def test_clone_from_a_local_bare_repository_with_progress(qtbot, desk: MainWindow, bare: Path,
                                                          tmp_path: Path) -> None:
    dialog = _clone_dialog(qtbot, desk)
    parent = tmp_path / "clones"
    dialog.parent_folder.setText(str(parent))
    qtbot.keyClicks(dialog.url, bare.as_uri())  # file:///…/team-kb.git
    assert dialog.target.text() == str(parent / "team-kb")
    formats: list[str] = []
    dialog.progress.valueChanged.connect(lambda _v: formats.append(dialog.progress.format()))
    _shot(dialog, "clone-dialog")
    qtbot.keyClick(dialog.url, Qt.Key.Key_Return)
    new = _switched(qtbot, desk)
    assert new.session.repo == (parent / "team-kb").resolve()
    assert any("objects" in f.lower() and f.endswith("%p%") for f in formats), formats
    assert new.table.model.rowCount() == 5
    qtbot.waitUntil(lambda: new.windowTitle() == "team-kb (main) — factdesk", timeout=5000)


def test_a_clone_cancelled_keeps_nothing_and_refused_urls_never_run(
        qtbot, desk: MainWindow, big_bare: Path, tmp_path: Path) -> None:
    dialog = _clone_dialog(qtbot, desk)
    parent = tmp_path / "clones"
    dialog.parent_folder.setText(str(parent))
    for url, why in (("ext::sh -c touch% /tmp/factdesk-pwned", "ext:: URLs run a program"),
                     ("-uhelp", "may not start with '-'"), ("http://example.org/kb", "http://")):
        dialog.url.setText(url)
        qtbot.mouseClick(dialog.clone_button, Qt.MouseButton.LeftButton)
        assert why in dialog.message.text() and not dialog.running
    assert not parent.exists()
    dialog.url.setText(str(big_bare))
    qtbot.mouseClick(dialog.clone_button, Qt.MouseButton.LeftButton)
    assert dialog.running and dialog.cancel_button.text() == "Cancel clone"
    _shot(dialog, "clone-progress")
    # (at once: a local clone of 40 MB may end within the first look at the progress)
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert dialog.message.text() == "Cancelling…"
    qtbot.waitUntil(lambda: not dialog.running, timeout=10_000)
    assert dialog.message.text() == "Cancelled: nothing was kept."
    assert dialog.isVisible() and not (parent / "big").exists()
    _shot(dialog, "clone-cancelled")
    assert [desk] == WINDOWS
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible()


def test_a_window_closed_for_good_is_no_longer_held(qtbot, repo: Path, data_dir: Path) -> None:
    """The app holds its open window (`keep`); one closed for good (not left for another
    corpus) must go from that list, else File ▸ Open took it for the window that replaced
    one (the Ctrl+O test failed after any test that ran the app and closed its window)."""
    win = MainWindow(repo, make_settings(), watch=False, update_on_open=False, semantic=False)
    qtbot.addWidget(win)
    keep(win)
    win.show()
    win.close()
    qtbot.waitUntil(lambda: win not in WINDOWS, timeout=5000)
