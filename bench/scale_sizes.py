"""`make bench-scale` (issue 23): what each operation costs at 10,000, 100,000 and
1,000,000 facts, side by side with its floor, and a log-log picture of cost against
corpus size for every row.

    .venv/bin/python bench/scale_sizes.py [--sizes 10000 100000 1000000] [--out bench/out]
                                          [--runs 5] [--only cold reads updates search check]

Corpora are generated once under `--out` (`make_corpus.py --facts N --commits C
--proposals P --seed 23`, C = 500 / 5,000 / 20,000 and P = N / 200 for the three sizes)
and reused after (a `.ok` mark next to each); a run may measure one size at a time, the
results of the others are kept (`--out`/scale.json). Rows, per size:

* **cold index**: `factdesk index --rebuild` with the index deleted first, beside the bare
  pipeline (`run_bench.bare_pipeline`, plain FTS5), each in a monitored process of its
  own (wall, peak RSS) — issue 23 #4;
* **no-op reads** from process start (`scale_bench.reads`: search, show, index, recall,
  messages, agents, proposals), beside `git status --porcelain` — #1;
* **updates** after a k-file commit, k = 10 and 1,000 files of a new confidence and 10
  files of new words, in one process (`Indexer.update`), alternating, medians of `--runs`,
  each less the no-op beside it — #3;
* **search** in-process over `run_bench.QUERIES`, p50/p95, beside plain FTS5 bm25 — #5;
* **check**: `factdesk check --format json` (wall, peak RSS) — #8;
* **window**: `bench/gui_bench.py` (the real window, offscreen): first paint from process
  start, sort / facet click / typed query p95, scroll steps, peak RSS — #5, #6.

Writes `--out`/scale.json, the pictures `docs/scale/<row>.png` (log-log: seconds against
facts, one line per measure, the floor dashed) and prints the table in Markdown, which
docs/benchmarks.md quotes. The corpus is left as generated (the update rounds are undone).
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
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "app"))

import run_bench  # noqa: E402  (bench/: the monitored runs, the bare pipeline, search)
import scale_bench  # noqa: E402  (bench/: the reads from process start)

SIZES = (10_000, 100_000, 1_000_000)
#: first-parent commits of each corpus (the issue's 1M corpus: 20,000)
COMMITS = {10_000: 500, 100_000: 5_000, 1_000_000: 20_000}
ROWS = ("cold", "reads", "updates", "search", "check", "window")


def commits_for(facts: int) -> int:
    return COMMITS.get(facts, max(100, facts // 50))


def ensure_corpus(out: Path, facts: int) -> tuple[Path, str]:
    """The corpus of `facts` under `out` (`scale<N>`), generated once; reset to its
    generated head; and the generator's command line."""
    if not (out / f"scale{facts}.ok").exists() and not run_bench.MAKE_CORPUS.exists():
        raise SystemExit(f"{run_bench.MAKE_CORPUS}: not found (../shared is needed to generate)")
    return run_bench.ensure_corpus(out, facts, False, name="scale", seed=23,
                                   commits=commits_for(facts),
                                   extra=("--proposals", str(max(10, facts // 200))))


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def _reset(kb: Path, head: str) -> None:
    if _git(kb, "rev-parse", "HEAD") != head or _git(kb, "status", "--porcelain"):
        _git(kb, "reset", "-q", "--hard", head)


# -- rows ----------------------------------------------------------------------------------


def cold(kb: Path, out: Path) -> dict[str, Any]:
    mine = run_bench._cold_index(kb, kb.name)
    bare = run_bench._bare_run(kb, out / f"{kb.name}-bare.db", "plain", kb.name)
    return {"index_s": round(mine["wall_s"], 2), "index_rss_mib": _mib(mine["ru_maxrss_kib"]),
            "bare_s": round(bare["wall_s"], 2), "bare_rss_mib": _mib(bare["ru_maxrss_kib"]),
            "ratio": round(mine["wall_s"] / bare["wall_s"], 2)}


def _mib(kib: float) -> float:
    return round(kib / 1024, 1)


def updates(kb: Path, runs: int) -> dict[str, Any]:
    """k-file commits (k = 10, 1,000 alternating) and the no-op after each, in one process
    of its own; the corpus is put back afterwards."""
    head = _git(kb, "rev-parse", "HEAD")
    try:
        done = subprocess.run([sys.executable, __file__, "--_updates", str(kb), str(runs)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"updates failed:\n{done.stderr[-2000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        _reset(kb, head)
        subprocess.run(_factdesk(kb, "index"), check=True, stdout=subprocess.DEVNULL)


def _updates_here(kb: Path, runs: int) -> dict[str, Any]:
    import random

    from factdesk.index.indexer import Indexer

    ix = Indexer(kb)
    ix.update()
    conn = ix.connect(readonly=True)
    live = [kb / r[0] for r in conn.execute(
        "SELECT path FROM facts WHERE status = 'live' AND confidence IS NOT NULL ORDER BY path")]
    conn.close()
    rng = random.Random(23)  # noqa: S311
    # 10 and 1,000 files of a new confidence (the words unchanged: a relabel, a settlement
    # write the same way), and 10 files of new words
    kinds = {"k10": (10, run_bench._edit_files), "k10_text": (10, _edit_words),
             "k1000": (1000, run_bench._edit_files)}
    took: dict[str, list[float]] = {name: [] for name in kinds}
    noop: list[float] = []
    for i in range(runs):
        for j, (name, (k, edit)) in enumerate(kinds.items()):
            files = edit(kb, rng, live, k)
            run_bench._commit(kb, i * len(kinds) + j, files)
            t0 = time.perf_counter()
            stats = ix.update()
            took[name].append(time.perf_counter() - t0)
            if len(stats.changed) < len(files):
                raise SystemExit(f"update saw {len(stats.changed)} of {len(files)} changes")
            t0 = time.perf_counter()
            ix.update()
            noop.append(time.perf_counter() - t0)
    n = statistics.median(noop)
    return {"noop_s": round(n, 3),
            **{f"{k}_s": round(statistics.median(v), 3) for k, v in took.items()},
            **{f"{k}_above_noop_s": round(statistics.median(v) - n, 3) for k, v in took.items()}}


def _edit_words(kb: Path, rng: Any, candidates: list[Path], n: int) -> list[str]:
    """`n` facts whose body gains a sentence (new words for the full-text index)."""
    done = []
    for path in rng.sample(candidates, n):
        text = path.read_text("utf-8")
        path.write_text(text.rstrip("\n") + f" Seen again in round {rng.randrange(10**6)}.\n",
                        "utf-8")
        done.append(path.relative_to(kb).as_posix())
    return done


def search(kb: Path) -> dict[str, Any]:
    found, _run = run_bench._phase_subprocess("search", kb)
    mine = [t for q in found["queries"].values() for t in q["product_ms"]]
    plain = [t for q in found["queries"].values() for t in q["baseline_ms"]]
    return {"p50_ms": round(run_bench.pct(mine, 50), 1), "p95_ms": round(run_bench.pct(mine, 95), 1),
            "plain_fts_p50_ms": round(run_bench.pct(plain, 50), 1),
            "plain_fts_p95_ms": round(run_bench.pct(plain, 95), 1)}


def check(kb: Path) -> dict[str, Any]:
    run = run_bench.run_monitored(_factdesk(kb, "check", "--format", "json"))
    if run["rc"] not in (0, 1):
        raise SystemExit(f"check failed:\n{run['stderr'][-2000:]}")
    return {"check_s": round(run["wall_s"], 2), "check_rss_mib": _mib(run["ru_maxrss_kib"])}


def window(kb: Path, out: Path, runs: int) -> dict[str, Any]:
    """bench/gui_bench.py on the corpus (the real window, offscreen): first paint from
    process start, sort / facet / typed-query p95, scroll steps, the window's peak RSS."""
    got = out / f"gui-{kb.name}.json"
    done = subprocess.run([sys.executable, str(HERE / "gui_bench.py"), "--kb", str(kb), "--no-doc",
                           "--no-profile", "--json", str(got), "--startup-runs", str(runs),
                           "--runs", str(max(2, runs // 2)), "--facet-runs", "2"],
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"gui_bench failed:\n{done.stderr[-2000:]}")
    r = json.loads(got.read_text())

    def p95(groups: dict[str, list[float]]) -> float:
        return round(run_bench.pct([t for v in groups.values() for t in v], 95) / 1000, 3)

    scroll = r["scroll"]["times"]
    return {"first_paint_s": round(r["startup"]["external"]["p50"], 2),
            "sort_p95_s": p95(r["sort"]), "facet_p95_s": p95(r["facets"]),
            "query_p95_s": p95(r["queries"]),
            "scroll_p95_s": round(run_bench.pct(scroll, 95) / 1000, 3),
            "scroll_max_s": round(max(scroll) / 1000, 3), "rss_mib": round(r["rss_mib"])}


def _factdesk(kb: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "factdesk", *args, "--kb", str(kb)]


# -- the table and the pictures -----------------------------------------------------------

#: row → [(label, key in its results, a floor?)]
SERIES: dict[str, list[tuple[str, str, bool]]] = {
    "cold": [("factdesk index --rebuild", "index_s", False), ("bare pipeline", "bare_s", True)],
    "updates": [("no-op update", "noop_s", True), ("10-file commit", "k10_s", False),
                ("10-file commit, new words", "k10_text_s", False),
                ("1,000-file commit", "k1000_s", False)],
    "search": [("search p95", "p95_ms", False), ("plain FTS5 bm25 p95", "plain_fts_p95_ms", True)],
    "check": [("check --format json", "check_s", False)],
    "window": [("first paint (from process start)", "first_paint_s", False),
               ("sort p95", "sort_p95_s", False), ("facet click p95", "facet_p95_s", False),
               ("typed query p95", "query_p95_s", False), ("scroll step p95", "scroll_p95_s", False),
               ("scroll step max", "scroll_max_s", False)],
}


def series(results: dict[str, Any], row: str) -> list[tuple[str, bool, list[tuple[int, float]]]]:
    """(label, floor?, [(facts, value)]) of one row over every size measured."""
    sizes = sorted(results, key=int)
    if row == "reads":
        names = [r["read"] for r in next((results[s]["reads"] for s in sizes
                                          if "reads" in results[s]), [])]
        out = [(name, False, [(int(s), r["seconds"]) for s in sizes
                              for r in results[s].get("reads", []) if r["read"] == name])
               for name in names]
        out.append(("git status --porcelain", True, [
            (int(s), statistics.median(r["git_status"] for r in results[s]["reads"]))
            for s in sizes if results[s].get("reads")]))
        return out
    return [(label, floor, [(int(s), results[s][row][key]) for s in sizes
                            if key in results[s].get(row, {})])
            for label, key, floor in SERIES[row]]


def table(results: dict[str, Any]) -> str:
    sizes = sorted(results, key=int)
    lines = ["| row | " + " | ".join(f"{int(s):,} facts" for s in sizes) + " |",
             "|---|" + "---|" * len(sizes)]
    for row in ROWS:
        for label, _floor, points in series(results, row):
            got = dict(points)
            unit = " ms" if row == "search" else " s"
            lines.append(f"| {row}: {label} | " + " | ".join(
                f"{got[int(s)]:g}{unit}" if int(s) in got else "—" for s in sizes) + " |")
    for label, row, keys in (("cold: peak RSS, index / bare (MiB)", "cold",
                              ("index_rss_mib", "bare_rss_mib")),
                             ("check: peak RSS (MiB)", "check", ("check_rss_mib",)),
                             ("window: peak RSS (MiB)", "window", ("rss_mib",))):
        cells = [" / ".join(f"{results[s][row][k]:g}" for k in keys) if row in results[s] else "—"
                 for s in sizes]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def pictures(results: dict[str, Any], folder: Path) -> list[Path]:
    """One log-log PNG per row (scale_chart.py)."""
    from scale_chart import log_log

    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for row in ROWS:
        lines = [(label, floor, points) for label, floor, points in series(results, row) if points]
        if lines:
            path = folder / f"{row}.png"
            log_log(path, f"{row} (issue 23)", "ms" if row == "search" else "seconds", lines)
            made.append(path)
    return made


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", nargs="+", choices=ROWS, default=list(ROWS))
    ap.add_argument("--pictures", type=Path, default=ROOT / "docs" / "scale")
    ap.add_argument("--_updates", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._updates:
        print(json.dumps(_updates_here(Path(args._updates[0]), int(args._updates[1]))))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    store = args.out / "scale.json"
    results: dict[str, Any] = json.loads(store.read_text()) if store.exists() else {}
    print(f"{platform.node()}: {os.cpu_count()} cores, {platform.platform()}, Python "
          f"{platform.python_version()}", file=sys.stderr, flush=True)
    for facts in args.sizes:
        kb, generated_by = ensure_corpus(args.out, facts)
        entry = results.setdefault(str(facts), {})
        entry["corpus"] = generated_by
        entry["measured"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        for row in args.only:
            print(f"[{facts}] {row} …", file=sys.stderr, flush=True)
            if row == "cold":
                entry["cold"] = cold(kb, args.out)
            elif row == "reads":
                entry["reads"] = scale_bench.reads(kb, args.runs)
            elif row == "updates":
                entry["updates"] = updates(kb, args.runs)
            elif row == "search":
                entry["search"] = search(kb)
            elif row == "check":
                entry["check"] = check(kb)
            else:
                entry["window"] = window(kb, args.out, args.runs)
            store.write_text(json.dumps(results, indent=2) + "\n")
    for path in pictures(results, args.pictures):
        print(f"wrote {path}", file=sys.stderr)
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
