"""Attributed recall and the message store's reads, shared by the command line and the MCP
server (issue 17): what a downstream agent reads about a query.

    recall(indexer, "retry limit", limit=10)            -> [Recalled]   (live facts only)
    recall(indexer, "retry", include_agent_comm=True)   -> facts and messages

Facts are found by the index's ranked search (`index.search.search`), kept only when live,
and rendered by the model (`model.recall.render`: the authority table). Messages come
from their own index (`index.messages`) only when asked for.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from factdesk.corpus import githistory, gitrepo
from factdesk.corpus.codec import MAX_BYTES
from factdesk.corpus.messages import cross_check, parse_message
from factdesk.curation.labels import ATTESTATIONS
from factdesk.curation.trust import trusted_decisions
from factdesk.index import messages as msg_index
from factdesk.index import recall_reads
from factdesk.index.indexer import Indexer
from factdesk.index.messages import MessageHit
from factdesk.index.query import compile_query
from factdesk.index.search import SearchHit, _compiled, search
from factdesk.model.enums import Severity
from factdesk.model.fact import Problem
from factdesk.model.messages import MSG_ROOT, Message
from factdesk.model.recall import Recalled, from_row, render, render_message

if TYPE_CHECKING:
    import sqlite3

#: how many more facts than asked for the search returns, so that dropping the broken
#: ones still leaves `limit`
_SPARE = 10


@dataclass
class Attestations:
    """The facts a curator attested, as they stand: path → (blob, by). Only attestations
    recorded by a curator's decision (`trust.trusted_decisions`: never an agent's commit;
    the path named by its `Factdesk-Change: <path> attested: …` trailer) count; an agent
    that edits `.factdesk/attestations.yaml` grants nothing. Cached by HEAD."""

    repo: Path
    _head: str | None = None
    _known: dict[str, tuple[str, str]] = field(default_factory=dict)

    def current(self) -> Mapping[str, tuple[str, str]]:
        head = gitrepo.head_sha(self.repo)
        if head != self._head:
            self._known = _trusted_attestations(self.repo, head)
            self._head = head
        return self._known


def _trusted_attestations(repo: Path, head: str | None) -> dict[str, tuple[str, str]]:
    """path → (blob, curator) of each fact a curator's decision attested, newest decision
    first, read from `.factdesk/attestations.yaml` *as that commit wrote it* (an agent that
    appends an entry later, for an edited fact, grants nothing)."""
    if head is None:
        return {}
    out: dict[str, tuple[str, str]] = {}
    for d in trusted_decisions(repo, head):
        if d.action != "attest":
            continue
        message = githistory.commit_message(repo, d.commit)
        decided = set()
        for token, value in githistory.trailer_lines(message) or []:
            path, sep, _ = value.partition(" attested: ")
            if token == "Factdesk-Change" and sep:  # noqa: S105 (a trailer name)
                decided.add(path)
        with gitrepo.BlobReader(repo) as reader:
            recorded = reader.read(f"{d.commit}:{ATTESTATIONS}", limit=MAX_BYTES) or b""
        try:
            entries = yaml.safe_load(recorded) or []
        except (yaml.YAMLError, UnicodeDecodeError):
            continue
        for entry in reversed(entries if isinstance(entries, list) else []):
            if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
                continue
            path = entry["path"]
            if path in decided and path not in out:
                by = str(entry.get("by") or "a curator").split(" <")[0]
                out[path] = (str(entry.get("blob") or ""), by)
    return out


def recall_facts(conn: sqlite3.Connection, query: str, *, limit: int = 10,
                 attested: Mapping[str, tuple[str, str]] | None = None,
                 today: date | None = None) -> list[Recalled]:
    """The live facts for `query`, ranked, each rendered by the authority table."""
    hits = search(conn, query, limit=limit + _SPARE)
    return render_hits(conn, hits, limit=limit, attested=attested, today=today)


def render_hits(conn: sqlite3.Connection, hits: list[SearchHit], *, limit: int,
                attested: Mapping[str, tuple[str, str]] | None = None,
                today: date | None = None) -> list[Recalled]:
    if not hits:
        return []
    ids = [h.id for h in hits]
    rows = recall_reads.rows_for_render(conn, ids)
    live = [rows[i] for i in ids if i in rows and rows[i]["status"] == "live"][:limit]
    breaches = recall_reads.error_codes(conn, [r["path"] for r in live])
    out = []
    for r in live:
        by = None
        if attested and (entry := attested.get(r["path"])) and entry[0] == r["blob"]:
            by = entry[1]
        fact = from_row(r, breaches=breaches.get(r["path"], ()), attested_by=by,
                        refs=json.loads(r["refs"] or "[]"))
        out.append(render(fact, today=today))
    return out


def message_hits(indexer: Indexer, query: str, *, limit: int) -> list[MessageHit]:
    """The messages a query finds (their own index, refreshed first)."""
    def work(conn: sqlite3.Connection) -> list[MessageHit]:
        return msg_index.search(conn, compile_query(query), limit=limit)

    return msg_index.read(indexer.repo, indexer.path, work)


def recall(indexer: Indexer, query: str, *, limit: int = 10, include_agent_comm: bool = False,
           attestations: Attestations | None = None, today: date | None = None
           ) -> list[Recalled]:
    """Recall over a corpus: its index brought up to date, live facts ranked and rendered;
    with `include_agent_comm` (or a query saying `include:messages`), the messages it finds
    follow the facts (up to `limit` of each): they are never mixed into the facts' ranks."""
    attested = (attestations or Attestations(indexer.repo)).current()
    today = today or date.today()

    def work(conn: sqlite3.Connection) -> tuple[list[Recalled], bool]:
        q = _compiled(conn, query)
        hits = search(conn, q, limit=limit + _SPARE)
        return (render_hits(conn, hits, limit=limit, attested=attested, today=today),
                q.include_messages)

    facts, asked = indexer.read(work)
    if not (include_agent_comm or asked):
        return facts

    def found(conn: sqlite3.Connection) -> list[Message]:
        hits = msg_index.search(conn, compile_query(query), limit=limit)
        return [m for h in hits if (m := msg_index.get_message(conn, h.path)) is not None]

    return facts + [render_message(m) for m in msg_index.read(indexer.repo, indexer.path, found)]


def all_messages(indexer: Indexer) -> list[Message]:
    """Every readable message, oldest first (the Messages view, `factdesk messages`)."""
    return msg_index.read(indexer.repo, indexer.path, msg_index.all_messages)


def messages_referencing(indexer: Indexer, fact_path: str) -> list[Message]:
    """The messages that reference a fact (the inspector's backlinks)."""
    return msg_index.read(indexer.repo, indexer.path,
                          lambda conn: msg_index.referencing(conn, fact_path))


def check_messages(indexer: Indexer, facts: sqlite3.Connection) -> list[dict[str, object]]:
    """The message store's findings for `factdesk check` (as the facts' problem rows):
    each file's own, and references to facts (read from the facts' index `facts`) and
    replies to messages that do not exist."""
    paths = recall_reads.unretracted_paths(facts)
    return [p.as_dict() for p in msg_index.read(indexer.repo, indexer.path,
                                                 lambda conn: msg_index.problems(conn, paths))]


def staged_message_problems(indexer: Indexer, facts: sqlite3.Connection) -> list[dict[str, object]]:
    """`check --staged` (the pre-commit hook) for messages: each message file staged for
    commit, checked as staged (its blob), against the facts and messages there are plus
    those staged."""
    staged = gitrepo.staged_blobs(indexer.repo)
    wanted = {p: b for p, b in staged.items() if p.startswith(f"{MSG_ROOT}/") and p.endswith(".md")}
    if not wanted:
        return []
    fact_paths = recall_reads.unretracted_paths(facts)
    fact_paths |= {p for p in staged if p.startswith("kb/")}
    known = msg_index.read(indexer.repo, indexer.path,
                           msg_index.known_paths)
    parsed: list[Message] = []
    out: list[Problem] = []
    with gitrepo.BlobReader(indexer.repo) as reader:
        for path, blob in sorted(wanted.items()):
            try:
                data = reader.read(blob, limit=MAX_BYTES)
            except gitrepo.BlobTooLarge as exc:
                out.append(Problem(path, 1, "M6", Severity.ERROR,
                                   f"{exc.size:,} bytes: larger than the {MAX_BYTES:,} a message may be"))
                continue
            outcome = parse_message(path, data or b"")
            out.extend(outcome.problems)
            if outcome.message is not None:
                parsed.append(outcome.message)
    out += cross_check(parsed, fact_paths, known | set(wanted))
    return [p.as_dict() for p in sorted(out, key=lambda p: (p.path, p.line, p.code))]
