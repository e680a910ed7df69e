"""The message store and attributed recall on the command line (issue 17).

    factdesk messages [--kb PATH] [--format text|json]
    factdesk messages mark MSG... --delivery read --reason "…"
    factdesk move-to-messages FACT --to AGENT [--to AGENT] [--from AGENT] --reason "…"
    factdesk recall QUERY [--kb PATH] [--limit N] [--include-agent-comm] [--format markdown|json]
    factdesk mcp [--kb PATH] [--agent ID]   (the same reads as an MCP server over stdio;
                                             with --agent, that agent's write tools too)
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import click

from factdesk.cli.commands import FORMAT, KB, _exit, _open, cli, say
from factdesk.cli.curation_cmds import PREVIEW, REASON, _curation, _paths, _report
from factdesk.model.messages import DELIVERY_STATES
from factdesk.recall import all_messages, recall


@cli.group(name="messages", invoke_without_command=True)
@KB
@FORMAT
@click.pass_context
def messages_cmd(ctx: click.Context, kb: Path, fmt: str) -> None:
    """List the message store (msg/): agents' addressed messages, kept apart from memory."""
    if ctx.invoked_subcommand is not None:
        return
    found = all_messages(_open(kb))
    if fmt == "json":
        click.echo(json.dumps({"messages": [m.as_dict() for m in found]}, ensure_ascii=False))
    else:
        for m in found:
            say(f"{m.sent}  {m.delivery:<12} {m.sender} → {', '.join(m.to)}  {m.path}\n"
                f"          {m.first_line}")
        say(f"{len(found)} message{'s' if len(found) != 1 else ''}")
    _exit(0)


@messages_cmd.command(name="mark")
@click.argument("paths", nargs=-1, required=True)
@KB
@click.option("--delivery", required=True, type=click.Choice(list(DELIVERY_STATES)))
@REASON
@PREVIEW
@FORMAT
def mark_cmd(paths: tuple[str, ...], kb: Path, delivery: str, reason: str, preview: bool,
             fmt: str) -> None:
    """Set messages' delivery state (one commit; undoable)."""
    cur = _curation(kb)
    _report(fmt, lambda: cur.mark_delivery(list(paths), delivery, reason, preview=preview))


@cli.command(name="move-to-messages")
@click.argument("fact")
@KB
@click.option("--to", "to", multiple=True, required=True, help="a recipient (repeatable)")
@click.option("--from", "sender", default=None, help="the sender (default: the fact's claimant)")
@REASON
@PREVIEW
@FORMAT
def move_to_messages_cmd(fact: str, kb: Path, to: tuple[str, ...], sender: str | None, reason: str,
                         preview: bool, fmt: str) -> None:
    """Move a fact that is really an addressed message out of memory (one commit: the fact
    leaves kb/, the message is written under msg/ with its refs as backlinks)."""
    cur = _curation(kb)
    (path,) = _paths(cur.indexer, [fact], None)
    _report(fmt, lambda: cur.move_to_messages(path, list(to), reason, sender=sender,
                                              preview=preview))


@cli.command(name="recall", context_settings={"ignore_unknown_options": True})
@click.argument("query")
@KB
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--include-agent-comm", is_flag=True,
              help="also the messages the query finds (after the facts)")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown",
              show_default=True)
def recall_cmd(query: str, kb: Path, limit: int, include_agent_comm: bool, fmt: str) -> None:
    """What an agent should read about QUERY: live facts, ranked, each attributed by the
    authority table (plain only for ground truth)."""
    from factdesk.model.recall import markdown

    results = recall(_open(kb), query, limit=limit, include_agent_comm=include_agent_comm)
    if fmt == "json":
        click.echo(json.dumps({"results": [r.as_dict() for r in results]}, ensure_ascii=False))
    else:
        say(markdown(results, query), nl=False)
    _exit(0)


@cli.command(name="mcp")
@KB
@click.option("--print-config", "print_config", type=click.Choice(["json", "claude"]),
              is_flag=False, flag_value="json", default=None,
              help="print how an MCP client starts this server for --kb, and exit: the "
                   "`mcpServers` JSON desktop clients read (json, the default) or a "
                   "`claude mcp add` line (claude)")
@click.option("--agent", "agent", default=None, metavar="ID",
              help="serve write tools for this agent id too (propose_fact …): what it "
                   "writes is checked by the rules and committed on agent/ID; its type comes "
                   "from .factdesk/agents.yaml (unregistered: unverified; a user is refused)")
def mcp_cmd(kb: Path, print_config: str | None, agent: str | None) -> None:
    """Serve search, show and recall (read-only) as an MCP server over stdio; with --agent,
    also the tools that agent proposes facts with (docs/mcp.md)."""
    if print_config is not None:
        click.echo(mcp_config(kb, print_config, agent))
        _exit(0)
        return
    try:
        from factdesk.mcp_server import serve
    except ImportError as exc:  # (a broken install: `mcp` is a dependency)
        raise click.ClickException(
            f"the MCP server needs the `mcp` package ({exc}); reinstall factdesk") from None
    from factdesk.review.agent_input import AgentWriteRefused

    try:
        serve(kb, agent)
    except AgentWriteRefused as exc:  # (the identity: said before any client is served)
        raise click.ClickException(f"--agent {agent}: {exc}") from None
    _exit(0)


def mcp_launch(kb: Path, agent: str | None = None) -> list[str]:
    """The command line that starts this install's MCP server on `kb`: this interpreter
    (or this bundle's executable) with absolute paths, so it runs whatever the client's
    PATH and working folder are."""
    folder = str(Path(kb).expanduser().resolve())
    tail = ["--agent", agent] if agent else []
    if getattr(sys, "frozen", False):  # the PyInstaller bundle
        return [sys.executable, "mcp", "--kb", folder, *tail]
    return [sys.executable, "-m", "factdesk", "mcp", "--kb", folder, *tail]


def mcp_config(kb: Path, style: str, agent: str | None = None) -> str:
    """`json`: the `mcpServers` block desktop MCP clients read; `claude`: the line that adds
    the server to Claude Code."""
    command = mcp_launch(kb, agent)
    if style == "claude":
        return shlex.join(["claude", "mcp", "add", "factdesk", "--", *command])
    return json.dumps({"mcpServers": {"factdesk": {"command": command[0], "args": command[1:]}}},
                      indent=2, ensure_ascii=False)
