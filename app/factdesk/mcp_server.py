"""`factdesk mcp --kb PATH [--agent ID]`: curated memory for agents over MCP (stdio).

Tools: `search` (the query language, `include:messages` included), `show` (one fact with its
envelope, attribution, weights and problems, and the messages that reference it) and
`recall` (live facts, ranked, rendered by the authority table — `factdesk recall`).
Resources: `factdesk://facts` (the newest live facts) and `factdesk://fact/{ref}` (one fact,
by id or 8-hex name, as attributed markdown). Without `--agent` nothing here writes to the
corpus. With `--agent ID` (issue 26) the server also writes for that one agent: `propose_fact`,
`propose_update`, `propose_retraction`, `propose_settlement` and `send_message` (each checked
by the rules before it is written, committed on `agent/<ID>` with git's plumbing:
`review.agent_write`, `review.agent_edits`), and reads `my_proposals` and `read_inbox`; a
refusal is a tool error whose text starts with `[CODE]`.

Uses the official `mcp` Python SDK (a dependency of every install).
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.stdio import stdio_server
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from mcp.types import ToolAnnotations
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    TextContent,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from factdesk.core import open_corpus
from factdesk.corpus.watch import CorpusWatch
from factdesk.curation import recover_before_reads
from factdesk.errors import FactdeskError, FactNotFound, QueryError
from factdesk.index import recall_reads
from factdesk.index.indexer import Indexer
from factdesk.index.query import includes_messages
from factdesk.index.rows import fact_payload
from factdesk.index.search import get_fact_row, problems_for, search
from factdesk.recall import Attestations, message_hits, messages_referencing, recall
from factdesk.review import agent_edits, agent_inbox
from factdesk.review.agent_write import AgentWriter, agent_identity
from factdesk.version import version

if TYPE_CHECKING:
    import sqlite3

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
#: how many facts `factdesk://facts` lists (newest first)
LISTED = 500


WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                         open_world_hint=False)


def build_server(kb: Path, agent: str | None = None, *, watch: bool = False) -> MCPServer:
    """The server over the corpus at `kb` (opened once; every call brings its index up to
    date first, as the command line does). `agent`: the id it writes for (its write tools
    are added); AgentWriteRefused when the registry refuses that id. `watch`: learn of
    changes from a watch of the work tree and the refs (`corpus.watch`, issue 23 #2)
    instead of asking `git status` on every call; the full look when it cannot say."""
    indexer = open_corpus(kb)
    if watch:
        indexer.watch = CorpusWatch(indexer.repo, indexer.git_dir, root=indexer.root).start()
        if not indexer.watch.live:
            print(f"factdesk: {indexer.watch.take().why}", file=sys.stderr, flush=True)
    identity = agent_identity(indexer.repo, agent) if agent is not None else None
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

    @_tool(server, "recall")
    def recall_tool(query: str, limit: int = 10, include_agent_comm: bool = False) -> dict[str, Any]:
        """Live facts for a query, ranked, each as an attributed sentence ("codex (tool)
        reports: …"); plain text only for ground truth. include_agent_comm adds the
        agents' messages the query finds."""
        with _reasons(ToolError):
            results = recall(indexer, _text("query", query), limit=max(1, min(limit, 200)),
                             include_agent_comm=include_agent_comm, attestations=attestations)
            return _noted(indexer, {"results": [r.as_dict() for r in results]})

    @_tool(server, "search")
    def search_tool(query: str, limit: int = 20) -> dict[str, Any]:
        """Search facts with factdesk's query language (type:hypothesis confidence:<0.5
        "retry limit" …; include:messages adds the message store)."""
        with _reasons(ToolError):
            asked = _text("query", query)
            hits: list[Any] = indexer.read(lambda conn: search(conn, asked,
                                                               limit=max(1, min(limit, 500))))
            if includes_messages(asked):
                hits += message_hits(indexer, asked, limit=limit)
            return _noted(indexer, {"results": [h.as_dict() for h in hits]})

    @_tool(server, "show")
    def show_tool(fact: str | int) -> dict[str, Any]:
        """One fact (by id — the `id` search gives, a number — path or 8-hex name):
        fields, envelope, attribution, recorded and computed evidence weight, problems, and
        the messages that reference it."""
        with _reasons(ToolError):
            ref = _text("fact", str(fact))
            data = _show(indexer, ref)
            if data is None:
                raise FactNotFound(f"no fact matches {ref!r}"
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

    if identity is not None:
        _write_tools(server, AgentWriter(indexer, identity))

    @server.resource("factdesk://fact/{ref}", name="fact", mime_type="text/markdown")
    def fact_resource(ref: str) -> str:
        """One fact as attributed markdown: the sentence an agent is shown, then the body."""
        with _reasons(ResourceError):
            data = _show(indexer, _text("ref", ref))
            if data is None:
                raise FactNotFound(f"no fact matches {ref!r}")
            return (f"{data['attribution']}\n\n`{data['path']}` · {data['type']} · status "
                    f"{data['status']}\n\n{data['body']}\n")

    return server


def _write_tools(server: MCPServer, writer: AgentWriter) -> None:
    """The tools an agent writes with (docs/mcp.md is their contract)."""

    @_tool(server, "propose_fact", WRITES)
    def propose_fact(title: str, body: str, type: str, kind: str | None = None,
                     origin: str | None = None, confidence: float | None = None,
                     refs: list[str] | None = None, domain: list[str] | None = None,
                     entities: list[str] | None = None, claim_type: str | None = None,
                     subject_kind: str | None = None, subject_ref: str | None = None,
                     settle_by: str | None = None, settlement: str | None = None,
                     topic: str | None = None, category: str | None = None) -> dict[str, Any]:
        """Propose a new fact to the curated memory. It is checked by the corpus's rules
        first, then committed on your own branch agent/<you> for a curator to decide; you are
        always its claimant. `type`: a knomit type (observation, concept, process, principle,
        pattern, reference, synthesis, insight, hypothesis, methodology; pragmatic: policy,
        heuristic). Where it lands: kb/<topic>/<category>/<8 hex>.md, `topic` a top-level
        topic of the ontology, else the first segment of domain[0]. A hypothesis needs
        settle_by (YYYY-MM-DD) and settlement. Returns {sha, branch, path, topic,
        topic_from}; a refusal is an error starting with the rule's code, e.g. "[H1] …",
        saying how to write it legally."""
        try:
            return writer.propose_fact(
                title, body, type, kind=kind, origin=origin, confidence=confidence, refs=refs,
                domain=domain, entities=entities, claim_type=claim_type,
                subject_kind=subject_kind, subject_ref=subject_ref, settle_by=settle_by,
                settlement=settlement, topic=topic, category=category)
        except FactdeskError as exc:
            # (the SDK passes a CallToolResult through whatever the annotation says)
            return cast("dict[str, Any]", _refused(exc))


    @_tool(server, "send_message", WRITES)
    def send_message(to: list[str], body: str, context_explanation: str,
                     referenced_memory_ids: list[str] | None = None,
                     in_reply_to: str | None = None) -> dict[str, Any]:
        """Send a message to other agents (or `curator`): kept apart from memory, never
        recalled as a fact. `context_explanation`: why you send it now;
        `referenced_memory_ids`: kb/ paths of the facts it is about. Committed on your branch
        agent/<you>, from you. Returns {sha, branch, path}; a refusal starts with its code."""
        try:
            return writer.send_message(to, body, context_explanation,
                                       referenced_memory_ids=referenced_memory_ids,
                                       in_reply_to=in_reply_to)
        except FactdeskError as exc:
            return cast("dict[str, Any]", _refused(exc))

    @_tool(server, "propose_update", WRITES)
    def propose_update(path: str, title: str | None = None, body: str | None = None,
                       type: str | None = None, kind: str | None = None,
                       origin: str | None = None, confidence: float | None = None,
                       refs: list[str] | None = None, domain: list[str] | None = None,
                       entities: list[str] | None = None, claim_type: str | None = None,
                       subject_kind: str | None = None, subject_ref: str | None = None,
                       settle_by: str | None = None, settlement: str | None = None
                       ) -> dict[str, Any]:
        """Propose new values for some fields of one of your own facts (`path`: its kb/….md
        path). Only the fields given change; "" clears an optional field, [] a list. A fact
        another agent or a person claims is refused [A1]: propose a new fact citing it, or
        its retraction. Checked by the rules like propose_fact, committed on agent/<you>.
        Returns {sha, branch, path, changed}; a refusal starts with its code."""
        try:
            return agent_edits.update_fact(
                writer, path, title=title, body=body, type=type, kind=kind, origin=origin,
                confidence=confidence, refs=refs, domain=domain, entities=entities,
                claim_type=claim_type, subject_kind=subject_kind, subject_ref=subject_ref,
                settle_by=settle_by, settlement=settlement)
        except FactdeskError as exc:
            return cast("dict[str, Any]", _refused(exc))

    @_tool(server, "propose_retraction", WRITES)
    def propose_retraction(path: str, reason: str) -> dict[str, Any]:
        """Propose retracting a live fact (`path`: its kb/….md path), with your reason (one
        line). Committed on agent/<you> for a curator to decide. Returns {sha, branch,
        path}; a refusal starts with its code."""
        try:
            return agent_edits.retract_fact(writer, path, reason)
        except FactdeskError as exc:
            return cast("dict[str, Any]", _refused(exc))

    @_tool(server, "propose_settlement", WRITES)
    def propose_settlement(hypothesis: str, outcome: str, title: str, body: str,
                           confidence: float | None = None, refs: list[str] | None = None,
                           entities: list[str] | None = None, claim_type: str | None = None,
                           subject_kind: str | None = None, subject_ref: str | None = None
                           ) -> dict[str, Any]:
        """Propose the observation that settles a hypothesis (`hypothesis`: its kb/….md
        path; `outcome`: confirmed or refuted; `title`/`body`: what was observed). One
        commit on agent/<you> adds the observation beside the hypothesis and retracts the
        hypothesis; a confirming observation cites it (knomit's link) and may not be derived
        from it (R4), a refuting one must not cite it. Returns {sha, branch, path,
        hypothesis, outcome}; a refusal starts with its code."""
        try:
            return agent_edits.settle_hypothesis(
                writer, hypothesis, outcome, title, body, confidence=confidence, refs=refs,
                entities=entities, claim_type=claim_type, subject_kind=subject_kind,
                subject_ref=subject_ref)
        except FactdeskError as exc:
            return cast("dict[str, Any]", _refused(exc))

    @_tool(server, "read_inbox")
    def read_inbox(delivery: str = "all", limit: int = 50) -> dict[str, Any]:
        """The messages addressed to you, newest first, on the curated branch and on your
        own branch agent/<you>: each with from, to, sent, delivery, context_explanation,
        referenced_memory_ids, in_reply_to, body and the branch it was read on. `delivery`
        filters (all, queued, delivered, read, acknowledged)."""
        try:
            return agent_inbox.inbox(writer, delivery, limit)
        except FactdeskError as exc:
            return cast("dict[str, Any]", _refused(exc))

    @_tool(server, "my_proposals")
    def my_proposals(status: str = "all", limit: int = 50) -> dict[str, Any]:
        """Your own proposals (on agent/<you>), newest first: each with its status (open,
        accepted, rejected, partial), its facts and, once a curator decided it, the
        curator's reason. `status` filters (all, open, accepted, rejected, partial)."""
        try:
            return writer.my_proposals(status, limit)
        except FactdeskError as exc:
            return cast("dict[str, Any]", _refused(exc))


def _refused(exc: FactdeskError) -> CallToolResult:
    """A write's refusal as the tool's error result, its text exactly the refusal's
    (`[H1] …`): a raised ToolError would reach the client as "Error executing tool
    propose_fact: [H1] …", and agents match on the leading `[CODE]` (docs/mcp.md)."""
    text = str(exc).encode("utf-8", "backslashreplace").decode("utf-8")
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


@contextmanager
def _reasons(kind: type[ToolError] | type[ResourceError]) -> Iterator[None]:
    """A failure a user can act on (a bad query, no such fact, an ambiguous name, a busy or
    full index) reaches the client with its reason as the error's text (issue 22 #13: the
    SDK says only "Error executing tool search" for any other exception). Text that could
    not be sent (a lone surrogate) is escaped."""
    try:
        yield
    except FactdeskError as exc:
        raise kind(str(exc).encode("utf-8", "backslashreplace").decode("utf-8")) from exc


def _text(name: str, value: str) -> str:
    """`value`, refused in words when it is no text (a lone surrogate, `"\\ud800"`: JSON
    can write one, UTF-8 cannot; SQLite and the reply could not carry it)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = value[exc.start:exc.end].encode("utf-8", "backslashreplace").decode("ascii")
        raise QueryError(f"the {name} holds a lone surrogate ({bad}) at character "
                         f"{exc.start + 1}: it is not text; send valid Unicode") from None
    return value


def _tool(server: MCPServer, name: str, annotations: ToolAnnotations = READ_ONLY
          ) -> Callable[[Callable[..., Any]], Any]:
    """Register a tool (read-only unless `annotations` say otherwise) whose description is
    its docstring as one line of prose: the SDK hands the docstring over as written,
    indentation and line breaks included, and clients show (and models read) that
    verbatim."""

    def register(fn: Callable[..., Any]) -> Any:
        description = " ".join((inspect.getdoc(fn) or "").split())
        return server.tool(name=name, annotations=annotations, description=description)(fn)

    return register


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


def serve(kb: Path, agent: str | None = None) -> None:
    """Run the server over stdin/stdout until the client closes it."""
    anyio.run(_serve_stdio, build_server(kb, agent, watch=True))


async def _serve_stdio(server: MCPServer) -> None:
    """The SDK's stdio transport (`MCPServer.run("stdio")`), with an answer for every line
    (issue 22 #13): the SDK's reader hands a line its parser refuses to the session, which
    only logs it, so the client waits forever. Here such a line is read again with Python's
    `json`: not JSON → JSON-RPC's parse error (-32700, id null); JSON that is no JSON-RPC
    message → -32600 (with its id when it has one); a message whose strings hold a lone
    surrogate escape (`"\\ud800"`: valid JSON, which pydantic's parser refuses) → served
    (the tools then refuse such text in words)."""
    lowlevel = server._lowlevel_server  # (what `run_stdio_async` runs)
    async with stdio_server() as (read_stream, write_stream):
        inbox_writer, inbox = create_context_streams[SessionMessage | Exception](0)

        async def relay() -> None:
            async with inbox_writer:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        answer = _read_again(item)
                        if isinstance(answer, JSONRPCError):
                            await write_stream.send(SessionMessage(answer))
                            continue
                        item = answer
                    await inbox_writer.send(item)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(relay)
            await lowlevel.run(inbox, write_stream, lowlevel.create_initialization_options())
            tasks.cancel_scope.cancel()


def _read_again(exc: Exception) -> SessionMessage | Exception | JSONRPCError:
    """A line the SDK's parser refused: the message Python's `json` reads in it, or the
    JSON-RPC error that answers it (the exception itself when its line is unknown)."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    data = errors[0].get("input") if errors else None
    if isinstance(data, str) and errors[0].get("type") == "json_invalid":
        try:
            data = json.loads(data)
        except ValueError as bad:
            return _error(None, PARSE_ERROR, f"Parse error: {bad}")
    elif not isinstance(data, dict):
        return exc
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_python(data, by_name=False))
    except ValidationError:
        given = data.get("id") if isinstance(data, dict) else None
        ident = given if isinstance(given, (str, int)) and not isinstance(given, bool) else None
        return _error(_text_or_none(ident), INVALID_REQUEST, "Invalid Request: not a JSON-RPC "
                      "2.0 request, notification or response")


def _text_or_none(ident: str | int | None) -> str | int | None:
    if isinstance(ident, str):
        try:
            return _text("id", ident)
        except QueryError:
            return None
    return ident


def _error(ident: str | int | None, code: int, message: str) -> JSONRPCError:
    text = message.encode("utf-8", "backslashreplace").decode("utf-8")
    return JSONRPCError(jsonrpc="2.0", id=ident, error=ErrorData(code=code, message=text))
