"""Neighbours, duplicate scans (full and incremental), `similar:` and hybrid search."""

from __future__ import annotations

import json

import numpy as np
import pytest

from factdesk.cli import main
from factdesk.core import open_corpus
from factdesk.semantic.search import SemanticSession, hybrid_search, parse_similar, similar_paths
from factdesk.semantic.store import EmbeddingStore
from factdesk.semantic.thresholds import duplicate_threshold
from factdesk.semantic.vectors import VectorIndex, duplicate_scan
from tests.conftest import Corpus
from tests.semantic.conftest import PARAPHRASE, PARAPHRASE_SOURCE, UNRELATED, filler

SOURCE = "kb/gotchas/db/d4d4d4d4.md"
TWIN = "kb/decisions/api/e5e5e5e5.md"


def _planted(corpus: Corpus) -> None:
    corpus.fact(SOURCE, title="Pool exhaustion above 200 clients", body=PARAPHRASE_SOURCE)
    for n, (title, body) in enumerate(UNRELATED):
        corpus.fact(f"kb/decisions/api/f{n}f{n}f{n}f{n}.md", title=title, body=body)
    for n, (title, body) in enumerate(filler(24)):
        corpus.fact(f"kb/gotchas/misc/{n:08x}.md", title=title, body=body)
    corpus.commit("learn: more facts")


def _session(corpus: Corpus, backend) -> SemanticSession:
    indexer = open_corpus(corpus.root)
    indexer.update()
    session = SemanticSession(indexer, backend)
    session.embed_pending()
    return session


def test_neighbours_find_the_planted_paraphrase(corpus: Corpus, static_backend) -> None:
    _planted(corpus)
    corpus.fact(TWIN, title="Pool runs dry past 200 clients", body=PARAPHRASE, type="hypothesis")
    corpus.commit("learn: paraphrase")
    session = _session(corpus, static_backend)
    hits = session.neighbours(SOURCE, 3)
    assert hits[0].path == TWIN and hits[0].score > hits[1].score
    assert all(h.path != SOURCE for h in hits)
    assert [h.path for h in session.similar(SOURCE.removesuffix(".md").rsplit("/", 1)[-1], 1)] \
        == [TWIN]


def test_duplicate_scan_full_then_incremental(corpus: Corpus, static_backend) -> None:
    _planted(corpus)
    session = _session(corpus, static_backend)
    pairs, stats = session.duplicates()
    assert not stats.incremental and stats.facts == 32
    assert all(TWIN not in (p.a, p.b) for p in pairs)
    corpus.fact(TWIN, title="Pool runs dry past 200 clients", body=PARAPHRASE)
    corpus.commit("learn: paraphrase")
    session.indexer.update()
    assert session.embed_pending().embedded == 1
    pairs, stats = session.duplicates()
    assert stats.incremental and stats.compared == 1
    assert (SOURCE, TWIN) in {(p.b, p.a) for p in pairs} | {(p.a, p.b) for p in pairs}
    # The same answer as a full scan from nothing.
    store = EmbeddingStore(corpus.root)
    store.connection.execute("DELETE FROM dup_scanned")
    store.connection.commit()
    full, stats = duplicate_scan(store, session.model_id, duplicate_threshold(session.model_id))
    store.close()
    assert not stats.incremental
    assert [(p.a, p.b) for p in full] == [(p.a, p.b) for p in pairs]
    # A deleted fact drops out of the pairs.
    (corpus.root / TWIN).unlink()
    corpus.commit("retract: twin")
    session.indexer.update()
    session.embed_pending()
    assert all(TWIN not in (p.a, p.b) for p in session.duplicates()[0])


@pytest.mark.parametrize("block", [1, 3, 256])
def test_block_scan_equals_brute_force(block: int) -> None:
    rng = np.random.default_rng(4)
    m = rng.normal(size=(40, 8)).astype(np.float32)
    m[7] = m[3] + 0.01
    m[20] = m[3]
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    index = VectorIndex("test", [f"p{i:02d}" for i in range(40)], [str(i) for i in range(40)], m)
    sims = m @ m.T
    want = {(f"p{i:02d}", f"p{j:02d}") for i in range(40) for j in range(i + 1, 40)
            if sims[i, j] >= 0.6}
    full, done = index.duplicate_scan(0.6, block=block)
    assert done and {(p.a, p.b) for p in full} == want
    some = [3, 5, 20, 39]
    part, _ = index.duplicate_scan(0.6, rows=some, block=block)
    assert {(p.a, p.b) for p in part} == {pr for pr in want if {pr[0], pr[1]} & {
        f"p{i:02d}" for i in some}}
    assert len(part) == len({(p.a, p.b) for p in part})
    top = index.neighbours("p03", 2)
    assert {t.path for t in top} == {"p07", "p20"}


def test_similar_query_form(corpus: Corpus, static_backend, semantic_env) -> None:
    _planted(corpus)
    indexer = open_corpus(corpus.root)
    indexer.update()
    assert parse_similar("type:observation pool") is None
    assert similar_paths(indexer, "pool exhausted") is None
    assert parse_similar("  similar:  kb/x.md ") == "kb/x.md"
    from factdesk.semantic.search import session_for

    session_for(indexer).embed_pending()
    by_path = similar_paths(indexer, f"similar:{SOURCE}")
    assert by_path and SOURCE not in by_path
    by_text = similar_paths(indexer, "similar:database connections run out under many clients")
    assert by_text and by_text[0] == SOURCE


def test_hybrid_search_fuses_fts_and_vectors(corpus: Corpus, static_backend) -> None:
    _planted(corpus)
    session = _session(corpus, static_backend)
    conn = session.indexer.connect(readonly=True)
    # "headless" is a word match; the vector side adds facts about the same thing.
    hits = hybrid_search(conn, "headless", 5, session=session)
    assert hits[0].path.startswith("kb/decisions/api/f0f0") and hits[0].fts_rank == 1
    # No shared word, found by meaning alone.
    hits = hybrid_search(conn, "connections depleted when too many users arrive", 3,
                         session=session)
    assert SOURCE in [h.path for h in hits] and hits[0].cosine is not None
    # Field filters restrict the vector side too.
    hits = hybrid_search(conn, "type:reference connections depleted", 10, session=session)
    assert hits and all(h.path == "kb/decisions/api/c3c3c3c3.md" for h in hits)


def test_cli_embed_similar_duplicates(corpus: Corpus, semantic_env, capsys) -> None:
    _planted(corpus)
    corpus.fact(TWIN, title="Pool runs dry past 200 clients", body=PARAPHRASE)
    corpus.commit("learn: paraphrase")
    kb = str(corpus.root)
    assert main(["embed", "--kb", kb, "--model", "static"]) == 0
    out = capsys.readouterr()
    assert "33 facts, 33 embedded" in out.out and "embedding 33/33" in out.err
    assert main(["embed", "--kb", kb]) == 0
    assert "0 embedded, 33 cached" in capsys.readouterr().out
    assert main(["similar", SOURCE, "--kb", kb, "--format", "json", "--limit", "2"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["fact"] == SOURCE and data["results"][0]["path"] == TWIN
    assert data["results"][0]["title"] == "Pool runs dry past 200 clients"
    assert main(["similar", "invoice PDF rendering", "--kb", kb]) == 0
    assert "f0f0f0f0.md" in capsys.readouterr().out.splitlines()[0]
    assert main(["duplicates", "--kb", kb, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    found = {(p["a"], p["b"]) for p in data["pairs"]}
    # The paraphrase, and the template-made filler facts among themselves; nothing else.
    assert (TWIN, SOURCE) in found
    assert all(a.startswith("kb/gotchas/misc/") and b.startswith("kb/gotchas/misc/")
               for a, b in found - {(TWIN, SOURCE)})
    scores = [p["score"] for p in data["pairs"]]
    assert scores == sorted(scores, reverse=True) and data["total"] == len(found)
    assert main(["duplicates", "--kb", kb, "--threshold", "0.9999"]) == 0
    assert capsys.readouterr().out.startswith("0 pairs among 33 facts")
    assert main(["similar", "x", "--kb", kb, "--model", "nope"]) == 2


def test_facet_counts_of_a_similar_query_count_its_answer(corpus: Corpus, static_backend) -> None:
    """Issue 14 bug 6: `similar:` showed every facet count as 0 (its text went to SQL)."""
    from factdesk.gui.sidebar import count_all

    _planted(corpus)
    session = _session(corpus, static_backend)
    conn = session.indexer.connect(readonly=True)
    try:
        paths = [h.path for h in session.similar(SOURCE, 5)]
        assert paths
        counts = dict(count_all(conn, f"similar:{SOURCE}", lambda q: paths))
        assert sum(n for _value, n in counts["type"]) == len(paths)
        assert dict(count_all(conn, "pool", lambda q: None))["type"]  # (SQL queries as before)
    finally:
        conn.close()
