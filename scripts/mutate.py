#!/usr/bin/env python3
"""Mutation testing of the trust code with cosmic-ray (`make mutate`; not in CI).

    python scripts/mutate.py [--modules trust status …] [--sample N] [--seed S]

For each module (default: curation/trust.py, review/status.py, review/decide.py,
review/merge.py, review/sync.py) a cosmic-ray session mutates a scratch copy of the
checkout (bench/out/mutate/work: your checkout is never touched) and runs
`pytest -x tests/review tests/curation` against each mutant with a 60 s timeout (a timeout
counts as killed: the suite noticed). The score (killed / all) and every surviving mutant
(its diff) go to bench/out/mutate/<module>.txt and a summary to stdout; judge each survivor
(a real gap, or equivalent) and write it in docs/reliability.md.

`--sample N` keeps N mutants per module, drawn with a fixed seed (a quick look); without it
every mutant runs (hours on a 2-core machine). Tests that need ../shared skip in the
scratch copy (it does not sit beside ../shared).

Operators left out, each for why: `NumberReplacer` (the trust code's numbers are lengths
and indexes whose +1/-1 variants are caught or are equivalent) and the comparison swaps
other than `==`→`!=` and `<`→`>=`-style negations (cosmic-ray makes five variants of every
comparison; the negation is the one that changes meaning for the trust checks).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "mutate"
WORK = OUT / "work"
MODULES = {
    "trust": "app/factdesk/curation/trust.py",
    "status": "app/factdesk/review/status.py",
    "decide": "app/factdesk/review/decide.py",
    "merge": "app/factdesk/review/merge.py",
    "sync": "app/factdesk/review/sync.py",
}
TESTS = "tests/review tests/curation"
KEEP_COMPARISONS = ("ReplaceComparisonOperator_Eq_NotEq", "ReplaceComparisonOperator_NotEq_Eq",
                    "ReplaceComparisonOperator_Lt_GtE", "ReplaceComparisonOperator_Gt_LtE",
                    "ReplaceComparisonOperator_LtE_Gt", "ReplaceComparisonOperator_GtE_Lt",
                    "ReplaceComparisonOperator_Is_IsNot", "ReplaceComparisonOperator_IsNot_Is",
                    "ReplaceComparisonOperator_In_NotIn", "ReplaceComparisonOperator_NotIn_In")


def _config(module: str) -> str:
    test = (f"env QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 PYTHONPATH={WORK / 'app'} "
            f"{sys.executable} -m pytest -x -q -p no:cacheprovider -p no:randomly "
            f"--timeout=60 {TESTS}")
    return f'''[cosmic-ray]
module-path = "{WORK / module}"
timeout = 60.0
excluded-modules = []
test-command = "{test}"

[cosmic-ray.distributor]
name = "local"
'''


def _copy() -> None:
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    for name in ("app", "tests", "pyproject.toml", ".importlinter"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, WORK / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copy2(src, WORK / name)


def _trim(session: Path, sample: int | None, seed: int) -> int:
    """Drop the operators left out (module doc) and keep `sample` mutants; returns how many."""
    db = sqlite3.connect(session)
    try:
        rows = db.execute("SELECT job_id, operator_name FROM mutation_specs").fetchall()
        drop = [j for j, op in rows
                if op.endswith("NumberReplacer")
                or ("ReplaceComparisonOperator" in op and not op.endswith(KEEP_COMPARISONS))]
        kept = [j for j, _op in rows if j not in set(drop)]
        if sample is not None and sample < len(kept):
            rng = random.Random(seed)  # noqa: S311  (a reproducible sample, not a secret)
            drop += [j for j in kept if j not in set(rng.sample(kept, sample))]
        for job in drop:
            db.execute("DELETE FROM mutation_specs WHERE job_id = ?", (job,))
            db.execute("DELETE FROM work_items WHERE job_id = ?", (job,))
        db.commit()
        return int(db.execute("SELECT count(*) FROM work_items").fetchone()[0])
    finally:
        db.close()


def _results(session: Path) -> tuple[int, int, list[str]]:
    """(killed, all, diffs of survivors)."""
    db = sqlite3.connect(session)
    try:
        rows = db.execute("SELECT test_outcome, diff FROM work_results").fetchall()
    finally:
        db.close()
    survivors = [diff for outcome, diff in rows if outcome == "survived"]
    return len(rows) - len(survivors), len(rows), survivors


def run(module_key: str, sample: int | None, seed: int) -> tuple[int, int]:
    module = MODULES[module_key]
    OUT.mkdir(parents=True, exist_ok=True)
    config = OUT / f"{module_key}.toml"
    config.write_text(_config(module))
    session = OUT / f"{module_key}.sqlite"
    session.unlink(missing_ok=True)
    cosmic = [sys.executable, "-m", "cosmic_ray.cli"]
    subprocess.run([*cosmic, "init", str(config), str(session)], cwd=WORK, check=True)
    count = _trim(session, sample, seed)
    print(f"{module}: {count} mutants", flush=True)
    subprocess.run([*cosmic, "exec", str(config), str(session)], cwd=WORK, check=True,
                   env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    killed, total, survivors = _results(session)
    report = [f"{module}: {killed}/{total} killed ({100 * killed / max(total, 1):.1f}%)", ""]
    report += [f"--- survivor {n}\n{diff}" for n, diff in enumerate(survivors, 1)]
    (OUT / f"{module_key}.txt").write_text("\n".join(report) + "\n")
    print(report[0], flush=True)
    return killed, total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", nargs="+", choices=sorted(MODULES), default=list(MODULES))
    parser.add_argument("--sample", type=int, default=None, help="mutants per module")
    parser.add_argument("--seed", type=int, default=22)
    args = parser.parse_args(argv)
    _copy()
    scores = {m: run(m, args.sample, args.seed) for m in args.modules}
    print("\nmodule   killed/all  score")
    for m, (killed, total) in scores.items():
        print(f"{m:8} {killed:5}/{total:<5} {100 * killed / max(total, 1):5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
