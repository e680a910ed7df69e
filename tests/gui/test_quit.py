"""Quitting never waits (issue 14): closing the window while the embedding model loads
(or a batch is embedded, or the Transitions tab walks the history) returns at once; the
work goes on unheard until it ends, and Qt never aborts with "QThread: Destroyed while
thread is still running"."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from factdesk.gui.app import make_settings
from factdesk.gui.main_window import MainWindow
from factdesk.gui.workers import still_running

ROOT = Path(__file__).resolve().parents[2]


def test_ctrl_q_while_the_model_loads_closes_at_once(qtbot, repo: Path, data_dir: Path,
                                                    monkeypatch) -> None:
    import factdesk.semantic.search as search

    loading = threading.Event()

    def slow_session_for(*_args: object, **_kw: object) -> object:  # a model taking 4 s
        loading.set()
        time.sleep(4)
        raise OSError("the stand-in model never loads")

    monkeypatch.setattr(search, "session_for", slow_session_for)
    win = MainWindow(repo, make_settings(), watch=False, update_on_open=False, semantic=True)
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.index_did_update, timeout=20_000):
        win.reindex()  # (the update starts the embedding)
    qtbot.waitUntil(loading.is_set, timeout=10_000)
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=3000)
    started = time.monotonic()
    qtbot.keyClick(win.table.view, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    elapsed = time.monotonic() - started
    assert not win.isVisible()
    assert elapsed < 1.5, f"closing waited {elapsed:.1f} s for the model"
    # the window goes while the model still loads: its thread is not destroyed with it
    win.deleteLater()
    QApplication.processEvents()
    gc.collect()
    assert still_running(10) == 0


def test_the_app_closed_at_its_first_paint_exits_at_once(repo: Path, tmp_path: Path) -> None:
    """The real app's exit (a child process), closed right after the first paint while the
    model loads and the Transitions worker may still run: status 0 within a moment, no
    abort."""
    env = dict(os.environ, FACTDESK_SMOKE="1", FACTDESK_SEMANTIC="on", QT_QPA_PLATFORM="offscreen",
               FACTDESK_DATA_DIR=str(tmp_path / "data"),
               PYTHONPATH=os.pathsep.join([str(ROOT / "app"), str(ROOT)]))
    proc = subprocess.run([sys.executable, str(ROOT / "tests/gui/quit_child.py"), str(repo), "30"],
                          env=env, capture_output=True, text=True, timeout=120)
    ended = time.monotonic()
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "QThread: Destroyed" not in proc.stderr
    painted = [float(line.split("monotonic=")[1].split()[0]) for line in proc.stdout.splitlines()
               if line.startswith("factdesk-smoke first-paint")]
    assert painted, proc.stdout + proc.stderr[-3000:]
    assert ended - painted[0] < 5.0, f"exit took {ended - painted[0]:.1f} s after the first paint"
