#!/usr/bin/env python3
"""Speed of attributed recall and of search with and without messages (issue 17).

    .venv/bin/python bench/messages_bench.py                          # 10,000 facts + 1,000 messages
    .venv/bin/python bench/messages_bench.py --facts 100000 --messages 10000
    .venv/bin/python bench/messages_bench.py --corpus PATH --messages 10000   # an existing corpus

The corpus (generated with ../shared/bench/make_corpus.py under --out, or the one given
with --corpus, which is never modified) is cloned to --out/kb<N>-msgs, where `--messages`
messages are written under msg/ (text drawn from the facts' titles, each referencing two
facts, a third of them replies) and committed. Then, in-process, over 40 queries drawn
from the titles (one and two words) x --runs rounds:

  * recall: `recall.recall_facts` over an open index connection (search, live facts,
    rendering by the authority table) — p50 / p95; and `recall.recall` (which first brings
    the index and the messages' index up to date, as every CLI call does) — p50 / p95;
  * search p95: facts only (`index.search.search`), and facts plus messages
    (`include:messages`: the same, then `index.messages.search` on the messages' index);
  * the CLI's whole run of `factdesk recall` (process start included), 5 runs, median;
  * the Messages tab: its worker's read and the GUI thread's share (the model's reset)
    over all the messages, median of 3 (offscreen).

`--reuse` measures again on the copy an earlier run left (no clone, no messages written).

Results are printed as JSON (and written to --out/messages_bench.json). The target (issue 17):
recall p95 < 100 ms at 100,000 facts + 10,000 messages; search within 10 % of the p95
without messages.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "app"))

from factdesk.core import open_corpus  # noqa: E402
from factdesk.corpus.messages import serialize_message  # noqa: E402
from factdesk.index import messages as msg_index  # noqa: E402
from factdesk.index.query import compile_query  # noqa: E402
from factdesk.index.search import search  # noqa: E402
from factdesk.model.messages import message_path  # noqa: E402
from factdesk.recall import Attestations, recall, recall_facts  # noqa: E402

MAKE_CORPUS = ROOT.parent / "shared" / "bench" / "make_corpus.py"
GIT = ["git", "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false"]


def p(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))] * 1000


def generate(out: Path, facts: int) -> Path:
    kb = out / f"kb{facts}"
    if not (kb / "kb").is_dir():
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(MAKE_CORPUS), "--facts", str(facts), "--seed", "7",
                        "--out", str(kb), "--force", "--quiet"], check=True)
    return kb


def with_messages(source: Path, dest: Path, count: int, seed: int = 17) -> list[str]:
    """Clone `source` to `dest` and commit `count` messages there; the facts' titles."""
    if dest.exists():
        shutil.rmtree(dest)
    subprocess.run([*GIT, "clone", "-q", "--local", str(source), str(dest)], check=True)
    facts, titles = fact_titles(dest)
    rng = random.Random(seed)  # noqa: S311
    agents = ["claude-code", "codex", "build-02", "librarian", "ana"]
    written: list[str] = []
    for i in range(count):
        sender, to = rng.sample(agents, 2)
        minute = i % (60 * 24 * 28)
        sent = f"2026-11-{1 + minute // 1440:02d}T{(minute // 60) % 24:02d}:{minute % 60:02d}:00Z"
        body = f"{rng.choice(titles)} — please check it against {rng.choice(titles).lower()}"
        path = message_path(sender, sent, body)
        fields = {"from": sender, "to": [to], "sent": sent, "delivery": rng.choice(
            ["queued", "delivered", "read", "acknowledged"]),
            "context_explanation": "benchmark message",
            "referenced_memory_ids": rng.sample(facts, 2),
            "in_reply_to": rng.choice(written) if written and i % 3 == 0 else None}
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(serialize_message(fields, body))
        written.append(path)
    subprocess.run([*GIT, "-C", str(dest), "add", "msg"], check=True)
    subprocess.run([*GIT, "-C", str(dest), "-c", "user.name=bench", "-c",
                    "user.email=bench@example.org", "commit", "-qm", "msg: benchmark messages"],
                   check=True)
    return titles


def fact_titles(dest: Path) -> tuple[list[str], list[str]]:
    """The corpus's fact paths, and the titles of about 2,000 of them (queries come from them)."""
    facts = sorted(str(p.relative_to(dest).as_posix()) for p in (dest / "kb").rglob("*.md"))
    titles = []
    for path in facts[:: max(1, len(facts) // 2000)]:
        text = (dest / path).read_text("utf-8", "replace")
        m = re.search(r"^# (.+)$", text, re.M)
        if m:
            titles.append(m.group(1))
    return facts, titles


def messages_tab(indexer: object) -> dict[str, float]:
    """The Messages tab at this size: the worker's read (the store's index refreshed and
    read, threads and the tree's rows built, the referenced facts' titles) and what the GUI
    thread then does (the model's reset, the pairs opened) — offscreen, in-process."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from factdesk.gui.message_model import read_messages
    from factdesk.gui.messages_panel import MessagesPanel
    from factdesk.gui.operations import Operations, WriterLane

    app = QApplication.instance() or QApplication([])
    lane = WriterLane()
    ops = Operations(indexer, lane, identity_file=None, ask_identity=lambda: None)  # type: ignore[arg-type]
    panel = MessagesPanel(ops)
    panel.resize(650, 640)
    panel.show()
    reads, fills = [], []
    try:
        for _ in range(3):
            t = time.perf_counter()
            view = read_messages(indexer)  # type: ignore[arg-type]
            reads.append(time.perf_counter() - t)
            t = time.perf_counter()
            panel._loaded(view)
            app.processEvents()
            fills.append(time.perf_counter() - t)
    finally:
        panel.close_worker()
        lane.close()
    return {"tab_read_median_ms": round(statistics.median(reads) * 1000, 1),
            "tab_gui_thread_median_ms": round(statistics.median(fills) * 1000, 1)}


def queries(titles: list[str], n: int = 40, seed: int = 3) -> list[str]:
    rng = random.Random(seed)  # noqa: S311
    words = [w for t in titles for w in re.findall(r"[A-Za-z]{4,}", t)]
    out = []
    for i in range(n):
        out.append(rng.choice(words) if i % 2 == 0 else f"{rng.choice(words)} {rng.choice(words)}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--facts", type=int, default=10_000)
    ap.add_argument("--messages", type=int, default=1_000)
    ap.add_argument("--corpus", type=Path, help="an existing corpus (cloned, never modified)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--reuse", action="store_true",
                    help="measure again on the copy with messages an earlier run left in --out "
                         "(no clone, no messages written, the index only brought up to date)")
    args = ap.parse_args()
    source = args.corpus or generate(args.out, args.facts)
    dest = args.out / f"{source.name}-msgs"
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if args.reuse and (dest / "msg").is_dir():
        titles = fact_titles(dest)[1]
    else:
        titles = with_messages(source, dest, args.messages)
    indexer = open_corpus(dest)
    stats = indexer.update()
    refreshed = msg_index.refresh(dest, msg_index.db_path(indexer.path))
    setup = time.perf_counter() - t0
    qs = queries(titles)
    conn = indexer.connect(readonly=True)
    mconn = msg_index.connect(msg_index.db_path(indexer.path), readonly=True)
    attested = Attestations(dest).current()
    timings: dict[str, list[float]] = {"recall_in_process": [], "recall_with_update": [],
                                       "search_facts": [], "search_with_messages": []}
    for q in qs:  # warm-up
        recall_facts(conn, q, limit=10, attested=attested)
        search(conn, q, limit=20)
    for _ in range(args.runs):
        for q in qs:
            t = time.perf_counter()
            recall_facts(conn, q, limit=10, attested=attested)
            timings["recall_in_process"].append(time.perf_counter() - t)
            t = time.perf_counter()
            search(conn, q, limit=20)
            timings["search_facts"].append(time.perf_counter() - t)
            t = time.perf_counter()
            search(conn, q, limit=20)
            msg_index.search(mconn, compile_query(q + " include:messages"), limit=20)
            timings["search_with_messages"].append(time.perf_counter() - t)
    for q in qs[:10]:
        t = time.perf_counter()
        recall(indexer, q, limit=10)
        timings["recall_with_update"].append(time.perf_counter() - t)
    cli = []
    exe = Path(sys.executable).parent / "factdesk"
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "factdesk.cli"]
    for q in qs[:5]:
        t = time.perf_counter()
        subprocess.run([*command, "recall", q, "--kb", str(dest), "--format", "json"], check=True,
                       capture_output=True, env={**__import__("os").environ,
                                                 "PYTHONPATH": str(ROOT / "app")})
        cli.append(time.perf_counter() - t)
    result = {
        "facts": stats.facts + stats.broken, "messages": refreshed.messages,
        "queries": len(qs), "runs": args.runs, "setup_s": round(setup, 1),
        **{f"{k}_p50_ms": round(p(v, 0.5), 2) for k, v in timings.items()},
        **{f"{k}_p95_ms": round(p(v, 0.95), 2) for k, v in timings.items()},
        "cli_recall_median_s": round(statistics.median(cli), 2),
        "messages_refresh_nochange_ms": round(
            msg_index.refresh(dest, msg_index.db_path(indexer.path)).seconds * 1000, 1),
        **messages_tab(indexer),
    }
    print(json.dumps(result, indent=2))
    (args.out / "messages_bench.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
