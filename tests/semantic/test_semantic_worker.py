"""The GUI's background embedding worker: progress, finished, failed, cancel."""

from __future__ import annotations

from pathlib import Path

import pytest
import shiboken6

from factdesk.core import open_corpus
from factdesk.gui.semantic_worker import EmbeddingWorker, start_in_thread, thread_for
from factdesk.semantic.store import EmbedStats
from tests.conftest import Corpus


def test_worker_embeds_in_a_thread_with_progress(qtbot, corpus: Corpus, semantic_env: Path
                                                 ) -> None:
    indexer = open_corpus(corpus.root)
    indexer.update()
    worker = EmbeddingWorker(indexer, "static")
    seen: list[tuple[int, int]] = []
    worker.progress.connect(lambda d, t: seen.append((d, t)))
    results: list[object] = []
    worker.finished.connect(results.append)
    thread = thread_for(worker)
    thread.start()
    # polled, not a signal wait on `thread.finished`: the thread deletes itself when it
    # ends (deleteLater), and when that delete ran before the wait's queued call, PySide
    # dropped the call with its sender and the wait timed out (twice in ~30 loaded runs)
    qtbot.waitUntil(lambda: bool(results), timeout=120_000)
    qtbot.waitUntil(lambda: not shiboken6.isValid(thread) and not shiboken6.isValid(worker),
                    timeout=30_000)  # both are deleted once it has ended, as documented
    stats = results[0]
    assert isinstance(stats, EmbedStats) and stats.embedded == 3
    assert seen[-1] == (3, 3)


def test_worker_reports_a_missing_model_as_failed(qtbot, corpus: Corpus,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTDESK_EMBEDDING_MODEL", "no-such-model")
    indexer = open_corpus(corpus.root)
    indexer.update()
    worker = EmbeddingWorker(indexer)
    failed: list[str] = []
    worker.failed.connect(failed.append)
    # poll from this thread: a signal blocker on the worker's own signal runs in the
    # worker's thread and stops its timer there (Qt warns; Qt warnings fail tests)
    start_in_thread(worker)
    qtbot.waitUntil(lambda: bool(failed), timeout=30_000)
    assert "Semantic search is off" in failed[0]
    assert "no-such-model" in failed[0]


def test_cancelled_worker_finishes_with_cancelled_stats(qtbot, corpus: Corpus,
                                                        semantic_env: Path) -> None:
    indexer = open_corpus(corpus.root)
    indexer.update()
    worker = EmbeddingWorker(indexer, "static")
    worker.cancel()
    results: list[EmbedStats] = []
    worker.finished.connect(results.append)
    start_in_thread(worker)
    qtbot.waitUntil(lambda: bool(results), timeout=120_000)
    assert results[0].cancelled and results[0].embedded == 0
