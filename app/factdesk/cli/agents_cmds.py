"""`factdesk agents`: every agent's record and calibration, and the registry actions.

    factdesk agents [--kb PATH] [--format text|json] [--today DATE] [--settings FILE]
                    [--proposals]
    factdesk agents register ID --type TYPE [--email E] [--branch B] --reason R
    factdesk agents set-type ID TYPE --reason R        (a promotion or demotion)
    factdesk agents retire ID --reason R
    factdesk agents add-type NAME --description D [--row SUBJECT:CLAIM=VERDICT]... --reason R

Each registry action is one commit to `.factdesk/agents.yaml`, undone with `factdesk undo`.
Definitions: docs/agents.md. Registered on `cli` by commands.py.
"""

from __future__ import annotations

import json
from contextlib import closing
from datetime import date, datetime
from pathlib import Path
from typing import Any

import click

from factdesk.cli.commands import FORMAT, KB, _exit, _open, cli, say
from factdesk.cli.curation_cmds import PREVIEW, REASON, _curation, _report
from factdesk.cli.reflect_cmds import _day
from factdesk.curation.registry_ops import actions_in_effect
from factdesk.index import recall_reads
from factdesk.index.indexer import Indexer
from factdesk.reflect.agents import (
    SETTINGS_NAME,
    SettingsError,
    Thresholds,
    cached_records,
    default_settings_file,
    load_thresholds,
)


def records(indexer: Indexer, *, today: date, thresholds: Thresholds
            ) -> tuple[list[dict[str, Any]], bool]:
    """`reflect.agents.cached_records` with the curators' actions from the curation layer."""
    return cached_records(indexer, today=today, thresholds=thresholds,
                          actions=lambda: actions_in_effect(indexer.repo))


@cli.group(name="agents", invoke_without_command=True)
@KB
@FORMAT
@click.option("--today", "today", default=None, metavar="DATE",
              help="reference date for overdue hypotheses (default: today)")
@click.option("--settings", "settings", type=click.Path(path_type=Path), default=None,
              help=f"suggestion thresholds (YAML; default: {SETTINGS_NAME} in the data folder)")
@click.option("--proposals", "proposals", is_flag=True, default=False,
              help="add each agent's open and rejected proposals (reads the review queue: "
                   "seconds on a large corpus)")
@click.pass_context
def agents_cmd(ctx: click.Context, kb: Path, fmt: str, today: str | None,
               settings: Path | None, proposals: bool) -> None:
    """Every agent's record: facts, authority findings, the curators' corrections, and its
    track record as calibration (Brier score over settled predictions)."""
    if ctx.invoked_subcommand is not None:
        return
    try:
        thresholds = load_thresholds(settings if settings is not None else default_settings_file())
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None
    day = _day(today)
    indexer = _open(kb)
    indexer.update()
    data, _ = records(indexer, today=day, thresholds=thresholds)
    if proposals:
        with_proposals(indexer.repo, data)
    if fmt == "json":
        click.echo(json.dumps({"agents": data}, indent=2, ensure_ascii=False))
    else:
        say(_text(data))
    _exit(0)


def with_proposals(repo: Path, data: list[dict[str, Any]]) -> None:
    """Add each agent's `proposals` (open) and `rejected_proposals` from the review queue
    (git only; `reflect` may not import `review`, so they join here); null for both when
    the queue cannot be read."""
    from factdesk.corpus.registry_io import load_registry
    from factdesk.reflect.agents import count_proposals
    from factdesk.review.proposals import load_queue

    try:
        registry = load_registry(repo)
        queue = load_queue(repo, registry=registry)
    except Exception:  # (the records stand without them)
        for a in data:
            a["proposals"] = a["rejected_proposals"] = None
        return
    opened, rejected = count_proposals(registry, (
        (p.status, p.author_email, p.author_name) for p in queue.proposals))
    for a in data:
        a["proposals"] = opened.get(a["id"], 0)
        a["rejected_proposals"] = rejected.get(a["id"], 0)


def _count(n: object) -> str:
    return "—" if n is None else str(n)


def _when(ts: object) -> str:
    if not isinstance(ts, int):
        return "—"
    return datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%d")


def _text(data: list[dict[str, Any]]) -> str:
    head = (f"{'agent':<30} {'type':<14} {'facts':>6} {'conf':>5} {'prom':>5} {'ref':>4} "
            f"{'open':>5} {'over':>5} {'brier':>7} {'n':>4} {'corr':>5} {'rate':>6} {'prop':>5}"
            "  last")
    lines = [head]
    for a in data:
        h = a["hypotheses"]
        typ = a["type"] or "(unregistered)"
        if a.get("retired"):
            typ += " (retired)"
        brier = "—" if a["brier"] is None else f"{a['brier']:.3f}"
        lines.append(f"{a['id'][:30]:<30} {typ:<14} {a['facts']:>6} {h['confirmed']:>5} "
                     f"{h['promoted']:>5} {h['refuted']:>4} {h['open']:>5} {h['overdue']:>5} "
                     f"{brier:>7} {a['settled']:>4} {a['corrections']:>5} "
                     f"{a['correction_rate']:>6.1%} {_count(a.get('proposals')):>5}  "
                     f"{_when(a.get('last_activity'))}")
        s = a.get("suggestion")
        if s:
            ev = s["evidence"]
            lines.append(f"    suggestion: {s['action']} {s['from']} → {s['to']} (brier "
                         f"{ev['brier']} over {ev['settled']} settled, correction rate "
                         f"{ev['correction_rate']:.1%}, {ev['user_facts']} facts about the user; "
                         f"thresholds {s['thresholds']}) — never applied on its own: "
                         f"factdesk agents set-type {a['id']} {s['to']} --reason …")
    unregistered = sum(1 for a in data if not a["registered"])
    lines.append(f"{len(data)} agents, {unregistered} unregistered "
                 "(conf includes prom; n = settled predictions behind the Brier score; "
                 "prop = open proposals)")
    return "\n".join(lines)


def _evidence(kb: Path, agent_id: str) -> None:
    """Say an agent's record before its type changes (issue 16: evidence first)."""
    indexer = _open(kb)
    indexer.update()
    data, _ = records(indexer, today=date.today(), thresholds=load_thresholds(None))
    for a in data:
        if a["id"] == agent_id:
            brier = "—" if a["brier"] is None else f"{a['brier']:.3f}"
            say(f"evidence: {agent_id} ({a['type'] or 'unregistered'}): {a['facts']} facts, "
                f"{a['user_facts']} about the user ({a['user_corrections']} of them corrected), "
                f"{a['corrections']} corrections ({a['correction_rate']:.1%}), Brier {brier} over "
                f"{a['settled']} settled predictions", err=True)


def _findings(indexer: Indexer) -> int:
    with closing(indexer.connect(readonly=True)) as conn:
        return recall_reads.authority_finding_count(conn)


def _registry_action(kb: Path, fmt: str, run: Any) -> None:
    cur = _curation(kb)
    before = _findings(cur.indexer)
    _report(fmt, lambda: run(cur))
    after = _findings(cur.indexer)
    if fmt != "json" and after != before:
        say(f"authority and registry findings: {before} → {after} "
            f"({after - before:+d})", err=True)


@agents_cmd.command(name="register")
@click.argument("agent_id")
@click.option("--type", "agent_type", required=True, help="its agent type (tool, persona, …)")
@click.option("--email", default=None, help="the git e-mail it commits with (without +op)")
@click.option("--branch", default=None, help="its agent branch (agent/<id>)")
@REASON
@PREVIEW
@KB
@FORMAT
def register_cmd(agent_id: str, agent_type: str, email: str | None, branch: str | None,
                 reason: str, preview: bool, kb: Path, fmt: str) -> None:
    """Register an unknown claimant with its type, git e-mail and branch."""
    _registry_action(kb, fmt, lambda cur: cur.register(
        agent_id, agent_type, reason, email=email, branch=branch, preview=preview))


@agents_cmd.command(name="set-type")
@click.argument("agent_id")
@click.argument("agent_type")
@REASON
@PREVIEW
@KB
@FORMAT
def set_type_cmd(agent_id: str, agent_type: str, reason: str, preview: bool, kb: Path,
                 fmt: str) -> None:
    """Change a registered agent's type (promote, demote); its record is shown first."""
    if fmt != "json":
        _evidence(kb, agent_id)
    _registry_action(kb, fmt, lambda cur: cur.set_type(agent_id, agent_type, reason,
                                                       preview=preview))


@agents_cmd.command(name="retire")
@click.argument("agent_id")
@REASON
@PREVIEW
@KB
@FORMAT
def retire_cmd(agent_id: str, reason: str, preview: bool, kb: Path, fmt: str) -> None:
    """Retire a registered agent (it stays listed; no suggestion is made for it)."""
    _registry_action(kb, fmt, lambda cur: cur.retire(agent_id, reason, preview=preview))


@agents_cmd.command(name="add-type")
@click.argument("name")
@click.option("--description", required=True, help="what an agent of this type is")
@click.option("--row", "rows", multiple=True, metavar="SUBJECT:CLAIM=VERDICT",
              help="its authority row, repeatable: subject kind or *, claim type or *, and "
                   "ground_truth | attributed | forbidden (unlisted: attributed)")
@REASON
@PREVIEW
@KB
@FORMAT
def add_type_cmd(name: str, description: str, rows: tuple[str, ...], reason: str,
                 preview: bool, kb: Path, fmt: str) -> None:
    """Add an agent type with its row in the authority table."""
    table: dict[tuple[str, str], str] = {}
    for row in rows:
        where, eq, verdict = row.partition("=")
        subject, colon, claim = where.partition(":")
        if not eq or not colon:
            raise click.BadParameter(f"{row!r}: write SUBJECT:CLAIM=VERDICT "
                                     "(e.g. user:assertion=forbidden)", param_hint="--row")
        table[(subject.strip(), claim.strip())] = verdict.strip()
    _registry_action(kb, fmt, lambda cur: cur.add_type(name, description, table, reason,
                                                       preview=preview))
