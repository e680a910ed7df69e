"""How soon a running window sees an outside change through its watch (issue 23 #2, issue
26 #5): a 10-file commit on the checked-out branch until the table's search finds it, a new
agent/* tip written with git's plumbing (as `factdesk mcp` writes) until the Proposals tab
lists it, and what a quiet moment costs (the watch tells nothing: no update runs).
Changes the corpus given (each commit is reset afterwards, each ref deleted): give it a copy.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/gui_watch_bench.py --kb DIR [--runs 5]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))
from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QApplication

FACT = """---
type: observation
confidence: 0.7
sources: 1
---
# Gui watch bench {word} fact {k}

Written by bench/gui_watch_bench.py.
"""


def _git(kb: Path, *args: str, data: bytes | None = None, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", "-C", str(kb), *args], check=True, capture_output=True,
                          input=data, env={**os.environ, **(env or {})}).stdout.decode().strip()


def _pump_until(test: object, limit: float = 60.0) -> float:
    started = time.perf_counter()
    while not test():  # type: ignore[operator]
        QCoreApplication.processEvents()
        if time.perf_counter() - started > limit:
            raise SystemExit(f"not seen after {limit} s")
        time.sleep(0.002)
    return time.perf_counter() - started


def _agent_tip(kb: Path, ref: str, run: int) -> str:
    env = {"GIT_INDEX_FILE": str(Path(tempfile.mkdtemp()) / "index"),
           "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench-0000beef+learn@agents.knomit.io",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench-0000beef@agents.knomit.io"}
    blob = _git(kb, "hash-object", "-w", "--stdin", data=FACT.format(word=f"tip{run}", k=0).encode())
    _git(kb, "read-tree", "HEAD", env=env)
    _git(kb, "update-index", "--add", "--cacheinfo", f"100644,{blob},kb/gui-watch/t{run}.md", env=env)
    tree = _git(kb, "write-tree", env=env)
    sha = _git(kb, "commit-tree", tree, "-p", "HEAD", "-m", f"learn: bench tip {run}", env=env)
    _git(kb, "update-ref", ref, sha)
    return sha


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    kb = args.kb.resolve()
    os.environ.setdefault("FACTDESK_DATA_DIR", tempfile.mkdtemp())
    app = QApplication.instance() or QApplication([])
    from factdesk.gui.app import make_settings
    from factdesk.gui.main_window import MainWindow

    win = MainWindow(kb, make_settings(), watch=True, update_on_open=False, semantic=False)
    win.resize(1366, 768)
    win.show()
    updates: list[float] = []
    win.index_did_update.connect(lambda *_a: updates.append(time.perf_counter()))
    win.reindex()
    _pump_until(lambda: updates, 1800)
    _pump_until(lambda: win.watcher.live or win.watcher.trouble is not None)
    print(f"watch live: {win.watcher.live} ({win.watcher.trouble or 'ok'})", flush=True)
    win.center.setCurrentWidget(win.proposals)
    _pump_until(lambda: win.proposals.loaded, 600)
    quiet, commit, tip = [], [], []
    for run in range(args.runs):
        settle = time.perf_counter()
        while time.perf_counter() - settle < 2.0:  # (the last run's reset, taken in)
            QCoreApplication.processEvents()
            time.sleep(0.01)
        before = len(updates)
        idle_start = time.perf_counter()
        while time.perf_counter() - idle_start < 1.0:  # a quiet second: no update may run
            QCoreApplication.processEvents()
            time.sleep(0.01)
        quiet.append(len(updates) - before)
        word = f"zq{run}watch"
        win.search.line.setText(word)  # (each index update applies the query again)
        win.apply_query(word)
        folder = kb / "kb" / "gui-watch" / f"r{run}"
        folder.mkdir(parents=True)
        for k in range(10):
            (folder / f"{k:08x}.md").write_text(FACT.format(word=word, k=k))
        _git(kb, "add", "kb/gui-watch")
        _git(kb, "-c", "user.name=bench", "-c", "user.email=bench@example.org", "commit", "-qm",
             f"learn: gui watch bench {run}")
        landed = time.perf_counter()
        seen = len(updates)
        commit.append(_pump_until(lambda: win.table.model.rowCount() == 10))
        first = next((u - landed for u in updates[seen:]), float("nan"))
        print(f"  run {run}: first index update {first:.3f} s after the commit, "
              f"{len(updates) - seen} updates until searchable", flush=True)
        ref = f"refs/heads/agent/bench-0000beef-{run}"
        sha = _agent_tip(kb, ref, run)
        landed = time.perf_counter()
        _pump_until(lambda sha=sha: any(sha in row.shas for row in win.proposals.items))
        tip.append(time.perf_counter() - landed)
        print(f"  run {run}: commit searchable {commit[-1]:.3f} s, agent tip listed "
              f"{tip[-1]:.3f} s, updates in a quiet second {quiet[-1]}", flush=True)
        _git(kb, "update-ref", "-d", ref)
        _git(kb, "reset", "-q", "--hard", "HEAD~1")
    print(f"median: commit searchable {statistics.median(commit):.3f} s, agent tip in the "
          f"Proposals tab {statistics.median(tip):.3f} s, updates in a quiet second "
          f"{max(quiet)} (max)", flush=True)
    win.close()
    app.quit()


if __name__ == "__main__":
    main()
