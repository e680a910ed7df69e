#!/usr/bin/env python3
"""The Proposals tab at 100,000 facts and 500 proposals, measured through the real window
(offscreen; issue 13: "the Proposals tab lists every proposal < 2 s after it is opened,
with the rule badges streaming in as they are computed (every badge within 60 s)"; "accept
or reject of one proposal, key to queue advanced").

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/proposals_gui_bench.py --kb PATH [--no-doc]

PATH: a corpus with agent branches and a current index (`factdesk index --kb PATH` first),
by default bench/out/kb100000-p500, made when missing with
`../shared/bench/make_corpus.py --facts 100000 --proposals 500` and indexed. The bench
writes (an accept, then its undo): it refuses a corpus with uncommitted changes and puts
the branch back where it found it.

Each run opens a fresh `MainWindow` (1400x850, no watcher, no background reindex) and at
once brings the Proposals tab to the front, the way a reviewer opens it:
* list: from the tab switch until the queue's rows are on screen (the tab's own
  `load_queue` on its worker, the rows filled, the list's viewport painted);
* badges: from the tab switch until `check_all` has checked every proposal (each badge
  painted as it came);
* accept: A pressed on the first clean proposal (QTest.keyClick), until the queue has
  moved to the next row (the decision runs on the writer lane after that), and until the
  commit landed (`decision_did_finish`), each after a drained lane; then Ctrl+Z.
Results are printed as markdown and (unless --no-doc) written as the section
"## Proposals tab at 100,000 facts" at the end of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from doc_sections import replace_section

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
SECTION = "## Proposals tab at 100,000 facts"
MAKE_CORPUS = ROOT.parent / "shared" / "bench" / "make_corpus.py"
TARGET_LIST_S = 2.0
TARGET_BADGES_S = 60.0


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def ensure_corpus(kb: Path) -> None:
    if kb.exists():
        return
    if not MAKE_CORPUS.exists():
        raise SystemExit(f"{kb} is missing and {MAKE_CORPUS} is absent: pass --kb")
    subprocess.run([sys.executable, str(MAKE_CORPUS), "--facts", "100000", "--proposals", "500",
                    "--out", str(kb)], check=True)
    subprocess.run([sys.executable, "-m", "factdesk", "index", "--kb", str(kb)], check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    ap.add_argument("--kb", type=Path, default=ROOT / "bench" / "out" / "kb100000-p500")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--accepts", type=int, default=5)
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args()
    kb = args.kb.resolve()
    ensure_corpus(kb)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["FACTDESK_DATA_DIR"] = tempfile.mkdtemp(prefix="factdesk-propbench-")
    os.environ["FACTDESK_SEMANTIC"] = "off"
    os.environ.setdefault("FACTDESK_CURATOR_NAME", "bench")
    os.environ.setdefault("FACTDESK_CURATOR_EMAIL", "bench@factdesk.invalid")

    from PySide6.QtCore import QEvent, QEventLoop, QObject, Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from factdesk.core import open_corpus
    from factdesk.gui.app import make_settings
    from factdesk.gui.main_window import MainWindow

    if git(kb, "status", "--porcelain", "--untracked-files=no"):
        print("the corpus has uncommitted changes; refusing to benchmark on it", file=sys.stderr)
        return 2
    start_head = git(kb, "rev-parse", "HEAD")
    print(f"index: {open_corpus(kb).update().mode}", file=sys.stderr)
    app = QApplication.instance() or QApplication(sys.argv[:1])

    def run_loop(ready: Any, timeout: float = 180.0, what: str = "") -> None:
        loop = QEventLoop()
        poll = QTimer()
        poll.setInterval(1)
        poll.timeout.connect(lambda: loop.quit() if ready() else None)
        deadline = time.monotonic() + timeout
        poll.start()
        while not ready():
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {what}")
            loop.exec()
        poll.stop()

    class PaintSpy(QObject):
        """Notes when the list's viewport paints with rows in it."""

        def __init__(self, has_rows: Any, hits: list[float]) -> None:
            super().__init__()
            self._has_rows, self._hits = has_rows, hits

        def eventFilter(self, _obj: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and self._has_rows():
                self._hits.append(time.perf_counter())
            return False

    results: dict[str, Any] = {"loadavg_start": os.getloadavg(), "list": [], "badges": [],
                               "advance": [], "commit": []}
    def idle(window: Any) -> None:
        run_loop(lambda: not window.session.lane.busy, what="an idle lane")

    def one_run(run: int, accepts: int) -> int:
        window = MainWindow(kb, make_settings(), watch=False, update_on_open=False, semantic=False)
        window.resize(1400, 850)
        window.show()
        panel = window.proposals
        painted: list[float] = []
        spy = PaintSpy(lambda: bool(panel.items), painted)
        panel.list.viewport().installEventFilter(spy)
        t0 = time.perf_counter()
        window.center.setCurrentWidget(panel)
        run_loop(lambda: bool(painted), what="the proposals listed")
        results["list"].append(painted[0] - t0)
        run_loop(lambda: panel.checks_done, timeout=600, what="every badge")
        results["badges"].append(time.perf_counter() - t0)
        shown = len(panel.items)
        print(f"run {run + 1}: {shown} proposals listed in {results['list'][-1]:.2f} s, "
              f"every badge in {results['badges'][-1]:.1f} s", file=sys.stderr)
        panel.list.viewport().removeEventFilter(spy)
        for _ in range(accepts):
            clean = next((n for n in range(panel.model.rowCount())
                          if panel.model.text(n, 3) == "✓ clean"), None)
            if clean is None:
                break
            panel.select_row(clean)
            idle(window)
            first = panel.current_key()
            finished: list[float] = []
            panel.decision_did_finish.connect(lambda _k, f=finished: f.append(time.perf_counter()))
            panel.list.setFocus()
            t0 = time.perf_counter()
            QTest.keyClick(panel.list, Qt.Key.Key_A)
            app.processEvents()
            if panel.current_key() != first:
                results["advance"].append(time.perf_counter() - t0)
            run_loop(lambda f=finished: bool(f), what="the accept's commit")
            results["commit"].append(finished[0] - t0)
            run_loop(lambda: not panel.pending and not panel._loader.running,
                     what="the queue read after the accept")
        for _ in results["commit"]:
            idle(window)
            window.undo()
            idle(window)
        window.close()
        window.deleteLater()
        app.processEvents()
        return shown

    proposals = 0
    for run in range(args.runs):
        proposals = one_run(run, args.accepts if run == args.runs - 1 else 0)
    results["loadavg_end"] = os.getloadavg()
    head = git(kb, "rev-parse", "HEAD")
    if head != start_head:
        print(f"note: HEAD moved {start_head[:10]} -> {head[:10]} (the accepts and their undos "
              "are commits)", file=sys.stderr)

    def ms(values: list[float]) -> str:
        if not values:
            return "—"
        return f"{statistics.median(values) * 1000:.0f} ms (max {max(values) * 1000:.0f})"

    lst, badges = results["list"], results["badges"]
    lines = [
        SECTION, "",
        f"`bench/proposals_gui_bench.py` on `{kb.name}` ({proposals} proposals on its agent "
        f"branches), {args.runs} fresh windows, each opened then switched to the Proposals tab "
        f"at once; {os.cpu_count()} CPUs, load average {results['loadavg_start'][0]:.1f} at "
        f"the start and {results['loadavg_end'][0]:.1f} at the end (shared machine).", "",
        "| measure | median | max | target |", "|---|---|---|---|",
        f"| tab opened → every proposal listed (painted) | {statistics.median(lst):.2f} s | "
        f"{max(lst):.2f} s | < {TARGET_LIST_S:.0f} s {'✓' if max(lst) < TARGET_LIST_S else '✗'} |",
        f"| tab opened → every badge in (`check_all` streamed) | {statistics.median(badges):.1f} s | "
        f"{max(badges):.1f} s | < {TARGET_BADGES_S:.0f} s "
        f"{'✓' if max(badges) < TARGET_BADGES_S else '✗'} |",
        f"| A → the queue moved to the next row | {ms(results['advance'])} | | at once |",
        f"| A → the accept committed (writer lane, index updated) | {ms(results['commit'])} | | "
        "p95 < 500 ms |",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_doc:
        replace_section(DOC, SECTION, text)
    from factdesk.gui.workers import still_running

    if still_running(5.0):  # a window's checks still run (let go): end as the app does
        sys.stdout.flush()
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
