#!/usr/bin/env python3
"""Proposal review's rule findings against the generator's ground truth: precision and
recall of R1 and R3 on the agent branch of corpora from ../shared/bench/make_corpus.py.

    .venv/bin/python bench/proposals_quality.py [--facts 3000] [--seeds 1 2 3] [--no-doc]

For each seed a corpus is generated (with its agent branch and manifest), indexed, and
every proposal checked as if accepted (`review.checks.check_all`). The manifest's
`breaks` are the truth: R1_hypothesis_source and R1_pragmatic_source count as R1,
R3_discovered_seed as R3. A finding is one (proposal, code) pair: an R1/R3 error the
checks report on a proposal. True positive: the manifest names it; false positive: it
does not; false negative: the manifest names one the checks missed. The numbers go to
the section "## Rule findings on proposals: precision and recall" of docs/review.md
(unless --no-doc).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "app"))
MAKE_CORPUS = ROOT.parent / "shared" / "bench" / "make_corpus.py"
HEADING = "## Rule findings on proposals: precision and recall"
CODES = {"R1_hypothesis_source": "R1", "R1_pragmatic_source": "R1", "R3_discovered_seed": "R3"}


def measure(facts: int, seed: int, proposals: int | None, work: Path) -> dict[str, object]:
    from factdesk.index.indexer import Indexer
    from factdesk.review.checks import check_all
    from factdesk.review.proposals import load_queue

    out = work / f"kb{seed}"
    args = [sys.executable, str(MAKE_CORPUS), "--facts", str(facts), "--seed", str(seed),
            "--out", str(out), "--quiet", "--now", "2026-11-30"]
    if proposals:
        args += ["--proposals", str(proposals)]
    subprocess.run(args, check=True)
    manifest = json.loads(out.with_name(f"kb{seed}.manifest.json").read_text())
    indexer = Indexer(out)
    indexer.update()
    queue = load_queue(out)
    started = time.perf_counter()
    checked = {p.sha: p for p in check_all(indexer, queue)}
    seconds = time.perf_counter() - started
    tp = fp = fn = 0
    per_code = {c: [0, 0, 0] for c in ("R1", "R3")}
    missing = 0
    for m in manifest["proposals"]:
        p = checked.get(m["sha"])
        if p is None:
            missing += 1
            continue
        want = {CODES[b] for b in m["breaks"]}
        got = {x.code for f in p.facts for x in f.problems or ()
               if x.code in ("R1", "R3") and x.severity == "error"}
        for code in ("R1", "R3"):
            hit = (code in want, code in got)
            per_code[code][0] += hit == (True, True)
            per_code[code][1] += hit == (False, True)
            per_code[code][2] += hit == (True, False)
        tp += len(want & got)
        fp += len(got - want)
        fn += len(want - got)
    return {"seed": seed, "facts": facts, "proposals": len(manifest["proposals"]),
            "listed": len(checked), "missing": missing, "tp": tp, "fp": fp, "fn": fn,
            "per_code": per_code, "check_all_s": round(seconds, 2)}


def ratio(a: int, b: int) -> str:
    return "n/a" if b == 0 else f"{a / b:.3f}"


def write_doc(rows: list[dict[str, object]], command: str) -> None:
    tp = sum(int(r["tp"]) for r in rows)  # type: ignore[call-overload]
    fp = sum(int(r["fp"]) for r in rows)  # type: ignore[call-overload]
    fn = sum(int(r["fn"]) for r in rows)  # type: ignore[call-overload]
    lines = [HEADING, "",
             f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()} "
             f"({os.cpu_count()} cores), `{command}`. One finding = one (proposal, code) "
             "pair; the manifest's `breaks` are the truth (R1_hypothesis_source and "
             "R1_pragmatic_source → R1, R3_discovered_seed → R3).", "",
             "| seed | facts | proposals (listed) | TP | FP | FN | precision | recall | "
             "check_all |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['seed']} | {r['facts']} | {r['proposals']} ({r['listed']}) | "
                     f"{r['tp']} | {r['fp']} | {r['fn']} | "
                     f"{ratio(int(r['tp']), int(r['tp']) + int(r['fp']))} | "  # type: ignore[call-overload]
                     f"{ratio(int(r['tp']), int(r['tp']) + int(r['fn']))} | "  # type: ignore[call-overload]
                     f"{r['check_all_s']} s |")
    lines += ["", f"All together: precision {ratio(tp, tp + fp)}, recall {ratio(tp, tp + fn)} "
              f"({tp} true findings, {fp} false, {fn} missed).", ""]
    doc = ROOT / "docs" / "review.md"
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Proposal review\n"
    start = text.find(HEADING)
    block = "\n".join(lines)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + block
    else:
        nxt = text.find("\n## ", start + len(HEADING))
        text = text[:start] + block + ("\n" + text[nxt + 1:] if nxt >= 0 else "")
    doc.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--facts", type=int, default=3000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--proposals", type=int, default=60)
    ap.add_argument("--no-doc", action="store_true")
    a = ap.parse_args()
    if not MAKE_CORPUS.exists():
        print(f"the corpus generator is absent ({MAKE_CORPUS}); it ships in ../shared")
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="proposals-quality-") as tmp:
        for seed in a.seeds:
            r = measure(a.facts, seed, a.proposals, Path(tmp))
            rows.append(r)
            print(json.dumps(r))
    if not a.no_doc:
        command = ("python bench/proposals_quality.py --facts "
                   f"{a.facts} --proposals {a.proposals} --seeds {' '.join(map(str, a.seeds))}")
        write_doc(rows, command)
    failures = sum(int(r["fn"]) + int(r["fp"]) + int(r["missing"]) for r in rows)  # type: ignore[call-overload]
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
