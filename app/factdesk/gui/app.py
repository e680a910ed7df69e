"""The GUI entry point: `run(path)` resolves locations, then opens the main window.

Configuration is resolved here once (STYLE §9): the data directory comes from
`FACTDESK_DATA_DIR` or the platform's user data dir; settings live in
QSettings("factdesk", "factdesk"), or in an ini file in the data dir when the
environment variable redirects it (tests).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from factdesk.core import Settings, demo_corpus
from factdesk.errors import FactdeskError

if TYPE_CHECKING:
    from factdesk.gui.main_window import MainWindow


def make_settings() -> QSettings:
    """The app's settings; a file under FACTDESK_DATA_DIR when that is set."""
    override = os.environ.get("FACTDESK_DATA_DIR")
    if override:
        return QSettings(str(Path(override) / "settings.ini"), QSettings.Format.IniFormat)
    return QSettings("factdesk", "factdesk")


def run(path: Path | None, *, end_process: bool = False) -> int:
    """Open the corpus at `path` (the demo workspace for None); returns the exit code.
    `end_process` (the `factdesk` command, whose process ends with the window): an index
    update still running after the window closed is not waited for (`_exit_without_waiting`);
    called in-process (tests) the call returns only once it has ended."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("factdesk")
    app.setOrganizationName("factdesk")
    QApplication.setDesktopFileName("org.factdesk.factdesk")  # Wayland app id = packaging/ .desktop
    from factdesk.gui.main_window import MainWindow

    try:
        repo = prepare_demo(Settings.resolve()) if path is None else Path(path)
        if repo is None:  # (quit while the demo was being prepared)
            return _exit_without_waiting(0, end_process=end_process)
        window = MainWindow(repo, make_settings())
    except (FactdeskError, ImportError, OSError) as exc:
        box = QMessageBox(QMessageBox.Icon.Critical, "factdesk", "")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(f"Cannot open the knowledge base:\n{exc}")
        box.exec()
        return 2
    from factdesk.gui.open_corpus import keep

    keep(window)  # (File ▸ Open corpus… replaces it by another: the app holds the one open)
    window.show()
    if os.environ.get("FACTDESK_SMOKE") == "1":
        _close_after_first_paint(window)
    code = int(app.exec())
    return _exit_without_waiting(code, end_process=end_process)


def prepare_demo(settings: Settings) -> Path | None:
    """The demo corpus (no PATH given). On a first start it is built from its plan (about a
    second of git commits): in the background, under a small progress window whose Quit
    ends the app at once (None). Errors are raised as `demo_corpus` raises them."""
    from factdesk.demo import DEMO_DIR_NAME

    if (settings.workspace / DEMO_DIR_NAME / ".git").exists():
        return demo_corpus(settings)
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QProgressDialog

    from factdesk.gui.open_corpus import in_background

    dialog = QProgressDialog("Preparing the demo corpus (first start only)…", "Quit", 0, 0)
    dialog.setObjectName("firstRunProgress")
    dialog.setWindowTitle("factdesk")
    dialog.setMinimumDuration(0)
    loop = QEventLoop()
    answer: list[object] = []

    def end(value: object) -> None:
        answer.append(value)
        loop.quit()

    dialog.canceled.connect(loop.quit)
    in_background(lambda: demo_corpus(settings), done=end, failed=end, name="demo")
    dialog.show()
    loop.exec()
    dialog.hide()
    dialog.deleteLater()
    if not answer:
        return None
    if isinstance(answer[0], BaseException):
        raise answer[0]
    return Path(str(answer[0]))


def _exit_without_waiting(code: int, *, end_process: bool = False) -> int:
    """The window has closed; a worker it let go (a model still loading, a history walk)
    may still run. None is waited for beyond a moment, and none may be destroyed while it
    runs (Qt aborts): then the process ends here, its settings and the index's writes
    already finished (the window's close did both)."""
    from factdesk.gui.operations import join_closing
    from factdesk.gui.workers import still_running

    # the writes of every closed lane finish (never cut short); an index update still
    # running is not waited for when the process ends here (SQLite rolls it back; the next
    # update removes its scratch), else it is
    indexing = join_closing(index_work=not end_process)
    if still_running(0.3) or indexing:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _close_after_first_paint(window: MainWindow) -> None:
    """FACTDESK_SMOKE=1 (the bundle's smoke test, packaging/): when the table first paints
    rows, print `factdesk-smoke first-paint monotonic=<time.monotonic()> rows=<n>` (a
    system-wide clock on Linux, macOS and Windows, so the caller can subtract its own
    start time) and close the window, which ends the app with status 0."""
    import time

    model = window.table.model

    class _FirstPaint(QObject):
        seen = False

        def eventFilter(self, obj: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and model.rowCount() > 0 and not self.seen:
                self.seen = True
                print(f"factdesk-smoke first-paint monotonic={time.monotonic():.6f} "
                      f"rows={model.rowCount()}", flush=True)
                QTimer.singleShot(0, window.close)
            return False

    spy = _FirstPaint(window)
    window.table.view.viewport().installEventFilter(spy)
