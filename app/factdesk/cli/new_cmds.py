"""`factdesk new PATH --name … --topic …`: start a knowledge base (registered on import by
commands.py; curation/newcorpus.py does the work, as File ▸ New corpus… does)."""

from __future__ import annotations

from pathlib import Path

import click

from factdesk.cli.commands import _exit, cli, say
from factdesk.curation.identity import curator_identity, default_identity_file
from factdesk.curation.newcorpus import create_corpus


@cli.command(name="new")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--name", required=True, help="the knowledge base's name (the ontology's)")
@click.option("--topic", "topics", multiple=True, required=True,
              help="a top-level topic (kebab-case; repeat for more): knomit files each fact "
                   "under one")
def new_cmd(path: Path, name: str, topics: tuple[str, ...]) -> None:
    """Create a new knowledge base at PATH: a git repository with kb/<topic>/, a starter
    ontology and agent registry, in one commit by you."""
    near = next((p for p in (path.expanduser().absolute(), *path.expanduser().absolute().parents)
                 if p.is_dir()), Path.home())
    curator = curator_identity(near, default_identity_file())
    made = create_corpus(path, name=name, topics=list(topics), curator=curator)
    say(f"created {made} (topics: {', '.join(sorted(set(topics)))}); open it with: factdesk {made}")
    _exit(0)
