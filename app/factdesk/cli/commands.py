"""The click commands. Each opens the corpus, brings the index up to date, and prints."""

from __future__ import annotations

import json
import shlex
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:  # (connections are handed in by the index; no SQL here)
    import sqlite3

from factdesk.core import open_corpus
from factdesk.corpus import gitrepo
from factdesk.curation import Recovered, recover_before_reads
from factdesk.errors import FactdeskError
from factdesk.index.indexer import Indexer
from factdesk.index.query import includes_messages, parse_similar, vocabulary_hints
from factdesk.index.rows import fact_payload
from factdesk.index.search import (
    AmbiguousName,
    all_problems,
    fact_count,
    get_fact_row,
    problems_for,
    search,
)
from factdesk.model.visible import for_terminal
from factdesk.model.weight import is_stale
from factdesk.model.words import count
from factdesk.recall import (
    check_messages,
    message_hits,
    messages_referencing,
    staged_message_problems,
)

_T = TypeVar("_T")

FORMAT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                      show_default=True, help="output format")
KB = click.option("--kb", "kb", type=click.Path(path_type=Path), default=Path("."),
                  show_default=True, help="the corpus (a git work tree with kb/)")
HOOK_MARK = "# installed by factdesk check --install-hook"


#: the module that registers each command not defined here: imported when the command is
#: asked for (issue 23 #1: `factdesk search` imported every command module — the review,
#: sync, semantic and curation layers — about 0.4 s before it read anything);
#: tests/test_cli.py holds it equal to where each command lives
LAZY: dict[str, str] = {name: module for module, names in {
    "agents_cmds": ("agents",),
    "curation_cmds": ("attest", "dismiss", "edit", "identity", "mislabels", "move", "redo",
                      "relabel", "restore", "retract", "settle", "undo"),
    "decide_cmds": ("accept", "merge-reviewed", "reject"),
    "desktop_cmds": ("desktop",),
    "messages_cmds": ("mcp", "messages", "move-to-messages", "recall"),
    "new_cmds": ("new",),
    "reflect_cmds": ("queue", "transitions"),
    "review_cmds": ("proposals",),
    "semantic_cmds": ("duplicates", "embed", "similar"),
    "sync_cmds": ("sync",),
}.items() for name in names}


class _Group(click.Group):
    _exit_code = 0

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY:
            import importlib

            importlib.import_module(f"factdesk.cli.{LAZY[cmd_name]}")  # (it registers itself)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command with its whole summary (the first paragraph of its help): click's
        default cuts them at about 45 characters with "..."."""
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            summary = cmd.short_help or (cmd.help or "").split("\n\n")[0]
            rows.append((name, " ".join(summary.split())))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        """Every command's (and sub-command's) error a user can act on is said in words:
        "Error: …", exit status 1 (STYLE.md §13); anything else is a bug, and raised."""
        try:
            return super().invoke(ctx)
        except FactdeskError as exc:
            raise click.ClickException(for_terminal(str(exc))) from None


@click.group(cls=_Group)
def cli() -> None:
    """factdesk: audit and curate AI agents' long-term memory (knomit corpora)."""


def _exit(code: int) -> None:
    cli._exit_code = code


#: where `_say_recovered` keeps what this command's recovery did (click's context meta)
RECOVERED_KEY = "factdesk.recovered"


def _open(kb: Path) -> Indexer:
    indexer = open_corpus(kb)
    click.get_current_context().call_on_close(lambda: _say_set_aside(indexer))
    # every command first finishes or rolls back an action a crash left half-done, when no
    # action holds the writer lock (git's index then matches HEAD again: issue 22 #3, #4),
    # and so does each read
    recover_before_reads(indexer, _say_recovered)
    assert indexer.before_read is not None
    indexer.before_read()
    return indexer


def _say_recovered(done: Recovered) -> None:
    say(f"recovered an interrupted action ({done.outcome}): {done.message}", err=True)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:  # (the decision commands record a review merge it lost: decide_cmds)
        ctx.meta.setdefault(RECOVERED_KEY, []).append(done)


def _say_set_aside(indexer: Indexer) -> None:
    """When the command ends: an index found unusable is never replaced silently (the user
    may want to look at what was kept)."""
    for kept in indexer.set_aside:
        say(f"warning: the index could not be used (damaged, or another version's); "
            f"it was kept as {kept} and rebuilt", err=True)


def say(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Text output: corpus text reaches the terminal inert (`for_terminal`: an escape
    sequence in a title would otherwise retitle the window or clear the screen)."""
    click.echo(for_terminal(text), err=err, nl=nl)


def _read(indexer: Indexer, work: Callable[[sqlite3.Connection], _T], *,
          thorough: bool = False) -> _T:
    """`Indexer.read`, saying on stderr when the index could not be brought up to date
    (another program held its write lock: the answer is from the index as it was)."""
    result = indexer.read(work, thorough=thorough)
    if indexer.stale:
        say(f"warning: {indexer.stale}; this is the index as it was", err=True)
    if note := indexer.pending.note():
        say(f"warning: {note}", err=True)
    return result


@cli.command()
@KB
@click.option("--rebuild", is_flag=True, help="rebuild from scratch instead of updating")
def index(kb: Path, rebuild: bool) -> None:
    """Build the index, or update it with what changed since it was built."""
    indexer = _open(kb)
    stats = indexer.update(rebuild=rebuild)
    say(f"{stats.mode}: {stats.facts + stats.broken} facts ({stats.broken} unreadable), "
        f"{stats.retracted} retracted, {stats.problems} problems, "
        f"{len(stats.changed)} changed ({stats.seconds:.2f}s)")
    _exit(0)


@cli.command()
@KB
@FORMAT
@click.option("--install-hook", is_flag=True,
              help="install `factdesk check --staged` as the repository's git pre-commit hook")
@click.option("--staged", is_flag=True, help="fail only on errors in files staged for commit")
def check(kb: Path, fmt: str, install_hook: bool, staged: bool) -> None:
    """Type-check the corpus: every rule, with stable codes and path:line locations."""
    indexer = _open(kb)
    if install_hook:
        say(_install_hook(indexer.repo))
        _exit(0)
        return

    def read(conn: sqlite3.Connection) -> tuple[list[dict[str, Any]], int]:
        rows = ([p.as_dict() for p in indexer.staged_problems(conn)] if staged
                else all_problems(conn))
        # the message store's findings (M1-M8, docs/messages.md)
        rows = sorted(rows + (staged_message_problems(indexer, conn) if staged
                              else check_messages(indexer, conn)),
                      key=lambda p: (p["path"], p["line"], p["code"]))
        return rows, fact_count(conn)

    # thorough: the Check command starts with `PRAGMA quick_check` (RELIABILITY 3.11)
    problems, facts = _read(indexer, read, thorough=True)
    errors = [p for p in problems if p["severity"] == "error"]
    warnings = [p for p in problems if p["severity"] != "error"]
    if fmt == "json":
        click.echo(json.dumps({"facts": facts, "errors": errors, "warnings": warnings},
                              indent=2, ensure_ascii=False))
    else:
        for p in errors + warnings:
            say(f"{p['path']}:{p['line']}: {p['severity']} [{p['code']}] {p['message']}")
        say(f"{count(facts, 'fact')}: {count(len(errors), 'error')}, "
            f"{count(len(warnings), 'warning')}", err=bool(errors))
    if indexer.stale:  # a check that could not see the files as they are has not passed
        say("error: the files changed since the index was last brought up to date "
            "were not checked", err=True)
    _exit(1 if errors or indexer.stale else 0)


@cli.command(name="search", context_settings={"ignore_unknown_options": True})  # `-retry` is a query
@click.argument("query")
@KB
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 10_000))
@FORMAT
def search_cmd(query: str, kb: Path, limit: int, fmt: str) -> None:
    """Search facts: field filters (type:hypothesis confidence:<0.5 …) and free text."""
    target = parse_similar(query)
    if target is not None:  # (the text search took `similar` for a word: every fact matched)
        say(f"similar: semantic search is not ready in `factdesk search`, which reads the "
            f"index only: run `factdesk embed`, then `factdesk similar {shlex.quote(target)}` "
            "(the window answers similar: once its model is ready)", err=True)
        _exit(1)
        return
    indexer = _open(kb)
    hits: list[Any] = _read(indexer, lambda conn: search(conn, query, limit=limit))
    if includes_messages(query):  # `include:messages`: the message store too (after the facts)
        hits += message_hits(indexer, query, limit=limit)
    if fmt == "json":
        click.echo(json.dumps({"results": [h.as_dict() for h in hits]}, ensure_ascii=False))
    else:
        for h in hits:
            say(f"{h.score + 0.0:8.3f}  {h.type or '?':<12} {h.path}\n          {h.title}")
        say(count(len(hits), "result"))
        if not hits:
            for hint in vocabulary_hints(query):
                say(f"note: {hint}", err=True)
    _exit(0)


@cli.command()
@click.argument("fact")
@KB
@FORMAT
@click.option("--include-agent-comm", "with_messages", is_flag=True,
              help="also the messages that reference the fact (msg/; JSON: a `messages` list)")
def show(fact: str, kb: Path, fmt: str, with_messages: bool) -> None:
    """Show one fact (by id, path or 8-hex name) with its envelope and evidence."""
    indexer = _open(kb)

    def read(conn: sqlite3.Connection) -> dict[str, Any] | None:
        row = get_fact_row(conn, fact)
        if row is None:
            return None
        return fact_payload(row, [dict(p) for p in problems_for(conn, row["path"])])

    try:
        data = _read(indexer, read)
    except AmbiguousName as many:  # every match, named (issue 22 #9)
        if fmt == "json":
            click.echo(json.dumps({"ambiguous": [{"path": p, "title": t, "status": st}
                                                 for p, t, st in many.matches]},
                                  indent=2, ensure_ascii=False))
        raise
    if data is None:
        raise click.ClickException(f"no fact matches {fact!r}"
                                   + (" (a factdesk action is pending)" if indexer.pending else ""))
    if note := indexer.pending.note(data["path"]):
        data["pending"] = note  # (HEAD's version; the file on disk is half-written)
    if with_messages:  # the backlinks (issue 17), as the MCP server's `show` gives them
        data["messages"] = [m.as_dict() for m in messages_referencing(indexer, data["path"])]
    if fmt == "json":
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        say(_show_text(data))
    _exit(0)


def _show_text(d: dict[str, Any]) -> str:
    derived = set(d["derived"])

    def mark(key: str) -> str:
        value = d[key]
        if value is None:
            return "unknown" if key == "claimant_type" else "—"  # (never Python's "None")
        return f"{value} (derived)" if key in derived else str(value)

    def plain(key: str) -> str:
        return "—" if d[key] is None else str(d[key])

    recorded = d["evidence_weight"]
    computed = d["evidence_weight_computed"]
    stale = is_stale(recorded, computed)
    lines = [
        d["title"], d["path"] + f"  [{d['status']}" + (", pending]" if d.get("pending") else "]"),
        *([f"note: {d['pending']}"] if d.get("pending") else []), "",
        f"kind {plain('kind')} · type {plain('type')} · origin {plain('origin')}",
        f"claim {mark('claim_type')} · claimant {mark('claimant')} ({mark('claimant_type')})"
        f" · subject {d['subject_kind'] or '—'} {d['subject_ref'] or ''}".rstrip(),
        f"confidence {plain('confidence')} · sources {plain('sources')} · evidence weight recorded "
        f"{_num(recorded)}, computed now {_num(computed)}" + (" (STALE)" if stale else ""),
        f"attribution: {d['attribution']}",
        f"domain {', '.join(d['domain'])} · entities {', '.join(d['entities'])}"
        + (f" · motifs {', '.join(d['motifs'])}" if d["motifs"] else ""),
    ]
    if d["settle_by"] or d["settlement"]:
        lines.append(f"settle by {d['settle_by'] or '—'}: {d['settlement'] or ''}")
    if d["refs"]:
        lines.append("refs:")
        lines.extend(f"  {r}" for r in d["refs"])
    if d["problems"]:
        lines.append("problems:")
        lines.extend(f"  {p['severity']} [{p['code']}] line {p['line']}: {p['message']}"
                     for p in d["problems"])
    if "messages" in d:
        lines.append(f"messages that reference this fact ({len(d['messages'])}):")
        lines.extend(f"  {m['sent']}  {m['delivery']:<12} {m['from']} → {', '.join(m['to'])}  "
                     f"{m['path']}" for m in d["messages"])
    lines += ["", d["body"]]
    return "\n".join(lines)


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.6g}"


def _install_hook(repo: Path) -> str:
    hooks, scope = gitrepo.hooks_dir(repo)
    if scope in ("global", "system"):  # it would run in every repository, most without kb/
        raise click.ClickException(
            f"core.hooksPath is set in your {scope} git config ({hooks}): a hook there runs in "
            "every repository. Set a hooks path for this repository (git config core.hooksPath "
            ".githooks) and install again, or call `factdesk check --staged` from your hook")
    hooks.mkdir(parents=True, exist_ok=True)
    hook = hooks / "pre-commit"
    if hook.exists() and HOOK_MARK not in hook.read_text("utf-8", "replace"):
        raise click.ClickException(f"{hook} exists and is not factdesk's; not overwritten")
    # a frozen bundle's executable is the `factdesk` command itself (it has no `-m`)
    command = "" if getattr(sys, "frozen", False) else " -m factdesk.cli"
    script = (f"#!/bin/sh\n{HOOK_MARK}\n"
              f'exec "{sys.executable}"{command} check --staged '
              '--kb "$(git rev-parse --show-toplevel)"\n')
    hook.write_text(script, "utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return f"installed {hook}"
