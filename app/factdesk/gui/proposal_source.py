"""What the Proposals tab reads and asks of the review layer, in one place.

Every function here runs git (through `factdesk.review` and the corpus layer) or reads the
index: call them on a worker or the writer lane only, never on the GUI thread. The panel
(gui/proposals_panel.py) holds no rules: the queue, the checks, the decisions and sync are
`review.proposals`, `review.checks`, `review.decide` and `review.sync`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factdesk.review.model import Proposal, ProposedFact, Queue

if TYPE_CHECKING:
    from factdesk.curation import Curation, Identity
    from factdesk.index.indexer import Indexer
    from factdesk.review.proposals import Awaiting
    from factdesk.review.sync import SyncResult

def load(repo: Path) -> Queue:
    """(Worker.) Every agent branch's proposals, with their status (git only: fast)."""
    from factdesk.review.proposals import load_queue

    return load_queue(repo)


def awaiting(indexer: Indexer) -> list[Awaiting]:
    """(Worker.) `distilled`/`discovered` facts on the curated branch no curator attested."""
    from factdesk.review.proposals import awaiting_attestation

    return awaiting_attestation(indexer)


def checked(indexer: Indexer, queue: Queue, cancelled: Callable[[], bool]) -> Iterator[Proposal]:
    """(Worker.) Each proposal with its problems filled in, as `check_all` streams them;
    stops early once `cancelled()`."""
    from factdesk.review.checks import check_all

    for proposal in check_all(indexer, queue):
        if cancelled():
            return
        yield proposal


def check_one(indexer: Indexer, queue: Queue, sha: str) -> Proposal:
    """(Worker.) One proposal's checks, on demand (the one selected before its badge came)."""
    from factdesk.review.checks import check_proposal

    return check_proposal(indexer, queue, sha)


@dataclass(frozen=True, slots=True)
class Shown:
    """One fact version as the tab shows it: the proposed text and its diff against the
    curated branch's version."""

    path: str
    proposed: str
    diff: str
    #: the curated branch has no version of it (the proposal adds it, or it was retracted)
    new: bool


def _read(repo: Path, blob: str | None) -> bytes | None:
    from factdesk.corpus.codec import MAX_BYTES
    from factdesk.corpus.gitrepo import BlobReader, BlobTooLarge

    if not blob:
        return None
    with BlobReader(repo) as reader:
        try:
            return reader.read(blob, limit=MAX_BYTES)
        except BlobTooLarge as exc:
            return f"(a version of {exc.size:,} bytes, over the corpus's size limit: not shown)".encode()


def show(repo: Path, queue: Queue, fact: ProposedFact, label: str) -> Shown:
    """(Worker.) `fact`'s proposed version and its diff against the curated version (the
    curated branch's tip), or "new"."""
    from factdesk.corpus.githistory import blobs_at
    from factdesk.gui.history_panel import version_diff

    curated = blobs_at(repo, queue.tip, [fact.path]).get(fact.path) if queue.tip else None
    data = _read(repo, fact.new_blob)
    diff = version_diff(repo, fact.path, curated, fact.new_blob, ("curated", label))
    return Shown(fact.path, (data or b"").decode("utf-8", "replace"), diff, curated is None)


def proposed_bytes(repo: Path, fact: ProposedFact) -> bytes:
    """(Worker.) The proposed version's bytes (the edit-then-accept editor starts there)."""
    return _read(repo, fact.new_blob) or b""


def review(cur: Curation):  # type: ignore[no-untyped-def]
    """(Writer lane.) The decisions over the window's own curation (its curator, its undo)."""
    from factdesk.review.decide import Review

    # (the window's conventions: `ops.run` updates the index and syncs git's own index)
    return Review(cur.indexer, cur.curator, update_index=False, defer_index_sync=True)


def merge_reviewed(cur: Curation, branches: Sequence[str]) -> list[str]:
    """(Writer lane.) `Review.merge_reviewed` for each branch (`factdesk merge-reviewed`);
    the merges recorded, the index brought up to date after them."""
    review_ = review(cur)
    made = [m for b in branches if (m := review_.merge_reviewed(b))]
    if made:
        cur.indexer.update()
    return made


def run_sync(repo: Path, progress: Callable[[str, float], None],
             curator: Identity | None = None, *, as_proposals: bool = False) -> SyncResult:
    """(Writer lane.) Fetch every remote, join the lines, push (`review.sync.sync`;
    `as_proposals`: agent commits on the remote's curated branch become proposals)."""
    from factdesk.review.sync import sync

    return sync(repo, progress=progress, curator=curator, as_proposals=as_proposals)


def stopped_by_agent_commits(exc: BaseException) -> bool:
    """Whether a sync stopped because the remote's curated branch holds agent commits no
    curator decided (`review.sync.AgentCommits`: `run_sync(as_proposals=True)` takes them
    in as proposals)."""
    from factdesk.review.sync import AgentCommits

    return isinstance(exc, AgentCommits)


def semantic_near(semantic: Any) -> Callable[[str], list[tuple[str, float]]] | None:
    """(Worker.) Near-duplicates of a text among the indexed facts, when embeddings are
    ready; None otherwise."""
    session = getattr(semantic, "session", None)
    if session is None:
        return None

    def near(text: str) -> list[tuple[str, float]]:
        try:
            return [(h.path, float(h.score)) for h in session.similar_to_text(text, 12)]
        except Exception:  # not ready, or the model went away: no neighbours
            return []

    return near
