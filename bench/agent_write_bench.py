"""Agents writing through `factdesk mcp --agent` (issue 26): the load test and the write
latency.

    .venv/bin/python bench/agent_write_bench.py --facts 10000
    .venv/bin/python bench/agent_write_bench.py --kb COPY-OF-A-CORPUS --agents 10 --writes 100

`--kb` works on the corpus given and adds `agent/bench-*` branches (and objects) to it: give
it a copy (`cp -a`). `--facts N` generates one (../shared/bench/make_corpus.py) in a
temporary folder.

1. **Alone** (`--alone N`, default 50): one writer in-process (`AgentWriter.propose_fact`,
   no MCP), N legal writes one after the other: the issue's "a write's latency p95 at 100k
   facts with one writer alone (target < 200 ms in-process)".
2. **Load**: `--agents` server processes (`factdesk mcp --agent bench-<i>`, each its own
   process), each driven by the official MCP SDK's stdio client, all at once; each writes
   `--writes` legal proposals plus planted illegal ones (a hypothesis with no settlement,
   a tool asserting the user's identity, a synthesis citing a hypothesis, an unknown topic,
   a 70 KB body), interleaved. With `--sync` a curator's sync (to a bare clone, the
   `origin` it adds) runs in a loop meanwhile and pushes the agent branches. Client-side
   latency of every call is kept.
   With `--curator` (implies `--rate 1` unless given) the agents write `--rate` proposals
   a second each, and a curator works in the window meanwhile (`MainWindow`, offscreen,
   1366x768, watching as a user runs it, the Proposals tab in front): a key every
   `--key-every` seconds — ↓/↑ through the queue, A on a clean row every 10th key, R
   (with a reason) every 25th — each timed from the key press until the queue's list
   paints again: the issue's "the curator's key-to-repaint p95 < 150 ms while ten agents
   write one proposal a second each". Modal dialogs are closed and counted. The agents'
   clients and the sync loop then run in a process of their own (as they would: in the
   window's interpreter their Python held its GIL against the keys). `--trace` lists, for
   each key slower than 150 ms, the window's calls that ran meanwhile (`TRACED`);
   `--floor` presses the same keys in a bare list of 1,000 rows under the same load (what
   the machine alone costs a key); `--switch-ms` sets the window process's GIL switch
   interval (an A/B of gui/workers.py's `GUI_SWITCH_INTERVAL_S`).
3. **Checks** (exit 1 when one fails): every sha a server returned is on its agent's
   branch, and the branch holds exactly those (no commit lost, none extra); every planted
   write refused with its rule's code; `git fsck --strict` clean; the review queue lists
   exactly the legal writes; the curator's checkout untouched (HEAD, the checked-out
   branch, `.git/index` byte for byte, `git status`); with `--sync`, the remote's agent
   branches equal ours after a last sync.

Prints one JSON object (numbers and verdicts).
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

APP = Path(__file__).resolve().parents[1] / "app"
sys.path.insert(0, str(APP))
os.environ.setdefault("FACTDESK_DATA_DIR", tempfile.mkdtemp(prefix="agent-write-bench-"))
from factdesk.core import open_corpus  # noqa: E402
from factdesk.review.agent_write import AgentWriter, agent_identity  # noqa: E402
from factdesk.review.proposals import load_queue  # noqa: E402
from factdesk.review.sync import sync  # noqa: E402

MAKE = Path(__file__).resolve().parents[2] / "shared" / "bench" / "make_corpus.py"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(APP), os.environ.get("PYTHONPATH", "")])}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True
                          ).stdout.decode()


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


def checkout_state(repo: Path) -> dict[str, str]:
    index = (repo / ".git" / "index").read_bytes()
    return {"head": git(repo, "rev-parse", "HEAD").strip(),
            "branch": git(repo, "symbolic-ref", "HEAD").strip(),
            "index": hashlib.sha256(index).hexdigest(),
            # (--no-optional-locks: `git status` would otherwise refresh .git/index itself)
            "status": hashlib.sha256(git(repo, "--no-optional-locks", "status", "--porcelain"
                                         ).encode()).hexdigest()}


def legal(i: int, n: int, topic: str) -> dict[str, Any]:
    return {"title": f"Bench agent {i} observation {n}: the pool drains under load",
            "body": f"Seen in deploy {n} of agent {i}: the connection pool drained.",
            "type": "observation", "topic": topic, "category": f"bench/a{i}",
            "claim_type": "observation", "subject_kind": "codebase"}


def planted(topic: str, hypothesis: str | None) -> list[tuple[str, dict[str, Any]]]:
    """(the expected code, the call) for each illegal write."""
    out = [("H1", {"title": "Retries will fall", "body": "A guess.", "type": "hypothesis",
                   "topic": topic}),
           ("A1", {"title": "Ana prefers tabs", "body": "She said so.", "type": "observation",
                   "topic": topic, "claim_type": "assertion", "subject_kind": "user",
                   "subject_ref": "ana"}),
           ("topic", {"title": "Nowhere", "body": "B", "type": "observation",
                      "topic": "no-such-topic"}),
           ("input", {"title": "Huge", "body": "x" * 70_000, "type": "observation",
                      "topic": topic})]
    if hypothesis is not None:
        out.append(("R1", {"title": "A synthesis of a guess", "body": "From the guess.",
                           "type": "synthesis", "refs": [hypothesis], "topic": topic}))
    return out


async def agent(kb: Path, i: int, writes: int, topic: str, hypothesis: str | None,
                rate: float = 0.0) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "factdesk.cli", "mcp", "--kb", str(kb), "--agent", f"bench-{i}"], env=ENV)
    calls: list[tuple[str | None, dict[str, Any]]] = [(None, legal(i, n, topic))
                                                     for n in range(writes)]
    bad = planted(topic, hypothesis)
    step = max(1, writes // (len(bad) + 1))
    for k, (code, call) in enumerate(bad):
        calls.insert((k + 1) * step + k, (code, call))
    shas, refused, wrong, times = [], [], [], []
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=300) as client:
        ready = time.perf_counter() - started
        for k, (expected, call) in enumerate(calls):
            if rate:  # (call k at k / rate seconds after the server was ready)
                await asyncio.sleep(max(0.0, started + ready + k / rate - time.perf_counter()))
            t = time.perf_counter()
            result = await client.call_tool("propose_fact", call)
            times.append(time.perf_counter() - t)
            error = result.is_error if hasattr(result, "is_error") else result.isError
            if error:
                text = result.content[0].text
                (refused if expected and text.startswith(f"[{expected}]") else wrong).append(
                    (expected, text[:200]))
            else:
                data = getattr(result, "structured_content", None) or json.loads(
                    result.content[0].text)
                (shas if expected is None else wrong).append(
                    data["sha"] if expected is None else (expected, "written"))
    return {"agent": f"bench-{i}", "shas": shas, "refused": refused, "wrong": wrong,
            "times": times, "ready_s": round(ready, 2), "planted": len(bad)}


def alone(kb: Path, n: int, topic: str) -> dict[str, Any]:
    w = AgentWriter(open_corpus(kb), agent_identity(kb, "bench-solo"))
    times = []
    for k in range(n):
        t = time.perf_counter()
        w.propose_fact(f"Solo observation {k}: the cache warms in minutes", "Seen.",
                       "observation", topic=topic, category="bench/solo")
        times.append(time.perf_counter() - t)
    return {"writes": n, "p50_ms": pct(times, 0.5), "p95_ms": pct(times, 0.95),
            "max_ms": pct(times, 1.0)}


#: what `--trace` times on the window's thread (module:Class.method)
TRACED = ("main_window:MainWindow._refresh", "main_window:MainWindow._on_executed",
          "main_window:MainWindow._outside_change",
          "proposals_panel:ProposalsPanel._loaded", "proposals_panel:ProposalsPanel._take_checked",
          "proposals_panel:ProposalsPanel._show_current", "proposals_panel:ProposalsPanel._fill",
          "inspector:InspectorPanel.show_fact", "transitions_panel:TransitionsPanel._loaded",
          "sidebar:FacetSidebar.refresh_ontology", "sidebar:FacetSidebar.refresh_facets",
          "agents_panel:AgentsPanel._loaded", "agents_panel:AgentsPanel.index_did_change",
          "settlement_panel:SettlementPanel._loaded", "table:FactTableController.requery",
          "proposal_detail:ProposalDetail._show_fact_later", "workers:BackgroundRead._on_finish")


def trace(spans: list[tuple[str, float, float]]) -> None:
    """Time each of `TRACED` on the window's thread into `spans` (name, start, end)."""
    import importlib

    for name in TRACED:
        module, _, attr = name.partition(":")
        cls_name, _, method = attr.partition(".")
        cls = getattr(importlib.import_module(f"factdesk.gui.{module}"), cls_name, None)
        if cls is None or not hasattr(cls, method):
            print(f"trace: no {name}", file=sys.stderr)
            continue
        setattr(cls, method, _timed(getattr(cls, method), attr, spans))


def _timed(f: Any, name: str, spans: list[tuple[str, float, float]]) -> Any:
    import functools

    @functools.wraps(f)
    def timed(*a: Any, **k: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            spans.append((name, t0, time.perf_counter()))

    return timed


def spin(ready: Any, timeout: float) -> bool:
    """Run the event loop until `ready()` or `timeout` seconds; whether it is ready."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop, poll = QEventLoop(), QTimer()
    poll.setInterval(1)
    deadline = time.monotonic() + timeout
    poll.timeout.connect(lambda: loop.quit() if ready() or time.monotonic() >= deadline
                         else None)
    poll.start()
    while not ready() and time.monotonic() < deadline:
        loop.exec()
    poll.stop()
    return bool(ready())


def watch_paints(widget: Any) -> Any:
    """An event filter on `widget` keeping the time of each of its paints in `.at`."""
    from PySide6.QtCore import QEvent, QObject

    class _Paints(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.at: list[float] = []

        def eventFilter(self, _obj: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                self.at.append(time.perf_counter())
            return False

    paints = _Paints()
    widget.installEventFilter(paints)
    return paints


def curate(kb: Path, writing: threading.Thread, key_every: float,
           spans: list[tuple[str, float, float]] | None = None,
           switch_ms: float | None = None) -> dict[str, Any]:
    """The curator in the window while `writing` runs (module doc, `--curator`)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if spans is not None:
        trace(spans)
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from factdesk.gui.app import make_settings
    from factdesk.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])

    window = MainWindow(kb, make_settings(), watch=True, update_on_open=False, semantic=False)
    if switch_ms is not None:  # (an A/B of gui/workers.py's GUI_SWITCH_INTERVAL_S)
        sys.setswitchinterval(switch_ms / 1000)
    window.resize(1366, 768)
    window.show()
    updated: list[bool] = []
    window.index_did_update.connect(lambda *_: updated.append(True))
    window.reindex()
    spin(lambda: bool(updated), 600)
    panel = window.proposals
    window.center.setCurrentWidget(panel)
    spin(lambda: panel.loaded and bool(panel.items), 600)
    window.ask_text = lambda *_a: "bench: a duplicate"  # type: ignore[method-assign]
    dialogs: list[str] = []

    def close_dialogs() -> None:
        modal = QApplication.activeModalWidget()
        if modal is not None:
            dialogs.append(f"{modal.objectName()}: {modal.windowTitle()}"[:120])
            modal.close()

    closer = QTimer()
    closer.setInterval(200)
    closer.timeout.connect(close_dialogs)
    closer.start()
    paints = watch_paints(panel.list.viewport())
    times: dict[str, list[float]] = {"move": [], "accept": [], "reject": []}
    slow: list[dict[str, Any]] = []
    pressed: dict[str, str] = {}
    missed = 0
    n = 0
    writing.start()
    while writing.is_alive():
        spin(lambda: False, key_every)  # (the window runs meanwhile: the watch, the reads)
        n += 1
        row = panel.current_item()
        clean = (row is not None and row.key[0] == "c" and row.key not in panel.pending
                 and panel.model.text(panel.current_row(), 3) == "✓ clean")
        if n % 10 == 0 and clean:
            kind, key = "accept", Qt.Key.Key_A
        elif n % 25 == 0 and row is not None and row.key[0] == "c" and row.key not in panel.pending:
            kind, key = "reject", Qt.Key.Key_R
        else:
            kind, key = "move", (Qt.Key.Key_Up if n % 7 == 0 else Qt.Key.Key_Down)
        if kind != "move" and row is not None:
            pressed[row.key[1]] = kind
        panel.list.setFocus()
        before = len(paints.at)
        t0 = time.perf_counter()
        QTest.keyClick(panel.list, key)
        if spin(lambda b=before: len(paints.at) > b, 5.0):
            times[kind].append(paints.at[before] - t0)
            if spans is not None and paints.at[before] - t0 > 0.15:
                end = paints.at[before]
                slow.append({"key": kind, "ms": round((end - t0) * 1000), "during": [
                    f"{n} {round((b - a) * 1000)}" for n, a, b in spans if b > t0 and a < end]})
        else:
            missed += 1
    writing.join()
    spin(lambda: not window.session.lane.busy and not panel.pending, 300)
    closer.stop()
    window.close()
    app.processEvents()
    every = [t for v in times.values() for t in v]
    return {"keys": n, "key_every_s": key_every,
            "repaint_p50_ms": pct(every, 0.5), "repaint_p95_ms": pct(every, 0.95),
            "repaint_max_ms": pct(every, 1.0), "no_repaint_in_5s": missed,
            **{f"{k}_keys": len(v) for k, v in times.items()},
            **{f"{k}_p95_ms": pct(v, 0.95) for k, v in times.items() if v},
            "pressed": pressed, "dialogs": dialogs[:5], **({"slow": slow} if slow else {})}


def floor(writing: threading.Thread, key_every: float) -> dict[str, Any]:
    """The floor of `--curator` on this machine (`--floor`): the same keys, timed the same
    way, in a bare list of 1,000 rows (a QListView over a QStringListModel, 1366x768)
    under the same load (the agents, the sync) — what the machine's scheduler alone costs
    a key, with no factdesk code in the window's process."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QStringListModel, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QListView

    app = QApplication.instance() or QApplication(sys.argv[:1])
    view = QListView()
    model = QStringListModel([f"proposal {i}: the pool drains under load" for i in range(1000)])
    view.setModel(model)
    view.resize(1366, 768)
    view.show()
    view.setCurrentIndex(model.index(0, 0))
    paints = watch_paints(view.viewport())
    painted = paints.at

    times: list[float] = []
    n = 0
    writing.start()
    while writing.is_alive():
        spin(lambda: False, key_every)
        n += 1
        before = len(painted)
        t0 = time.perf_counter()
        QTest.keyClick(view, Qt.Key.Key_Up if n % 7 == 0 else Qt.Key.Key_Down)
        if spin(lambda b=before: len(painted) > b, 5.0):
            times.append(painted[before] - t0)
    writing.join()
    view.close()
    app.processEvents()
    return {"keys": n, "repaint_p50_ms": pct(times, 0.5), "repaint_p95_ms": pct(times, 0.95),
            "repaint_max_ms": pct(times, 1.0)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kb", type=Path)
    ap.add_argument("--facts", type=int, default=10_000)
    ap.add_argument("--agents", type=int, default=10)
    ap.add_argument("--writes", type=int, default=100)
    ap.add_argument("--alone", type=int, default=50)
    ap.add_argument("--sync", action="store_true", help="a curator's sync loop meanwhile")
    ap.add_argument("--curator", action="store_true",
                    help="a curator decides in the window meanwhile; keys timed")
    ap.add_argument("--rate", type=float, default=None,
                    help="writes a second per agent (default: as fast as answered; 1 with "
                         "--curator)")
    ap.add_argument("--key-every", type=float, default=0.25)
    ap.add_argument("--profile", type=Path, help="cProfile the window's thread into this file")
    ap.add_argument("--switch-ms", type=float,
                    help="the window process's GIL switch interval (default: the window's own)")
    ap.add_argument("--floor", action="store_true",
                    help="with --curator: the same keys in a bare list under the same load")
    ap.add_argument("--writes-only", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true",
                    help="for each key slower than 150 ms, the window's calls that ran meanwhile")
    ap.add_argument("--hang-s", type=float, default=3600,
                    help="past this, print every thread's stack and end (a hang is a finding)")
    args = ap.parse_args()
    faulthandler.dump_traceback_later(args.hang_s, exit=True)
    kb = args.kb
    if kb is None:
        kb = Path(tempfile.mkdtemp(prefix="agent-write-kb-")) / "kb"
        subprocess.run([sys.executable, str(MAKE), "--facts", str(args.facts), "--seed", "3",
                        "--out", str(kb), "--quiet"], check=True)
    kb = kb.resolve()
    report: dict[str, Any] = {"kb": str(kb), "cpus": os.cpu_count()}
    t = time.perf_counter()
    ix = open_corpus(kb)
    ix.update()
    report["index_s"] = round(time.perf_counter() - t, 1)
    onto = ix.rule_setting().ontology
    topic = sorted(onto.topics)[0] if onto is not None and onto.topics else "gotchas"
    hypothesis = ix.read(lambda c: (r := c.execute(
        "SELECT path FROM facts WHERE type = 'hypothesis' AND status = 'live' LIMIT 1"
    ).fetchone()) and r[0])
    report["facts"] = ix.read(lambda c: c.execute(
        "SELECT COUNT(*) FROM facts WHERE status = 'live'").fetchone()[0])
    if args.alone:
        report["alone"] = alone(kb, args.alone, topic)
    before = checkout_state(kb)
    start = git(kb, "rev-parse", "HEAD").strip()
    rate = args.rate if args.rate is not None else (1.0 if args.curator else 0.0)
    remote = None
    if args.sync:
        remote = kb.parent / f"{kb.name}-remote.git"
        if not remote.exists():
            subprocess.run(["git", "clone", "-q", "--bare", str(kb), str(remote)], check=True)
        if not git(kb, "remote"):
            subprocess.run(["git", "-C", str(kb), "remote", "add", "origin", str(remote)],
                           check=True)
    done = threading.Event()
    syncs: list[float] = []
    sync_errors: list[str] = []

    def sync_loop() -> None:
        while not done.is_set():
            t0 = time.perf_counter()
            try:
                sync(kb)
            except Exception as exc:
                sync_errors.append(f"{type(exc).__name__}: {exc}"[:300])
            syncs.append(time.perf_counter() - t0)
            done.wait(1.0)

    syncer = threading.Thread(target=sync_loop, daemon=True) if args.sync and not (
        args.curator and args.writes_only is None) else None
    t = time.perf_counter()
    if syncer is not None:
        syncer.start()

    async def everyone() -> list[dict[str, Any]]:
        return await asyncio.gather(*(agent(kb, i, args.writes, topic, hypothesis, rate)
                                      for i in range(args.agents)))

    results: list[dict[str, Any]] = []
    if args.writes_only is not None:  # (the child of `--curator`: the agents and the sync)
        results = asyncio.run(everyone())
        done.set()
        if syncer is not None:
            syncer.join()
        args.writes_only.write_text(json.dumps({"results": results, "syncs": syncs,
                                                "sync_errors": sync_errors}))
        return 0
    if args.curator:
        # the agents' clients and the sync loop run in another process, as they would:
        # sharing the window's interpreter, their Python held its GIL against the keys
        out = Path(tempfile.mkdtemp(prefix="agent-write-child-")) / "writes.json"
        child = [sys.executable, __file__, "--kb", str(kb), "--agents", str(args.agents),
                 "--writes", str(args.writes), "--alone", "0", "--rate", str(rate),
                 "--writes-only", str(out), *(["--sync"] if args.sync else [])]

        def write_elsewhere() -> None:
            subprocess.run(child, check=True, env=ENV)
            got = json.loads(out.read_text())
            results.extend(got["results"])
            syncs.extend(got["syncs"])
            sync_errors.extend(got["sync_errors"])

        writing = threading.Thread(target=write_elsewhere)
        if args.floor:
            report["floor"] = floor(writing, args.key_every)
            writing.join()
            print(json.dumps({k: report[k] for k in ("facts", "floor")}, indent=2))
            return 0
        if args.profile:
            import cProfile

            with cProfile.Profile() as prof:  # (the window's thread: what a key waits on)
                report["curator"] = curate(kb, writing, args.key_every, None, args.switch_ms)
            prof.dump_stats(args.profile)
        else:
            report["curator"] = curate(kb, writing, args.key_every,
                                       [] if args.trace else None, args.switch_ms)
    else:
        results = asyncio.run(everyone())
    wall = time.perf_counter() - t
    done.set()
    if syncer is not None:
        syncer.join()
    if args.sync:
        sync(kb)  # (the last one, after every write)
    times = [x for r in results for x in r["times"]]
    checks: dict[str, bool] = {}
    lost = extra = 0
    # (after a sync's review merge took a whole branch in, the agent's next write starts
    # from the curated tip: the curated branch's commits are then on it too)
    curated = set(git(kb, "rev-list", "HEAD", f"^{start}").split())
    for r in results:
        on_branch = set(git(kb, "rev-list", f"refs/heads/agent/{r['agent']}", f"^{start}").split())
        lost += len(set(r["shas"]) - on_branch)
        extra += len(on_branch - set(r["shas"]) - curated)
    checks["no_commit_lost"] = lost == 0 and extra == 0
    checks["every_planted_write_refused_with_its_code"] = all(
        not r["wrong"] and len(r["refused"]) == r["planted"] for r in results)
    fsck = subprocess.run(["git", "-C", str(kb), "fsck", "--strict", "--no-dangling"],
                          capture_output=True, text=True, check=False)
    checks["fsck_strict_clean"] = fsck.returncode == 0 and "error" not in fsck.stderr
    queue = load_queue(kb)
    mine = [p for p in queue.proposals if p.branch.startswith("agent/bench-")
            and not p.branch.startswith("agent/bench-solo") and p.status == "open"]
    legal_count = sum(len(r["shas"]) for r in results)
    # the curator's decisions, as main holds them (a pressed key whose decision a rule
    # refused leaves its proposal open)
    decided = set(re.findall(r"^Factdesk-Proposal: ([0-9a-f]{40})$", git(
        kb, "log", "--format=%B", f"{start}..HEAD"), re.M))
    legal = {s for r in results for s in r["shas"]}
    checks["queue_shows_exactly_the_legal_writes"] = (
        legal_count == args.agents * args.writes
        and {p.sha for p in mine} == legal - decided)
    if args.curator:
        pressed = report["curator"].pop("pressed")
        report["curator"]["decided"] = len(decided)
        checks["every_decision_landed"] = set(pressed) <= decided
        checks["checkout_clean"] = git(kb, "status", "--porcelain") == ""
    else:
        checks["checkout_untouched"] = checkout_state(kb) == before
    if remote is not None:
        theirs = {line.split()[1]: line.split()[0] for line in git(
            remote, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/agent/"
        ).splitlines()}
        ours = {line.split()[1]: line.split()[0] for line in git(
            kb, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/agent/"
        ).splitlines()}
        checks["sync_pushed_every_agent_branch"] = theirs == ours and not sync_errors
    report["load"] = {
        "agents": args.agents, "writes_each": args.writes,
        "planted_each": results[0]["planted"] if results else 0,
        "legal_written": legal_count, "wall_s": round(wall, 1),
        "writes_per_s": round(len(times) / wall, 1) if wall else 0.0,
        "call_p50_ms": pct(times, 0.5), "call_p95_ms": pct(times, 0.95),
        "call_max_ms": pct(times, 1.0),
        "server_ready_s_max": max((r["ready_s"] for r in results), default=0),
        "lost": lost, "extra": extra,
        "wrong": [w for r in results for w in r["wrong"]][:5],
        "syncs": len(syncs), "sync_p50_s": round(statistics.median(syncs), 2) if syncs else None,
        "sync_errors": sync_errors[:3]}
    report["checks"] = checks
    print(json.dumps(report, indent=2))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
