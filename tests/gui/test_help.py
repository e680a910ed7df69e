"""Help ▸ Keyboard shortcuts (read from the window's own bindings: every bound key appears
and nothing else, and a key bound later appears too) and Help ▸ About (issue 18)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication

from factdesk.gui.help import AboutBox, ShortcutSheet
from factdesk.gui.main_window import MainWindow
from factdesk.gui.proposal_workers import LETTERS
from factdesk.version import version

ROOT = Path(__file__).resolve().parents[2]
SHOTS = os.environ.get("FACTDESK_SHOTS")  # (a folder: the pictures are saved there)
NATIVE = QKeySequence.SequenceFormat.NativeText


def _expected(window: MainWindow) -> list[str]:
    """Every key bound in the window, found independently of gui/help.py: the shortcuts of
    its actions, the keys its menu entries name after a tab, its panels' QShortcuts."""
    keys = []
    for action in window.findChildren(QAction):
        keys += [s.toString(NATIVE) for s in action.shortcuts() if not s.isEmpty()]
        if "\t" in action.text():
            keys.append(QKeySequence(action.text().split("\t")[1]).toString(NATIVE))
    keys += [s.key().toString(NATIVE) for s in window.findChildren(QShortcut)
             if not s.key().isEmpty()]
    # the Proposals tab's letters, answered by its key router wherever its focus is
    keys += [QKeySequence(key).toString(NATIVE) for key in LETTERS]
    return sorted(keys)


def _open_sheet(qtbot, window: MainWindow) -> ShortcutSheet:  # type: ignore[no-untyped-def]
    qtbot.keyClick(window.table.view, Qt.Key.Key_Question)
    qtbot.waitUntil(lambda: isinstance(QApplication.activeWindow(), ShortcutSheet)
                    or window.findChild(ShortcutSheet) is not None, timeout=3000)
    sheet = window.findChild(ShortcutSheet)
    assert sheet is not None and sheet.isVisible()
    return sheet


def test_the_shortcut_sheet_lists_every_bound_key_and_nothing_else(qtbot, window: MainWindow) -> None:
    sheet = _open_sheet(qtbot, window)
    rows = sheet.rows()
    assert sorted(keys for keys, _what, _section in rows) == _expected(window)
    by_key = {(keys, section): what for keys, what, section in rows}
    assert by_key[("Ctrl+Z", "Edit")] == "Undo"
    assert by_key[("Ctrl+O", "File")] == "Open corpus…"
    assert by_key[("A", window.mislabels.menu_text)] == "Accept"
    assert by_key[("2", window.mislabels.menu_text)] == "Accept option 2"
    assert by_key[("C", window.settlement.menu_text)] == "Confirm"
    assert by_key[("Enter", "Go")] == "Focus inspector"
    assert all(what and what != "(unnamed)" for _k, what, _s in rows)
    _shot(sheet, "shortcut-sheet")
    qtbot.keyClicks(sheet.filter, "undo")
    assert [what for _k, what, _s in sheet.rows()] == ["Undo"]
    qtbot.keyClick(sheet, Qt.Key.Key_Escape)
    assert not sheet.isVisible()


def test_a_key_bound_later_appears_in_the_sheet(qtbot, window: MainWindow) -> None:
    extra = QAction("Mark as read", window)
    extra.setShortcut(QKeySequence("Ctrl+Shift+Y"))
    window.addAction(extra)
    controller = QObject(window)  # (an action a panel's controller object owns)
    owned = QAction("Sync now", controller)
    owned.setShortcut(QKeySequence("Ctrl+Shift+U"))
    window.addAction(owned)
    sheet = _open_sheet(qtbot, window)
    assert ("Ctrl+Shift+Y", "Mark as read", "Window") in sheet.rows()
    assert ("Ctrl+Shift+U", "Sync now", "Window") in sheet.rows()
    assert sorted(k for k, _w, _s in sheet.rows()) == _expected(window)


def test_the_about_box_names_version_corpus_index_and_model(qtbot, window: MainWindow) -> None:
    qtbot.keyClick(window.table.view, Qt.Key.Key_H, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None, timeout=3000)
    qtbot.keyClick(QApplication.activePopupWidget(), Qt.Key.Key_A)
    qtbot.waitUntil(lambda: window.findChild(AboutBox) is not None, timeout=3000)
    box = window.findChild(AboutBox)
    assert box is not None and box.isVisible()
    qtbot.waitUntil(lambda: box.fields["indexSize"].text() != "…", timeout=5000)
    fields = {key: label.text() for key, label in box.fields.items()}
    assert fields["version"] == version()
    assert fields["corpus"] == str(window.session.repo)
    assert fields["branch"] == "main"
    assert fields["index"] == str(window.session.indexer.path)
    assert fields["indexSize"].endswith(("KB", "MB"))
    assert fields["model"].startswith("Fast (static, distilled from MiniLM) — off")
    _shot(box, "about")
    qtbot.mouseClick(_button(box, "aboutCopy"), Qt.MouseButton.LeftButton)
    assert f"corpus: {window.session.repo}" in QApplication.clipboard().text()
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    assert not box.isVisible()


def _shot(widget, name: str) -> None:  # type: ignore[no-untyped-def]
    picture = widget.grab()
    assert not picture.isNull()
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        picture.save(str(Path(SHOTS) / f"{name}.png"))


def _button(box: AboutBox, name: str):  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QPushButton

    button = box.findChild(QPushButton, name)
    assert button is not None
    return button


def test_version_and_help_on_the_command_line() -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "app"), str(ROOT)]))
    out = subprocess.run([sys.executable, "-m", "factdesk", "--version"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == f"factdesk {version()}", out
    out = subprocess.run([sys.executable, "-m", "factdesk", "--help"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    assert "factdesk [PATH]" in out.stdout, out.stdout


def test_the_sheet_says_each_tabs_own_keys_and_where_a_window_key_means_else(
        qtbot, window: MainWindow) -> None:
    """Issue 24 #10: the sheet lacked the Proposals tab's A/R/E/S and said "R Relabel…
    anywhere in the window", which in Proposals rejects. The tab in front comes first."""
    proposals = window.proposals
    window.center.setCurrentWidget(proposals)
    qtbot.waitUntil(lambda: proposals.loaded, timeout=10_000)
    qtbot.keyClick(proposals.list, Qt.Key.Key_Question)
    qtbot.waitUntil(lambda: window.findChild(ShortcutSheet) is not None
                    and window.findChild(ShortcutSheet).isVisible(), timeout=3000)
    sheet = window.findChild(ShortcutSheet)
    rows = sheet.rows()
    tab = proposals.menu_text
    by_key = {(keys, section): what for keys, what, section in rows}
    assert {by_key.get((k, tab)) for k in "ARES"} == {"Accept", "Reject", "Edit", "Skip"}
    assert rows[0][2] == tab  # (the tab in front first)
    works = {(b.keys, b.section): b.scope for b in sheet.bindings}
    assert f"in the {tab} tab: Reject" in works[("R", "Edit")]
    _shot(sheet, "shortcut-sheet-proposals")
    sheet.grab().save("/tmp/desk-shortcut-sheet.png")
