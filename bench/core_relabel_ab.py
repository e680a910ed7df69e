#!/usr/bin/env python3
"""`Curation.relabel` alone (validate, write, commit; no index update): the median over N
relabels of a seeded sample of live observations (wall time, and CPU time of the process
and its git children), then `git reset --hard` to the start.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/core_relabel_ab.py bench/out/kb100000 15

Run it alternately from two checkouts (old and new code) on two copies of the corpus for
an A/B (docs/benchmarks.md, issue 14).
"""

from __future__ import annotations

import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

SAMPLE_SQL = ("SELECT path FROM facts WHERE type = 'observation' AND status = 'live' "
              "AND errors = 0 AND claim_type_derived = 1 ORDER BY path")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def main() -> None:
    os.environ.setdefault("FACTDESK_CURATOR_NAME", "bench")
    os.environ.setdefault("FACTDESK_CURATOR_EMAIL", "bench@factdesk.invalid")
    from factdesk.core import open_corpus
    from factdesk.curation import Curation

    kb, runs = Path(sys.argv[1]), int(sys.argv[2])
    head = git(kb, "rev-parse", "HEAD")
    indexer = open_corpus(kb)
    indexer.update()
    conn = indexer.connect(readonly=True)
    pool = [r[0] for r in conn.execute(SAMPLE_SQL)]
    conn.close()
    picks = random.Random(11).sample(pool, runs)  # noqa: S311 - a reproducible sample
    cur = Curation(indexer, update_index=False)
    times, cpus = [], []
    try:
        for path in picks:
            c0 = _cpu()
            t0 = time.perf_counter()
            cur.relabel([path], {"type": "pattern"}, "bench")
            times.append((time.perf_counter() - t0) * 1000)
            cpus.append((_cpu() - c0) * 1000)
    finally:
        git(kb, "reset", "-q", "--hard", head)
    p90 = sorted(times)[max(0, int(0.9 * runs) - 1)]
    print(f"{kb.name}: n={runs} median={statistics.median(times):.0f} ms p90={p90:.0f} ms "
          f"cpu median={statistics.median(cpus):.0f} ms load={os.getloadavg()[0]:.1f}")


def _cpu() -> float:
    """CPU seconds (user + sys) of this process and its ended children (git): what a busy
    machine does not inflate the way it does the wall time."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


if __name__ == "__main__":  # (the index's forkserver workers import __main__)
    main()
