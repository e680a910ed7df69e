"""An agent's inbox (issue 26): the messages addressed to it (FORMAT §14: its id in `to`),
on the curated branch (the message index, as `factdesk messages` reads it) and on its own
`agent/<id>` branch (the `msg/` files that branch adds or changes against the curated tip,
read from git: nothing is checked out). A read: no rate, nothing written."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from factdesk.corpus import githistory, gitremote, gitrepo
from factdesk.corpus.codec import MAX_BYTES
from factdesk.corpus.messages import parse_message
from factdesk.curation import gittree
from factdesk.index import messages as msg_index
from factdesk.model.messages import MSG_ROOT, PATH_RE, Message
from factdesk.review.agent_input import AgentWriteRefused

if TYPE_CHECKING:
    from factdesk.review.agent_write import AgentWriter

DELIVERY = ("all", "queued", "delivered", "read", "acknowledged")


def inbox(w: AgentWriter, delivery: str = "all", limit: int = 50) -> dict[str, Any]:
    """→ `{"agent", "messages": [{path, from, to, sent, delivery, context_explanation,
    referenced_memory_ids, in_reply_to, body, branch}]}`, newest first; `branch` says where
    the message was read (the curated branch's name, or `agent/<id>`: there a version of
    the agent's own branch wins over the curated one)."""
    if delivery not in DELIVERY:
        raise AgentWriteRefused("input", f"delivery {delivery!r}: one of {', '.join(DELIVERY)}")
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise AgentWriteRefused("input", f"limit must be a whole number, got {limit!r}")
    limit = max(1, min(limit, 500))
    me = w.identity.id
    curated, curated_tip = githistory.checked_out_branch(w.repo)
    found: dict[str, tuple[Message, str]] = {}
    for m in msg_index.read(w.repo, w.indexer.path,
                            lambda conn: msg_index.addressed_to(conn, me, 10_000)):
        found[m.path] = (m, curated or "HEAD")
    for m in _on_branch(w, curated_tip):
        if me in m.to:
            found[m.path] = (m, w.identity.branch)
    chosen = sorted(found.values(), key=lambda mb: (mb[0].sent, mb[0].path), reverse=True)
    chosen = [(m, b) for m, b in chosen if delivery in ("all", m.delivery)][:limit]
    return {"agent": me, "messages": [
        {**m.as_dict(), "body": m.body, "branch": branch} for m, branch in chosen]}


def _on_branch(w: AgentWriter, curated_tip: str | None) -> list[Message]:
    """The messages `agent/<id>` adds or changes against the curated tip."""
    tip = gittree.ref_tip(w.repo, f"refs/heads/{w.identity.branch}")
    if tip is None or curated_tip is None or tip == curated_tip:
        return []
    blobs = {path: new for path, (_old, new, _mode) in
             gitremote.tree_changes(w.repo, curated_tip, tip).items()
             if new is not None and path.startswith(f"{MSG_ROOT}/")}
    wanted = {p: b for p, b in blobs.items() if PATH_RE.match(p)}
    if not wanted:
        return []
    messages = []
    reader = gitrepo.BlobReader(w.repo)
    try:
        for path, blob in sorted(wanted.items()):
            data = reader.read(blob, limit=MAX_BYTES)
            if data is not None and (m := parse_message(path, data).message) is not None:
                messages.append(m)
    finally:
        reader.close()
    return messages
