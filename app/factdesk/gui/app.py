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

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from factdesk.errors import FactdeskError


def data_dir() -> Path:
    """Where per-user data (the demo workspace) lives."""
    override = os.environ.get("FACTDESK_DATA_DIR")
    if override:
        return Path(override)
    from platformdirs import user_data_dir

    return Path(user_data_dir("factdesk", "factdesk"))


def make_settings() -> QSettings:
    """The app's settings; a file under FACTDESK_DATA_DIR when that is set."""
    override = os.environ.get("FACTDESK_DATA_DIR")
    if override:
        return QSettings(str(Path(override) / "settings.ini"), QSettings.Format.IniFormat)
    return QSettings("factdesk", "factdesk")


def demo_repo() -> Path:
    """The demo workspace, created on first use by `factdesk.demo`."""
    from factdesk.demo import ensure_demo_workspace

    return Path(ensure_demo_workspace(data_dir() / "demo"))


def run(path: Path | None) -> int:
    """Open the corpus at `path` (the demo workspace for None); returns the exit code."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("factdesk")
    app.setOrganizationName("factdesk")
    from factdesk.gui.main_window import MainWindow

    try:
        repo = demo_repo() if path is None else Path(path)
        window = MainWindow(repo, make_settings())
    except (FactdeskError, ImportError, OSError) as exc:
        box = QMessageBox(QMessageBox.Icon.Critical, "factdesk", "")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(f"Cannot open the knowledge base:\n{exc}")
        box.exec()
        return 2
    window.show()
    code = app.exec()
    return int(code)
