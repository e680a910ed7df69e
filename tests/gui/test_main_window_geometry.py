"""The window never opens larger than the screen's available geometry (issue 18: it opened
at 1400×850 on a 1366×768 screen, its status bar and right edge cut off), whether it opens
for the first time or restores a size saved on a bigger screen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QRect, QSettings
from PySide6.QtWidgets import QApplication

from factdesk.gui import dialogs
from factdesk.gui.app import make_settings
from factdesk.gui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
app = QApplication([sys.argv[0]])
from factdesk.gui.app import make_settings
from factdesk.gui.main_window import MainWindow
win = MainWindow(Path(sys.argv[1]), make_settings(), watch=False, update_on_open=False,
                 semantic=False)
win.show()
import time
end = time.monotonic() + 1
while time.monotonic() < end:  # (the fit after the show, when the frame is known)
    app.processEvents()
area = win.screen().availableGeometry()
g, f = win.geometry(), win.frameGeometry()
print(json.dumps({"area": [area.x(), area.y(), area.width(), area.height()],
                  "geometry": [g.x(), g.y(), g.width(), g.height()],
                  "frame": [f.x(), f.y(), f.width(), f.height()]}))
win.close()
"""


def _screen_config(tmp_path: Path, width: int, height: int) -> Path:
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": width,
                                               "height": height, "logicalDpi": 96,
                                               "logicalBaseDpi": 96, "dpr": 1}]}))
    return config


def _open_on_screen(repo: Path, data: Path, config: Path) -> dict[str, list[int]]:
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={config}",
               FACTDESK_DATA_DIR=str(data), FACTDESK_SEMANTIC="off",
               PYTHONPATH=os.pathsep.join([str(ROOT / "app"), str(ROOT)]))
    proc = subprocess.run([sys.executable, "-c", CHILD, str(repo)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _inside(inner: list[int], outer: list[int]) -> bool:
    x, y, w, h = inner
    ox, oy, ow, oh = outer
    return x >= ox and y >= oy and x + w <= ox + ow and y + h <= oy + oh


def test_the_window_fits_a_1366x768_screen_first_time_and_after_a_bigger_one(
        repo: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    small = _screen_config(tmp_path, 1366, 768)
    first = _open_on_screen(repo, data, small)
    assert first["area"] == [0, 0, 1366, 768]
    assert _inside(first["frame"], first["area"]), first
    frame_w = first["frame"][2] - first["geometry"][2]
    frame_h = first["frame"][3] - first["geometry"][3]
    assert first["frame"][2:] == [1366, 768], first  # (as large as it may be, no larger)
    assert (frame_w, frame_h) == (4, 4)  # (the offscreen platform's frame: 2 px around)
    # a size saved on a big monitor, restored on the laptop
    (tmp_path / "big").mkdir()
    big = _screen_config(tmp_path / "big", 2560, 1440)
    settings = QSettings(str(data / "settings.ini"), QSettings.Format.IniFormat)
    settings.remove("window/geometry")
    settings.sync()
    on_big = _open_on_screen(repo, data, big)
    assert on_big["geometry"][2:] == list(dialogs.DEFAULT_SIZE)  # (room for the default)
    assert _inside(on_big["frame"], on_big["area"]), on_big
    again = _open_on_screen(repo, data, small)
    assert _inside(again["frame"], again["area"]), again


def test_restore_geometry_clamps_to_the_available_geometry(qtbot, repo: Path, data_dir: Path) -> None:
    area = QApplication.primaryScreen().availableGeometry()
    win = MainWindow(repo, make_settings(), watch=False, update_on_open=False, semantic=False)
    qtbot.addWidget(win)
    assert area.contains(win.frameGeometry()), (win.frameGeometry(), area)
    win.setGeometry(QRect(area.x() + 300, area.y() + 200, area.width() + 500, area.height() + 400))
    win.save_state()
    win.close()
    again = MainWindow(repo, make_settings(), watch=False, update_on_open=False, semantic=False)
    qtbot.addWidget(again)
    assert again.width() <= area.width() and again.height() <= area.height()
    assert area.contains(again.frameGeometry()), (again.frameGeometry(), area)


def test_a_window_resized_by_its_maker_keeps_that_size(qtbot, repo: Path, data_dir: Path) -> None:
    """(Tests and benchmarks size the window themselves: the fit after the first show leaves
    a window resized since alone.)"""
    win = MainWindow(repo, make_settings(), watch=False, update_on_open=False, semantic=False)
    qtbot.addWidget(win)
    win.resize(1400, 850)
    win.show()
    qtbot.wait(500)
    assert (win.width(), win.height()) == (1400, 850)
