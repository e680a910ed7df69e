"""Issue 23 #2: `factdesk mcp` learns of changes from a watch of the work tree and the refs
(`serve` builds its server with `watch=True`): a 10-file commit on the checked-out branch
is found by `search` < 1 s after it lands, without a `git status` per call."""

from __future__ import annotations

import asyncio
import time

import pytest

from factdesk.corpus import gitlook
from tests.conftest import Corpus


def _no_status(*_args: object) -> None:
    raise AssertionError("a watched call asked git status")


def test_a_commit_is_found_by_the_watching_server_within_a_second(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    from factdesk.mcp_server import build_server

    server = build_server(corpus.root, watch=True)

    def search(query: str) -> str:
        return str(asyncio.run(server.call_tool("search", {"query": query})))

    assert "Connection pool" in search("pool")  # the first call looks at everything
    monkeypatch.setattr(gitlook, "status_paths", _no_status)
    assert "Quokka" not in search("quokka")  # nothing changed: no git status
    for k in range(10):
        corpus.fact(f"kb/gotchas/fleet/{k:08x}.md", title=f"Quokka finding {k}")
    corpus.commit("learn: ten quokka facts")
    landed = time.perf_counter()
    while search("quokka").count("Quokka finding") < 10:  # (< 1 s: bench/watch_bench.py)
        assert time.perf_counter() - landed < 20.0, "not found within 20 s"
        time.sleep(0.02)
