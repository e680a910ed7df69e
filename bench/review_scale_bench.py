#!/usr/bin/env python3
"""Review at scale (issue 23 #7): `factdesk proposals --format json` from process start,
side by side with `git status --porcelain`, and the queue's load in a warm process, on a
corpus with many agent branches (`bench/agent_branches.py`).

    .venv/bin/python bench/review_scale_bench.py --kb CLONE [--runs 3] [--cold] [--no-doc]

CLONE: a clone of a generated corpus, indexed, with agent branches added. Timed:
1. `--cold` (first): the check cache removed, one `proposals --format json` run;
2. `--runs` alternating pairs of `git status --porcelain` and `proposals --format json`
   (a new process each, nothing changed in between: the warm case), wall, and CPU of the
   process with its children;
3. `load_queue` in one process, the in-memory queue cache cleared before each of 3 runs
   (a new process's load: every git read, the decision and check caches on disk).

Written as the section "## Review at scale (issue 23 #7)" of docs/benchmarks.md unless
--no-doc, with the machine, the corpus shape, the load average and the commands.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "app"))
sys.path.insert(0, str(HERE))

HEADING = "## Review at scale (issue 23 #7)"


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(argv: list[str], cwd: Path) -> tuple[float, float, bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "app")}
    cpu = _children_cpu()
    started = time.perf_counter()
    out = subprocess.run(argv, cwd=cwd, env=env, check=True, capture_output=True).stdout
    return time.perf_counter() - started, _children_cpu() - cpu, out


def main() -> int:
    from doc_sections import replace_section

    from factdesk.index import check_cache
    from factdesk.review import proposals
    from factdesk.review.proposals import load_queue

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kb", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--no-doc", action="store_true")
    a = ap.parse_args()
    repo = a.kb.resolve()
    load_start = os.getloadavg()
    cmd = [sys.executable, "-m", "factdesk", "proposals", "--kb", str(repo), "--format", "json"]
    status = ["git", "status", "--porcelain"]
    cold = None
    if a.cold:
        check_cache.cache_path(repo).unlink(missing_ok=True)
        cold = timed(cmd, repo)[:2]
    pairs = []
    out = b""
    for _ in range(a.runs):
        g = timed(status, repo)[:2]
        wall, cpu, out = timed(cmd, repo)
        pairs.append((g, (wall, cpu)))
    data = json.loads(out)
    loads = []
    for _ in range(3):
        proposals._CACHE.clear()
        started = time.perf_counter()
        queue = load_queue(repo)
        loads.append(time.perf_counter() - started)
    shape = {
        "branches": len(data["branches"]), "proposals": len(data["proposals"]),
        "first_parent_commits": int(subprocess.run(
            ["git", "rev-list", "--first-parent", "--count", "HEAD"], cwd=repo,
            capture_output=True, text=True).stdout),
        "queue_proposals": len(queue.proposals)}
    git_med = statistics.median(g[0] for g, _ in pairs)
    fd_med = statistics.median(f[0] for _, f in pairs)
    result = {
        "corpus": str(repo), "shape": shape, "cold_s": cold,
        "pairs": [{"git_status": g, "proposals": f} for g, f in pairs],
        "median": {"git_status": git_med, "proposals": fd_med,
                   "budget": 1.2 * git_med + 1.0},
        "load_queue_s": loads,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()}",
        "load_average": [load_start[0], os.getloadavg()[0]],
    }
    print(json.dumps(result, indent=2))
    if not a.no_doc:
        rows = [f"| {i + 1} | {g[0]:.2f} s (CPU {g[1]:.2f} s) | {f[0]:.2f} s (CPU {f[1]:.2f} s) |"
                for i, (g, f) in enumerate(pairs)]
        text = "\n".join([
            HEADING, "",
            f"Measured {time.strftime('%Y-%m-%d')} on {result['machine']}, load average "
            f"{load_start[0]:.1f} at the start and {os.getloadavg()[0]:.1f} at the end (a "
            "shared machine: wall times are inflated; CPU is the process and its git "
            f"children). Corpus: a clone of `make_corpus --facts 100000 --commits 5000 "
            f"--proposals 500 --seed 23` with agent branches added by `bench/agent_branches.py`: "
            f"{shape['branches']} branches, {shape['proposals']} open proposals, "
            f"{shape['first_parent_commits']:,} first-parent commits; index current. "
            f"Command: `python bench/review_scale_bench.py --kb <clone> --runs {a.runs}"
            f"{' --cold' if a.cold else ''}`.", "",
            "| run | `git status --porcelain` | `factdesk proposals --format json` |",
            "|---|---|---|", *rows, "",
            f"Median: git status {git_med:.2f} s, proposals {fd_med:.2f} s; the target "
            f"(≤ 1.2 × git status + 1 s) is {1.2 * git_med + 1:.2f} s here."
            + (f" Cold (no check cache: every proposal checked): {cold[0]:.1f} s (CPU "
               f"{cold[1]:.1f} s)." if cold else ""),
            "`load_queue` in one process, its in-memory cache cleared each time: "
            + ", ".join(f"{x:.2f} s" for x in loads) + " (target < 2 s warm).", ""])
        replace_section(ROOT / "docs" / "benchmarks.md", HEADING, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
