#!/usr/bin/env python3
"""Curation at 100,000 facts: a relabel from keypress to table updated, through the real
widgets, plus the core steps and a 500-fact bulk relabel.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/curation_bench.py
    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/curation_bench.py --kb bench/out/kb10000 --no-doc

The corpus must have a current index (`factdesk index --kb …`). Each run:

1. GUI (the issue's target: p95 < 300 ms): select a live observation in the table, open
   the relabel editor, choose type `pattern`, type a reason (untimed); then timed from the
   Ctrl+Return keypress on the editor until the commit is made, the hinted background
   index update has finished and the table and inspector have repainted with the new type.
   The action is undone (untimed) before the next run.
2. Core (no GUI): `Curation.relabel` alone (validate, write, commit) and
   `Indexer.update(hint=…)` alone.
3. Bulk: one relabel of 500 observations (preview, then commit, then hinted update) and
   its undo.

Every commit the benchmark makes is removed at the end (`git reset --hard` to the start,
then the index follows incrementally). Results are printed and written as the section
"## Curation at 100,000 facts" of docs/benchmarks.md (unless --no-doc).
"""

from __future__ import annotations

import argparse
import json
import os
import random
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
SECTION = "## Curation at 100,000 facts"
TARGET_RELABEL_P95_MS = 300.0


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "median": statistics.median(values), "p95": pct(values, 95),
            "max": max(values)}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    ap.add_argument("--kb", type=Path, default=ROOT / "bench" / "out" / "kb100000")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--bulk", type=int, default=500)
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args()
    kb = args.kb.resolve()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["FACTDESK_DATA_DIR"] = tempfile.mkdtemp(prefix="factdesk-curbench-")
    os.environ["FACTDESK_SEMANTIC"] = "off"
    os.environ.setdefault("FACTDESK_CURATOR_NAME", "bench")
    os.environ.setdefault("FACTDESK_CURATOR_EMAIL", "bench@factdesk.invalid")

    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from factdesk.core import open_corpus
    from factdesk.curation import Curation
    from factdesk.gui.app import make_settings
    from factdesk.gui.main_window import MainWindow

    start_head = git(kb, "rev-parse", "HEAD")
    if git(kb, "status", "--porcelain", "--untracked-files=no"):
        print("the corpus has uncommitted changes; refusing to benchmark on it", file=sys.stderr)
        return 2
    ix = open_corpus(kb)
    print(f"index: {ix.update().mode}", file=sys.stderr)
    conn = ix.connect(readonly=True)
    pool = [r[0] for r in conn.execute(
        "SELECT path FROM facts WHERE type = 'observation' AND status = 'live' AND errors = 0 "
        "AND claim_type_derived = 1 ORDER BY path")]
    conn.close()
    rng = random.Random(7)  # noqa: S311 - a reproducible sample, not a secret
    picks = rng.sample(pool, args.runs * 2 + args.bulk)
    results: dict[str, Any] = {"kb": kb.name, "cpus": os.cpu_count()}

    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow(kb, make_settings(), watch=False, update_on_open=False, semantic=False)
    window.resize(1400, 850)
    window.show()
    for _ in range(20):
        app.processEvents()

    def wait_update(timeout: float = 60.0) -> None:
        done: list[bool] = []
        window.index_did_update.connect(lambda _s: done.append(True))
        deadline = time.monotonic() + timeout
        while not done and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.001)
        if not done:
            raise RuntimeError("no index update")

    def id_of(path: str) -> int:
        assert window.session.conn is not None
        return int(window.session.conn.execute("SELECT id FROM facts WHERE path = ?", (path,)).fetchone()[0])

    try:
        # -- 1. GUI: keypress → table updated ------------------------------------------------------
        gui: list[float] = []
        tails: list[float] = []
        print(f"GUI relabel × {args.runs} …", file=sys.stderr)
        for path in picks[: args.runs]:
            window.show_fact(id_of(path))
            dialog = window.open_relabel([path])
            assert dialog is not None
            dialog.set_field("type", "pattern")
            dialog.reason_edit.setText("benchmark")
            dialog.update_preview()
            app.processEvents()
            idle_wait = time.perf_counter()
            while window.session.is_updating:  # the previous action's tail (git index sync)
                app.processEvents()
                time.sleep(0.001)
            tails.append((time.perf_counter() - idle_wait) * 1000)
            done: list[bool] = []
            window.index_did_update.connect(lambda _s, d=done: d.append(True))
            t0 = time.perf_counter()
            QTest.keyClick(dialog.reason_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
            while not done:
                app.processEvents()
            window.table.view.viewport().repaint()
            window.inspector.repaint()
            app.processEvents()
            gui.append((time.perf_counter() - t0) * 1000)
            if "pattern" not in window.inspector.badges["type"].text():
                raise RuntimeError(f"the inspector did not update for {path}")
            window.undo()
            wait_update()
        results["gui_relabel_ms"] = gui
        results["gui_tail_wait_ms"] = tails

        # -- 2. core steps ------------------------------------------------------------------------
        cur = Curation(open_corpus(kb), update_index=False)
        commit_ms: list[float] = []
        index_ms: list[float] = []
        print(f"core relabel × {args.runs} …", file=sys.stderr)
        for path in picks[args.runs: 2 * args.runs]:
            t0 = time.perf_counter()
            change = cur.relabel([path], {"type": "pattern"}, "benchmark")
            commit_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            cur.indexer.update(hint=change.paths_touched)
            index_ms.append((time.perf_counter() - t0) * 1000)
            undone = cur.undo()
            cur.indexer.update(hint=undone.paths_touched)
        results["core_commit_ms"] = commit_ms
        results["core_index_ms"] = index_ms

        # -- 3. bulk ------------------------------------------------------------------------------
        bulk = picks[2 * args.runs:]
        print(f"bulk relabel of {len(bulk)} …", file=sys.stderr)
        t0 = time.perf_counter()
        cur.relabel(bulk, {"type": "pattern"}, "benchmark", preview=True)
        results["bulk_preview_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        change = cur.relabel(bulk, {"type": "pattern"}, "benchmark")
        results["bulk_commit_s"] = time.perf_counter() - t0
        files = git(kb, "show", "--name-only", "--format=", "HEAD").split()
        results["bulk_files_in_commit"] = len(files)
        t0 = time.perf_counter()
        cur.indexer.update(hint=change.paths_touched)
        results["bulk_index_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        undone = cur.undo()
        cur.indexer.update(hint=undone.paths_touched)
        results["bulk_undo_s"] = time.perf_counter() - t0

    finally:  # whatever happened, leave the corpus as it was
        window.close()
        git(kb, "reset", "-q", "--hard", start_head)
    # -- restore ------------------------------------------------------------------------------
    t0 = time.perf_counter()
    mode = open_corpus(kb).update().mode
    results["restore"] = {"mode": mode, "seconds": time.perf_counter() - t0}

    text = report(results)
    print(text)
    (ROOT / "bench" / "out").mkdir(parents=True, exist_ok=True)
    (ROOT / "bench" / "out" / "curation_results.json").write_text(json.dumps(results, indent=1))
    if not args.no_doc:
        write_doc(text)
    os._exit(0)


def report(r: dict[str, Any]) -> str:
    g, c, i = summary(r["gui_relabel_ms"]), summary(r["core_commit_ms"]), summary(r["core_index_ms"])
    ok = "met" if g["p95"] < TARGET_RELABEL_P95_MS else "MISSED"
    lines = [
        SECTION, "",
        f"`{r['kb']}`, {r['cpus']} cores (shared VM, noisy); command:", "",
        "    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/curation_bench.py", "",
        "| what | median | p95 | max | target |",
        "|---|---|---|---|---|",
        f"| relabel, Ctrl+Return → committed, index updated, table and inspector repainted "
        f"({g['n']} runs) | {g['median']:.0f} ms | {g['p95']:.0f} ms | {g['max']:.0f} ms | "
        f"< {TARGET_RELABEL_P95_MS:.0f} ms p95: {ok} |",
        f"| (before each run: waiting for the previous action's background tail, git's index sync: "
        f"median {statistics.median(r['gui_tail_wait_ms']):.0f} ms) | | | | |",
        f"| `Curation.relabel` alone (validate, write, commit, sync git's index) | {c['median']:.0f} ms "
        f"| {c['p95']:.0f} ms | {c['max']:.0f} ms | |",
        f"| `Indexer.update(hint=…)` after it | {i['median']:.0f} ms | {i['p95']:.0f} ms | "
        f"{i['max']:.0f} ms | |",
        "",
        f"Bulk relabel of {r['bulk_files_in_commit']} facts: preview {r['bulk_preview_s']:.2f} s, "
        f"commit {r['bulk_commit_s']:.2f} s (one commit, {r['bulk_files_in_commit']} files), "
        f"index update {r['bulk_index_s']:.2f} s, undo + update {r['bulk_undo_s']:.2f} s.",
        f"Restoring the corpus afterwards (`git reset --hard`, then an update): "
        f"{r['restore']['mode']}, {r['restore']['seconds']:.1f} s.",
    ]
    return "\n".join(lines)


def write_doc(text: str) -> None:
    replace_section(DOC, SECTION, text)


if __name__ == "__main__":
    sys.exit(main())
