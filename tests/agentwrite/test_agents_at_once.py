"""Several agents writing at once over MCP (issue 26, the load test's correctness at a
small size; bench/agent_write_bench.py runs the issue's 10 × 100): each agent its own
server process, one agent with two servers; nothing lost, nothing extra, every planted
illegal write refused with its rule, `fsck --strict` clean, the queue exactly the legal
writes, the curator's checkout untouched."""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

from factdesk.review.agent_input import Limits
from factdesk.review.proposals import load_queue
from tests.agentwrite.test_mcp_write import _agent, _fact
from tests.conftest import Corpus, git

H1 = {"title": "Retries will fall", "body": "A guess.", "type": "hypothesis", "topic": "gotchas"}


def test_the_default_rate_is_well_above_one_write_a_second() -> None:
    # (the measurement: ten agents write one proposal a second each)
    assert Limits().per_minute >= 10 * 60


def test_three_agents_and_a_second_server_at_once_lose_nothing(corpus: Corpus) -> None:
    before = corpus.snapshot()
    index = (corpus.root / ".git" / "index").read_bytes()
    servers = [("a0", 0), ("a1", 0), ("a2", 0), ("a0", 1)]  # a0 runs two servers

    def calls(agent: str, k: int) -> list[dict[str, Any]]:
        out = [_fact(f"{agent} server {k} fact {i}") for i in range(10)]
        out.insert(5, dict(H1))
        return out

    async def everyone() -> list[list[tuple[bool, Any]]]:
        runs = [_agent(corpus.root, agent, calls(agent, k)) for agent, k in servers]
        return [out for _tools, out in await asyncio.gather(*runs)]

    results = asyncio.run(everyone())
    for out in results:
        assert [err for err, _ in out].count(True) == 1
        (h1,) = [text for err, text in out if err]
        assert h1.startswith("[H1]"), h1
    written: dict[str, set[str]] = {"a0": set(), "a1": set(), "a2": set()}
    for (agent, _k), out in zip(servers, results, strict=True):
        written[agent] |= {data["sha"] for err, data in out if not err}
    for agent, shas in written.items():
        on_branch = set(git(corpus.root, "rev-list", f"agent/{agent}", "^main").split())
        assert on_branch == shas and len(shas) == (20 if agent == "a0" else 10)
    fsck = subprocess.run(["git", "-C", str(corpus.root), "fsck", "--strict", "--no-dangling"],
                          capture_output=True, text=True, check=False)
    assert fsck.returncode == 0 and "error" not in fsck.stderr, fsck.stderr
    queue = load_queue(corpus.root)
    assert sorted(p.sha for p in queue.proposals) == sorted(set().union(*written.values()))
    assert corpus.snapshot() == before
    assert (corpus.root / ".git" / "index").read_bytes() == index
