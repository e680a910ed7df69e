"""`factdesk mcp --print-config`: what the README tells a user to paste into an MCP client
starts a working server (the official SDK client as that client)."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
from pathlib import Path

from factdesk.cli import main
from tests.conftest import Corpus

APP = Path(__file__).resolve().parents[2] / "app"


def test_mcp_is_part_of_the_default_install() -> None:
    """No extra to name: `mcp` is a base dependency (a plain pip or pipx install serves)."""
    import tomllib

    project = tomllib.loads((APP.parent / "pyproject.toml").read_text())["project"]
    assert any(d.replace(" ", "").startswith("mcp>=") for d in project["dependencies"])


async def _tools_via(command: str, args: list[str]) -> tuple[list[str], object]:
    from mcp import Client, StdioServerParameters

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(APP), os.environ.get("PYTHONPATH", "")])}
    params = StdioServerParameters(command=command, args=args, env=env, cwd="/")
    async with Client(params, read_timeout_seconds=120) as client:
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        shown = await client.call_tool("show", {"fact": "a1a1a1a1"})
    return tools, shown


def test_the_printed_config_starts_a_server_the_sdk_client_uses(corpus: Corpus, capsys,
                                                                monkeypatch) -> None:
    monkeypatch.chdir(corpus.root)
    assert main(["mcp", "--print-config", "--kb", "."]) == 0
    config = json.loads(capsys.readouterr().out)["mcpServers"]["factdesk"]
    assert config["args"][-2:] == ["--kb", str(corpus.root.resolve())]  # absolute: any cwd
    with capsys.disabled():  # (the SDK hands the server the real stderr)
        tools, shown = asyncio.run(_tools_via(config["command"], config["args"]))
    assert {"search", "show", "recall"} <= set(tools)
    assert "Connection pool exhausts at 200 clients" in shown.content[0].text  # type: ignore[attr-defined]
    assert main(["mcp", "--print-config", "claude", "--kb", str(corpus.root)]) == 0
    line = shlex.split(capsys.readouterr().out)
    assert line[:5] == ["claude", "mcp", "add", "factdesk", "--"]
    assert line[5:] == [config["command"], *config["args"]]


def test_tool_descriptions_are_prose_without_docstring_indentation(corpus: Corpus) -> None:
    """Clients show a tool's description verbatim (and models read it): no line breaks or
    leading spaces carried over from the docstring."""
    from factdesk.mcp_server import build_server

    tools = asyncio.run(build_server(corpus.root).list_tools())
    assert {t.name for t in tools} >= {"search", "show", "recall"}
    for tool in tools:
        text = tool.description or ""
        assert text and "\n" not in text and "  " not in text, (tool.name, text)
