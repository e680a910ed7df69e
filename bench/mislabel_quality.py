"""Precision and recall of the suspected-mislabel heuristics; writes docs/mislabels.md.

    .venv/bin/python bench/mislabel_quality.py                 # kb10000 + fresh 2k + demo + real
    .venv/bin/python bench/mislabel_quality.py --big           # also time the queue at 100k facts

Ground truth: make_corpus.py's manifest (`planted`, `decoys`) for generated corpora, and
the demo corpus's planted cases (app/factdesk/demo_data/resources/demo/history.yaml). A
finding is a true positive when the manifest plants that path for the heuristic's kind; findings on the
generator's malformed files are listed apart (correct, but outside the ground truth).
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
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.integration.test_mislabel_quality import (  # noqa: E402
    PLANTED_KIND,
    Row,
    demo_planted,
    index_suggestions,
    score_demo,
    score_generated,
)

from factdesk.demo import build_demo_corpus  # noqa: E402

MAKE = ROOT.parent / "shared" / "bench" / "make_corpus.py"
BUNDLE = ROOT.parent / "shared" / "corpora" / "agentic-engineering-kb.bundle"
OUT = ROOT / "bench" / "out"


def table(rows: list[Row], *, decoys: bool = True) -> str:
    head = "| heuristic | ground truth | expected | found | true + | false + | precision | recall |"
    sep = "|---|---|---:|---:|---:|---:|---:|---:|"
    if decoys:
        head += " decoys flagged |"
        sep += "---:|"
    lines = [head, sep]
    for r in rows:
        line = (f"| `{r.code}` | {r.truth} | {len(r.expected)} | {len(r.found)} | {r.tp} | "
                f"{len(r.false_pos)} | {r.precision:.3f} | {r.recall:.3f} |")
        if decoys:
            line += f" {len(r.decoys_flagged)} |"
        lines.append(line)
    tp = sum(r.tp for r in rows if r.code in PLANTED_KIND or r.expected)
    judged = sum(len(r.found - r.explained) for r in rows)
    want = sum(len(r.expected) for r in rows)
    lines.append("")
    lines.append(f"All heuristics: precision {tp / max(1, judged):.3f}, recall {tp / max(1, want):.3f} "
                 f"({want} expected, {judged} judged findings).")
    explained = sorted({p for r in rows for p in r.explained})
    if explained:
        lines.append("Findings on the generator's malformed files (correct, outside the ground truth): "
                     + ", ".join(f"`{p}`" for p in explained) + ".")
    return "\n".join(lines)


def generated(repo: Path, manifest_path: Path) -> tuple[list[Row], dict[str, float]]:
    manifest = json.loads(manifest_path.read_text())
    t0 = time.perf_counter()
    facts, suggestions = index_suggestions(repo)
    total = time.perf_counter() - t0
    return score_generated(facts, suggestions, manifest), {"facts": len(facts), "seconds": total}


def decoy_notes(rows: list[Row], manifest: dict[str, list[str]]) -> str:
    n = sum(len(v) for v in manifest.values())
    return f"{n} decoys in the corpus; flagged by the heuristic they imitate: " \
           f"{sum(len(r.decoys_flagged) for r in rows)}."


def big_timing(repo: Path) -> str:
    """Seconds to read every live fact from an up-to-date index and run every heuristic."""
    import sqlite3

    from factdesk.core import open_corpus
    from factdesk.corpus.registry_io import load_registry
    from factdesk.curation.dismissals import facts_from_index
    from factdesk.model.mislabels import MislabelContext, suggest_all

    ix = open_corpus(repo)
    ix.update()
    conn = ix.connect(readonly=True)
    conn.row_factory = sqlite3.Row
    t0 = time.perf_counter()
    facts, _, creators = facts_from_index(conn)
    t1 = time.perf_counter()
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    ctx = MislabelContext(repo_id=frozenset(str(meta.get("repo_id") or "").split()) or None,
                          registry=load_registry(repo), creators=creators)
    suggestions = suggest_all(facts, ctx)
    t2 = time.perf_counter()
    one = facts_from_index(conn, [facts[len(facts) // 2].path])[0]
    t3 = time.perf_counter()
    suggest_all(one, ctx)
    t4 = time.perf_counter()
    return (f"### Speed at {len(facts):,} facts (`bench/out/kb100000`)\n\n"
            f"Reading every live fact from the index: {t1 - t0:.2f} s; every heuristic over them: "
            f"{t2 - t1:.2f} s ({len(suggestions):,} suggestions). Re-checking one fact after an "
            f"operation (`queue_from_index(..., paths=[path])`): {(t4 - t2) * 1000:.1f} ms "
            f"(read {(t3 - t2) * 1000:.1f} ms). The whole-corpus queue belongs on a worker thread.")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=2000, help="size of the fresh corpus")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--plant-frac", type=float, default=0.01)
    ap.add_argument("--big", action="store_true", help="also time the queue on bench/out/kb100000")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "mislabels.md")
    args = ap.parse_args()
    sections: list[str] = []

    kb10k = OUT / "kb10000"
    if kb10k.exists():
        rows, t = generated(kb10k, OUT / "kb10000.manifest.json")
        man = json.loads((OUT / "kb10000.manifest.json").read_text())
        sections.append(f"### Generated, 10,000 facts (`bench/out/kb10000`, seed 1, plant-frac 0.002)\n\n"
                        f"{table(rows)}\n\n{decoy_notes(rows, man['decoys'])} "
                        f"Index update + read + all heuristics: {t['seconds']:.2f} s for {t['facts']} facts.")
        print(f"kb10000 done ({t['seconds']:.1f} s)", file=sys.stderr)

    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "kb"
        subprocess.run([sys.executable, str(MAKE), "--facts", str(args.facts), "--commits",
                        str(max(200, args.facts // 5)), "--seed", str(args.seed), "--out", str(fresh),
                        "--quiet", "--plant-frac", str(args.plant_frac), "--decoy-frac",
                        str(args.plant_frac), "--now", "2026-11-30"], check=True)
        rows, t = generated(fresh, fresh.with_name("kb.manifest.json"))
        man = json.loads(fresh.with_name("kb.manifest.json").read_text())
        sections.append(f"### Generated, {args.facts:,} facts (fresh: seed {args.seed}, plant-frac and "
                        f"decoy-frac {args.plant_frac})\n\n{table(rows)}\n\n"
                        + decoy_notes(rows, man["decoys"]))
        print("fresh corpus done", file=sys.stderr)

        demo = build_demo_corpus(Path(tmp) / "demo")
        _, suggestions = index_suggestions(demo)
        rows = score_demo(suggestions, demo_planted())
        sections.append("### Demo corpus (`app/factdesk/demo_data/kb/`, 62 facts; planted cases "
                        "from its resources/demo/README.md)\n\n"
                        + table(rows, decoys=False))

        if BUNDLE.exists():
            real = Path(tmp) / "real"
            subprocess.run(["git", "clone", "-q", str(BUNDLE), str(real)], check=True)
            facts, suggestions = index_suggestions(real)
            listed = "\n".join(f"* `{s.code}` {s.path}: {s.explanation}" for s in suggestions) or "* none"
            sections.append(f"### Real corpus (agentic-engineering-kb, {len(facts)} facts; "
                            f"no ground truth)\n\n{len(suggestions)} suggestion(s):\n\n{listed}")

    if args.big and (OUT / "kb100000").exists():
        sections.append(big_timing(OUT / "kb100000"))

    machine = (f"{platform.node() or 'dev machine'}: {platform.system()} {platform.release()}, "
               f"{os.cpu_count()} CPUs, Python {platform.python_version()}")
    doc = f"""# Suspected mislabels: the heuristics against ground truth

Measured {date.today().isoformat()} on {machine} with

```
.venv/bin/python bench/mislabel_quality.py {' '.join(sys.argv[1:])}
```

The heuristics live in `factdesk.model.mislabels` (pure) and the queue with its dismissals
in `factdesk.curation.dismissals`; see the module docstrings for the codes and the
dismissals file. A finding is a *true positive* when the ground truth lists that path for
the heuristic's planted kind; *false +* counts every other finding except those on the
generator's malformed files (listed separately: correct, but outside the ground truth).
*Decoys flagged* counts the generator's look-alike correct facts flagged by the heuristic
they imitate (a hedge only inside a quoted source, a hedged hypothesis, imperative titles
on pragmatic facts, a tool observing or reporting about the user, a persona citing one URL,
a synthesis with two local refs in mixed forms, an observation whose only ref is local).
`legacy-envelope` is scored against the facts whose `claim_type: legacy` is explicit at HEAD;
a decoy that happens to carry one is flagged by that heuristic, correctly.

How far to trust this: outside its planted facts and decoys the generator removes every
hedge word and instruction-first title from its text, so the generated corpora measure the
heuristics against the look-alikes the generator knows, not against free prose. The demo
corpus is hand-written prose (its correct observations hedge in later sentences — "could",
"would", "may" — and are not flagged, because only the title and the first sentence of the
body are read, quoted material and code spans removed). On the real corpus, with no ground
truth, the queue holds one suggestion, a plausible one (a "Don't …" rule filed as a pattern).
Wording heuristics are English-only; `will` alone is not counted as a hedge (reports of
scheduled work use it).

Not covered by a relabel, so not in the queue (the checker reports them): a view writing
(A1: retract it), a discovered fact citing a discovered one (R3), a hypothesis without a
criterion (H1: an edit that only the curator can write). `no-envelope` (a fact with no
envelope at all, half of every generated corpus) is opt-in and not scored.

{chr(10).join(s + chr(10) for s in sections)}"""
    args.out.write_text(doc, encoding="utf-8")
    print(doc)


if __name__ == "__main__":
    main()
