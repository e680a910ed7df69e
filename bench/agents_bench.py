"""Speed of `factdesk agents` (issue 16): the records computed once, then read from the
index's cache for the same index version; and a registry change's re-check.

    .venv/bin/python bench/agents_bench.py --facts 10000
    .venv/bin/python bench/agents_bench.py --facts 100000 --commits 5000   (the issue's size)

Targets (issue 16, at 100,000 facts): the Agents tab filled < 1 s from the cached result
(`cached` below); a registry change's re-check of authority findings < 2 s (`recheck`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))
from factdesk.cli.agents_cmds import records
from factdesk.core import open_corpus
from factdesk.curation import Curation
from factdesk.curation.gitwrite import Identity
from factdesk.reflect.agents import Thresholds

MAKE = Path(__file__).resolve().parents[2] / "shared" / "bench" / "make_corpus.py"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--commits", type=int, default=0, help="default: facts // 20")
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    commits = args.commits or max(200, args.facts // 20)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "kb"
        subprocess.run([sys.executable, str(MAKE), "--facts", str(args.facts), "--commits",
                        str(commits), "--seed", str(args.seed), "--out", str(out), "--quiet",
                        "--now", "2026-11-30"], check=True)
        ix = open_corpus(out)
        t0 = time.perf_counter()
        ix.update()
        t_index = time.perf_counter() - t0
        day = date(2026, 11, 30)
        t0 = time.perf_counter()
        data, hit = records(ix, today=day, thresholds=Thresholds())
        t_first = time.perf_counter() - t0
        assert not hit
        t0 = time.perf_counter()
        ix.update()
        again, hit = records(ix, today=day, thresholds=Thresholds())
        t_cached = time.perf_counter() - t0
        assert hit and again == data
        cur = Curation(ix, Identity("ana", "ana@example.org"))
        t0 = time.perf_counter()
        cur.set_type("codex", "persona", "bench: a promotion")
        t_recheck = time.perf_counter() - t0
        result = {"facts": args.facts, "commits": commits, "agents": len(data),
                  "index_s": round(t_index, 3), "first_s": round(t_first, 3),
                  "cached_s": round(t_cached, 3), "recheck_s": round(t_recheck, 3),
                  "cached_target_s": 1.0, "recheck_target_s": 2.0}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
