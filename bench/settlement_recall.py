#!/usr/bin/env python3
"""Do the confirming near-duplicates show up as the settlement queue's top candidates?

    .venv/bin/python bench/settlement_recall.py [--kb bench/out/kb10000]

For every near-duplicate pair in the generator's manifest whose hypothesis is still an
open hypothesis at HEAD (so it is in the queue), this asks `reflect.queue.candidates`
for the hypothesis's candidates, (a) as the queue computes them — facts citing it, plus
near-duplicate observations written after it from the semantic layer (default static
backend) — and (b) by similarity alone (the citing link ignored), and reports the share
of pairs whose confirming observation is the top candidate and among the top 3. Writes
the section "## Settlement candidates" of docs/semantic.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from doc_sections import replace_section

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "semantic.md"
SECTION = "## Settlement candidates"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kb", type=Path, default=ROOT / "bench" / "out" / "kb10000")
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from factdesk.core import open_corpus
    from factdesk.reflect.queue import candidates
    from factdesk.semantic.search import session_for

    kb = args.kb.resolve()
    manifest = json.loads(kb.with_name(kb.name + ".manifest.json").read_text())
    ix = open_corpus(kb)
    ix.update()
    t0 = time.perf_counter()
    session = session_for(ix)
    stats = session.embed_pending()
    embed_s = time.perf_counter() - t0
    conn = ix.connect(readonly=True)
    pairs = [p for p in manifest["near_duplicates"]
             if p.get("hypothesis_at_head") and p.get("hypothesis_type_at_head") == "hypothesis"]

    def similar(path: str) -> list[tuple[str, float]]:
        return [(n.path, n.score) for n in session.neighbours(path, 20)]

    top1 = top3 = sim1 = sim3 = 0
    for p in pairs:
        hyp, obs = p["hypothesis_path_at_head"], p["observation"]
        ranked = [c.path for c in candidates(conn, hyp, similar)]
        top1 += ranked[:1] == [obs]
        top3 += obs in ranked[:3]
        by_sim = [c.path for c in sorted(candidates(conn, hyp, similar), key=lambda c: -(c.score or 0.0))
                  if c.score is not None]
        sim1 += by_sim[:1] == [obs]
        sim3 += obs in by_sim[:3]
    n = len(pairs)
    lines = [
        SECTION, "",
        f"`{kb.name}` (its manifest's {len(manifest['near_duplicates'])} near-duplicate pairs, {n} with the "
        f"hypothesis still open at HEAD), backend `{session.model_id}`, "
        + (f"embedding {stats.embedded} facts took {embed_s:.0f} s" if stats.embedded else
           f"the stored embeddings were current ({embed_s:.0f} s to check)")
        + ". Command: "
        "`.venv/bin/python bench/settlement_recall.py`.", "",
        "| candidates | confirming observation first | in the top 3 |",
        "|---|---|---|",
        f"| as the queue shows them (citing facts first, then by similarity) | {top1}/{n} "
        f"({100 * top1 / max(n, 1):.0f} %) | {top3}/{n} ({100 * top3 / max(n, 1):.0f} %) |",
        f"| by similarity alone (the citing link ignored) | {sim1}/{n} ({100 * sim1 / max(n, 1):.0f} %) | "
        f"{sim3}/{n} ({100 * sim3 / max(n, 1):.0f} %) |",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_doc:
        replace_section(DOC, SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
