#!/usr/bin/env python3
"""Deciding on proposals at 100,000 facts with 500 proposals (issue 13's targets): one accept
or reject of one proposal side by side with a one-fact relabel in the same run (alternating,
each through its whole operation: checks, commit, index update; p50/p95, target p95 < 500 ms
and no slower than the relabel), then every clean proposal of the branch accepted in one
commit (< 10 s).

    .venv/bin/python bench/decide_bench.py [CORPUS] [--rounds 15]

CORPUS defaults to ../bench-out/kb100k-p500 (`make_corpus.py --facts 100000 --proposals 500`);
it is cloned to a temporary folder first (never written).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT.parent / "bench-out" / "kb100k-p500"
SAMPLE_SQL = ("SELECT path FROM facts WHERE type = 'observation' AND status = 'live' "
              "AND errors = 0 ORDER BY path")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"{args.corpus}: no corpus (make_corpus.py --facts 100000 --proposals 500)")
    os.environ.setdefault("FACTDESK_CURATOR_NAME", "bench")
    os.environ.setdefault("FACTDESK_CURATOR_EMAIL", "bench@factdesk.invalid")
    from factdesk.core import open_corpus
    from factdesk.curation import CurationError
    from factdesk.review.decide import AgentCommit, Review

    with tempfile.TemporaryDirectory(prefix="decide-bench-") as tmp:
        kb = Path(tmp) / "kb"
        subprocess.run(["git", "clone", "-q", str(args.corpus), str(kb)], check=True)
        branches = [b.strip() for b in git(kb, "branch", "-r", "--format=%(refname:short)").split()
                    if "/agent/" in b]
        for b in branches:
            git(kb, "branch", "-q", b.split("/", 1)[1], b)
        branch = branches[0].split("/", 1)[1]
        t0 = time.perf_counter()
        indexer = open_corpus(kb)
        indexer.update()
        print(f"index built in {time.perf_counter() - t0:.0f} s")
        conn = indexer.connect(readonly=True)
        pool = [r[0] for r in conn.execute(SAMPLE_SQL)]
        conn.close()
        picks = random.Random(11).sample(pool, args.rounds)  # noqa: S311 - reproducible
        review = Review(indexer, merge_policy="never")
        cur = review.curation
        from factdesk.corpus import gitreview

        tip = git(kb, "rev-parse", "HEAD")
        agents = [AgentCommit.of(c, "kb") for c in gitreview.range_commits(kb, f"{tip}..{branch}")]
        singles = [a for a in agents if a.facts]
        decide_ms: list[float] = []
        relabel_ms: list[float] = []
        kinds: dict[str, int] = {}
        i = 0
        for n, path in enumerate(picks):
            t = time.perf_counter()
            cur.relabel([path], {"type": "pattern"}, "bench")
            relabel_ms.append((time.perf_counter() - t) * 1000)
            while i < len(singles):
                a = singles[i]
                i += 1
                t = time.perf_counter()
                try:
                    if n % 2 == 0:
                        review.accept([a.sha[:12]], "bench")
                        kind = "accept"
                    else:
                        review.reject([a.sha[:12]], "bench")
                        kind = "reject"
                except CurationError as exc:  # (depends, conflict, R1: a refusal is timed apart)
                    kinds[f"refused {getattr(exc, 'rule', '?')}"] = kinds.get(
                        f"refused {getattr(exc, 'rule', '?')}", 0) + 1
                    continue
                decide_ms.append((time.perf_counter() - t) * 1000)
                kinds[kind] = kinds.get(kind, 0) + 1
                break
        print(f"one-fact relabel   n={len(relabel_ms)} p50={statistics.median(relabel_ms):.0f} ms "
              f"p95={pct(relabel_ms, 0.95):.0f} ms")
        print(f"accept/reject one  n={len(decide_ms)} p50={statistics.median(decide_ms):.0f} ms "
              f"p95={pct(decide_ms, 0.95):.0f} ms  ({kinds})")
        t = time.perf_counter()
        cs = review.accept_all_clean(branch, "bench: every clean proposal")
        took = time.perf_counter() - t
        n_props = len([v for k, v in _trailers(kb, cs.commit or "HEAD") if k == "Factdesk-Proposal"])
        print(f"accept all clean   {took:.1f} s  ({n_props} proposals, {len(cs.files)} files changed "
              f"in one commit {cs.short_sha}; target < 10 s)")
        print(f"load={os.getloadavg()[0]:.1f}")


def _trailers(kb: Path, rev: str) -> list[tuple[str, str]]:
    body = git(kb, "log", "-1", "--format=%B", rev)
    return [(k, v.strip()) for k, _, v in (line.partition(":") for line in body.splitlines())
            if k.startswith("Factdesk-")]


if __name__ == "__main__":  # (the index's forkserver workers import __main__)
    main()
