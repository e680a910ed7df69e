"""Semantic commands: `embed`, `similar`, `duplicates` (registered on import by commands.py).

    factdesk embed      [--kb PATH] [--model full|static]
    factdesk similar    FACT_OR_TEXT [--kb PATH] [--limit N] [--format text|json] [--model …]
    factdesk duplicates [--kb PATH] [--threshold X] [--format text|json] [--model …]

Each brings the index and the embeddings up to date first (progress on stderr).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from factdesk.cli.commands import FORMAT, KB, _exit, _open, cli, say
from factdesk.index.search import titles_of
from factdesk.model.words import count
from factdesk.semantic.backends import BACKENDS, ENV_CHOICE
from factdesk.semantic.search import SemanticSession, session_for
from factdesk.semantic.store import EmbedStats

MODEL = click.option("--model", "model", type=click.Choice(BACKENDS), default=None,
                     help=f"embedding backend (default: ${ENV_CHOICE}, else static)")


def _session(kb: Path, model: str | None) -> SemanticSession:
    indexer = _open(kb)
    indexer.update()
    return session_for(indexer, model)


def _embed(session: SemanticSession, quiet: bool = False) -> EmbedStats:
    last = [-1]

    def progress(done: int, total: int) -> None:
        if quiet or total == 0:
            return
        if not sys.stderr.isatty():  # a log or a pipe: one line, no carriage returns
            if done == total:
                click.echo(f"embedding {done}/{total}", err=True)
            return
        step = done * 20 // total
        if step != last[0] or done == total:
            last[0] = step
            click.echo(f"\rembedding {done}/{total}", nl=done == total, err=True)

    return session.embed_pending(progress=progress)


@cli.command()
@KB
@MODEL
def embed(kb: Path, model: str | None) -> None:
    """Bring the embeddings up to date (only new or changed facts are embedded)."""
    session = _session(kb, model)
    stats = _embed(session)
    say(f"{session.model_id}: {stats.facts} facts, {stats.embedded} embedded, "
        f"{stats.reused} cached, {stats.removed} removed ({stats.seconds:.2f}s)")
    _exit(0)


@cli.command()
@click.argument("fact_or_text")
@KB
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 10_000))
@FORMAT
@MODEL
def similar(fact_or_text: str, kb: Path, limit: int, fmt: str, model: str | None) -> None:
    """Facts most similar to a fact (id, path or 8-hex name) or to a piece of text."""
    session = _session(kb, model)
    _embed(session, quiet=fmt == "json")
    target = session.resolve(fact_or_text)
    hits = session.similar(fact_or_text, limit)
    titles = _titles(session, [h.path for h in hits])
    if fmt == "json":
        click.echo(json.dumps({"model": session.model_id, "query": fact_or_text,
                               "fact": target,
                               "results": [{**h.as_dict(), "title": titles.get(h.path)}
                                           for h in hits]}, ensure_ascii=False))
    else:
        for h in hits:
            say(f"{h.score:6.3f}  {h.path}\n        {titles.get(h.path, '')}")
        say(f"{count(len(hits), 'result')} ({'neighbours of ' + target if target else 'text'})")
    _exit(0)


@cli.command()
@KB
@click.option("--threshold", type=click.FloatRange(-1.0, 1.0), default=None,
              help="cosine at or above which two facts are near-duplicates "
                   "(default: calibrated per model, docs/semantic.md)")
@click.option("--limit", default=1000, show_default=True, type=click.IntRange(1, 1_000_000))
@FORMAT
@MODEL
def duplicates(kb: Path, threshold: float | None, limit: int, fmt: str, model: str | None
               ) -> None:
    """Near-duplicate pairs of live facts, most similar first."""
    session = _session(kb, model)
    _embed(session, quiet=fmt == "json")
    pairs, stats = session.duplicates(threshold)
    shown = pairs[:limit]
    if fmt == "json":
        click.echo(json.dumps({"model": session.model_id, "facts": stats.facts,
                               "pairs": [p.as_dict() for p in shown],
                               "total": len(pairs)}, ensure_ascii=False))
    else:
        for p in shown:
            say(f"{p.score:6.3f}  {p.a}\n        {p.b}")
        say(f"{len(pairs)} pairs among {stats.facts} facts "
            f"({'incremental' if stats.incremental else 'full'} scan, "
            f"{stats.seconds:.2f}s)")
    _exit(0)


def _titles(session: SemanticSession, paths: list[str]) -> dict[str, str]:
    if not paths:
        return {}
    conn = session.indexer.connect(readonly=True)
    try:
        return titles_of(conn, paths)
    finally:
        conn.close()
