#!/usr/bin/env python3
"""Render the main window offscreen to docs/screenshots/ at 1366×768, in the light theme
and again in the dark one (`<name>.png` and `<name>-dark.png`); every tab of the demo
(`tab-<caption>.png`, an item selected) at 1× and again at 1.5× the font
(`tab-<caption>[-dark]-font150.png`, issue 24); demo, real, inspector,
history, overview, and the curation screens on the demo corpus: relabel (the editor),
mislabels, hypotheses, transitions, agents, messages (the tabs); proposals (the review queue
of the real corpus's agent branch).

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/screenshots.py

(a) the demo corpus (factdesk.demo), (b) the real corpus cloned from
../shared/corpora/agentic-engineering-kb.bundle; a missing source is skipped with a reason.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
BUNDLE = ROOT.parent / "shared" / "corpora" / "agentic-engineering-kb.bundle"
SIZE = (1366, 768)  # (a common laptop screen: issue 18)
#: the theme of the pictures being taken: "" (light) or "-dark"
SUFFIX = [""]
#: the application font's scale of the pictures being taken (issue 24: 1x and 1.5x)
FONT = [1.0]


def _out(name: str) -> Path:
    return OUT / f"{name}{SUFFIX[0]}{'-font150' if FONT[0] != 1.0 else ''}.png"


def _slug(caption: str) -> str:
    return caption.split(" (")[0].lower().replace(" ", "-")


def tab_shots(win: object, app: object) -> None:
    """Every tab of the window at 1366×768, in front with its second item selected (as J
    twice leaves it): `tab-<caption>.png` (issue 24: every tab, both themes, 1x and 1.5x)."""
    from PySide6.QtWidgets import QAbstractItemView

    win, _conn = _window(win)
    win.resize(*SIZE)
    for panel in win.panels:
        tab = panel.tab_widget()
        win.center.setCurrentWidget(tab)
        for _ in range(120):  # (a queue reads in the background: up to 6 s)
            views = [v for v in tab.findChildren(QAbstractItemView)
                     if v.isVisible() and v.model() is not None]
            if not views or max(v.model().rowCount() for v in views) > 0:
                break
            _pause(app, 50)
        panel.step(1)
        panel.step(1)
        _pause(app, 600)  # (its detail pane reads what it shows)
        name = f"tab-{_slug(panel.caption)}"
        win.grab().save(str(_out(name)))
        print(f"wrote {_out(name)}")
    win.center.setCurrentIndex(0)


def _wait(app: object, signal: object, timeout_ms: int = 120_000) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    signal.connect(loop.quit)  # type: ignore[attr-defined]
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()


def _pause(app: object, ms: int) -> None:
    """Let the event loop run for `ms` milliseconds (background answers arrive)."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def _window(win: object) -> tuple[Any, sqlite3.Connection]:
    """The main window and its index connection."""
    from factdesk.gui.main_window import MainWindow

    assert isinstance(win, MainWindow) and win.session.conn is not None
    return win, win.session.conn


def curation_shots(win: object, app: object) -> None:
    """The relabel editor on a hedged observation, then each curation tab."""
    win, conn = _window(win)
    row = conn.execute("SELECT id, path FROM facts WHERE type = 'observation' AND status = 'live' "
                       "AND (title LIKE '%probably%' OR title LIKE '%likely%' OR body LIKE '%probably%') "
                       "ORDER BY path LIMIT 1").fetchone()
    if row is not None:
        win.show_fact(row[0])
        win.open_relabel([row[1]])  # (it opens once its files are read in the background)
        for _ in range(400):
            if win.relabel_dialog is not None and win.relabel_dialog.isVisible():
                break
            _pause(app, 25)
        dialog = win.relabel_dialog
        if dialog is not None:
            dialog.set_field("type", "hypothesis")
            dialog.set_field("settle_by", "2027-03-31")
            dialog.reason_edit.setText("hedged wording: a guess, not an observation")
            dialog.update_preview()
            _pause(app, 300)  # (its preview is worked out in the background too)
            dialog.grab().save(str(_out("relabel")))
            print(f"wrote {_out('relabel')}")
            dialog.reject()
    win.center.setCurrentWidget(win.overview)
    for _ in range(5):
        app.processEvents()  # type: ignore[attr-defined]
    win.grab().save(str(_out("overview")))
    print(f"wrote {_out('overview')}")
    for name, panel, tab, signal in (
            ("mislabels", win.mislabels, win.mislabels, win.mislabels.queue_did_load),
            ("hypotheses", win.settlement, win.settlement, win.settlement.did_load),
            ("transitions", win.transitions, win.transitions_tab, win.transitions.did_load)):
        win.center.setCurrentWidget(tab)
        _wait(app, signal)
        for _ in range(5):
            app.processEvents()  # type: ignore[attr-defined]
        win.grab().save(str(_out(name)))
        print(f"wrote {_out(name)} ({type(panel).__name__})")
    win.center.setCurrentIndex(0)


def agents_shot(win: object, app: object) -> None:
    """The Agents tab at 1366x768 (issue 16), the agent with the most settled predictions
    selected: its record, suggestion and reliability chart."""
    win, _conn = _window(win)
    panel = win.agents
    size = win.size()
    win.resize(1366, 768)
    win.center.setCurrentWidget(panel)
    while panel.loaded is None or panel.loading:
        _wait(app, panel.did_load, 60_000)
    if panel.proposals is None:  # (read after the records)
        _wait(app, panel.proposals_did_load, 60_000)
    best = max(panel.model.rows, key=lambda r: (r.get("settled", 0), r["facts"]), default=None)
    if best is not None:
        panel.select_agent(best["id"])
    for _ in range(5):
        app.processEvents()  # type: ignore[attr-defined]
    win.grab().save(str(_out("agents")))
    print(f"wrote {_out('agents')} ({panel.model.rowCount()} agents)")
    win.resize(size)
    win.center.setCurrentIndex(0)
def messages_shot(win: object, app: object) -> None:
    """The Messages tab at 1366×768 (issue 17): threads by pair of agents, a message that
    references facts, and the inspector's backlinks (the query includes messages)."""
    win, _conn = _window(win)
    size = win.size()
    win.resize(1366, 768)
    win.set_query("include:messages")
    panel = win.messages
    win.center.setCurrentWidget(panel)
    _wait(app, panel.messages_did_load, 20_000)
    path = next((m.path for m in panel._messages.values() if len(m.referenced_memory_ids) > 1), None)
    if path is not None:
        panel.select_message(path)
        if any("reading" in panel.refs.item(i).text() for i in range(panel.refs.count())):
            _wait(app, panel.titles_did_load, 10_000)  # (the facts' titles: read on a worker)
        message = panel.current_message()
        if message is not None and panel.backlinks is not None:
            fact = win.nav.id_of(message.referenced_memory_ids[0])
            if fact is not None:
                win.inspector.show_fact(fact)
                win.inspector.tabs.setCurrentWidget(panel.backlinks)
                _wait(app, panel.backlinks.backlinks_did_load, 10_000)
    for _ in range(5):
        app.processEvents()  # type: ignore[attr-defined]
    win.grab().save(str(_out("messages")))
    print(f"wrote {_out('messages')} (1366×768)")
    win.inspector.tabs.setCurrentIndex(0)
    win.set_query("")
    win.center.setCurrentIndex(0)
    win.resize(size)


def history_shot(win: object, app: object) -> None:
    """The inspector's History tab on the fact changed most often: the diff of its last change."""
    win, conn = _window(win)
    row = conn.execute("SELECT f.id FROM changes c JOIN facts f ON f.path = c.path "
                       "WHERE f.status = 'live' AND c.first_parent "
                       "GROUP BY f.id ORDER BY count(*) DESC, f.path LIMIT 1").fetchone()
    if row is None:
        print("skipping history.png: no fact has a history")
        return
    win.show_fact(row[0])
    history = win.inspector.history
    win.inspector.tabs.setCurrentWidget(history)  # its diff is worked out on a thread
    while history.comparing:
        _wait(app, history.diff_did_show, 10_000)
    app.processEvents()  # type: ignore[attr-defined]
    win.inspector.grab().save(str(_out("history")))
    print(f"wrote {_out('history')}")
    win.inspector.tabs.setCurrentIndex(0)


def proposals_shot(win: object, app: object) -> None:
    """The Proposals tab on the agent branch: every badge in, a proposal with an error shown."""
    from PySide6.QtCore import QEventLoop, QTimer

    win, _conn = _window(win)
    panel = win.proposals
    win.center.setCurrentWidget(panel)
    if not panel.loaded:
        _wait(app, panel.queue_did_load)
    if not panel.checks_done:
        _wait(app, panel.checks_did_finish)
    model = panel.list.model()  # (a model/view: the row whose checks found an error)
    row = next((n for n in range(model.rowCount())
                if any("✗" in str(model.index(n, c).data() or "") for c in range(model.columnCount()))), 0)
    panel.list.setCurrentIndex(model.index(row, 0))
    loop = QEventLoop()
    QTimer.singleShot(1500, loop.quit)  # (the diff and the on-demand checks come in)
    loop.exec()
    win.grab().save(str(_out("proposals")))
    print(f"wrote {_out('proposals')} ({len(panel.items)} proposals)")
    win.center.setCurrentIndex(0)


def render(repo: Path, name: str, workdir: Path, *, query: str = "", tabs: bool = False,
           inspector_shot: bool = False, curation: bool = False, proposals: bool = False) -> None:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from factdesk.gui.app import make_settings
    from factdesk.gui.main_window import MainWindow

    os.environ["FACTDESK_DATA_DIR"] = str(workdir / f"data-{name}{SUFFIX[0]}{FONT[0]}")
    app = QApplication.instance() or QApplication([])
    app.setStyle("Fusion")
    from PySide6.QtGui import QFont

    if not hasattr(render, "font"):
        render.font = QFont(app.font())  # type: ignore[attr-defined]
    font = QFont(render.font)  # type: ignore[attr-defined]
    font.setPointSizeF(font.pointSizeF() * FONT[0])
    app.setFont(font)
    settings = make_settings()
    settings.setValue("view/theme", "dark" if SUFFIX[0] else "light")  # (gui/theme.py)
    win = MainWindow(repo, settings, watch=False, update_on_open=False, semantic=False)
    win.resize(*SIZE)
    win.show()
    loop = QEventLoop()
    win.index_did_update.connect(loop.quit)
    QTimer.singleShot(120_000, loop.quit)
    win.reindex()
    loop.exec()
    if query:
        win.set_query(query)
    win.table.move(1)
    win.table.move(1)
    for _ in range(5):
        app.processEvents()
    OUT.mkdir(parents=True, exist_ok=True)
    if FONT[0] != 1.0:  # (at 1.5x: the tabs only)
        tab_shots(win, app)
        win.close()
        return
    win.grab().save(str(_out(name)))
    print(f"wrote {_out(name)} ({win.table.model.rowCount()} rows)")
    if inspector_shot:
        win.inspector.grab().save(str(_out("inspector")))
        print(f"wrote {_out('inspector')}")
        history_shot(win, app)
    if curation:
        curation_shots(win, app)
        agents_shot(win, app)
        messages_shot(win, app)
    if proposals:
        proposals_shot(win, app)
    if tabs:  # (last: a tab's selection may filter the table, as Agents' does)
        tab_shots(win, app)
    win.close()


def main() -> int:
    for scale in (1.0, 1.5):
        FONT[0] = scale
        for suffix in ("", "-dark"):
            SUFFIX[0] = suffix
            shoot()
    return 0


def shoot() -> None:
    with tempfile.TemporaryDirectory(prefix="factdesk-shots-") as tmp:
        workdir = Path(tmp)
        try:
            from factdesk.demo import ensure_demo_workspace
        except ImportError as exc:
            print(f"skipping demo.png: factdesk.demo is not available ({exc})")
        else:
            repo = Path(ensure_demo_workspace(workdir / "demo"))
            render(repo, "demo", workdir, tabs=True, inspector_shot=True, curation=True)
        if FONT[0] != 1.0:
            return
        if not BUNDLE.exists():
            print(f"skipping real.png: {BUNDLE} is absent")
        else:
            real = workdir / "agentic-engineering-kb"
            subprocess.run(["git", "clone", "-q", str(BUNDLE), str(real)], check=True)
            render(real, "real", workdir, proposals=True)


if __name__ == "__main__":
    sys.exit(main())
