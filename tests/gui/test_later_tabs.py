"""The tabs after Facts are made after the window's first paint (gui/later_panel.py, issue
23 #6): none of their modules is imported before it, each is made once it has painted (or
at once when asked for), takes its stand-in's place in the tab widget, and hears the
index change it missed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from PySide6.QtCore import Qt

from factdesk.gui.app import make_settings
from factdesk.gui.later_panel import LaterPanel
from factdesk.gui.main_window import MainWindow
from tests.gui.conftest import open_window

ROOT = Path(__file__).resolve().parents[2]

_CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from factdesk.gui.app import make_settings
    from factdesk.gui.main_window import MainWindow
    MODULES = ["problems_panel", "overview", "mislabel_panel", "settlement_panel",
               "transitions_panel", "proposals_panel", "agents_panel", "messages_panel"]
    def imported():
        return [m for m in MODULES if f"factdesk.gui.{m}" in sys.modules]
    win = MainWindow(Path(sys.argv[1]), make_settings(), watch=False, update_on_open=False,
                     semantic=False)
    before = {"imported": imported(), "made": [p.name for p in win._later.values() if p.real]}
    win.show()
    deadline = time.monotonic() + 30
    while any(p.real is None for p in win._later.values()) and time.monotonic() < deadline:
        app.processEvents()
    after = {"imported": imported(), "made": [p.name for p in win._later.values() if p.real]}
    print(json.dumps({"before": before, "after": after}))
    sys.stdout.flush()
    import os; os._exit(0)
""")


def test_no_tab_but_facts_is_imported_or_made_before_the_first_paint(repo: Path, data_dir: Path
                                                                       ) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(repo)], capture_output=True,
                          text=True, env=env, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["before"] == {"imported": [], "made": []}
    assert len(seen["after"]["made"]) == 8 and len(seen["after"]["imported"]) == 8


def test_each_tab_is_made_after_the_first_paint_in_its_stand_ins_place(qtbot, repo: Path,
                                                                       data_dir: Path) -> None:
    win = open_window(qtbot, repo)
    later = list(win._later.values())
    qtbot.waitUntil(lambda: all(p.real is not None for p in later), timeout=10_000)
    for index, stand_in in enumerate(later, start=1):
        real = stand_in.real
        # the entry's caption, menu text, action and refs flag are the panel's own
        for attr in ("caption", "menu_text", "action_name"):
            assert getattr(stand_in, attr) == getattr(type(real), attr), (stand_in.name, attr)
        assert stand_in.reads_agent_branches == getattr(type(real), "reads_agent_branches", False)
        assert getattr(win, stand_in.name) is real
        # the real widget is the page at the entry's index: no stand-in is left
        assert win.center.widget(index) is real.tab_widget()
        assert win.panels[index] is stand_in and stand_in.tab_widget() is real.tab_widget()
    assert win.center.count() == len(win.panels)
    assert win.center.currentIndex() == 0 and win.front() is win.facts
    # the counts a tab puts in its caption reached the tab bar (told of the update they missed)
    problems = win.panels.index(win._later["problems"])
    assert win.tab_bar.tabText(problems).startswith("Problems (")


def test_a_tab_asked_for_before_it_is_made_is_made_at_once_and_shown(qtbot, repo: Path,
                                                                     data_dir: Path) -> None:
    win = MainWindow(repo, make_settings(), watch=False, update_on_open=False, semantic=False)
    qtbot.addWidget(win)
    stand_in = win._later["proposals"]
    assert stand_in.real is None and isinstance(win.panels[6], LaterPanel)
    win.resize(1400, 850)
    win.show()
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=3000)
    qtbot.keyClick(win, Qt.Key.Key_7, Qt.KeyboardModifier.ControlModifier)  # View ▸ Proposals
    real = stand_in.real
    assert real is not None
    assert win.center.currentIndex() == 6 and win.center.currentWidget() is real.tab_widget()
    assert win.tab_bar.currentIndex() == 6 and win.front() is real
    with qtbot.waitSignal(win.index_did_update, timeout=20_000):
        win.reindex()
    # the queue loads in front, as the tab would have loaded when made at start
    qtbot.waitUntil(lambda: win.tab_bar.tabText(6).startswith("Proposals ("), timeout=10_000)


def test_a_stand_in_keeps_the_last_change_for_its_panel(qtbot, repo: Path, data_dir: Path
                                                        ) -> None:
    win = MainWindow(repo, make_settings(), watch=False, update_on_open=False, semantic=False)
    qtbot.addWidget(win)  # (never shown: nothing is made after a paint)
    with qtbot.waitSignal(win.index_did_update, timeout=20_000):
        win.reindex()
    stand_in = win._later["problems"]
    assert stand_in.real is None
    index = win.panels.index(stand_in)
    assert win.tab_bar.tabText(index) == "Problems"  # (no count: nothing heard it yet)
    problems = win.problems  # made now: told of the update it missed
    assert stand_in.real is problems
    assert win.tab_bar.tabText(index).startswith("Problems (")
