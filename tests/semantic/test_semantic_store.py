"""The embedding cache on real git corpora with the real static model (and once the full one)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest

from factdesk.core import open_corpus
from factdesk.semantic import backends
from factdesk.semantic.store import EmbeddingStore, embed_pending, store_path
from tests.conftest import Corpus
from tests.semantic.conftest import PARAPHRASE, PARAPHRASE_SOURCE, UNRELATED


def _indexed(corpus: Corpus):
    indexer = open_corpus(corpus.root)
    indexer.update()
    return indexer


def test_second_run_embeds_nothing_and_store_sits_in_git_dir(corpus: Corpus,
                                                               static_backend) -> None:
    indexer = _indexed(corpus)
    first = embed_pending(indexer, static_backend)
    assert (first.facts, first.embedded, first.reused, first.removed) == (3, 3, 0, 0)
    again = embed_pending(indexer, static_backend)
    assert (again.embedded, again.reused) == (0, 3)
    assert store_path(corpus.root) == corpus.root / ".git" / "factdesk" / "embeddings.db"
    assert store_path(corpus.root).is_file()
    store = EmbeddingStore(corpus.root)
    paths, _, matrix = store.matrix(static_backend.model_id)
    store.close()
    assert len(paths) == 3 and matrix.shape == (3, static_backend.dim)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=2e-3)


def test_changed_fact_is_re_embedded_deleted_drops_out_relabel_is_free(
        corpus: Corpus, static_backend) -> None:
    indexer = _indexed(corpus)
    embed_pending(indexer, static_backend)
    corpus.fact("kb/gotchas/db/a1a1a1a1.md", title="Connection pool exhausts at 200 clients",
                body="A different body now.")
    (corpus.root / "kb/gotchas/db/b2b2b2b2.md").unlink()
    corpus.commit("update: change one, retract one")
    indexer.update()
    stats = embed_pending(indexer, static_backend)
    assert (stats.facts, stats.embedded, stats.reused, stats.removed) == (2, 1, 1, 1)
    # A frontmatter-only change (type) keeps title + body: nothing to embed.
    corpus.fact("kb/decisions/api/c3c3c3c3.md", title="Rate limit is 100 requests per minute",
                type="observation")
    corpus.commit("relabel: c3")
    indexer.update()
    assert embed_pending(indexer, static_backend).embedded == 0
    conn = sqlite3.connect(store_path(corpus.root))
    assert conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 2
    assert conn.execute("SELECT COUNT(*) FROM paths").fetchone()[0] == 2


def test_working_tree_edit_is_embedded(corpus: Corpus, static_backend) -> None:
    indexer = _indexed(corpus)
    embed_pending(indexer, static_backend)
    corpus.fact("kb/gotchas/db/a1a1a1a1.md", title="Connection pool exhausts at 300 clients")
    indexer.update()
    assert embed_pending(indexer, static_backend).embedded == 1


def test_model_change_re_embeds_with_the_full_model(corpus: Corpus, static_backend,
                                                   semantic_env: Path) -> None:
    indexer = _indexed(corpus)
    embed_pending(indexer, static_backend)
    full = backends.load_backend("full")
    assert full.model_id.startswith("full:") and full.model_id != static_backend.model_id
    stats = embed_pending(indexer, full)
    assert (stats.embedded, stats.reused) == (3, 0)
    assert embed_pending(indexer, full).embedded == 0
    # Both models' vectors are kept: switching back costs nothing.
    assert embed_pending(indexer, static_backend).embedded == 0
    v = full.encode([PARAPHRASE_SOURCE, PARAPHRASE, UNRELATED[0][1]])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) + 0.2


def test_cancel_keeps_what_was_done(corpus: Corpus, static_backend) -> None:
    indexer = _indexed(corpus)
    cancel = threading.Event()
    cancel.set()
    stats = embed_pending(indexer, static_backend, cancel=cancel)
    assert stats.cancelled and stats.embedded == 0
    seen: list[tuple[int, int]] = []
    stats = embed_pending(indexer, static_backend, progress=lambda d, t: seen.append((d, t)))
    assert stats.embedded == 3 and seen[0] == (0, 3) and seen[-1] == (3, 3)


def test_corrupt_store_is_moved_aside_and_rebuilt(corpus: Corpus, static_backend) -> None:
    indexer = _indexed(corpus)
    path = store_path(corpus.root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    assert embed_pending(indexer, static_backend).embedded == 3
    assert [p for p in path.parent.iterdir() if ".corrupt-" in p.name]


def test_huge_body_is_cut_before_tokenising(static_backend) -> None:
    text = backends.fact_text("Title", "word " * 2_000_000)
    assert len(text) == backends.MAX_CHARS
    assert static_backend.encode([text]).shape == (1, static_backend.dim)


def test_unknown_choice_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(backends.ENV_CHOICE, "gemma")
    with pytest.raises(backends.ModelUnavailable, match="FACTDESK_EMBEDDING_MODEL"):
        backends.choice()
    monkeypatch.setenv(backends.ENV_CHOICE, "FULL")
    assert backends.choice() == "full"
    assert backends.choice("static") == "static"


def test_the_skip_rule_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from tests.semantic import guard

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "sentence_transformers" else real(name, *a))
    assert guard.model_missing() == ("semantic tests skipped: not installed: "
                                     "sentence_transformers (sentence-transformers (the full "
                                     "backend))")
