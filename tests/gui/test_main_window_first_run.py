"""A first run (issue 18): what is prepared then runs in the background with its progress in
the window, and quitting during it never waits more than a second."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QProgressDialog

from factdesk.core import Settings
from factdesk.gui import app as app_module
from factdesk.gui.app import make_settings
from factdesk.gui.main_window import MainWindow

PREPARING = "distilling static embeddings from all-MiniLM-L6-v2 (once, ~20 s)"


def test_the_models_preparation_is_said_in_the_window_and_quit_does_not_wait(
        qtbot, repo: Path, data_dir: Path, monkeypatch) -> None:
    import factdesk.semantic.search as search

    preparing = threading.Event()

    def slow_session_for(_indexer: object, _setting: object = None, *, progress=None,
                         **_kw: object) -> object:  # a first run's distillation, 3 s
        if progress is not None:
            progress(PREPARING)
        preparing.set()
        time.sleep(3)
        raise OSError("the stand-in model never loads")

    monkeypatch.setattr(search, "session_for", slow_session_for)
    win = MainWindow(repo, make_settings(), watch=False, update_on_open=False, semantic=True)
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.index_did_update, timeout=20_000):
        win.reindex()  # (the update starts the embedding, and so the model's preparation)
    qtbot.waitUntil(preparing.is_set, timeout=10_000)
    qtbot.waitUntil(lambda: PREPARING in win.statusBar().currentMessage(), timeout=5000)
    assert win.table.model.rowCount() == 5  # (searchable meanwhile)
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=3000)
    started = time.monotonic()
    qtbot.keyClick(win.table.view, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    assert not win.isVisible()
    assert time.monotonic() - started < 1.0


def test_quitting_while_the_demo_is_prepared_ends_at_once(qtbot, tmp_path: Path,
                                                          monkeypatch) -> None:
    built = threading.Event()

    def slow_demo(_settings: Settings) -> Path:
        time.sleep(5)
        built.set()
        return tmp_path / "never"

    monkeypatch.setattr(app_module, "demo_corpus", slow_demo)
    seen: list[QProgressDialog] = []

    def quit_it() -> None:
        dialog = next(w for w in QApplication.topLevelWidgets()
                      if isinstance(w, QProgressDialog) and w.objectName() == "firstRunProgress"
                      and w.isVisible())
        seen.append(dialog)
        assert "Preparing the demo corpus" in dialog.labelText()
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)  # (Quit)

    QTimer.singleShot(300, quit_it)
    started = time.monotonic()
    answer = app_module.prepare_demo(Settings(tmp_path / "fresh-profile"))
    assert answer is None and seen
    assert time.monotonic() - started < 1.3  # (0.3 s before the key, then at once)
    assert not built.is_set()


def test_a_fresh_profile_prepares_the_demo_under_the_progress_window(qtbot, tmp_path: Path) -> None:
    shown: list[str] = []

    def look() -> None:
        shown.extend(w.labelText() for w in QApplication.topLevelWidgets()
                     if isinstance(w, QProgressDialog) and w.isVisible())

    timer = QTimer()
    timer.timeout.connect(look)
    timer.start(20)
    repo = app_module.prepare_demo(Settings(tmp_path / "fresh-profile"))
    timer.stop()
    assert repo is not None and (repo / ".git").is_dir() and (repo / "kb").is_dir()
    assert shown and shown[0] == "Preparing the demo corpus (first start only)…"
    shown.clear()
    assert app_module.prepare_demo(Settings(tmp_path / "fresh-profile")) == repo  # at once


REAL = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "agentic-engineering-kb.bundle"


@pytest.mark.skipif(not REAL.exists(), reason="needs ../shared/corpora (the published corpus)")
def test_quitting_during_the_first_index_build_does_not_wait_for_it(
        qtbot, tmp_path: Path, data_dir: Path) -> None:
    """It waited 7.6 s here (the 264 facts of the published corpus, never indexed)."""
    import subprocess

    corpus = tmp_path / "real"
    subprocess.run(["git", "clone", "-q", str(REAL), str(corpus)], check=True)
    win = MainWindow(corpus, make_settings(), watch=False, update_on_open=True, semantic=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.progress.isVisible() and "%v" in win.progress.format(),
                    timeout=20_000)  # (building: a stage with its counts)
    assert win.session.is_updating and win.table.model.rowCount() == 0
    lane = win.session.lane
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=3000)
    started = time.monotonic()
    qtbot.keyClick(win.table.view, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    assert time.monotonic() - started < 1.0
    assert not win.isVisible()
    lane._thread.join(60)  # (the build goes on unheard; the real app's exit ends it)
    again = MainWindow(corpus, make_settings(), watch=False, update_on_open=False, semantic=False)
    qtbot.addWidget(again)
    with qtbot.waitSignal(again.index_did_update, timeout=60_000):
        again.reindex()
    assert again.table.model.rowCount() > 200


def test_the_writer_lane_waits_for_writes_never_for_index_work(qtbot) -> None:
    from factdesk.gui.operations import WriterLane

    lane = WriterLane()
    log: list[str] = []
    lane.submit(lambda: (time.sleep(0.6), log.append("write"))[1], done=lambda _r: None,
                failed=lambda _e: None)
    lane.submit(lambda: (time.sleep(5), log.append("update"))[1], done=lambda _r: None,
                failed=lambda _e: None, interruptible=True)
    started = time.monotonic()
    lane.close()
    waited = time.monotonic() - started
    assert log == ["write"]  # the write finished, the queued update never started
    assert waited < 2.0
    lane._thread.join(10)
    assert log == ["write"] and not lane.running
