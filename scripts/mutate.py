#!/usr/bin/env python3
"""Mutation testing of the trust code with cosmic-ray (`make mutate`; not in CI).

    python scripts/mutate.py [--modules trust status …] [--sample N] [--seed S]

For each module (default: curation/trust.py, review/status.py, review/decide.py,
review/merge.py, review/sync.py) a cosmic-ray session mutates a scratch copy of the
checkout (bench/out/mutate/work: your checkout is never touched) and runs the tests of
`tests/review tests/curation` against each mutant with `-x`, 60 s for each test and 900 s in
all (a timeout counts as killed: the suite noticed; the report says how many were killed by
the 900 s timeout alone). The score (killed / all) and every surviving mutant (its diff) go
to bench/out/mutate/<module>.txt and a summary to stdout; judge each survivor (a real gap,
or equivalent) and write it in docs/reliability.md.

Which tests run for a mutant: the whole selection takes minutes, so a mutant would take
that long each time it survives (hundreds of mutants: days). The script first runs the
selection once under coverage.py with one context per test, then each mutant runs the
tests that executed the mutated line (scripts/mutate_tests.py): a mutant no test reaches
survives at once, as it would under the whole selection. What that misses: a line reached
only inside a child process a test starts (the CLI's crash tests); `--whole` runs the whole
selection for every mutant instead, to check a survivor.

`--survivors` runs the last sessions' survivors again (after tests were written to kill
them), with the checkout copied and the map rebuilt: the killed keep their results.

`--sample N` keeps N mutants per module, drawn with a fixed seed (a quick look). The scratch
copy's parent links ../shared, so the tests that use the real corpus run too.

Operators left out, each for why: `NumberReplacer` (the trust code's numbers are lengths
and indexes whose +1/-1 variants are caught or are equivalent) and the comparison swaps
other than `==`→`!=` and `<`→`>=`-style negations (cosmic-ray makes five variants of every
comparison; the negation is the one that changes meaning for the trust checks).
"""

from __future__ import annotations

import argparse
import functools
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


PYTEST = ["-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
          "--timeout=60"]


def _env() -> dict[str, str]:
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1",
            "PYTHONPATH": str(WORK / "app")}


def _config(module_key: str, module: str, whole: bool) -> str:
    if whole:
        test = (f"env QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 PYTHONPATH={WORK / 'app'} "
                f"{sys.executable} {' '.join(PYTEST)} {TESTS}")
    else:
        test = (f"env QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 PYTHONPATH={WORK / 'app'} "
                f"{sys.executable} {ROOT / 'scripts' / 'mutate_tests.py'} {module_key}")
    return f'''[cosmic-ray]
module-path = "{WORK / module}"
timeout = 900.0
excluded-modules = []
test-command = "{test}"

[cosmic-ray.distributor]
name = "local"
'''


def _copy() -> None:
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    # the tests reach ../shared from the checkout's root: the scratch copy's parent gets a
    # link to it, so the tests that use the real corpus run here too
    shared = ROOT.parent / "shared"
    if shared.is_dir() and not (WORK.parent / "shared").exists():
        (WORK.parent / "shared").symlink_to(shared)
    for name in ("app", "tests", "pyproject.toml", ".importlinter"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, WORK / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copy2(src, WORK / name)


@functools.cache
def _annotations(module: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The (start, end) positions of every type annotation in the module: under
    `from __future__ import annotations` they are never evaluated, so a mutant inside one
    (`str | None` → `str ^ None`) is equivalent."""
    import ast

    spans = []
    for node in ast.walk(ast.parse(module.read_text())):
        found = []
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            found.append(node.annotation)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            found.append(node.returns)
        spans += [((a.lineno, a.col_offset), (a.end_lineno or a.lineno, a.end_col_offset or 0))
                  for a in found]
    return spans


def _equivalent(module: Path, row: int, col: int) -> bool:
    return "from __future__ import annotations" in module.read_text() and any(
        start <= (row, col) < end for start, end in _annotations(module))


def _trim(session: Path, sample: int | None, seed: int) -> int:
    """Drop the operators left out (module doc) and the mutants inside annotations
    (`_annotations`), and keep `sample` mutants; returns how many."""
    db = sqlite3.connect(session)
    try:
        rows = db.execute("SELECT job_id, operator_name, module_path, start_pos_row, "
                          "start_pos_col FROM mutation_specs").fetchall()
        drop = [j for j, op, path, row, col in rows
                if op.endswith("NumberReplacer")
                or ("ReplaceComparisonOperator" in op and not op.endswith(KEEP_COMPARISONS))
                or _equivalent(Path(path), row, col)]
        kept = [j for j, *_ in rows if j not in set(drop)]
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


def _results(session: Path) -> tuple[int, int, int, list[str]]:
    """(killed, all, killed only by the whole run's 900 s timeout, diffs of survivors)."""
    db = sqlite3.connect(session)
    try:
        rows = [(outcome, out, diff) for outcome, out, diff, path, row, col in db.execute(
            "SELECT r.test_outcome, r.output, r.diff, s.module_path, s.start_pos_row, "
            "s.start_pos_col FROM work_results r JOIN mutation_specs s USING (job_id)")
            if not _equivalent(Path(path), row, col)  # (a session made before _trim did)
            and "incompetent: the mutant does not compile" not in (out or "")]
    finally:
        db.close()
    survivors = [f"{out[-400:]}\n{diff}" for outcome, out, diff in rows
                 if outcome.lower() == "survived"]
    timeouts = sum(1 for outcome, out, _d in rows
                   if outcome.lower() == "killed" and out == "timeout")
    return len(rows) - len(survivors), len(rows), timeouts, survivors


def coverage_map(module_keys: list[str]) -> None:
    """Run the selection once under coverage.py, one context per test, and keep for each
    line of each module the tests that executed it (bench/out/mutate/<module>.lines.json);
    the module's pristine text beside it tells a mutant's changed lines."""
    import json

    data_file = OUT / "selection.coverage"
    data_file.unlink(missing_ok=True)
    rc = OUT / "coveragerc"
    rc.write_text("[run]\ndynamic_context = test_function\n")
    include = ",".join(str(WORK / MODULES[k]) for k in module_keys)
    subprocess.run([sys.executable, "-m", "coverage", "run", f"--rcfile={rc}",
                    f"--data-file={data_file}", f"--include={include}",
                    "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                    f"--junitxml={OUT / 'selection.xml'}", *TESTS.split()],
                   cwd=WORK, env=_env(), check=False)
    from coverage import CoverageData

    data = CoverageData(basename=str(data_file))
    data.read()
    seconds = _durations(OUT / "selection.xml")
    for key in module_keys:
        lines: dict[int, list[str]] = {}
        for line, contexts in data.contexts_by_lineno(str(WORK / MODULES[key])).items():
            # quickest first: with -x a killed mutant ends at its first failing test
            if tests := sorted({_node(c) for c in contexts if c},
                               key=lambda t: (seconds.get(t, 60.0), t)):
                lines[line] = tests
        (OUT / f"{key}.lines.json").write_text(json.dumps(lines))
        shutil.copy2(WORK / MODULES[key], OUT / f"{key}.pristine.py")
        print(f"{MODULES[key]}: {len(lines)} lines run by the tests", flush=True)


def _durations(junit: Path) -> dict[str, float]:
    """Seconds each test function took (its parametrized cases summed), from pytest's
    JUnit XML."""
    import xml.etree.ElementTree as ET

    out: dict[str, float] = {}
    if not junit.exists():
        return out
    for case in ET.parse(junit).getroot().iter("testcase"):  # noqa: S314  (our own pytest wrote it)
        name = case.get("name", "").split("[", 1)[0]
        node = _node(f"{case.get('classname', '')}.{name}")
        out[node] = out.get(node, 0.0) + float(case.get("time", "0") or 0)
    return out


def _node(context: str) -> str:
    """coverage's `tests.review.test_x.TestY.test_z` as pytest's node id."""
    parts = context.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        path = Path(*parts[:cut]).with_suffix(".py")
        if (WORK / path).exists():
            return "::".join([path.as_posix(), *parts[cut:]])
    return context


def run(module_key: str, sample: int | None, seed: int, whole: bool) -> tuple[int, int]:
    module = MODULES[module_key]
    OUT.mkdir(parents=True, exist_ok=True)
    config = OUT / f"{module_key}.toml"
    config.write_text(_config(module_key, module, whole))
    session = OUT / f"{module_key}.sqlite"
    session.unlink(missing_ok=True)
    cosmic = [sys.executable, "-m", "cosmic_ray.cli"]
    subprocess.run([*cosmic, "init", str(config), str(session)], cwd=WORK, check=True)
    count = _trim(session, sample, seed)
    print(f"{module}: {count} mutants", flush=True)
    subprocess.run([*cosmic, "exec", str(config), str(session)], cwd=WORK, check=True,
                   env=_env())
    return report(module_key)


def rerun_survivors(module_key: str, whole: bool) -> tuple[int, int]:
    """The module's last session again, its survivors only: their results are dropped and
    cosmic-ray runs what has no result (the killed keep theirs: the tests only grew)."""
    module = MODULES[module_key]
    config = OUT / f"{module_key}.toml"
    config.write_text(_config(module_key, module, whole))
    session = OUT / f"{module_key}.sqlite"
    db = sqlite3.connect(session)
    try:
        again = [j for (j,) in db.execute("SELECT job_id FROM work_results WHERE "
                                           "lower(test_outcome) = 'survived'")]
        for job in again:
            db.execute("DELETE FROM work_results WHERE job_id = ?", (job,))
        db.commit()
    finally:
        db.close()
    print(f"{module}: {len(again)} survivors run again", flush=True)
    cosmic = [sys.executable, "-m", "cosmic_ray.cli"]
    subprocess.run([*cosmic, "exec", str(config), str(session)], cwd=WORK, check=True,
                   env=_env())
    return report(module_key)


def report(module_key: str) -> tuple[int, int]:
    """The score and the survivors of the module's last session (bench/out/mutate)."""
    module = MODULES[module_key]
    killed, total, timeouts, survivors = _results(OUT / f"{module_key}.sqlite")
    report = [f"{module}: {killed}/{total} killed ({100 * killed / max(total, 1):.1f}%; "
              f"{timeouts} of them by the 900 s timeout alone)", ""]
    report += [f"--- survivor {n}\n{diff}" for n, diff in enumerate(survivors, 1)]
    (OUT / f"{module_key}.txt").write_text("\n".join(report) + "\n")
    print(report[0], flush=True)
    return killed, total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", nargs="+", choices=sorted(MODULES), default=list(MODULES))
    parser.add_argument("--sample", type=int, default=None, help="mutants per module")
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--whole", action="store_true",
                        help="run the whole selection for every mutant (slow)")
    parser.add_argument("--reuse-map", action="store_true",
                        help="keep the last coverage map (the checkout's tests unchanged)")
    parser.add_argument("--report", action="store_true",
                        help="only report the last sessions again")
    parser.add_argument("--survivors", action="store_true",
                        help="run the last sessions' survivors again against the checkout's "
                             "tests now (the tests written to kill them), the map rebuilt")
    args = parser.parse_args(argv)
    if args.report:
        scores = {m: report(m) for m in args.modules}
        for m, (killed, total) in scores.items():
            print(f"{m:8} {killed:5}/{total:<5} {100 * killed / max(total, 1):5.1f}%")
        return 0
    if not args.reuse_map:
        _copy()
    if not args.whole and not args.reuse_map:
        coverage_map(args.modules)
    if args.survivors:
        scores = {m: rerun_survivors(m, args.whole) for m in args.modules}
    else:
        scores = {m: run(m, args.sample, args.seed, args.whole) for m in args.modules}
    print("\nmodule   killed/all  score")
    for m, (killed, total) in scores.items():
        print(f"{m:8} {killed:5}/{total:<5} {100 * killed / max(total, 1):5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
