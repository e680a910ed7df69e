"""Issue 22 #13: every MCP request gets an answer, and a tool's failure carries its reason.
The SDK's own stdio client for the tools; the raw protocol for what no SDK client sends (a
line that is not JSON, a lone surrogate escape)."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Corpus

pytest.importorskip("mcp", reason="the optional `mcp` package (factdesk[mcp]) is not installed")

APP = Path(__file__).resolve().parents[2] / "app"


def _is_error(result: object) -> bool:
    return bool(getattr(result, "is_error", getattr(result, "isError", False)))


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def _calls(kb: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp import Client, StdioServerParameters

    env = {**os.environ, "PYTHONPATH": str(APP)}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "factdesk.cli", "mcp", "--kb", str(kb)], env=env)
    async with Client(params, read_timeout_seconds=120) as client:
        return [await client.call_tool(name, args) for name, args in calls]


def test_tool_errors_carry_their_reason_and_show_takes_an_integer_id(corpus: Corpus) -> None:
    bad, missing, found, by_id, by_text = asyncio.run(_calls(corpus.root, [
        ("search", {"query": "confidence:<abc"}),
        ("show", {"fact": "ffffffff"}),
        ("search", {"query": "Migrations"}),
        ("show", {"fact": 2}),
        ("show", {"fact": "2"}),
    ]))
    assert _is_error(bad) and "expects a comparison like confidence:<0.5" in _text(bad), _text(bad)
    assert _is_error(missing) and "no fact matches 'ffffffff'" in _text(missing), _text(missing)
    hit = json.loads(_text(found))["results"][0]
    assert isinstance(hit["id"], int)
    assert not _is_error(by_id), _text(by_id)
    assert json.loads(_text(by_id))["path"] == json.loads(_text(by_text))["path"]


class _Raw:
    """The server over its stdio, line by line (what an SDK client never sends)."""

    def __init__(self, kb: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(APP)}
        self.proc = subprocess.Popen([sys.executable, "-m", "factdesk.cli", "mcp", "--kb", str(kb)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.send(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
                  b'"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}')
        assert self.reply()["id"] == 1
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def _read(self) -> None:
        assert self.proc.stdout
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, line: bytes) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 60) -> dict[str, Any]:
        try:
            return json.loads(self.lines.get(timeout=timeout))  # type: ignore[no-any-return]
        except queue.Empty:
            raise AssertionError(f"no reply within {timeout} s") from None

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self.reader.join(timeout=30)
        assert self.proc.stdout
        self.proc.stdout.close()


def test_a_line_that_is_not_json_gets_a_parse_error_and_a_lone_surrogate_an_answer(
        corpus: Corpus) -> None:
    raw = _Raw(corpus.root)
    try:
        raw.send(b"{not json")
        parse = raw.reply()
        assert parse["id"] is None and parse["error"]["code"] == -32700, parse
        raw.send(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search",'
                 b'"arguments":{"query":"lock\\ud800"}}}')
        answer = raw.reply()
        assert answer["id"] == 7, answer
        assert answer["result"]["isError"] is True
        assert "surrogate" in answer["result"]["content"][0]["text"]
        raw.send(b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"search",'
                 b'"arguments":{"query":"Migrations"}}}')
        assert raw.reply()["id"] == 8  # (the server still serves)
        raw.send(b'{"jsonrpc":"2.0","id":9,"nothing":"here"}')
        invalid = raw.reply()
        assert invalid["error"]["code"] == -32600 and invalid["id"] == 9, invalid
    finally:
        raw.close()
