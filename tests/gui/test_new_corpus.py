"""File ▸ New corpus… and the first run's welcome (issue 25): a new user starts a knowledge
base from the window — a git repository with kb/<topic>/, a starter ontology and registry,
one commit by the curator — and it opens in the window's place; the first window on the
demo offers New, Open, Clone and the demo, once."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from shiboken6 import isValid

from factdesk.cli import main
from factdesk.demo import DEMO_DIR_NAME
from factdesk.gui.app import make_settings
from factdesk.gui.main_window import MainWindow
from factdesk.gui.open_corpus import WINDOWS
from tests.gui.test_open_corpus import _shot, desk  # noqa: F401  (the fixture)


@pytest.fixture
def curator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTDESK_CURATOR_NAME", "Ana Curator")
    monkeypatch.setenv("FACTDESK_CURATOR_EMAIL", "ana@example.org")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def test_ctrl_shift_n_creates_a_corpus_and_opens_it(qtbot, desk: MainWindow,  # noqa: F811
                                                    tmp_path: Path, curator: None,
                                                    capsys) -> None:
    qtbot.keyClick(desk.table.view, Qt.Key.Key_N,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: desk.corpora.new_dialog is not None
                    and desk.corpora.new_dialog.isVisible(), timeout=5000)
    dialog = desk.corpora.new_dialog
    assert dialog is not None
    dialog.parent_folder.setText(str(tmp_path / "kbs"))
    qtbot.keyClicks(dialog.name, "Ledger Team")
    dialog.topics.clear()
    qtbot.keyClicks(dialog.topics, "Bad Topic!")
    assert dialog.target.text() == str(tmp_path / "kbs" / "ledger-team")
    qtbot.keyClick(dialog.name, Qt.Key.Key_Return)
    assert dialog.message.text().startswith("Not created: 'Bad' is not a topic name")
    _shot(dialog, "new-corpus-refused")
    label, message = dialog.message.geometry(), dialog.target.geometry()
    assert not label.intersects(message) and dialog.rect().contains(label)
    assert not (tmp_path / "kbs" / "ledger-team").exists()  # nothing half-made
    dialog.topics.clear()
    qtbot.keyClicks(dialog.topics, "gotchas, api-decisions")
    _shot(dialog, "new-corpus-dialog")
    qtbot.keyClick(dialog.name, Qt.Key.Key_Return)
    dest = (tmp_path / "kbs" / "ledger-team").resolve()
    qtbot.waitUntil(lambda: any(isValid(w) and w.session.repo == dest for w in WINDOWS),
                    timeout=20_000)
    new = next(w for w in WINDOWS if isValid(w) and w.session.repo == dest)
    qtbot.waitUntil(lambda: new.windowTitle() == "ledger-team (main) — factdesk", timeout=10_000)
    # one commit, by the curator, as knomit's init writes it
    log = _git(dest, "log", "--format=%an <%ae>|%s|%b").strip().splitlines()
    assert len(log) == 1 and log[0].startswith(
        "Ana Curator <ana@example.org>|init: create knowledge base|knomit-repo-nonce: ")
    assert _git(dest, "status", "--porcelain") == ""
    tracked = set(_git(dest, "ls-files").split())
    assert {"README.md", ".knomit/ontology.yaml", ".factdesk/agents.yaml",
            "kb/gotchas/.gitkeep", "kb/api-decisions/.gitkeep"} == tracked
    ontology = (dest / ".knomit" / "ontology.yaml").read_text()
    assert "name: Ledger Team" in ontology and "api-decisions:" in ontology
    # readable as a corpus: no finding; the curator is a registered user, not unknown
    capsys.readouterr()
    assert main(["check", "--kb", str(dest), "--format", "json"]) == 0
    assert '"errors": []' in capsys.readouterr().out
    assert "ana:\n    type: user\n    email: ana@example.org" in (
        dest / ".factdesk" / "agents.yaml").read_text()


def test_the_first_window_on_the_demo_welcomes_once(qtbot, repo: Path, data_dir: Path) -> None:
    demo = data_dir / "workspace" / DEMO_DIR_NAME
    demo.parent.mkdir(parents=True)
    shutil.copytree(repo, demo, symlinks=True)
    win = MainWindow(demo, make_settings(), watch=False, update_on_open=False, semantic=False)
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    assert win.welcome is not None and win.welcome.isVisible()
    assert set(win.welcome.buttons) == {"new", "open", "clone", "demo"}
    _shot(win, "welcome-first-run")
    qtbot.mouseClick(win.welcome.buttons["new"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.corpora.new_dialog is not None
                    and win.corpora.new_dialog.isVisible(), timeout=5000)
    assert not win.welcome.isVisible()
    win.corpora.new_dialog.reject()
    again = MainWindow(demo, make_settings(), watch=False, update_on_open=False, semantic=False)
    qtbot.addWidget(again)
    assert again.welcome is None  # answered once: never again
    other = MainWindow(repo, make_settings(), watch=False, update_on_open=False, semantic=False)
    qtbot.addWidget(other)
    assert other.welcome is None  # (only the demo, a new user's first window)
