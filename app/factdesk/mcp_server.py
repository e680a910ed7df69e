"""`factdesk mcp --kb PATH`: curated memory for agents over MCP (stdio), read-only.

Tools: `search` (the query language, `include:messages` included), `show` (one fact with its
envelope, attribution, weights and problems, and the messages that reference it) and
`recall` (live facts, ranked, rendered by the authority table — `factdesk recall`).
Resources: `factdesk://facts` (the newest live facts) and `factdesk://fact/{ref}` (one fact,
by id or 8-hex name, as attributed markdown). Nothing here writes to the corpus.

Uses the official `mcp` Python SDK (the optional extra `factdesk[mcp]`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from factdesk.core import open_corpus
from factdesk.curation import recover_before_reads
from factdesk.index import recall_reads
from factdesk.index.indexer import Indexer
from factdesk.index.query import includes_messages
from factdesk.index.rows import fact_payload
from factdesk.index.search import get_fact_row, problems_for, search
from factdesk.recall import Attestations, message_hits, messages_referencing, recall
from factdesk.version import version

if TYPE_CHECKING:
    import sqlite3

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
#: how many facts `factdesk://facts` lists (newest first)
LISTED = 500


def build_server(kb: Path) -> MCPServer:
    """The server over the corpus at `kb` (opened once; every call brings its index up to
    date first, as the command line does)."""
    indexer = open_corpus(kb)
    # each read first finishes or rolls back an action a crash left half-done, when no
    # action holds the writer lock; else the pending files are served as HEAD has them
    # (issue 22 #3): the one write this server makes is recovery's, never the corpus's own
    recover_before_reads(indexer, lambda done: print(
        f"factdesk: recovered an interrupted action ({done.outcome}): {done.message}",
        file=sys.stderr, flush=True))
    attestations = Attestations(indexer.repo)
    server = MCPServer("factdesk", version=version(), instructions=(
        "Curated long-term memory of AI agents (a knomit corpus). Use `recall` to read what is "
        "known about a topic: every claim is attributed to its claimant unless it is ground "
        "truth. Messages between agents are left out unless asked for."))

    @server.tool(name="recall", annotations=READ_ONLY)
    def recall_tool(query: str, limit: int = 10, include_agent_comm: bool = False) -> dict[str, Any]:
        """Live facts for a query, ranked, each as an attributed sentence ("codex (tool)
        reports: …"); plain text only for ground truth. include_agent_comm adds the
        agents' messages the query finds."""
        results = recall(indexer, query, limit=max(1, min(limit, 200)),
                         include_agent_comm=include_agent_comm, attestations=attestations)
        return _noted(indexer, {"results": [r.as_dict() for r in results]})

    @server.tool(name="search", annotations=READ_ONLY)
    def search_tool(query: str, limit: int = 20) -> dict[str, Any]:
        """Search facts with factdesk's query language (type:hypothesis confidence:<0.5
        "retry limit" …; include:messages adds the message store)."""
        hits: list[Any] = indexer.read(lambda conn: search(conn, query, limit=max(1, min(limit, 500))))
        if includes_messages(query):
            hits += message_hits(indexer, query, limit=limit)
        return _noted(indexer, {"results": [h.as_dict() for h in hits]})

    @server.tool(name="show", annotations=READ_ONLY)
    def show_tool(fact: str) -> dict[str, Any]:
        """One fact (by id, path or 8-hex name): fields, envelope, attribution, recorded and
        computed evidence weight, problems, and the messages that reference it."""
        data = _show(indexer, fact)
        if data is None:
            raise ValueError(f"no fact matches {fact!r}"
                             + (f" ({note})" if (note := indexer.pending.note()) else ""))
        if note := indexer.pending.note(data["path"]):
            data["pending"] = note
        data["messages"] = [m.as_dict() for m in messages_referencing(indexer, data["path"])]
        return data

    @server.resource("factdesk://facts", name="facts", mime_type="application/json")
    def facts_resource() -> dict[str, Any]:
        """The newest live facts (path, id, title, type)."""
        def work(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            return recall_reads.newest_live(conn, LISTED)
        return {"facts": indexer.read(work)}

    @server.resource("factdesk://fact/{ref}", name="fact", mime_type="text/markdown")
    def fact_resource(ref: str) -> str:
        """One fact as attributed markdown: the sentence an agent is shown, then the body."""
        data = _show(indexer, ref)
        if data is None:
            raise ValueError(f"no fact matches {ref!r}")
        return (f"{data['attribution']}\n\n`{data['path']}` · {data['type']} · status "
                f"{data['status']}\n\n{data['body']}\n")

    return server


def _noted(indexer: Indexer, result: dict[str, Any]) -> dict[str, Any]:
    """A result, with what a pending action holds back said (`pending`) when there is one."""
    if note := indexer.pending.note():
        result["pending"] = note
    return result


def _show(indexer: Indexer, ref: str) -> dict[str, Any] | None:
    def work(conn: sqlite3.Connection) -> dict[str, Any] | None:
        row = get_fact_row(conn, ref)
        if row is None:
            return None
        return fact_payload(row, [dict(p) for p in problems_for(conn, row["path"])])

    return indexer.read(work)


def serve(kb: Path) -> None:
    """Run the server over stdin/stdout until the client closes it."""
    build_server(kb).run("stdio")
