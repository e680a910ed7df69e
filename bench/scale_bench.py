"""Reads that find nothing changed, from process start, against `git status --porcelain`
(issue 23 #1), and how soon a watching process sees an outside change (issue 23 #2).

    .venv/bin/python bench/scale_bench.py --kb DIR [--kb DIR2 …] [--runs 5]
    .venv/bin/python bench/scale_bench.py --kb DIR --watch        (+ the watcher's latencies)

Each corpus is indexed first (not timed). Then each command runs `--runs` times from a new
process, alternating with `git status --porcelain` on the same corpus, and the medians are
printed with the target (≤ 1.2 × git status + 0.3 s). `--watch` works on the corpus given,
which it changes (a 10-file commit on the checked-out branch and a new agent branch tip,
each followed by a reset): give it a copy (`cp -a`, so its index comes along).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app"
sys.path.insert(0, str(APP))

#: (name, arguments after `factdesk`); `{fact}` is a fact id of the corpus
READS = (
    ("search", ["search", "retry", "--format", "json"]),
    ("show", ["show", "{fact}", "--format", "json"]),
    ("index (no-op)", ["index"]),
    ("recall", ["recall", "retry", "--format", "json"]),
    ("messages", ["messages", "--format", "json"]),
    ("agents", ["agents", "--format", "json"]),
    ("proposals", ["proposals", "--format", "json"]),
)


def _env() -> dict[str, str]:
    # (byte code is cached, as in any install: a shell that says not to write it would
    # time Python's compiler on every start)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(CODE[0]), "HF_HUB_OFFLINE": "1"}


#: the factdesk source measured (`--app`: another checkout's app/, for a before/after)
CODE = [APP]


def _timed(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=_env(), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    took = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv}: exit {done.returncode}: {done.stderr.decode()[-800:]}")
    return took


def _factdesk(kb: Path, args: list[str]) -> list[str]:
    return [sys.executable, "-m", "factdesk", *args, "--kb", str(kb)]


def _a_fact(kb: Path) -> str:
    out = subprocess.run(_factdesk(kb, ["search", "retry", "--format", "json", "--limit", "1"]),
                         env=_env(), capture_output=True, check=True).stdout
    return str(json.loads(out)["results"][0]["id"])


def reads(kb: Path, runs: int) -> list[dict[str, object]]:
    """Median seconds of each no-op read and of `git status --porcelain`, alternating."""
    subprocess.run(_factdesk(kb, ["index"]), env=_env(), check=True, stdout=subprocess.DEVNULL)
    fact = _a_fact(kb)
    rows = []
    for name, args in READS:
        argv = _factdesk(kb, [a.replace("{fact}", fact) for a in args])
        _timed(argv, kb)  # (warm: the page cache, as for a person who works in the corpus)
        mine, git = [], []
        for _ in range(runs):
            mine.append(_timed(argv, kb))
            git.append(_timed(["git", "status", "--porcelain"], kb))
        m, g = statistics.median(mine), statistics.median(git)
        rows.append({"read": name, "seconds": round(m, 3), "git_status": round(g, 3),
                     "target": round(1.2 * g + 0.3, 3), "met": m <= 1.2 * g + 0.3})
        print(f"  {name:<14} {m:6.3f} s   git status {g:6.3f} s   target {1.2 * g + 0.3:6.3f} s"
              f"   {'met' if m <= 1.2 * g + 0.3 else 'NOT met'}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=Path, action="append", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--watch", action="store_true", help="also the watcher's pickup latency")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--app", type=Path, default=APP, help="the app/ folder to measure")
    args = ap.parse_args()
    CODE[0] = args.app.resolve()
    print(f"{platform.node()}: {os.cpu_count()} cores, {platform.platform()}, "
          f"Python {platform.python_version()}", flush=True)
    results: dict[str, object] = {}
    for kb in args.kb:
        facts = sum(1 for _ in (kb / "kb").rglob("*.md"))
        print(f"{kb} ({facts} fact files), medians of {args.runs}:", flush=True)
        entry: dict[str, object] = {"facts": facts, "reads": reads(kb.resolve(), args.runs)}
        if args.watch:
            from watch_bench import latencies  # (bench/: the watcher's half)

            entry["watch"] = latencies(kb.resolve(), args.runs)
        results[str(kb)] = entry
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
