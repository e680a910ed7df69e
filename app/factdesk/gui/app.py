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

from factdesk.core import Settings, demo_corpus
from factdesk.errors import FactdeskError


def make_settings() -> QSettings:
    """The app's settings; a file under FACTDESK_DATA_DIR when that is set."""
    override = os.environ.get("FACTDESK_DATA_DIR")
    if override:
        return QSettings(str(Path(override) / "settings.ini"), QSettings.Format.IniFormat)
    return QSettings("factdesk", "factdesk")


def run(path: Path | None) -> int:
    """Open the corpus at `path` (the demo workspace for None); returns the exit code."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("factdesk")
    app.setOrganizationName("factdesk")
    from factdesk.gui.main_window import MainWindow

    try:
        repo = demo_corpus(Settings.resolve()) if path is None else Path(path)
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
