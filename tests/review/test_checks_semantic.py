"""Near-duplicates of a proposed version already on the curated branch (the semantic
layer, on demand): the real static model, as tests/semantic uses it."""

from __future__ import annotations

from factdesk.core import open_corpus
from factdesk.review.checks import near_duplicates
from factdesk.review.proposals import load_queue
from factdesk.semantic.search import SemanticSession
from tests.conftest import Corpus, git
from tests.semantic.conftest import (  # noqa: F401  (fixtures; the module skips without the model)
    PARAPHRASE,
    PARAPHRASE_SOURCE,
    UNRELATED,
    filler,
    model_cache,
    static_backend,
)

SOURCE = "kb/gotchas/db/d4d4d4d4.md"
PROPOSED = "kb/decisions/api/e5e5e5e5.md"
AGENT = "devbox-1a2b3c4d"


def test_near_duplicate_of_a_proposed_fact(corpus: Corpus, static_backend) -> None:  # noqa: F811
    corpus.fact(SOURCE, title="Pool exhaustion above 200 clients", body=PARAPHRASE_SOURCE)
    for n, (title, body) in enumerate(UNRELATED):
        corpus.fact(f"kb/decisions/api/f{n}f{n}f{n}f{n}.md", title=title, body=body)
    for n, (title, body) in enumerate(filler(24)):
        corpus.fact(f"kb/gotchas/misc/{n:08x}.md", title=title, body=body)
    corpus.commit("learn: more facts")
    git(corpus.root, "checkout", "-qb", f"agent/{AGENT}")
    corpus.fact(PROPOSED, title="Pool runs dry past 200 clients", body=PARAPHRASE)
    sha = corpus.commit("learn: Pool runs dry past 200 clients", author=AGENT)
    git(corpus.root, "checkout", "-q", "main")
    indexer = open_corpus(corpus.root)
    indexer.update()
    proposal = load_queue(corpus.root).find(sha)
    # no semantic index yet: skipped, and said to be (None), never a model loaded for it
    assert near_duplicates(indexer, proposal) is None
    session = SemanticSession(indexer, static_backend)
    session.embed_pending()
    found = near_duplicates(indexer, proposal, session=session)
    assert found is not None and [(d.path, d.similar) for d in found][:1] == [(PROPOSED, SOURCE)]
