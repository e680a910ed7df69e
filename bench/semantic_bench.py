"""Semantic-layer benchmark: throughput, quality (calibration), and 100k-scale timings.

    .venv/bin/python bench/semantic_bench.py [--only quality,throughput,scale] [--json OUT]

* throughput: texts/s of each backend on the same realistic texts (title + body from the
  generated 100k corpus), beside a plain `SentenceTransformer.encode` of the full model
  (a sample for the slow model).
* quality: for each backend, the cosine of the generated manifest's near-duplicate pairs
  (hypothesis ↔ the observation that paraphrases it) against each hypothesis's best
  non-partner in a pool of distractors; recall at the calibrated threshold and recall@1/@5;
  the published corpus's dedup merges (real pairs); agreement of each backend's top-5
  neighbours with the full model's on the published corpus.
* scale: time until bench/out/kb100000 is fully embedded with the default backend (a fresh
  embeddings.db), re-open embeds nothing, neighbours latency p95, full duplicate scan,
  incremental scan.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "app"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from factdesk.core import open_corpus  # noqa: E402
from factdesk.semantic import backends  # noqa: E402
from factdesk.semantic.store import EmbeddingStore, store_path  # noqa: E402
from factdesk.semantic.thresholds import duplicate_threshold  # noqa: E402
from factdesk.semantic.vectors import VectorIndex, duplicate_scan  # noqa: E402

OUT = ROOT / "bench" / "out"
KB100K = OUT / "kb100000"
BUNDLE = ROOT.parent / "shared" / "corpora" / "agentic-engineering-kb.bundle"


def _index_conn(repo: Path) -> Any:
    indexer = open_corpus(repo)
    if not indexer.path.exists():
        indexer.update()
    return indexer.connect(readonly=True)


def _texts(conn: Any, paths: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for path, title, body in conn.execute(
            f"SELECT path, title, body FROM facts WHERE path IN ({','.join('?' * len(paths))})",
            paths):
        out[path] = backends.fact_text(title, body)
    return out


def _sample_texts(n: int, seed: int = 5) -> list[str]:
    conn = _index_conn(KB100K)
    ids = [r[0] for r in conn.execute("SELECT id FROM facts WHERE status = 'live'")]
    pick = random.Random(seed).sample(ids, n)  # noqa: S311 (a reproducible sample)
    rows = conn.execute(f"SELECT title, body FROM facts WHERE id IN ({','.join('?' * n)})", pick)
    return [backends.fact_text(t, b) for t, b in rows]


def throughput(results: dict[str, Any]) -> None:
    texts = _sample_texts(5000)
    out: dict[str, Any] = {}
    static = backends.load_backend("static")
    static.encode(texts[:50])
    t = time.perf_counter()
    static.encode(texts)
    out["static (model2vec)"] = {"texts": len(texts), "per_s": len(texts) / (time.perf_counter() - t)}
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    st_static = SentenceTransformer(modules=[StaticEmbedding.from_model2vec(
        str(backends.static_model_dir()))], device="cpu")
    st_static.encode(texts[:50])
    t = time.perf_counter()
    st_static.encode(texts[:2000], batch_size=256)
    out["static (sentence-transformers StaticEmbedding)"] = {
        "texts": 2000, "per_s": 2000 / (time.perf_counter() - t)}
    sample = texts[:500]
    full = backends.load_backend("full")
    full.encode(sample[:8])
    t = time.perf_counter()
    full.encode(sample)
    out["full (factdesk FullBackend)"] = {"texts": len(sample),
                                          "per_s": len(sample) / (time.perf_counter() - t)}
    plain = SentenceTransformer(str(backends.source_model_path()), device="cpu")
    t = time.perf_counter()
    plain.encode(sample)
    out["full (plain SentenceTransformer.encode)"] = {
        "texts": len(sample), "per_s": len(sample) / (time.perf_counter() - t)}
    for name, r in out.items():
        r["hours_per_100k"] = 100_000 / r["per_s"] / 3600
        print(f"throughput {name}: {r['per_s']:.1f} texts/s ({r['texts']} texts)", flush=True)
    results["throughput"] = out


def _pair_quality(vecs: dict[str, np.ndarray], pairs: list[tuple[str, str]], pool: list[str],
                  threshold: float) -> dict[str, Any]:
    """Pair cosines vs the best distractor per hypothesis; recall at threshold and @k."""
    keys = sorted(set(pool) | {p for pair in pairs for p in pair})
    m = np.stack([vecs[k] for k in keys])
    row = {k: i for i, k in enumerate(keys)}
    pair_cos, best_other, ranks = [], [], []
    for h, o in pairs:
        sims = m @ m[row[h]]
        sims[row[h]] = -2
        partner = float(sims[row[o]])
        pair_cos.append(partner)
        others = sims.copy()
        others[row[o]] = -2
        best_other.append(float(others.max()))
        ranks.append(int((sims > partner).sum()) + 1)
    pc, bo, rk = np.array(pair_cos), np.array(best_other), np.array(ranks)
    return {
        "pairs": len(pairs), "pool": len(keys),
        "pair_cos_p5": float(np.percentile(pc, 5)), "pair_cos_median": float(np.median(pc)),
        "pair_cos_min": float(pc.min()),
        "best_other_median": float(np.median(bo)), "best_other_p95": float(np.percentile(bo, 95)),
        "best_other_max": float(bo.max()),
        "threshold": threshold, "recall_at_threshold": float((pc >= threshold).mean()),
        "false_at_threshold": int((bo >= threshold).sum()),
        "recall_at_1": float((rk <= 1).mean()), "recall_at_5": float((rk <= 5).mean()),
    }


def _real_corpus() -> Path:
    dest = Path(tempfile.mkdtemp(prefix="sem-real-")) / "agentic-engineering-kb"
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(dest)], check=True)
    return dest


def _real_dedup_pairs(repo: Path) -> list[tuple[str, str]]:
    """(loser text, winner text) of every `dedup: merge A into B` on any branch."""
    log = subprocess.run(["git", "-C", str(repo), "log", "--all", "--format=%H%x00%s"],
                         capture_output=True, text=True, check=True).stdout
    out = []
    for line in log.splitlines():
        sha, subject = line.split("\0", 1)
        if not subject.startswith("dedup: merge ") or " into " not in subject:
            continue
        loser, winner = subject[len("dedup: merge "):].split(" [", 1)[0].split(" into ")
        texts = []
        for path in (loser, winner):
            blob = subprocess.run(["git", "-C", str(repo), "show", f"{sha}^:{path}"],
                                  capture_output=True, text=True)
            if blob.returncode != 0:
                break
            texts.append(_title_body(blob.stdout))
        if len(texts) == 2:
            out.append((texts[0], texts[1]))
    return out


def _title_body(text: str) -> str:
    body = text.split("\n---\n", 1)[1] if text.startswith("---\n") else text
    lines = body.strip("\n").split("\n")
    title = lines[0].lstrip("# ").strip() if lines and lines[0].startswith("#") else ""
    return backends.fact_text(title, "\n".join(lines[1:]).strip("\n"))


def quality(results: dict[str, Any], n_pairs: int, n_pool: int) -> None:
    manifest = json.loads((OUT / "kb100000.manifest.json").read_text())
    conn = _index_conn(KB100K)
    rng = random.Random(7)  # noqa: S311 (a reproducible sample)
    raw = [(d["hypothesis"], d["observation"]) for d in manifest["near_duplicates"]]
    pairs = rng.sample(raw, min(n_pairs, len(raw)))
    live = [r[0] for r in conn.execute("SELECT path FROM facts WHERE status = 'live'")]
    involved = {p for pair in raw for p in pair}
    pool = rng.sample([p for p in live if p not in involved], n_pool)
    texts = _texts(conn, sorted({p for pair in pairs for p in pair} | set(pool)))
    pairs = [(h, o) for h, o in pairs if h in texts and o in texts]
    keys = sorted(texts)
    real = _real_corpus()
    real_conn = _index_conn(real)
    real_rows = real_conn.execute(
        "SELECT path, title, body FROM facts WHERE status = 'live' ORDER BY path").fetchall()
    real_texts = [backends.fact_text(t, b) for _, t, b in real_rows]
    dedups = _real_dedup_pairs(real)
    shutil.rmtree(real.parent, ignore_errors=True)
    out: dict[str, Any] = {"generated": {}, "real_dedup_pairs": {}, "real_top5_agreement": {}}
    nn: dict[str, np.ndarray] = {}
    for name in ("full", "static"):
        b = backends.load_backend(name)
        t = time.perf_counter()
        # The same space the app searches in: VectorIndex mean-shifts where the backend needs it.
        gen = VectorIndex(b.model_id, keys, keys, b.encode([texts[k] for k in keys]))
        vecs = dict(zip(keys, gen.matrix, strict=True))
        print(f"quality {name}: embedded {len(keys)} texts in {time.perf_counter() - t:.1f}s",
              flush=True)
        out["generated"][name] = _pair_quality(vecs, pairs, pool, duplicate_threshold(b.model_id))
        print(f"  {out['generated'][name]}", flush=True)
        real_index = VectorIndex(b.model_id, [str(i) for i in range(len(real_texts))],
                                 [str(i) for i in range(len(real_texts))], b.encode(real_texts))
        if dedups:
            lv = b.encode([x for x, _ in dedups])
            wv = b.encode([y for _, y in dedups])
            cos = [float(real_index.project(x) @ real_index.project(y))
                   for x, y in zip(lv, wv, strict=True)]
            out["real_dedup_pairs"][name] = {"pairs": len(cos), "cos": [round(c, 3) for c in cos]}
            print(f"  real dedup pairs: {out['real_dedup_pairs'][name]}", flush=True)
        rv = real_index.matrix
        sims = rv @ rv.T
        np.fill_diagonal(sims, -2)
        nn[name] = np.argsort(-sims, axis=1)[:, :5]
        real_best = sims.max(axis=1)
        out.setdefault("real_nn_cos", {})[name] = {
            "median": float(np.median(real_best)), "p95": float(np.percentile(real_best, 95)),
            "above_threshold": int((np.triu(sims, 1) >= duplicate_threshold(b.model_id)).sum())}
    for name in ("static",):
        overlap = [len(set(nn[name][i]) & set(nn["full"][i])) / 5 for i in range(len(real_texts))]
        top1 = [float(nn[name][i][0] == nn["full"][i][0]) for i in range(len(real_texts))]
        out["real_top5_agreement"][name] = {"facts": len(real_texts),
                                            "top5_overlap": float(np.mean(overlap)),
                                            "top1_same": float(np.mean(top1))}
        print(f"  real top-5 agreement {name}: {out['real_top5_agreement'][name]}", flush=True)
    results["quality"] = out


def scale(results: dict[str, Any]) -> None:
    """Embed kb100000 from nothing with the default backend, then the re-open, then search."""
    indexer = open_corpus(KB100K)
    t = time.perf_counter()
    indexer.update()
    index_s = time.perf_counter() - t
    path = store_path(KB100K)
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    backend = backends.load_backend()
    runs = []
    for label in ("embedded", "re-open embedded"):  # from nothing, then an unchanged corpus
        store = EmbeddingStore(KB100K)
        t = time.perf_counter()
        runs.append((store.embed_pending(indexer, backend), time.perf_counter() - t))
        store.close()
        print(f"scale: {label} {runs[-1][0].embedded} in {runs[-1][1]:.2f}s", flush=True)
    (first, first_s), (again, again_s) = runs
    results["scale"] = {
        "facts": first.facts, "backend": backend.model_id, "index_update_s": index_s,
        "embed_s": first_s, "embedded": first.embedded, "reopen_s": again_s,
        "reopen_embedded": again.embedded, "embeddings_db_mb": path.stat().st_size / 1e6,
    }
    print(json.dumps(results["scale"], indent=1), flush=True)


def scan(results: dict[str, Any]) -> None:
    """Neighbours latency and duplicate scans over kb100000's embeddings (from `scale`)."""
    backend = backends.load_backend()
    store = EmbeddingStore(KB100K)
    t = time.perf_counter()
    vindex = VectorIndex.load(store, backend.model_id)
    load_s = time.perf_counter() - t
    rng = random.Random(3)  # noqa: S311 (a reproducible sample)
    lat = []
    for fact in rng.sample(vindex.paths, 200):
        t = time.perf_counter()
        vindex.neighbours(fact, 10)
        lat.append((time.perf_counter() - t) * 1000)
    threshold = duplicate_threshold(backend.model_id)
    store.connection.executescript("DROP TABLE IF EXISTS dup_scanned; DROP TABLE IF EXISTS dup_pairs;")
    t = time.perf_counter()
    pairs, _ = duplicate_scan(store, backend.model_id, threshold, index=vindex)
    scan_s = time.perf_counter() - t
    print(f"scan: full scan {scan_s:.1f}s, {len(pairs)} pairs", flush=True)
    t = time.perf_counter()
    _, again = duplicate_scan(store, backend.model_id, threshold, index=vindex)
    rescan_s = time.perf_counter() - t
    # Incremental: 100 facts' texts treated as new (their scan marks removed).
    changed = rng.sample(vindex.hashes, 100)
    with store.connection:
        store.connection.executemany("DELETE FROM dup_scanned WHERE content_hash = ?",
                                     [(h,) for h in changed])
    t = time.perf_counter()
    _, incr = duplicate_scan(store, backend.model_id, threshold, index=vindex)
    incr_s = time.perf_counter() - t
    manifest = json.loads((OUT / "kb100000.manifest.json").read_text())
    found = {(p.a, p.b) for p in pairs}
    live_pairs = [tuple(sorted((d["hypothesis"], d["observation"])))
                  for d in manifest["near_duplicates"]
                  if d["hypothesis"] in vindex.row and d["observation"] in vindex.row]
    recall = sum(1 for p in live_pairs if p in found) / max(1, len(live_pairs))
    store.close()
    results["scan"] = {
        "facts": len(vindex), "backend": backend.model_id, "matrix_load_s": load_s,
        "neighbours_ms_p50": float(np.percentile(lat, 50)),
        "neighbours_ms_p95": float(np.percentile(lat, 95)),
        "scan_s": scan_s, "scan_pairs": len(pairs), "threshold": threshold,
        "rescan_unchanged_s": rescan_s, "rescan_incremental": again.incremental,
        "incremental_100_changed_s": incr_s, "incremental_compared": incr.compared,
        "manifest_live_pairs": len(live_pairs), "manifest_recall_full_corpus": recall,
    }
    print(json.dumps(results["scan"], indent=1), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", default="scale,scan,throughput,quality")
    ap.add_argument("--pairs", type=int, default=300)
    ap.add_argument("--pool", type=int, default=1000)
    ap.add_argument("--json", type=Path, default=OUT / "semantic_results.json")
    args = ap.parse_args()
    results: dict[str, Any] = {
        "machine": f"{platform.machine()} {os.cpu_count()} CPUs, {platform.python_version()}",
        "command": " ".join(["bench/semantic_bench.py", *sys.argv[1:]]),
        "when": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
    }
    if args.json.exists():
        results = {**json.loads(args.json.read_text()), **results}
    for part in args.only.split(","):
        {"throughput": throughput, "scale": scale, "scan": scan,
         "quality": lambda r: quality(r, args.pairs, args.pool)}[part](results)
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
