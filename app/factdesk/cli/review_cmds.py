"""Proposal review's read commands (issue 13): what agents propose on their `agent/*`
branches, checked as if accepted (registered on `cli` by cli/__init__.py).

    factdesk proposals [--kb PATH] [--branch B] [--status open|accepted|rejected|partial|all]
                       [--findings any|error|warning|conflict|depends|problem|clean]
                       [--by-fact] [--format text|json] [--awaiting]
    factdesk proposals show ID [--kb PATH] [--format text|json] [--no-similar]

ID is an agent commit's full or unique abbreviated sha. Refusals (no such branch or
proposal, an ambiguous id) exit 1. Definitions: docs/review.md. `--findings` keeps the
proposals whose checks found that (each proposal's JSON has its `findings`); `--by-fact`
lists the branch's net change per fact instead (JSON: `facts`), the rows the Proposals
tab shows per fact: both from `review.rows`, as the tab does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from factdesk.cli.commands import FORMAT, KB, _exit, _open, _read, cli, say
from factdesk.index import check_cache
from factdesk.index.indexer import Indexer
from factdesk.index.review_reads import derived_facts
from factdesk.model.visible import utf8_safe
from factdesk.review import rows as queue_rows
from factdesk.review.checks import (
    check_all,
    check_proposal,
    near_duplicates,
    problem_counts,
    proposal_diff,
)
from factdesk.review.clean import Verdict, clean_set
from factdesk.review.model import Proposal, Queue, branch_dict, proposal_dict
from factdesk.review.proposals import awaiting_attestation, load_queue, net_other_files

if TYPE_CHECKING:
    import sqlite3

STATUSES = ("open", "accepted", "rejected", "partial", "all")
_MARK = {"added": "+", "modified": "~", "deleted": "-"}


def _queue(kb: Path, branch: str | None) -> tuple[Indexer, Queue]:
    indexer, queue, _derived = _queue_and_derived(kb, branch)
    return indexer, queue


def _queue_and_derived(kb: Path, branch: str | None, indexer: Indexer | None = None
                       ) -> tuple[Indexer, Queue, list[tuple[str, str, str, str, str, str, int]]]:
    """The index brought up to date once (the checks read it; each update walks the work
    tree), the queue, and the derived facts awaiting attestation as that index has them.
    `indexer`: one already brought up to date by this command."""
    if indexer is None:
        indexer = _open(kb)
        derived = _read(indexer, derived_facts)
    else:
        derived = indexer.read(derived_facts, update=False)
    queue = load_queue(indexer.repo, branch=branch)
    if branch is not None and not queue.branches:
        names = [b.name for b in load_queue(indexer.repo).branches]
        raise click.ClickException(
            f"no agent branch named {branch!r}" + (f" (there are: {', '.join(names)})"
                                                   if names else " (there is none)"))
    return indexer, queue, derived


@cli.group(invoke_without_command=True)
@KB
@click.option("--branch", default=None, help="only this agent branch (as listed: agent/x or "
              "origin/agent/x)")
@click.option("--status", "status", type=click.Choice(STATUSES), default="open",
              show_default=True, help="which proposals to list")
@click.option("--awaiting", is_flag=True,
              help="also list the distilled/discovered facts on the curated branch that no "
                   "curator attested")
@click.option("--findings", "findings", type=click.Choice(queue_rows.FINDING_FILTERS),
              default="any", show_default=True,
              help="only those whose checks found this (error, warning, conflict, depends: "
                   "builds on an open proposal that stays open; problem: any of them)")
@click.option("--by-fact", is_flag=True,
              help="one line per fact a branch changes (its net change and the proposals "
                   "touching it), as the Proposals tab's per-fact view")
@FORMAT
@click.pass_context
def proposals(ctx: click.Context, kb: Path, branch: str | None, status: str, awaiting: bool,
              findings: str, by_fact: bool, fmt: str) -> None:
    """What agents propose on their agent/* branches, each checked as if accepted."""
    if ctx.invoked_subcommand is not None:
        return
    options = [f"branch={branch}", f"status={status}", f"awaiting={awaiting}",
               f"findings={findings}", f"by_fact={by_fact}"]

    def answer_key(ix: Indexer) -> Callable[[sqlite3.Connection], str]:
        return lambda conn: check_cache.answer_key(conn, ix.repo, ix.rule_setting(), options)

    opened, key = None, ""
    if fmt == "json":  # the same answer as last time when nothing it depends on moved
        opened = _open(kb)
        key = _read(opened, answer_key(opened))
        key = "" if opened.stale else key
        with check_cache.CheckCache(opened.repo) as kept:
            text = kept.answer(key)
        if text is not None:
            click.echo(text)
            _exit(0)
            return
    indexer, queue, derived = _queue_and_derived(kb, branch, opened)
    wanted = [p for p in queue.proposals if status == "all" or p.status == status]
    keep = {p.sha for p in wanted}
    checked = [p for p in check_all(indexer, _only(queue, keep))]
    by_sha = {p.sha: p for p in checked}
    verdicts = _verdicts(queue, by_sha)
    found = {p.sha: queue_rows.findings(p.facts, verdicts.get(p.sha)) for p in checked}
    checked = [p for p in checked if queue_rows.matches(found[p.sha], findings)]
    facts = _by_fact(queue, by_sha, verdicts, status, findings) if by_fact else None
    waiting = awaiting_attestation(indexer, rows=derived)
    if fmt == "json":
        out: dict[str, Any] = {
            "curated": queue.curated, "tip": queue.tip,
            "branches": [branch_dict(b, queue.net.get(b.name, ())) for b in queue.branches],
            "proposals": [proposal_dict(p) | {"findings": found[p.sha].as_dict()} for p in checked],
            "awaiting_attestation": [
                {"path": a.path, "title": a.title, "type": a.type, "origin": a.origin,
                 "creator": a.creator} for a in waiting],
        }
        if facts is not None:
            out["facts"] = [{"branch": r.branch, "path": utf8_safe(r.path or ""),
                             "change": r.change, "status": r.status, "proposals": list(r.shas),
                             "findings": found_.as_dict()} for r, found_ in facts]
        # (one line, as `search` writes: Python's encoder with an indent is its pure-Python
        # one, 0.5 s of the 2.9 s this command took for 500 proposals at 100,000 facts)
        text = json.dumps(out, ensure_ascii=False)
        if key and key == indexer.read(answer_key(indexer), update=False):
            with check_cache.CheckCache(indexer.repo) as kept:  # (unmoved while it was made)
                kept.keep_answer(key, text)
        click.echo(text)
        _exit(0)
        return
    say(f"curated branch: {queue.curated or '(detached HEAD)'} at {queue.tip[:10]}")
    if not queue.branches:
        say("no agent branch (agent/* or <remote>/agent/*): nothing proposed")
    for b in queue.branches:
        net = queue.net.get(b.name, ())
        counts = {c: sum(1 for n in net if n.change == c) for c in ("added", "modified", "deleted")}
        others = net_other_files(indexer.repo, queue, b.name)
        say(f"{b.name}  agent {b.agent}: {b.ahead} commit{'s' if b.ahead != 1 else ''} ahead "
            f"(base {b.base[:10]}), {b.open} open; net {counts['added']} added, "
            f"{counts['modified']} modified, {counts['deleted']} deleted"
            + (f", {len(others)} file{'s' if len(others) != 1 else ''} outside kb/"
               if others else "")
            + (f", {sum(1 for n in net if n.conflict)} in conflict"
               if any(n.conflict for n in net) else ""))
    if facts is not None:
        say(f"\n{len(facts)} fact{'s' if len(facts) != 1 else ''}"
            + ("" if status == "all" else f" {status}") + ":")
        for r, found_ in facts:
            say(f"{_MARK.get(r.change, '?')} {r.path}  {r.status:8} {r.branch}  "
                f"{len(r.shas)} proposal{'s' if len(r.shas) != 1 else ''}  [{_found(found_)}]")
        checked = []
    else:
        say(f"\n{len(checked)} proposal{'s' if len(checked) != 1 else ''}"
            + ("" if status == "all" else f" {status}") + ":")
    for p in checked:
        say(_line(p))
        for f in p.facts:
            say(f"    {_MARK[f.change]} {f.path}" + ("  CONFLICT: the curated branch changed "
                                                    "it" if f.conflict else "")
                + (f"  [{f.status}]" if f.status != p.status else ""))
            for pr in f.problems or ():
                if pr.new or pr.severity == "error":
                    say(f"        {pr.severity} {pr.code}: {pr.message}"
                        + ("" if pr.new else " (the curated version has it too)"))
        for pf in p.files:
            say(f"    {_MARK[pf.change]} {pf.path}  [{pf.kind}: decided like a fact]"
                + (f"  [{pf.status}]" if pf.status != p.status else ""))
            for line in pf.summary:
                say(f"        {line}")
        for o in p.other_files:
            say(f"    · {o}  (the agent's own state or message: comes with the review merge)")
    if waiting:
        say(f"\n{len(waiting)} distilled/discovered fact{'s' if len(waiting) != 1 else ''} "
            "on the curated branch await a curator's attestation"
            + ("" if awaiting else " (--awaiting lists them)"))
        if awaiting:
            for a in waiting:
                say(f"    {a.origin:10} {a.path}  {a.title}")
    _exit(0)


def _verdicts(queue: Queue, checked: dict[str, Proposal]) -> dict[str, Verdict]:
    """Every open proposal's clean verdict (`review.clean`), by sha."""
    return {sha: v for b in queue.branches for sha, v in clean_set(queue, b.name, checked).verdicts.items()}


def _by_fact(queue: Queue, checked: dict[str, Proposal], verdicts: dict[str, Verdict],
             status: str, choice: str) -> list[tuple[queue_rows.Row, queue_rows.Findings]]:
    """The per-fact rows (`review.rows.rows`) with their findings, filtered by `choice`."""
    shown = queue_rows.shown(queue, None, checked)
    by_sha = {p.sha: p for p in shown}
    out = []
    for row in queue_rows.rows(queue, shown, mode=queue_rows.FACT, status=status):
        found = queue_rows.findings(queue_rows.row_facts(row, by_sha),
                                    queue_rows.verdict_of(verdicts, row.shas))
        if queue_rows.matches(found, choice):
            out.append((row, found))
    return out


def _found(f: queue_rows.Findings) -> str:
    parts = [f"{f.errors} error{'s' if f.errors != 1 else ''} ({' '.join(f.codes)})"
             if f.errors else "", "conflict" if f.conflict else "",
             "depends on an open one" if f.depends else "",
             f"{f.warnings} warning{'s' if f.warnings != 1 else ''}" if f.warnings else ""]
    return ", ".join(p for p in parts if p) or ("not checked" if f.unchecked else "clean")


def _only(queue: Queue, keep: set[str]) -> Queue:
    from dataclasses import replace

    return replace(queue, proposals=tuple(p for p in queue.proposals if p.sha in keep))


def _line(p: Proposal) -> str:
    errors, warnings = problem_counts(p)
    badge = (f"{errors} error{'s' if errors != 1 else ''}" if errors else
             (f"{warnings} warning{'s' if warnings != 1 else ''}" if warnings else "clean"))
    flags = " overridden" if p.overridden else ""
    return (f"{p.sha[:12]}  {p.status:8} {p.op or '-'}/{p.kind or '-'}  [{badge}]{flags}  "
            f"{p.subject}")


@proposals.command("show")
@click.argument("ident", metavar="ID")
@KB
@FORMAT
@click.option("--no-similar", is_flag=True,
              help="skip the near-duplicate search (it loads the embedding model)")
def show_cmd(ident: str, kb: Path, fmt: str, no_similar: bool) -> None:
    """One proposal: its facts' diffs against the curated branch, problems, near-duplicates."""
    indexer, queue = _queue(kb, None)
    try:
        target = queue.find(ident)
    except LookupError as exc:
        raise click.ClickException(str(exc.args[0])) from None
    # checked in the whole queue: its branch's earlier open proposals are its context
    proposal = check_proposal(indexer, queue, target.sha)
    diff = proposal_diff(indexer.repo, queue, proposal)
    near = None if no_similar else near_duplicates(indexer, proposal)
    if fmt == "json":
        out: dict[str, Any] = proposal_dict(proposal)
        out["diff"] = utf8_safe(diff) if diff else diff  # (valid UTF-8: a name that is not)
        out["near_duplicates"] = (None if near is None else
                                  [{"path": n.path, "similar": n.similar, "score": n.score}
                                   for n in near])
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
        _exit(0)
        return
    say(_line(proposal))
    say(f"branch {proposal.branch or '(none: merged or deleted)'}, #{proposal.index + 1}; "
        f"author {proposal.author_name} <{proposal.author_email}>")
    if proposal.decided_by:
        say(f"decided by {', '.join(s[:10] for s in proposal.decided_by)}")
    for f in proposal.facts:
        say(f"\n{_MARK[f.change]} {f.path} ({f.change}"
            + (", CONFLICT: the curated branch changed it since the merge base" if f.conflict
               else "") + f", {f.status})")
        if f.evidence_weight is not None or f.evidence_weight_computed is not None:
            say(f"    evidence weight: recorded {_num(f.evidence_weight)}, computed as if "
                f"accepted {_num(f.evidence_weight_computed)}")
        if f.depends_on:
            say(f"    needs the branch's earlier open proposals: "
                f"{', '.join(s[:10] for s in f.depends_on)}")
        for pr in f.problems or ():
            say(f"    {pr.severity} {pr.code}: {pr.message}"
                + (" (new)" if pr.new else " (the curated version has it too)"))
        if not f.problems:
            say("    no problem")
    for pf in proposal.files:
        say(f"\n{_MARK[pf.change]} {pf.path} ({pf.kind}, {pf.change}, {pf.status}: outside kb/, "
            "decided like a fact)")
        for line in pf.summary:
            say(f"    {line}")
    for o in proposal.other_files:
        say(f"\n· {o} (the agent's own state or message: shown, not checked; comes with the "
            "review merge)")
    if near:
        say("\nnear-duplicates already on the curated branch:")
        for n in near:
            say(f"    {n.path} ~ {n.similar} ({n.score:.2f})")
    elif near is None and not no_similar:
        say("\n(no semantic index: `factdesk embed` finds near-duplicates)")
    if diff:
        say("\n" + diff.rstrip("\n"))
    _exit(0)


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"
