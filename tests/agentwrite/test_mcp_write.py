"""`factdesk mcp --agent ID` end to end (issue 26): the official MCP SDK's stdio client is
the agent; it proposes facts, is refused with the rule's code, cannot set another
claimant, and two servers for one id writing at once lose no commit."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import Corpus, git

APP = Path(__file__).resolve().parents[2] / "app"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(APP), os.environ.get("PYTHONPATH", "")])}


def _payload(result: Any) -> tuple[bool, Any]:
    error = result.is_error if hasattr(result, "is_error") else result.isError
    if error:
        return True, result.content[0].text
    data = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    return False, data if data is not None else json.loads(result.content[0].text)


async def _agent(kb: Path, agent: str | None, calls: list[dict[str, Any]]
                 ) -> tuple[list[str], list[tuple[bool, Any]]]:
    from mcp import Client, StdioServerParameters

    args = ["-m", "factdesk.cli", "mcp", "--kb", str(kb), *(["--agent", agent] if agent else [])]
    params = StdioServerParameters(command=sys.executable, args=args, env=ENV)
    out = []
    async with Client(params, read_timeout_seconds=120) as client:
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        for call in calls:
            tool = call.pop("tool", "propose_fact")
            out.append(_payload(await client.call_tool(tool, call)))
    return tools, out


def _fact(title: str, **more: Any) -> dict[str, Any]:
    return {"title": title, "body": "Seen in three deploys.", "type": "observation",
            "domain": ["gotchas/db"], **more}


def test_an_agent_proposes_over_mcp(corpus: Corpus) -> None:
    before = corpus.snapshot()
    index = (corpus.root / ".git" / "index").read_bytes()
    tools, out = asyncio.run(_agent(corpus.root, "codex", [
        _fact("The ledger pool drains after 40 minutes", claim_type="observation",
              subject_kind="codebase"),
        {"title": "Retries will fall", "body": "A guess.", "type": "hypothesis",
         "topic": "gotchas"},
        _fact("Ana prefers tabs", claimant_agent_id="ana", claimant_type="user"),
    ]))
    assert tools == ["my_proposals", "propose_fact", "propose_retraction", "propose_settlement",
                     "propose_update", "read_inbox", "recall", "search", "send_message", "show"]
    (ok, first), (refused, h1), (ok3, third) = out
    assert not ok and first["branch"] == "agent/codex" and first["topic"] == "gotchas"
    assert refused and h1.startswith("[H1] a hypothesis needs a settlement criterion"), h1
    assert not ok3, third
    # the claimant named in the arguments is ignored: codex wrote it, codex claims it
    text = git(corpus.root, "show", f"agent/codex:{third['path']}")
    assert "claimant_agent_id: codex\n" in text and "ana" not in text and "user" not in text
    # the curator's checkout is untouched: work tree, HEAD, index
    assert corpus.snapshot() == before
    assert (corpus.root / ".git" / "index").read_bytes() == index
    log = git(corpus.root, "log", "--format=%H %ae", "main..agent/codex").split("\n")
    assert [line.split()[0] for line in log if line] == [third["sha"], first["sha"]]
    listed = subprocess.run([sys.executable, "-m", "factdesk.cli", "proposals", "--kb",
                             str(corpus.root), "--format", "json"], capture_output=True,
                            env=ENV, check=True)
    shas = [p["id"] for p in json.loads(listed.stdout)["proposals"]]
    assert shas == [first["sha"], third["sha"]]


def test_without_agent_the_server_stays_read_only(corpus: Corpus) -> None:
    tools, _ = asyncio.run(_agent(corpus.root, None, []))
    assert tools == ["recall", "search", "show"]


def test_a_user_id_is_refused_as_an_agent(corpus: Corpus) -> None:
    corpus.write(".factdesk/agents.yaml", "agents:\n  ana: {type: user, email: ana@example.org}\n")
    git(corpus.root, "add", "-A")
    git(corpus.root, "commit", "-qm", "registry", author="ana", email="ana@example.org")
    proc = subprocess.run([sys.executable, "-m", "factdesk.cli", "mcp", "--kb", str(corpus.root),
                           "--agent", "ana"], capture_output=True, env=ENV, stdin=subprocess.DEVNULL,
                          timeout=120)
    assert proc.returncode == 1
    assert b"ana is registered as a user" in proc.stderr


def test_two_servers_for_one_agent_lose_no_commit(corpus: Corpus) -> None:
    async def both() -> list[list[tuple[bool, Any]]]:
        runs = [_agent(corpus.root, "codex", [_fact(f"Writer {w} fact {i}") for i in range(10)])
                for w in range(2)]
        return [out for _tools, out in await asyncio.gather(*runs)]

    results = asyncio.run(both())
    assert all(not err for out in results for err, _ in out), results
    shas = {data["sha"] for out in results for _, data in out}
    listed = git(corpus.root, "rev-list", "main..agent/codex").split()
    assert len(shas) == 20 and set(listed) == shas


def test_update_retract_settle_and_the_inbox_over_mcp(corpus: Corpus) -> None:
    corpus.write("kb/gotchas/db/d4d4d4d4.md", "---\ntype: hypothesis\ndomain: [ledger-api]\n"
                 "confidence: 0.6\nsources: 1\nrefs: []\nsettle_by: 2099-01-31\n"
                 "settlement: the pool stays under 200 clients\n---\n# The pool will hold\n")
    corpus.write("msg/2026/11/11111111.md", "---\nfrom: claude-code\nto: [codex]\n"
                 "sent: 2026-11-02T09:14:00Z\ndelivery: delivered\n---\nAdd lock_timeout.\n")
    corpus.commit("learn: a hypothesis and a message")
    before = corpus.snapshot()
    _tools, out = asyncio.run(_agent(corpus.root, "codex", [
        _fact("Pool drains under load"),
        {"tool": "propose_retraction", "path": "kb/gotchas/db/b2b2b2b2.md",
         "reason": "no longer true"},
        {"tool": "propose_update", "path": "kb/gotchas/db/a1a1a1a1.md", "confidence": 0.1},
        {"tool": "propose_settlement", "hypothesis": "kb/gotchas/db/d4d4d4d4.md",
         "outcome": "confirmed", "title": "The pool held", "body": "Measured on the deploy."},
        {"tool": "read_inbox"},
        {"tool": "propose_retraction", "path": "../../etc/passwd", "reason": "x"},
    ]))
    (e1, fact), (e2, retracted), (e3, a1), (e4, settled), (e5, box), (e6, bad) = out
    assert not (e1 or e2 or e4 or e5), out
    assert e3 and a1.startswith("[A1] kb/gotchas/db/a1a1a1a1.md is claude-code's claim"), a1
    assert e6 and bad.startswith("[input] path '../../etc/passwd' is no fact path"), bad
    assert retracted["path"] == "kb/gotchas/db/b2b2b2b2.md"
    assert settled["outcome"] == "confirmed" and settled["hypothesis"].endswith("d4d4d4d4.md")
    assert [m["path"] for m in box["messages"]] == ["msg/2026/11/11111111.md"]
    assert corpus.snapshot() == before
    log = git(corpus.root, "log", "--format=%H", "main..agent/codex").split()
    assert log == [settled["sha"], retracted["sha"], fact["sha"]]
    # an update of its own fact, from a second server
    _tools, ((e7, updated),) = asyncio.run(_agent(corpus.root, "codex", [
        {"tool": "propose_update", "path": fact["path"], "confidence": 0.95}]))
    assert not e7 and updated["changed"] == ["confidence"], updated
