"""`factdesk mcp` end to end (issue 17): the SDK's own stdio client starts the server as a
subprocess and calls its read-only tools and resources."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import mcp  # noqa: F401  (a dependency of every install: this test runs everywhere)

from tests.conftest import Corpus

APP = Path(__file__).resolve().parents[2] / "app"


def _structured(result: object) -> dict[str, object]:
    data = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    if data is None:  # (text content: the JSON of the dict)
        data = json.loads(result.content[0].text)  # type: ignore[attr-defined]
    return data  # type: ignore[no-any-return]


async def _session(kb: Path) -> dict[str, object]:
    from mcp import Client, StdioServerParameters

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(APP), os.environ.get("PYTHONPATH", "")])}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "factdesk.cli", "mcp", "--kb", str(kb)], env=env)
    out: dict[str, object] = {}
    async with Client(params, read_timeout_seconds=120) as client:
        out["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        out["recall"] = _structured(await client.call_tool("recall", {"query": "ledger", "limit": 5}))
        out["search"] = _structured(await client.call_tool(
            "search", {"query": "migrations include:messages"}))
        out["show"] = _structured(await client.call_tool("show", {"fact": "b2b2b2b2"}))
        missing = await client.call_tool("show", {"fact": "ffffffff"})
        out["missing_is_error"] = missing.is_error if hasattr(missing, "is_error") else missing.isError
        fact = await client.read_resource("factdesk://fact/b2b2b2b2")
        out["resource"] = fact.contents[0].text  # type: ignore[union-attr]
        listed = await client.read_resource("factdesk://facts")
        out["listed"] = json.loads(listed.contents[0].text)  # type: ignore[union-attr]
    return out


def test_mcp_round_trip_over_stdio(corpus: Corpus) -> None:
    from tests.messages.test_messages import message

    corpus.write("kb/gotchas/db/e2e2e2e2.md",
                 "---\ntype: observation\nclaim_type: observation\nclaimant_agent_id: claude-code\n"
                 "claimant_type: tool\nsubject_kind: codebase\n---\n# The ledger pool drains after "
                 "40 minutes\n\nSeen in three deploys.\n")
    p = message(corpus, refs="[kb/gotchas/db/b2b2b2b2.md]",
                body="Migrations: please add lock_timeout before the ledger migration")
    corpus.commit("learn: one more, and a message")
    before = corpus.snapshot()
    out = asyncio.run(_session(corpus.root))
    assert corpus.snapshot() == before  # read-only: nothing in the work tree or HEAD changed
    assert out["tools"] == ["recall", "search", "show"]
    results = out["recall"]["results"]  # type: ignore[index]
    texts = [r["text"] for r in results]
    assert "claude-code (tool) observed: The ledger pool drains after 40 minutes" in texts
    assert all(not r["path"].startswith("msg/") for r in results)
    assert p in [r["path"] for r in out["search"]["results"]]  # type: ignore[index]
    show = out["show"]
    assert show["path"] == "kb/gotchas/db/b2b2b2b2.md"  # type: ignore[index]
    assert [m["path"] for m in show["messages"]] == [p]  # type: ignore[index]
    assert out["missing_is_error"] is True
    assert "Migrations lock the ledger table for 40 s" in out["resource"]  # type: ignore[operator]
    assert len(out["listed"]["facts"]) == 4  # type: ignore[index]
