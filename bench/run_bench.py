#!/usr/bin/env python3
"""factdesk performance benchmark (`make bench`).

    .venv/bin/python bench/run_bench.py                       # 100,000 and 10,000 facts
    .venv/bin/python bench/run_bench.py --facts 10000         # quick run
    .venv/bin/python bench/run_bench.py --skip-generate --out bench/out

For each --facts size N (default: 100000 and 10000) a deterministic corpus is generated
with ../shared/bench/make_corpus.py (cached under --out, reused when present) and

  * cold `factdesk index --rebuild` (index file deleted first) runs as a subprocess of the
    CLI, timed wall-clock, with peak RSS of the CLI process and of its parse workers;
  * the bare pipeline baseline (walk kb/**/*.md, split frontmatter, CSafeLoader, one
    executemany insert, FTS5 external-content 'rebuild') runs as a subprocess on the
    same corpus right after it.

On the largest size only:

  * `factdesk check --format json` (index already current) as a CLI subprocess;
  * incremental update: 5 rounds of "edit `confidence:` in 10 fact files, `git commit -am`,
    `Indexer.update()` in-process" (median / max), plus one round through the CLI;
  * search: 20 varied queries x 5 timed runs with `factdesk.index.search.search`
    (limit 20) beside plain FTS5 `ORDER BY rank LIMIT 20` on the same index.

The corpus is reset to its generated HEAD afterwards. Results are printed as a markdown
table and written to docs/benchmarks.md (overwritten) and --out/results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shlex
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
FACTDESK = VENV_BIN / "factdesk"
#: the corpus generator ships in the shared folder beside the repository (../shared)
MAKE_CORPUS = ROOT.parent / "shared" / "bench" / "make_corpus.py"
DOC = ROOT / "docs" / "benchmarks.md"

TARGET_COLD_S = 45.0
TARGET_INCR_S = 1.0
TARGET_SEARCH_P95_MS = 50.0
TARGET_RSS_KIB = 1024 * 1024

QUERIES = [
    # very common words
    "the", "agent", "model", "tool",
    # prefixes
    "ag*", "mod*", "re*",
    # two-word phrases / pairs
    '"the agent"', "agent tool", "retry limit",
    # rarer terms
    "idempotency", "corvira", "dexmarston",  # generator pseudo-words, ~120 facts each
    # field filters combined with text
    "type:hypothesis agent", "confidence:<0.7 tool", "kind:pragmatic retry",
    "origin:distilled mod*",
    # field-only
    "type:synthesis", "status:retracted", "claimant:tool type:observation",
]
RUNS = 5
INCR_ROUNDS = 5
INCR_FILES = 10


def commits_for(facts: int) -> int:
    if facts >= 100_000:
        return 5000
    if facts >= 10_000:
        return 1000
    return max(100, facts // 10)


# -- process monitoring ------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(x) for x in fh.read().split())
    except OSError:
        pass
    return out


def _pss_kib(pid: int) -> int:
    """Proportional set size in KiB: pages shared between processes (git's mapped pack
    files, above all: the 4 git processes of a rebuild map the same ~250 MB) counted once
    across them, unlike RSS. 0 when the process is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


_HZ = os.sysconf("SC_CLK_TCK")


def _cpu_ticks(pid: int) -> tuple[int, str] | None:
    """(user + system clock ticks, command name) of a live process."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
    except OSError:
        return None
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[11]) + int(fields[12]), name


def _status_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) in KiB, (0, 0) when the process is gone."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
    except OSError:
        pass
    return rss, hwm


def run_monitored(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
                  ) -> dict[str, Any]:
    """Run `cmd`; wall time, exit code, output, and peak memory of it and its children.

    `ru_maxrss_kib` (from wait4) is the exact peak RSS of the largest single process in the
    tree; `parent_hwm_kib` / `worker_hwm_kib` are VmHWM sampled every 20 ms per process, and
    `sum_rss_kib` the largest sampled sum of concurrent RSS over the tree, `sum_pss_kib` of
    concurrent PSS (shared pages counted once).
    """
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    hwm: dict[int, int] = {}
    sum_peak = 0
    done = threading.Event()
    out_chunks: dict[str, bytes] = {}

    def reader(name: str, stream: Any) -> None:
        out_chunks[name] = stream.read()

    readers = [threading.Thread(target=reader, args=(n, s), daemon=True)
               for n, s in (("stdout", proc.stdout), ("stderr", proc.stderr))]
    for t in readers:
        t.start()

    pss_peak = 0
    ticks: dict[int, int] = {}  # CPU clock ticks (user + system) last seen per process
    is_git: dict[int, bool] = {}

    def sampler() -> None:
        nonlocal sum_peak, pss_peak
        rounds = 0
        while not done.is_set():
            rounds += 1
            with_pss = rounds % 10 == 1  # smaps_rollup walks page tables: every 0.5 s only
            pids = [proc.pid]
            i = 0
            while i < len(pids):
                pids.extend(_children(pids[i]))
                i += 1
            total = pss = 0
            for pid in pids:
                rss, peak = _status_kib(pid)
                total += rss
                pss += _pss_kib(pid) if with_pss else 0
                if peak:
                    hwm[pid] = max(hwm.get(pid, 0), peak)
                cpu = _cpu_ticks(pid)
                if cpu is not None:
                    ticks[pid] = max(ticks.get(pid, 0), cpu[0])
                    is_git.setdefault(pid, cpu[1] == "git")
            sum_peak = max(sum_peak, total)
            pss_peak = max(pss_peak, pss)
            done.wait(0.05)

    mon = threading.Thread(target=sampler, daemon=True)
    mon.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    done.set()
    mon.join()
    for t in readers:
        t.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    workers = [v for pid, v in hwm.items() if pid != proc.pid]
    return {
        "cmd": cmd, "rc": proc.returncode, "wall_s": wall,
        "stdout": out_chunks.get("stdout", b"").decode("utf-8", "replace"),
        "stderr": out_chunks.get("stderr", b"").decode("utf-8", "replace"),
        "ru_maxrss_kib": usage.ru_maxrss,
        "parent_hwm_kib": hwm.get(proc.pid, 0),
        "worker_hwm_kib": max(workers) if workers else 0,
        "workers_seen": len(workers),
        "sum_rss_kib": sum_peak,
        "sum_pss_kib": pss_peak,
        "python_worker_hwm_kib": max((v for pid, v in hwm.items()
                                      if pid != proc.pid and not is_git.get(pid)), default=0),
        # CPU seconds as last sampled (a process's final 50 ms may be missed)
        "cpu_main_s": ticks.get(proc.pid, 0) / _HZ,
        "cpu_helpers_s": sum(t for pid, t in ticks.items()
                             if pid != proc.pid and not is_git.get(pid)) / _HZ,
        "cpu_git_s": sum(t for pid, t in ticks.items() if is_git.get(pid)) / _HZ,
        "user_s": usage.ru_utime, "sys_s": usage.ru_stime,
    }


# -- corpus --------------------------------------------------------------------------------


def ensure_corpus(out: Path, facts: int, skip_generate: bool, *, name: str = "kb",
                  seed: int = 1, commits: int | None = None, extra: Sequence[str] = ()
                  ) -> tuple[Path, str]:
    """`out`/<name><facts>, generated once (a `.ok` mark beside it) and reset to the head
    it was generated at; the generator's command line (relative to the repository)."""
    kb = out / f"{name}{facts}"
    mark = out / f"{name}{facts}.ok"
    cmd = ["python3", str(MAKE_CORPUS), "--facts", str(facts),
           "--commits", str(commits or commits_for(facts)), *extra, "--seed", str(seed),
           "--out", str(kb), "--quiet"]
    if not (mark.exists() and kb.is_dir()):
        if skip_generate:
            raise SystemExit(f"--skip-generate: no cached corpus at {kb} (run without it)")
        print(f"generating {facts} facts: {shlex.join(cmd)}", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        subprocess.run([*cmd, "--force"] if kb.exists() else cmd, check=True)
        head = _git(kb, "rev-parse", "HEAD")
        mark.write_text(json.dumps({"head": head, "cmd": shlex.join(cmd),
                                    "seconds": round(time.perf_counter() - t0, 1)}))
    info = json.loads(mark.read_text())
    # Leave the corpus exactly as generated (an earlier run may have been interrupted).
    if _git(kb, "rev-parse", "HEAD") != info["head"] or _git(kb, "status", "--porcelain"):
        _git(kb, "reset", "-q", "--hard", info["head"])
    return kb, shlex.join(_relative_to_root(cmd))


def _relative_to_root(cmd: list[str]) -> list[str]:
    """The command as written in docs/benchmarks.md: paths relative to the repository root
    (`../shared/bench/make_corpus.py`, `bench/out/kb10000`), never this machine's layout."""
    shown = []
    for arg in cmd:
        path = Path(arg)
        if path.is_absolute() and path.is_relative_to(ROOT.parent):
            arg = os.path.relpath(path, ROOT)
        shown.append(arg)
    return shown


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def remove_index(kb: Path) -> None:
    """Delete the index file (and its WAL, shared-memory and lock files) only: the folder
    also holds other features' stores (embeddings, journal) that a cold index run keeps."""
    folder = kb / ".git" / "factdesk"
    for path in folder.glob("index.v*.db"):  # not the moved-aside `.corrupt-*` copies
        for suffix in ("", "-wal", "-shm", ".lock"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)


def build_phases(kb: Path) -> dict[str, list[float]]:
    """The rebuild's phase breakdown the indexer keeps in its `meta` table."""
    found = sorted((kb / ".git" / "factdesk").glob("index.v*.db"))
    if not found:
        return {}
    conn = sqlite3.connect(f"file:{found[-1]}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'build_phases'").fetchone()
    except sqlite3.DatabaseError:
        row = None
    finally:
        conn.close()
    return json.loads(row[0]) if row else {}


# -- bare pipeline baseline ---------------------------------------------------------------

_FIELDS = ("type", "kind", "origin", "confidence", "sources", "domain", "entities", "refs")


#: the full-text table of the bare pipeline: the product's (its tokenizer and prefix indexes)
#: or plain FTS5, as the issue's ≈ 41 s baseline was measured
_BARE_FTS = {
    "product": "tokenize='unicode61 remove_diacritics 2', prefix='2 3'",
    "plain": "",
}


def bare_pipeline(kb: Path, db: Path, fts: str = "product") -> dict[str, Any]:
    """The floor: read + CSafeLoader + executemany + FTS5 rebuild, nothing else."""
    import yaml

    t0 = time.perf_counter()
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    options = "".join(f", {o}" for o in [_BARE_FTS[fts]] if o)
    conn.executescript(f"""
        CREATE TABLE facts (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, title TEXT,
            body TEXT, type TEXT, kind TEXT, origin TEXT, confidence REAL, sources INTEGER,
            domain TEXT, entities TEXT, refs TEXT);
        CREATE VIRTUAL TABLE facts_fts USING fts5(title, body, domain, entities,
            content='facts', content_rowid='id'{options});
    """)
    rows = []
    bad = 0
    for path in sorted((kb / "kb").rglob("*.md")):
        text = path.read_bytes().decode("utf-8", "replace")
        if not text.startswith("---\n"):
            bad += 1
            continue
        end = text.find("\n---\n", 4)
        if end < 0:
            bad += 1
            continue
        front, body = text[4:end], text[end + 5:]
        try:
            meta = yaml.load(front, Loader=yaml.CSafeLoader)  # noqa: TID251 (the baseline is plain PyYAML on purpose)
        except yaml.YAMLError:
            bad += 1
            continue
        if not isinstance(meta, dict):
            bad += 1
            continue
        first = body.lstrip().split("\n", 1)[0]
        title = first[2:].strip() if first.startswith("# ") else ""
        vals = [meta.get(k) for k in _FIELDS]
        vals = [json.dumps(v, default=str) if isinstance(v, (list, dict)) else v for v in vals]
        vals = [v if isinstance(v, (str, int, float, type(None))) else str(v) for v in vals]
        rows.append((path.relative_to(kb).as_posix(), title, body, *vals))
    t_parse = time.perf_counter()
    with conn:
        conn.executemany("INSERT INTO facts (path, title, body, type, kind, origin, confidence,"
                         " sources, domain, entities, refs) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
        t_insert = time.perf_counter()
        conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('rebuild')")
    t_fts = time.perf_counter()
    conn.close()
    return {"rows": len(rows), "bad": bad, "parse_s": t_parse - t0,
            "insert_s": t_insert - t_parse, "fts_s": t_fts - t_insert,
            "total_s": time.perf_counter() - t0}


# -- incremental ---------------------------------------------------------------------------

_CONF = re.compile(r"^confidence:[ \t]*([0-9.]+)[ \t]*$", re.M)


def _edit_files(kb: Path, rng: random.Random, candidates: list[Path], n: int) -> list[str]:
    done: list[str] = []
    for path in rng.sample(candidates, len(candidates)):
        text = path.read_text("utf-8")
        m = _CONF.search(text)
        if not m:
            continue
        try:
            old = float(m.group(1))
        except ValueError:
            continue
        new = round(0.5 + (old * 7 + 0.13) % 0.49, 2)
        if new == old:
            new = round(max(0.05, old - 0.05), 2)
        path.write_text(text[: m.start(1)] + f"{new}" + text[m.end(1):], "utf-8")
        done.append(path.relative_to(kb).as_posix())
        if len(done) == n:
            break
    return done


def _commit(kb: Path, round_: int, files: list[str]) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="codex", GIT_AUTHOR_EMAIL="codex+update@agents.knomit.io",
               GIT_COMMITTER_NAME="codex", GIT_COMMITTER_EMAIL="codex@agents.knomit.io")
    subprocess.run(["git", "-C", str(kb), "commit", "-q", "-am",
                    f"update: bench round {round_} ({len(files)} files)"], check=True, env=env)


def incremental_phase(kb: Path) -> dict[str, Any]:
    """In-process: 5 rounds of edit 10 files + commit + Indexer.update()."""
    import resource

    from factdesk.index.indexer import Indexer

    ix = Indexer(kb)
    warm = ix.update()  # the index is current after the cold run: expect 'unchanged'
    conn = ix.connect(readonly=True)
    live = [kb / r[0] for r in conn.execute(
        "SELECT path FROM facts WHERE status = 'live' AND confidence IS NOT NULL ORDER BY path")]
    conn.close()
    rng = random.Random(20240601)  # noqa: S311
    rounds = []
    for i in range(INCR_ROUNDS):
        files = _edit_files(kb, rng, live, INCR_FILES)
        _commit(kb, i, files)
        t0 = time.perf_counter()
        stats = ix.update()
        wall = time.perf_counter() - t0
        rounds.append({"mode": stats.mode, "seconds": wall, "changed": len(stats.changed),
                       "files": len(files), "facts": stats.facts})
    noop_t0 = time.perf_counter()
    noop = ix.update()
    noop_s = time.perf_counter() - noop_t0
    return {"warm_mode": warm.mode, "rounds": rounds, "noop_mode": noop.mode, "noop_s": noop_s,
            "ru_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


# -- search --------------------------------------------------------------------------------


def search_phase(kb: Path) -> dict[str, Any]:
    import resource

    from factdesk.index.indexer import Indexer
    from factdesk.index.query import compile_query
    from factdesk.index.search import search

    ix = Indexer(kb)
    conn = ix.connect(readonly=True)
    base_sql = "SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? ORDER BY rank LIMIT 20"
    exact_sql = ("SELECT f.id FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
                 "WHERE facts_fts MATCH ? AND {where} "
                 "ORDER BY bm25(facts_fts, 10.0, 1.0, 3.0, 3.0), f.id DESC LIMIT 20")
    compiled = {q: compile_query(q) for q in QUERIES}
    info: dict[str, dict[str, Any]] = {}
    for q in QUERIES:
        c = compiled[q]
        matches = conn.execute(
            "SELECT COUNT(*) FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
            f"WHERE facts_fts MATCH ? AND {c.where_sql()}", [c.fts, *c.params]
        ).fetchone()[0] if c.fts else conn.execute(
            f"SELECT COUNT(*) FROM facts f WHERE {c.where_sql()}", c.params).fetchone()[0]
        hits = search(conn, q, limit=20)  # also the warm-up pass
        overlap = None
        if c.fts:
            conn.execute(base_sql, [c.fts]).fetchall()  # warm-up
            exact = [r[0] for r in conn.execute(exact_sql.format(where=c.where_sql()),
                                                [c.fts, *c.params])]
            overlap = len({h.id for h in hits} & set(exact)) / max(1, len(exact))
        info[q] = {"fts": c.fts, "matches": matches, "hits": len(hits),
                   "top20_overlap_exact_bm25": overlap, "product_ms": [], "baseline_ms": []}
    for _ in range(RUNS):
        for q in QUERIES:
            t0 = time.perf_counter()
            search(conn, q, limit=20)
            info[q]["product_ms"].append((time.perf_counter() - t0) * 1000)
            fts = compiled[q].fts
            if fts:
                t0 = time.perf_counter()
                conn.execute(base_sql, [fts]).fetchall()
                info[q]["baseline_ms"].append((time.perf_counter() - t0) * 1000)
    conn.close()
    return {"queries": info,
            "ru_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, int(-(-p * len(s) // 100)) - 1))
    return s[k]


# -- driver --------------------------------------------------------------------------------


def _phase_subprocess(phase: str, kb: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    run = run_monitored([sys.executable, str(Path(__file__).resolve()), "--_phase", phase,
                         str(kb)])
    if run["rc"] != 0:
        raise SystemExit(f"{phase} phase failed:\n{run['stderr']}")
    return json.loads(run["stdout"].strip().splitlines()[-1]), run


def _cli(*args: str) -> list[str]:
    return [str(FACTDESK), *args]


def _cold_index(kb: Path, label: str) -> dict[str, Any]:
    """`factdesk index --rebuild` with the index deleted first, monitored."""
    remove_index(kb)
    print(f"[{label}] cold index ...", file=sys.stderr, flush=True)
    cold = run_monitored(_cli("index", "--kb", str(kb), "--rebuild"))
    if cold["rc"] != 0:
        raise SystemExit(f"factdesk index failed:\n{cold['stderr']}")
    return cold


def _bare_run(kb: Path, db: Path, fts: str, label: str) -> dict[str, Any]:
    """The bare pipeline (`bare_pipeline`) in a process of its own, monitored; its database
    deleted afterwards."""
    print(f"[{label}] bare pipeline ({fts} FTS5) ...", file=sys.stderr, flush=True)
    bare = run_monitored([sys.executable, str(Path(__file__).resolve()), "--_phase", "bare",
                          str(kb), str(db), fts])
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    if bare["rc"] != 0:
        raise SystemExit(f"bare pipeline failed:\n{bare['stderr']}")
    bare["detail"] = json.loads(bare["stdout"].strip().splitlines()[-1])
    return bare


def bench_cold(kb: Path, out: Path, facts: int) -> dict[str, Any]:
    cold = _cold_index(kb, str(facts))
    cold["phases"] = build_phases(kb)
    result = {"cold": cold}
    for fts in _BARE_FTS:
        result["bare" if fts == "product" else f"bare_{fts}"] = _bare_run(
            kb, out / f"bare{facts}.db", fts, str(facts))
    return result


def pairs(kb: Path, out: Path, rounds: int) -> str:
    """The cold index and the plain bare pipeline one after the other, `rounds` times: on
    a VM whose speed drifts within minutes, only runs side by side compare. A markdown
    table, one row per pair, with a CPU probe before each."""
    db = out / "bare_pairs.db"
    lines = ["| round | CPU probe | cold `factdesk index --rebuild` | bare pipeline, plain FTS5 "
             "| cold ÷ bare |", "|---|---|---|---|---|"]
    colds, bares = [], []
    for i in range(1, rounds + 1):
        probe = cpu_probe().split(" ", 1)[0]
        cold = _cold_index(kb, f"pair {i}")
        bare = _bare_run(kb, db, "plain", f"pair {i}")
        colds.append(cold["wall_s"])
        bares.append(bare["wall_s"])
        lines.append(f"| {i} | {probe} s | {cold['wall_s']:.1f} s | {bare['wall_s']:.1f} s "
                     f"| {cold['wall_s'] / bare['wall_s']:.2f} |")
    lines.append(f"| median | | {statistics.median(colds):.1f} s | {statistics.median(bares):.1f} s "
                 f"| {statistics.median(c / b for c, b in zip(colds, bares, strict=True)):.2f} |")
    return "\n".join(lines)


def bench_full(kb: Path) -> dict[str, Any]:
    res: dict[str, Any] = {}
    print("check ...", file=sys.stderr, flush=True)
    check = run_monitored(_cli("check", "--kb", str(kb), "--format", "json"))
    try:
        payload = json.loads(check["stdout"])
        check["summary"] = {"facts": payload["facts"], "errors": len(payload["errors"]),
                            "warnings": len(payload["warnings"])}
    except (ValueError, KeyError):
        raise SystemExit(f"check failed (rc {check['rc']}):\n{check['stderr'][-2000:]}") from None
    check["stdout"] = ""  # large
    res["check"] = check
    print("incremental ...", file=sys.stderr, flush=True)
    res["incremental"], res["incremental_run"] = _phase_subprocess("incremental", kb)
    # one more round through the CLI (includes interpreter start-up and imports)
    files = _edit_files(kb, random.Random(7),  # noqa: S311
                        sorted((kb / "kb").rglob("*.md"))[:2000], INCR_FILES)
    _commit(kb, 99, files)
    res["incremental_cli"] = run_monitored(_cli("index", "--kb", str(kb)))
    print("search ...", file=sys.stderr, flush=True)
    res["search"], res["search_run"] = _phase_subprocess("search", kb)
    return res


def cpu_probe() -> str:
    """CPU seconds of a fixed pure-Python loop (fastest of 5): this shared VM's speed drifts
    by a third over an hour, so runs on different days are compared through this number."""
    runs = []
    for _ in range(5):
        t = time.process_time()
        sum(i * i for i in range(3_000_000))
        runs.append(time.process_time() - t)
    return f"{min(runs):.3f} s (slowest of the 5: {max(runs):.3f} s)"


def machine() -> dict[str, str]:
    def sh(*cmd: str) -> str:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()

    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
               platform.machine())
    return {"nproc": sh("nproc"), "free": sh("free", "-h"), "python": platform.python_version(),
            "cpu_probe": cpu_probe(),
            "sqlite": sqlite3.sqlite_version, "cpu": cpu, "kernel": platform.release(),
            "yaml_cloader": sh(sys.executable, "-c", "import yaml; print(yaml.__with_libyaml__)")}


def _mib(kib: float) -> str:
    return f"{kib / 1024:.0f} MiB"


def _ok(ok: bool | None) -> str:
    return "" if ok is None else (" ✅" if ok else " ❌ **missed**")


def render(results: dict[str, Any]) -> tuple[str, str]:
    """(results table, full document)."""
    m = results["machine"]
    sizes = sorted(results["sizes"], key=int, reverse=True)
    big = sizes[0]
    bigf = int(big)
    rows: list[tuple[str, str, str, str]] = []
    for size in sizes:
        r = results["sizes"][size]
        cold, bare = r["cold"], r["bare"]
        is_target = int(size) == 100_000
        peak = max(cold["ru_maxrss_kib"], cold["parent_hwm_kib"], cold["worker_hwm_kib"])
        rows.append((
            f"cold `factdesk index --rebuild`, {int(size):,} facts (wall)",
            f"**{cold['wall_s']:.1f} s**" + _ok(
                cold["wall_s"] < TARGET_COLD_S and cold["wall_s"] <= bare["wall_s"]
                if is_target else None),
            f"< {TARGET_COLD_S:.0f} s and ≤ baseline" if is_target else "≤ baseline",
            f"{bare['wall_s']:.1f} s bare pipeline (parse {bare['detail']['parse_s']:.1f} + "
            f"insert {bare['detail']['insert_s']:.1f} + FTS {bare['detail']['fts_s']:.1f})"
            + (f"; with plain FTS5 (no prefix indexes): {plain['wall_s']:.1f} s (FTS "
               f"{plain['detail']['fts_s']:.1f})" if (plain := r.get("bare_plain")) else ""),
        ))
        rows.append((
            f"peak RSS, cold index {int(size):,} (max of CLI process and parse workers)",
            f"**{_mib(peak)}** (CLI {_mib(cold['parent_hwm_kib'])}; largest parse worker or "
            f"full-text builder {_mib(cold.get('python_worker_hwm_kib', 0))}; largest child, "
            f"git included, {_mib(cold['worker_hwm_kib'])}; all processes together: RSS "
            f"{_mib(cold['sum_rss_kib'])}, PSS {_mib(cold.get('sum_pss_kib', 0))})"
            + _ok(peak < TARGET_RSS_KIB if is_target else None),
            "< 1 GiB" if is_target else "—",
            f"{_mib(bare['ru_maxrss_kib'])} bare pipeline",
        ))
        if "cpu_main_s" in cold:
            total = cold["cpu_main_s"] + cold["cpu_helpers_s"] + cold["cpu_git_s"]
            rows.append((
                f"CPU time of the cold index {int(size):,} (sampled per process)",
                f"{total:.0f} s: main process {cold['cpu_main_s']:.0f}, parse workers and "
                f"full-text builder {cold['cpu_helpers_s']:.0f}, git {cold['cpu_git_s']:.0f} "
                f"({total / cold['wall_s']:.2f} cores busy on average)",
                "—", "—",
            ))
    full = results.get("full")
    if full:
        inc = full["incremental"]
        secs = [x["seconds"] for x in inc["rounds"]]
        modes = sorted({x["mode"] for x in inc["rounds"]})
        med, worst = statistics.median(secs), max(secs)
        is_target = bigf == 100_000
        rows.append((
            f"incremental update after a {INCR_FILES}-file commit, {bigf:,} facts "
            f"(`Indexer.update()` in-process, {len(secs)} rounds)",
            f"**median {med:.2f} s, max {worst:.2f} s** (mode: {', '.join(modes)}; "
            f"re-checked {statistics.median([x['changed'] for x in inc['rounds']]):.0f} paths)"
            + _ok(worst < TARGET_INCR_S if is_target else None),
            f"< {TARGET_INCR_S:.0f} s" if is_target else "—",
            f"cold index {results['sizes'][big]['cold']['wall_s']:.1f} s",
        ))
        cli = full["incremental_cli"]
        rows.append((
            "incremental update through the CLI (`factdesk index`, 1 round, incl. start-up)",
            f"{cli['wall_s']:.2f} s", "—", "—",
        ))
        rows.append((
            "no-op update (nothing changed, in-process)",
            f"{inc['noop_s'] * 1000:.0f} ms (mode: {inc['noop_mode']})", "—", "—",
        ))
        ck = full["check"]
        rows.append((
            f"`factdesk check --format json`, {bigf:,} facts (index current)",
            f"{ck['wall_s']:.1f} s, peak RSS {_mib(ck['ru_maxrss_kib'])} "
            f"({ck['summary']['errors']} errors, {ck['summary']['warnings']} warnings)",
            "—", "—",
        ))
        q = full["search"]["queries"]
        allp = [v for x in q.values() for v in x["product_ms"]]
        ftsp = [v for x in q.values() if x["fts"] for v in x["product_ms"]]
        allb = [v for x in q.values() for v in x["baseline_ms"]]
        slow_q = max(q, key=lambda k: statistics.median(q[k]["product_ms"]))
        slow_b = max((k for k in q if q[k]["baseline_ms"]),
                     key=lambda k: statistics.median(q[k]["baseline_ms"]))
        p95 = pct(allp, 95)
        rows.append((
            f"search p50 / p95, {len(q)} queries × {RUNS} runs, {bigf:,} facts",
            f"**{pct(allp, 50):.1f} / {p95:.1f} ms**" + _ok(
                p95 < TARGET_SEARCH_P95_MS if is_target else None),
            f"p95 < {TARGET_SEARCH_P95_MS:.0f} ms" if is_target else "—",
            f"plain FTS5 `ORDER BY rank LIMIT 20`: {pct(allb, 50):.1f} / {pct(allb, 95):.1f} ms "
            f"(over the {sum(1 for x in q.values() if x['fts'])} queries with text)",
        ))
        rows.append((
            "search p50 / p95, the queries with text only",
            f"{pct(ftsp, 50):.1f} / {pct(ftsp, 95):.1f} ms", "—",
            f"{pct(allb, 50):.1f} / {pct(allb, 95):.1f} ms",
        ))
        rows.append((
            "slowest query (median of 5)",
            f"`{slow_q}` {statistics.median(q[slow_q]['product_ms']):.1f} ms", "—",
            f"`{slow_b}` {statistics.median(q[slow_b]['baseline_ms']):.1f} ms",
        ))
        rows.append((
            "peak RSS, incremental / search process",
            f"{_mib(full['incremental_run']['ru_maxrss_kib'])} / "
            f"{_mib(full['search_run']['ru_maxrss_kib'])}",
            "< 1 GiB", "—",
        ))
    table = ["| metric | measured | target | baseline |", "|---|---|---|---|"]
    table += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    table_s = "\n".join(table)

    qt = ["| query | FTS expression | matches | product p50 / max (ms) | "
          "baseline p50 / max (ms) | top-20 overlap with exact bm25 |", "|---|---|---|---|---|---|"]
    if full:
        for name, x in full["search"]["queries"].items():
            b = (f"{statistics.median(x['baseline_ms']):.1f} / {max(x['baseline_ms']):.1f}"
                 if x["baseline_ms"] else "n/a (no text)")
            ov = ("—" if x["top20_overlap_exact_bm25"] is None
                  else f"{x['top20_overlap_exact_bm25'] * 100:.0f} %")
            fts = (x["fts"] or "—").replace("|", "\\|")
            qt.append(f"| `{name}` | `{fts}` | {x['matches']:,} | "
                      f"{statistics.median(x['product_ms']):.1f} / {max(x['product_ms']):.1f} | "
                      f"{b} | {ov} |")
    phase_lines = []
    for size in sizes:
        cold = results["sizes"][size]["cold"]
        phases = cold.get("phases") or {}
        if not phases:
            continue
        phase_lines += [
            f"### Cold index phases ({int(size):,} facts)", "",
            "Kept by the indexer in its `meta` table (`build_phases`); the main process's wall and",
            "CPU time per phase (the parse workers' CPU is not in the CPU column; the wall of the",
            "streamed phase is the slower of the workers and the main process). The rest of the",
            "CLI's wall time is start-up and the final commit.", "",
            "| phase | wall (s) | main-process CPU (s) |", "|---|---|---|",
        ]
        phase_lines += [f"| {name} | {w:.1f} | {c:.1f} |" for name, (w, c) in phases.items()]
        total_w = sum(w for w, _ in phases.values())
        phase_lines += [f"| **all phases** (CLI wall {cold['wall_s']:.1f} s) | {total_w:.1f} | "
                        f"{sum(c for _, c in phases.values()):.1f} |", ""]
    phases_s = "\n".join(phase_lines)
    corpus_lines = "\n".join(
        f"- {int(s):,} facts, {commits_for(int(s)):,} commits: `{results['sizes'][s]['corpus_cmd']}`"
        for s in sizes)
    size_args = " ".join(str(int(s)) for s in sizes)
    doc = f"""# Benchmarks

Generated by `bench/run_bench.py` on {results['date']} (run took {results['total_s'] / 60:.1f} min).
Numbers are single measurements on a shared machine; expect a few percent of noise.

## Machine

- `nproc`: {m['nproc']} ({m['cpu']}), Linux {m['kernel']}
- CPU probe (`cpu_probe()`: a fixed Python loop; this shared VM's speed drifts by a third
  within an hour, compare runs through it): {m.get('cpu_probe', 'not measured')} at the
  start, {m.get('cpu_probe_end', 'not measured')} at the end
- Python {m['python']}, SQLite {m['sqlite']}, PyYAML with libyaml: {m['yaml_cloader']}
- `free -h`:

```
{m['free']}
```

## Corpora

Generated with the shared generator, cached under `bench/out/` (gitignored):

{corpus_lines}

The page cache is warm (the corpus was just generated or read by an earlier run); the
index file is deleted before each cold run.

## Commands

```
{results['command']}
```

which runs, per size:

- cold index: `rm -rf KB/.git/factdesk && .venv/bin/factdesk index --kb KB --rebuild`
  (wall time of the subprocess; peak RSS from `wait4` and from sampling `/proc/PID/status`
  VmHWM of the CLI process and of each parse worker every 20 ms);
- bare pipeline baseline, right after, on the same corpus (`bench/run_bench.py --_phase bare
  KB DB`): walk `kb/**/*.md`, split the frontmatter, `yaml.load(front, Loader=yaml.CSafeLoader)`,
  one `executemany` insert of (path, title, body, type, kind, origin, confidence, sources,
  domain, entities, refs) into a fresh table, then FTS5 external-content `'rebuild'` with the
  product's tokenizer and prefix indexes; one process, one transaction; then the same with a
  plain FTS5 table (default tokenizer, no prefix indexes: `--_phase bare KB DB plain`), the
  kind of table the issue's ≈ 41 s baseline was measured with;

and, on the largest size only:

- `.venv/bin/factdesk check --kb KB --format json` with the index current;
- incremental update, in a fresh process (`--_phase incremental`): {INCR_ROUNDS} rounds of: change
  the `confidence:` value in {INCR_FILES} random live fact files, `git commit -am`, time
  `Indexer(KB).update()`; then one more round through `.venv/bin/factdesk index --kb KB`;
- search, in a fresh process (`--_phase search`): one untimed warm-up pass, then {RUNS} rounds
  over the {len(QUERIES)} queries below with `factdesk.index.search.search(conn, q, limit=20)` on
  a read-only connection, each followed by the baseline
  `SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? ORDER BY rank LIMIT 20` with the same FTS
  expression (queries without text have no baseline). p50 / p95 are nearest-rank over all
  timed runs.

The corpus is reset to its generated HEAD at the end.

## Results

{table_s}

{phases_s}
### Search queries ({bigf:,} facts)

"Top-20 overlap" compares the product's 20 hits with the exact bm25 top 20 (same column
weights, same filters), as a check on the ranking shortcut.

{chr(10).join(qt)}

## How to rerun

```
make bench                               # {size_args} facts; generates corpora on first use
make bench BENCH_ARGS="--facts 10000"    # quick run (~1 min once the corpus exists)
.venv/bin/python bench/run_bench.py --facts 100000 --skip-generate --out bench/out
```

Raw numbers of the last run: `bench/out/results.json`.

See [benchmark-history.md](benchmark-history.md) for the runs over this session.
"""
    return table_s, doc


#: The sections `render` writes; any other `## ` section of the document (the desktop app's,
#: curation's: written by their own benchmarks) is kept, in order, after them.
OWN_SECTIONS = ("Machine", "Corpora", "Commands", "Results", "How to rerun")


def merge_doc(old: str, doc: str) -> str:
    kept = []
    for part in old.split("\n## ")[1:]:
        title = part.split("\n", 1)[0].strip()
        if title not in OWN_SECTIONS:
            kept.append("## " + part.rstrip("\n"))
    return doc.rstrip("\n") + "\n" + "".join("\n" + k + "\n" for k in kept)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--facts", type=int, nargs="+", default=[100_000, 10_000],
                    help="corpus sizes (default: 100000 10000); the full suite runs on the largest")
    ap.add_argument("--skip-generate", action="store_true",
                    help="fail instead of generating a missing corpus")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out",
                    help="cache / scratch folder (default bench/out)")
    ap.add_argument("--no-doc", action="store_true", help="do not overwrite docs/benchmarks.md")
    ap.add_argument("--pairs", type=int, metavar="N",
                    help="only the cold index and the issue's bare pipeline (plain FTS5), "
                         "alternated N times on the largest corpus; prints a table, writes no doc")
    ap.add_argument("--_phase", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args._phase:
        phase, kb = args._phase[0], Path(args._phase[1])
        if phase == "bare":
            result = bare_pipeline(kb, Path(args._phase[2]), *args._phase[3:4])
        elif phase == "incremental":
            result = incremental_phase(kb)
        elif phase == "search":
            result = search_phase(kb)
        else:
            raise SystemExit(f"unknown phase {phase}")
        print(json.dumps(result))
        return 0

    started = time.perf_counter()
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    sizes = sorted(set(args.facts), reverse=True)
    if args.pairs:  # (the largest corpus only; the machine is probed before each pair)
        print(pairs(ensure_corpus(out, sizes[0], args.skip_generate)[0], out, args.pairs))
        return 0
    results: dict[str, Any] = {
        "machine": machine(), "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "command": shlex.join([".venv/bin/python", "bench/run_bench.py",
                               *(sys.argv[1:] if argv is None else argv)]),
        "sizes": {},
    }
    corpora = {n: ensure_corpus(out, n, args.skip_generate) for n in sizes}
    for n in sizes:
        kb, cmd = corpora[n]
        results["sizes"][str(n)] = {"corpus_cmd": cmd, **bench_cold(kb, out, n)}
    kb, _ = corpora[sizes[0]]
    head = json.loads((out / f"kb{sizes[0]}.ok").read_text())["head"]
    try:
        results["full"] = bench_full(kb)
    finally:
        _git(kb, "reset", "-q", "--hard", head)
    results["total_s"] = time.perf_counter() - started
    results["machine"]["cpu_probe_end"] = cpu_probe()  # (the VM drifts within a run too)
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    table, doc = render(results)
    print(table)
    if not args.no_doc:
        old = DOC.read_text("utf-8") if DOC.exists() else ""
        DOC.write_text(merge_doc(old, doc), "utf-8")
        print(f"\nwrote {DOC.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
