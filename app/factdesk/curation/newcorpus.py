"""Start a knowledge base (File ▸ New corpus…, `factdesk new`; issue 25).

    create_corpus(Path("~/kb"), name="Ledger team", topics=["gotchas", "decisions"],
                  curator=Identity("Ana", "ana@example.org"))

Makes what knomit needs to learn into it and factdesk to curate it: a git repository on
`main` with a README, `.knomit/ontology.yaml` naming at least one top-level topic (knomit's
learn refuses a fact whose topic is not there, FORMAT §1.4), `kb/<topic>/` for each (kept by
an empty `.gitkeep`, a private name no reader takes for a fact, §1.2), and the agent registry
`.factdesk/agents.yaml` with the curator registered as a `user` — all in one init commit,
`init: create knowledge base` with knomit's nonce trailer, by the curator.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import yaml

from factdesk.corpus.gitrepo import GitError, init_with_first_commit
from factdesk.curation.writetypes import Identity
from factdesk.errors import FactdeskError

#: knomit's rule for topic keys (FORMAT §1.5): lowercase kebab-case
TOPIC = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SEEDED_TYPES = {
    "tool": "may observe and report; never canonically claims the user's identity",
    "persona": "must cite (non-empty refs)",
    "view": "a derived view over other facts",
    "peer": "another curator's or team's agent",
    "user": "a person: may assert about themself",
}


class NewCorpusError(FactdeskError):
    """The corpus could not be created (said in words; nothing half-made is left)."""


def topic_names(text: str) -> list[str]:
    """Topics typed by a person ("gotchas, decisions" or one per line), checked."""
    names = [t.strip() for t in re.split(r"[,\s]+", text) if t.strip()]
    if not names:
        raise NewCorpusError("name at least one topic (knomit files every fact under one)")
    for name in names:
        if not TOPIC.match(name):
            raise NewCorpusError(f"{name!r} is not a topic name: lowercase letters, digits and "
                                 "single hyphens (e.g. gotchas, api-decisions)")
    return list(dict.fromkeys(names))


def slug(name: str) -> str:
    out = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return out or "knowledge-base"


def member_id(identity: Identity) -> str:
    """The curator's id in the registry: the e-mail's local part, kebab-cased."""
    return slug(identity.email.partition("@")[0]) or slug(identity.name)


def create_corpus(dest: Path, *, name: str, topics: list[str], curator: Identity) -> Path:
    """Create the corpus at `dest` (absent or an empty folder) and return it."""
    dest = Path(dest).expanduser().absolute()
    name = " ".join(name.split())
    if not name:
        raise NewCorpusError("give the knowledge base a name")
    topics = topic_names(" ".join(topics))
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise NewCorpusError(f"{dest} already exists and is not an empty folder")
    made = not dest.exists()
    try:
        dest.mkdir(parents=True, exist_ok=True)
        _write(dest, name, topics, curator)
        message = f"init: create knowledge base\n\nknomit-repo-nonce: {secrets.token_hex(6)}\n"
        init_with_first_commit(dest, message, (curator.name, curator.email))
    except (OSError, GitError) as exc:
        _undo(dest, made)
        raise NewCorpusError(f"could not create the knowledge base at {dest}: {exc}") from exc
    return dest


def _write(dest: Path, name: str, topics: list[str], curator: Identity) -> None:
    ontology = {"id": slug(name), "name": name,
                "topics": {t: {"description": ""} for t in sorted(topics)}}
    registry = {"agent_types": {k: {"description": v} for k, v in SEEDED_TYPES.items()},
                "agents": {member_id(curator): {"type": "user", "email": curator.email}}}
    files = {
        "README.md": f"# {name}\n\nA knomit knowledge base: facts under `kb/<topic>/`, curated "
                     "with factdesk.\n",
        ".knomit/ontology.yaml": yaml.safe_dump(ontology, sort_keys=False, allow_unicode=True),
        ".factdesk/agents.yaml": yaml.safe_dump(registry, sort_keys=False, allow_unicode=True),
        **{f"kb/{t}/.gitkeep": "" for t in topics},
    }
    for rel, text in files.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _undo(dest: Path, made: bool) -> None:
    """Remove what was written (the folder too when this made it)."""
    import shutil

    if made:
        shutil.rmtree(dest, ignore_errors=True)
        return
    for child in dest.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)
