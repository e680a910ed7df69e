"""Speed of the agents' records (issue 16): computed once, then read from the index's cache
for the same index version; the Agents tab filled from it; and a registry change's
re-check of the authority findings (index/authority_recheck.py) against a rebuild.

    .venv/bin/python bench/agents_bench.py --facts 10000
    .venv/bin/python bench/agents_bench.py --kb COPY-OF-A-100k-CORPUS     (the issue's size)

`--kb` works on the corpus given, which it changes (a registry commit): give it a copy
(`cp -a`, so its index comes along). Targets (issue 16, at 100,000 facts): the Agents tab
filled < 1 s after it is opened (`tab_filled_s`: from the tab's request to its rows, the
records read from the cache its background computation left); a registry change's
re-check of authority findings < 2 s (`recheck_update_s`: the index update after a
`set-type` commit, which re-checks in place; `rebuild_s` for comparison, with --rebuild).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("FACTDESK_DATA_DIR", tempfile.mkdtemp(prefix="agents-bench-"))
from factdesk.cli.agents_cmds import records
from factdesk.core import open_corpus
from factdesk.curation import Curation
from factdesk.curation.gitwrite import Identity
from factdesk.index.indexer import Indexer
from factdesk.reflect.agents import Thresholds

MAKE = Path(__file__).resolve().parents[2] / "shared" / "bench" / "make_corpus.py"


def tab_filled(ix: Indexer, day: date) -> tuple[float, int]:
    """Seconds from the Agents tab's request to its filled table (the records cached), and
    how many rows it shows."""
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from factdesk.gui.agents_panel import AgentsPanel

    app = QApplication.instance() or QApplication([])
    panel = AgentsPanel(ix, None, today=day)  # type: ignore[arg-type]  # (no action runs)
    panel.resize(1000, 700)
    panel.show()
    loop = QEventLoop()
    panel.did_load.connect(loop.quit)
    QTimer.singleShot(120_000, loop.quit)
    t0 = time.perf_counter()
    panel.tab_did_show()
    loop.exec()
    app.processEvents()
    seconds = time.perf_counter() - t0
    rows = panel.model.rowCount()
    panel.close_worker()
    panel.close()
    return seconds, rows


def run(kb: Path, *, agent: str, rebuild: bool) -> dict[str, object]:
    ix = open_corpus(kb)
    day = date.today()
    t0 = time.perf_counter()
    stats = ix.update()
    t_index = time.perf_counter() - t0
    t0 = time.perf_counter()
    data, hit = records(ix, today=day, thresholds=Thresholds())
    t_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    ix.update()
    again, hit2 = records(ix, today=day, thresholds=Thresholds())
    t_cached = time.perf_counter() - t0
    assert hit2 and again == data
    filled, rows = tab_filled(ix, day)
    cur = Curation(ix, Identity("ana", "ana@example.org"), update_index=False)
    result: dict[str, object] = {
        "facts": stats.facts, "agents": len(data), "index_update_s": round(t_index, 3),
        "index_mode": stats.mode, "first_s": round(t_first, 3), "first_was_cached": hit,
        "cached_s": round(t_cached, 3), "tab_filled_s": round(filled, 3), "tab_rows": rows,
        "tab_target_s": 1.0, "recheck_target_s": 2.0, "set_type": []}
    for one in agent.split(","):
        before = next((a["type"] for a in data if a["id"] == one), None)
        target = "persona" if before != "persona" else "tool"
        t0 = time.perf_counter()
        changes = cur.set_type(one, target, "bench: a promotion")
        t_commit = time.perf_counter() - t0
        t0 = time.perf_counter()
        after = ix.update(hint=changes.paths_touched)
        t_recheck = time.perf_counter() - t0
        r = after.rechecked
        result["set_type"].append({  # type: ignore[attr-defined]
            "change": f"{one} {before} -> {target}", "commit_s": round(t_commit, 3),
            "recheck_update_s": round(t_recheck, 3), "mode": after.mode,
            "narrowed": r.narrowed if r else None,
            "findings_appeared": r.appeared if r else None,
            "findings_disappeared": r.disappeared if r else None,
            "rows_rewritten": len(r.rows) if r else None})
    if rebuild:
        t0 = time.perf_counter()
        ix.update(rebuild=True)
        result["rebuild_s"] = round(time.perf_counter() - t0, 3)
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--commits", type=int, default=0, help="default: facts // 20")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--kb", type=Path, default=None,
                    help="an existing corpus to use (it is changed: give a copy)")
    ap.add_argument("--agent", default="codex,memory-graph",
                    help="the agents whose type changes, one after the other (comma-separated)")
    ap.add_argument("--rebuild", action="store_true", help="also time a rebuild")
    args = ap.parse_args()
    if args.kb is not None:
        print(json.dumps(run(args.kb, agent=args.agent, rebuild=args.rebuild), indent=2))
        return
    commits = args.commits or max(200, args.facts // 20)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "kb"
        subprocess.run([sys.executable, str(MAKE), "--facts", str(args.facts), "--commits",
                        str(commits), "--seed", str(args.seed), "--out", str(out), "--quiet",
                        "--now", "2026-11-30"], check=True)
        result = run(out, agent=args.agent, rebuild=args.rebuild)
        result["commits"] = commits
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
