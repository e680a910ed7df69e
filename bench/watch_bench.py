"""How soon a watching process (`factdesk mcp`: `Indexer.read` with a `CorpusWatch`) sees an
outside change (issue 23 #2): a no-op read, a 10-file commit on the checked-out branch until
searchable, a new agent/* tip until told. Changes the corpus given (each commit is reset
afterwards, each ref deleted): give it a copy.

    .venv/bin/python bench/watch_bench.py --kb DIR [--runs 5]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))
from factdesk.corpus.watch import CorpusWatch
from factdesk.index.indexer import Indexer

FACT = """---
type: observation
confidence: 0.7
sources: 1
---
# Watch bench fact {k} of run {run}

Written by bench/watch_bench.py.
"""


def _git(kb: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(kb), *args], check=True, capture_output=True)


def _count(run: int) -> object:
    def work(conn: sqlite3.Connection) -> int:
        return int(conn.execute("SELECT COUNT(*) FROM facts WHERE path LIKE ? AND status = 'live'",
                                (f"kb/watch-bench/r{run}/%",)).fetchone()[0])
    return work


def latencies(kb: Path, runs: int) -> dict[str, float]:
    """Medians: a no-op watched read, a 10-file commit until searchable, an agent tip until
    the watch tells of it (seconds)."""
    ix = Indexer(kb)
    ix.watch = CorpusWatch(kb, ix.git_dir).start()
    assert ix.watch.live, ix.watch.take().why
    ix.read(_count(-1))
    noop, commit, tip = [], [], []
    try:
        for run in range(runs):
            time.sleep(0.3)
            ix.read(_count(-1))  # (the last run's reset, taken in)
            started = time.perf_counter()
            ix.read(_count(-1))
            noop.append(time.perf_counter() - started)
            folder = kb / "kb" / "watch-bench" / f"r{run}"
            folder.mkdir(parents=True)
            for k in range(10):
                (folder / f"{k:08x}.md").write_text(FACT.format(k=k, run=run))
            _git(kb, "add", "kb/watch-bench")
            _git(kb, "-c", "user.name=bench", "-c", "user.email=bench@example.org",
                 "commit", "-qm", f"learn: watch bench {run}")
            landed = time.perf_counter()
            while ix.read(_count(run)) != 10:
                if time.perf_counter() - landed > 30:
                    raise SystemExit(f"the commit was not searchable after 30 s: {ix.watch.take()}")
                time.sleep(0.005)
            commit.append(time.perf_counter() - landed)
            print(f"  run {run}: searchable after {commit[-1]:.3f} s", flush=True)
            time.sleep(0.3)  # (the commit's own ref events, late ones too, are not counted)
            ix.watch.take()
            _git(kb, "update-ref", f"refs/heads/agent/watch-bench-{run}", "HEAD")
            landed = time.perf_counter()
            while not ix.watch.take().refs:
                if time.perf_counter() - landed > 30:
                    raise SystemExit("the new agent tip was not told after 30 s")
                time.sleep(0.002)
            tip.append(time.perf_counter() - landed)
            _git(kb, "update-ref", "-d", f"refs/heads/agent/watch-bench-{run}")
            _git(kb, "reset", "-q", "--hard", "HEAD~1")
    finally:
        ix.watch.stop()
    out = {"noop_read_s": statistics.median(noop), "commit_searchable_s": statistics.median(commit),
           "agent_tip_told_s": statistics.median(tip)}
    print("  watched: " + ", ".join(f"{k} {v:.3f}" for k, v in out.items()), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    latencies(args.kb.resolve(), args.runs)


if __name__ == "__main__":
    main()
