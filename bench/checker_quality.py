"""Precision and recall of `factdesk check` against make_corpus.py's ground truth.

    .venv/bin/python bench/checker_quality.py --facts 10000 --seed 5

A finding counts when the manifest lists the path for that defect with the right code
(planted rule violations, malformed files, syntheses citing hypotheses); every other
error with one of those codes is a false positive.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.integration.test_generated import EXPECTED_CODE, MALFORMED_CODE, expected_findings

MAKE = Path(__file__).resolve().parents[2] / "shared" / "bench" / "make_corpus.py"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "kb"
        subprocess.run([sys.executable, str(MAKE), "--facts", str(args.facts), "--commits",
                        str(max(200, args.facts // 10)), "--seed", str(args.seed), "--out",
                        str(out), "--quiet", "--now", "2026-11-30"], check=True)
        manifest = json.loads(out.with_name("kb.manifest.json").read_text())
        proc = subprocess.run([sys.executable, "-m", "factdesk.cli", "check", "--kb", str(out),
                               "--format", "json"], capture_output=True, check=False)
        report = json.loads(proc.stdout)
    codes = set(EXPECTED_CODE.values()) | set(MALFORMED_CODE.values()) | {"R1"}
    found = {(e["path"], e["code"]) for e in report["errors"] if e["code"] in codes}
    found |= {(w["path"], "H1") for w in report["warnings"]
              if w["code"] == "H1" and "no settlement criterion" in w["message"]}
    want = expected_findings(manifest)
    tp = len(found & want)
    print(f"facts {args.facts}, seed {args.seed}: expected {len(want)}, reported {len(found)}")
    print(f"precision {tp / max(1, len(found)):.3f}  recall {tp / max(1, len(want)):.3f}")
    for code in sorted({c for _, c in want}):
        w = {p for p, c in want if c == code}
        f = {p for p, c in found if c == code}
        print(f"  {code:<18} expected {len(w):>4}  found {len(f & w):>4}  false+ {len(f - w):>3}")


if __name__ == "__main__":
    main()
