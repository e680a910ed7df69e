"""`factdesk transitions` and `factdesk queue`: hypothesis transitions over history, track
records, and the settlement queue (read-only). Registered on `cli` by commands.py."""

from __future__ import annotations

import json
from contextlib import closing
from datetime import date, datetime
from pathlib import Path

import click

from factdesk.cli.commands import FORMAT, KB, _exit, _open, cli, say
from factdesk.index.indexer import Indexer
from factdesk.model.words import count
from factdesk.reflect.cache import cached_walk
from factdesk.reflect.model import Transition
from factdesk.reflect.queue import (
    Candidate,
    QueueItem,
    Similar,
    candidates,
    methodology_counts,
    open_hypotheses,
)
from factdesk.reflect.stats import OpenClaim, Reflection, track_records
from factdesk.reflect.transitions import counts, walk

METHODOLOGY_ROWS = 25


def _day(value: str | None) -> date:
    if value is None:
        return date.today()
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"not an ISO date (YYYY-MM-DD): {value!r}",
                                 param_hint="--today") from None


@cli.command(name="transitions")
@click.option("--since", "since", default=None, metavar="REV",
              help="only commits after REV (default: the whole first-parent history)")
@KB
@FORMAT
@click.option("--stats", "show_stats", is_flag=True,
              help="track records per claimant agent and type, per month, and methodologies")
@click.option("--today", "today", default=None, metavar="DATE",
              help="reference date for overdue hypotheses in --stats (default: today)")
@click.option("--cache/--no-cache", default=True, show_default=True,
              help="reuse and extend the log saved in <git dir>/factdesk/reflect.db")
def transitions_cmd(since: str | None, kb: Path, fmt: str, show_stats: bool,
                    today: str | None, cache: bool) -> None:
    """Hypothesis transitions (promoted, confirmed, refuted, retracted, confidence) and every
    relabel and move, commit by commit along first-parent history."""
    indexer = _open(kb)
    log = cached_walk(indexer.repo, since) if cache else walk(
        indexer.repo, f"{since}..HEAD" if since else "HEAD")
    if show_stats:
        indexer.update()
        with closing(indexer.connect(readonly=True)) as conn:
            queue = open_hypotheses(conn, _day(today))
            ref = track_records(log.transitions, _claims(queue), methodology_counts(conn))
        if fmt == "json":
            click.echo(json.dumps(ref.as_dict(), indent=2, ensure_ascii=False))
        else:
            say(_stats_text(ref))
        _exit(0)
        return
    if fmt == "json":
        click.echo(json.dumps({"base": log.base, "head": log.head, "commits": log.commits,
                               "counts": counts(log.transitions),
                               "transitions": [t.as_dict() for t in log.transitions]},
                              indent=2, ensure_ascii=False))
    else:
        for t in log.transitions:
            say(_transition_text(t))
        summary = ", ".join(f"{v} {k}" for k, v in counts(log.transitions).items()) or "none"
        say(f"{count(len(log.transitions), 'transition')} in {count(log.commits, 'commit')} "
            f"({summary})")
    _exit(0)


@cli.command(name="queue")
@KB
@click.option("--today", "today", default=None, metavar="DATE",
              help="reference date for overdue (default: today)")
@FORMAT
@click.option("--candidates", "with_candidates", is_flag=True,
              help="list each hypothesis's candidate settling facts, each marked derived "
                   "(its refs reach the hypothesis) and eligible (it may confirm it), with why")
@click.option("--similar", "with_similar", is_flag=True,
              help="with --candidates: add near-duplicate observations (embeds first, as "
                   "`factdesk similar` does)")
def queue_cmd(kb: Path, today: str | None, fmt: str, with_candidates: bool,
              with_similar: bool) -> None:
    """The settlement queue: open hypotheses, overdue first, then by due date; those with
    no settlement criterion at all last."""
    day = _day(today)
    indexer = _open(kb)
    indexer.update()
    similar = _similar(indexer) if with_candidates and with_similar else None
    with closing(indexer.connect(readonly=True)) as conn:
        items = open_hypotheses(conn, day)
        found = {i.path: candidates(conn, i.path, similar) for i in items} if with_candidates \
            else {}
    if fmt == "json":
        listed = [i.as_dict() | ({"candidates": [c.as_dict() for c in found[i.path]]}
                                 if with_candidates else {}) for i in items]
        click.echo(json.dumps({"today": day.isoformat(), "items": listed},
                              indent=2, ensure_ascii=False))
    else:
        group = None
        for item in items:
            if item.group != group:
                group = item.group
                say(f"== {group}")
            say(_item_text(item))
            for cand in found.get(item.path, ()):
                say(_candidate_text(cand))
        overdue = sum(1 for i in items if i.overdue)
        say(f"{len(items)} open {'hypothesis' if len(items) == 1 else 'hypotheses'}, {overdue} overdue "
            f"({day.isoformat()})")
    _exit(0)


def _similar(indexer: Indexer) -> Similar:
    """Near-duplicates by the semantic layer, the embeddings brought up to date first."""
    from factdesk.semantic.search import session_for  # (loads a model: only when asked)

    session = session_for(indexer)
    session.embed_pending()

    def similar(path: str) -> list[tuple[str, float]]:
        return [(n.path, float(n.score)) for n in session.neighbours(path, 20)]

    return similar


def _candidate_text(c: Candidate) -> str:
    mark = "+" if c.eligible else "derived" if c.derived else "-"
    score = "" if c.score is None else f" {c.score:.3f}"
    return f"      {mark:>7} {c.path}{score}  {c.title}\n              {c.why}"


def _claims(items: list[QueueItem]) -> list[OpenClaim]:
    return [OpenClaim(i.path, i.claimant, i.claimant_type, i.overdue) for i in items]


def _when(ts: int) -> str:
    return datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%d %H:%M")


def _transition_text(t: Transition) -> str:
    what = t.kind if not t.reason else f"{t.kind} ({t.reason})"
    detail = ""
    if t.new_path:
        detail = f" -> {t.new_path}"
    elif t.confirming:
        detail = f" by {t.confirming}"
    elif t.old_value is not None:
        detail = f" {t.old_value} → {t.new_value}"
    claim = f" claimant {t.claimant or '?'} ({t.claimant_type or '?'})" if t.hypothesis else ""
    meth = f" methodology {', '.join(t.methodologies)}" if t.methodologies else ""
    return (f"{t.sha[:10]} #{t.seq} {_when(t.time)} {t.author or t.author_email}: "
            f"{what} {t.path}{detail}{claim}{meth}")


def _item_text(i: QueueItem) -> str:
    if i.settle_by:
        due = f"{i.settle_by} ({-i.days_left}d overdue)" if i.overdue and i.days_left is not None \
            else f"{i.settle_by} (in {i.days_left}d)" if i.days_left is not None else i.settle_by
    else:
        due = "no date"
    where = f"{i.path}:{i.criterion_line}" if i.criterion_line else i.path
    crit = i.settlement or ("(criterion in text)" if i.criterion_in == "text" else
                            "(no settlement criterion: add one)" if i.criterion_in == "none" else "")
    return (f"  {due:<26} {i.claimant or '?'} ({i.claimant_type or '?'})  {where}\n"
            f"      {i.title}\n      {crit}".rstrip())


def _stats_text(ref: Reflection) -> str:
    head = f"{'':<28}{'confirmed':>10}{'promoted':>10}{'refuted':>9}{'retracted':>10}" \
           f"{'open':>6}{'overdue':>8}{'hit rate':>9}"
    lines: list[str] = []
    for title, table in (("by claimant agent", ref.by_agent), ("by claimant type", ref.by_type),
                         ("all", {"all": ref.total})):
        lines += [title, head]
        for r in table.values():
            rate = "—" if r.hit_rate is None else f"{r.hit_rate:.0%}"
            lines.append(f"  {r.key:<26}{r.confirmed:>10}{r.promoted:>10}{r.refuted:>9}"
                         f"{r.retracted:>10}{r.open:>6}{r.overdue:>8}{rate:>9}")
        lines.append("")
    lines.append("per month (all claimants): month confirmed promoted refuted retracted")
    for p in ref.monthly:
        if p.group == "all":
            c = p.counts
            lines.append(f"  {p.month}  {c['confirmed']:>5} {c['promoted']:>5} {c['refuted']:>5} "
                         f"{c['retracted']:>5}")
    lines.append("")
    lines.append(f"methodology facts: {len(ref.methodologies)} (most reinforced first)")
    for m in ref.methodologies[:METHODOLOGY_ROWS]:
        lines.append(f"  {m.transitions:>4} transitions  {m.citing:>4} citing  {m.path}  {m.title}")
    if len(ref.methodologies) > METHODOLOGY_ROWS:
        lines.append(f"  … {len(ref.methodologies) - METHODOLOGY_ROWS} more (--format json lists all)")
    return "\n".join(lines)
