"""The child process of tests/gui/test_hostile_subprocess.py (RELIABILITY H01/H02/H08/H09, §3.8).

    python tests/gui/hostile_child.py REPO OUT LIMIT_BYTES PATH [PATH ...]

Caps its own address space at LIMIT_BYTES (0: no cap) *before* Qt is imported, opens the real
main window on REPO (offscreen), and for each fact PATH: selects it in the table, shows the
tooltips of its table cells and inspector badges, hovers and clicks every link of the rendered
body with the real mouse, opens its Refs, Problems and History tabs, and grabs the window to
OUT/<n>.png. Web links are "confirmed" and `QDesktopServices.openUrl` is replaced by a recorder,
so nothing leaves the process. Prints one JSON report as the last line of stdout and exits 0.
A regression (a file read into memory, an abort, a freeze) shows as a non-zero exit, a kill by
the parent's timeout, or a report the parent rejects.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
from pathlib import Path
from typing import Any


def vm_status() -> dict[str, int]:
    """VmPeak, VmSize, VmHWM and VmRSS of this process, in KiB."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmPeak", "VmSize", "VmHWM", "VmRSS"):
            out[key] = int(value.split()[0])
    return out


def main(argv: list[str]) -> int:
    repo, out, limit = Path(argv[0]), Path(argv[1]), int(argv[2])
    paths = argv[3:]
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    # a frozen child ends itself (SIGALRM), even if the parent's kill only reached strace
    signal.alarm(int(os.environ.get("HOSTILE_CHILD_ALARM", "200")))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["FACTDESK_SEMANTIC"] = "off"

    report: dict[str, Any] = {"limit": limit, "python_opens": [], "connects": [], "facts": [],
                              "opened_urls": [], "confirmed_urls": [], "warnings": []}
    started = time.perf_counter()

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and isinstance(args[0], (str, bytes)):
            report["python_opens"].append(os.fsdecode(args[0]))
        elif event == "socket.connect":
            report["connects"].append(repr(args[1]))

    sys.addaudithook(audit)

    from PySide6.QtCore import QEvent, QPoint, Qt, QtMsgType, QUrl, qInstallMessageHandler
    from PySide6.QtGui import QDesktopServices, QHelpEvent, QTextCursor
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QLabel, QToolTip

    def on_message(kind: QtMsgType, _context: object, text: str) -> None:
        if kind not in (QtMsgType.QtDebugMsg, QtMsgType.QtInfoMsg) and \
                not text.startswith("This plugin does not support"):
            report["warnings"].append(text)

    qInstallMessageHandler(on_message)
    app = QApplication([sys.argv[0]])

    from factdesk.gui import inspector as inspector_module
    from factdesk.gui.app import make_settings
    from factdesk.gui.main_window import MainWindow
    from factdesk.gui.safe_browser import SafeTextBrowser

    def confirm(_parent: object, url: QUrl) -> bool:
        report["confirmed_urls"].append(url.toString())
        return True

    inspector_module.confirm_open_url = confirm  # type: ignore[assignment]
    QDesktopServices.openUrl = lambda url: report["opened_urls"].append(url.toString())  # type: ignore[assignment]

    def wait(cond: Any, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not cond():
            if time.monotonic() > deadline:
                return False
            app.processEvents()
            time.sleep(0.005)
        return True

    win = MainWindow(repo, make_settings(), watch=False, update_on_open=False, semantic=False)
    win.resize(1400, 850)
    win.show()
    updated: list[object] = []
    win.index_did_update.connect(updated.append)
    win.reindex()
    if not wait(lambda: bool(updated), 120):
        print("index update did not finish", file=sys.stderr)
        return 3
    report["window_ready_s"] = round(time.perf_counter() - started, 3)
    report["vm_after_open"] = vm_status()
    conn = win.session.conn
    assert conn is not None
    table = win.table
    view = table.view
    body = win.inspector.body
    hovered: list[str] = []
    clicked: list[str] = []
    body.highlighted.connect(lambda url: hovered.append(url.toString()))
    body.anchorClicked.connect(lambda url: clicked.append(url.toString()))

    for n, path in enumerate(paths):
        fact: dict[str, Any] = {"path": path}
        report["facts"].append(fact)
        row = conn.execute("SELECT id, title FROM facts WHERE path = ?", (path,)).fetchone()
        if row is None:
            fact["missing"] = True
            continue
        t0 = time.perf_counter()
        win.show_fact(int(row["id"]))
        app.processEvents()
        win.repaint()
        fact["select_s"] = round(time.perf_counter() - t0, 3)
        fact["inspector_title"] = win.inspector.title.text()[:200]
        fact["inspector_title_len"] = len(win.inspector.title.text())
        fact["body_rendered_chars"] = len(body.toPlainText())
        fact["body_head"] = body.toPlainText()[:120]
        # tooltips: the table's cells (the view's own tooltip path) and the inspector badges
        tips = []
        model_row = table.model.row_of(int(row["id"]))
        fact["in_table"] = model_row is not None and model_row >= 0
        if fact["in_table"]:
            for col in range(table.model.columnCount()):
                index = table.model.index(model_row, col)
                view.scrollTo(index)
                rect = view.visualRect(index)
                if rect.isEmpty():
                    continue
                pos = rect.center()
                t0 = time.perf_counter()
                QApplication.sendEvent(view.viewport(), QHelpEvent(
                    QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos)))
                app.processEvents()
                tips.append((QToolTip.text()[:300], round(time.perf_counter() - t0, 3)))
                QToolTip.hideText()
        for badge in win.inspector.badges.values():
            if badge.toolTip():
                QToolTip.showText(badge.mapToGlobal(QPoint(2, 2)), badge.toolTip(), badge)
                app.processEvents()
                tips.append((QToolTip.text()[:300], 0.0))
                QToolTip.hideText()
        fact["tooltips"] = tips
        # what a person sees, before any link is followed away from the fact
        view.scrollTo(table.model.index(max(model_row or 0, 0), 0))
        rich = [w.objectName() for w in win.findChildren(QLabel)
                if w.textFormat() != Qt.TextFormat.PlainText and w.objectName() != "qt_msgbox_label"]
        fact["rich_labels"] = rich
        png = out / f"{n}.png"
        win.grab().save(str(png))
        fact["png"] = str(png)
        # every link of the rendered body: hovered, then clicked, with the real mouse
        win.inspector.tabs.setCurrentWidget(body)
        links = []
        block = body.document().begin()
        while block.isValid() and len(links) < 50:
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                if frag.isValid() and frag.charFormat().isAnchor():
                    links.append((frag.position(), frag.length(), frag.charFormat().anchorHref()))
                it += 1
            block = block.next()
        fact["links"] = [href for _, _, href in links]
        for position, length, href in links:
            # A background load finishing (the transitions panel, say) may re-render the
            # body under the mouse: the link is hovered again, up to three times, until
            # the browser reports it (a vetting failure still shows in the clicked list).
            for _attempt in range(3):
                if win.inspector.fact_id != int(row["id"]):  # a fact link was followed
                    win.show_fact(int(row["id"]))
                    win.inspector.tabs.setCurrentWidget(body)
                    app.processEvents()
                cursor = QTextCursor(body.document())
                cursor.setPosition(position)
                body.setTextCursor(cursor)
                body.ensureCursorVisible()
                app.processEvents()
                start = body.cursorRect(cursor)
                cursor.setPosition(position + length)
                end = body.cursorRect(cursor)
                # the middle of the link text (its first character when it wraps)
                x = (start.x() + end.x()) // 2 if end.top() == start.top() else start.x() + 3
                point = QPoint(x, start.center().y())
                QTest.mouseMove(body.viewport(), QPoint(1, 1))  # off the link first
                QTest.mouseMove(body.viewport(), point)
                app.processEvents()
                if hovered and hovered[-1] == href:
                    break
            QTest.mouseClick(body.viewport(), Qt.MouseButton.LeftButton, pos=point)
            app.processEvents()
        # the other inspector tabs, the history with a diff of every version shown
        for tab in (win.inspector.refs, win.inspector.problems, win.inspector.other,
                    win.inspector.history):
            win.inspector.tabs.setCurrentWidget(tab)
            app.processEvents()
        history = win.inspector.history
        while history.comparing:  # the diff of the newest version, shown on opening the tab
            app.processEvents()
        commits = history.commits
        t0 = time.perf_counter()
        commits.selectAll()
        app.processEvents()
        fact["history_s"] = round(time.perf_counter() - t0, 3)  # the window's wait
        while history.comparing:  # the diff itself, worked out on a thread
            app.processEvents()
            time.sleep(0.005)
        fact["diff_s"] = round(time.perf_counter() - t0, 3)
        fact["history_rows"] = commits.topLevelItemCount()
        fact["diff_chars"] = len(history.diff.toPlainText())
        fact["diff_head"] = history.diff.toPlainText()[:120]
        win.inspector.tabs.setCurrentWidget(body)

    report["hovered"] = hovered
    report["clicked"] = clicked
    report["blocked_resources"] = sorted({r for b in win.findChildren(SafeTextBrowser)
                                          for r in b.blocked_resources})
    report["load_resource_overridden"] = type(body).loadResource is SafeTextBrowser.loadResource
    report["vm"] = vm_status()
    report["total_s"] = round(time.perf_counter() - started, 3)
    win.close()
    print(json.dumps(report))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
