"""Issue 23 #2: a long-running process's reads learn what changed from a watch of the work
tree and the refs (`corpus.watch.CorpusWatch`) instead of asking `git status` each time;
when the watch cannot say (not set up, lost events), they look at everything, and say why.
Real files, real git commits, a real watch."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from factdesk.corpus import gitlook
from factdesk.corpus.watch import CorpusWatch
from factdesk.index.indexer import Indexer
from tests.conftest import Corpus, git
from tests.index.test_indexer import assert_incremental_equals_rebuild

A1 = "kb/gotchas/db/a1a1a1a1.md"


def _paths(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT path FROM facts WHERE status = 'live'")}


def _confidence(conn: sqlite3.Connection) -> float:
    return float(conn.execute("SELECT confidence FROM facts WHERE path = ?", (A1,)).fetchone()[0])


def _no_status(repo: Path, root: str) -> set[str] | None:
    raise AssertionError("a watched read asked git status")


@pytest.fixture
def watched(corpus: Corpus) -> Iterator[tuple[Indexer, CorpusWatch]]:
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    watch = CorpusWatch(corpus.root, ix.git_dir).start()
    assert watch.live
    ix.watch = watch
    ix.read(_paths)  # the first read looks at everything (nothing was watched before)
    try:
        yield ix, watch
    finally:
        watch.stop()


#: how long a test waits for the watch (the latency target is measured by
#: bench/watch_bench.py: a loaded machine must not fail the suite)
WAIT_S = 20.0


def test_a_watched_read_that_finds_nothing_changed_asks_git_nothing(
        watched: tuple[Indexer, CorpusWatch], monkeypatch: pytest.MonkeyPatch) -> None:
    ix, _watch = watched
    monkeypatch.setattr(gitlook, "status_paths", _no_status)
    assert A1 in ix.read(_paths)  # (no git ran; its time, < 50 ms, is bench/watch_bench.py's)


def test_a_ten_file_commit_is_searchable_within_a_second(
        corpus: Corpus, watched: tuple[Indexer, CorpusWatch],
        monkeypatch: pytest.MonkeyPatch) -> None:
    ix, _watch = watched
    monkeypatch.setattr(gitlook, "status_paths", _no_status)
    new = {f"kb/gotchas/fleet/{k:08x}.md" for k in range(10)}
    for path in sorted(new):
        corpus.fact(path, title=f"Fleet fact {path[-11:-3]}")
    corpus.commit("learn: ten facts")
    landed = time.perf_counter()
    while not new <= ix.read(_paths):  # (< 1 s: bench/watch_bench.py; here only "found")
        assert time.perf_counter() - landed < WAIT_S, f"not searchable within {WAIT_S} s"
        time.sleep(0.02)
    monkeypatch.undo()


def test_an_edit_told_by_the_watch_then_put_back_unwatched_is_seen(
        corpus: Corpus, tmp_path: Path, watched: tuple[Indexer, CorpusWatch]) -> None:
    """The watched update skips `git status`; the path it was told of is remembered as
    possibly dirty, so an edit put back while nothing watches (clean to git) is still
    looked at by the next plain read (I1)."""
    ix, watch = watched
    path = corpus.root / A1
    original = path.read_bytes()
    path.write_bytes(original.replace(b"confidence: 0.8", b"confidence: 0.45"))
    deadline = time.perf_counter() + 20  # (how soon: bench/watch_bench.py)
    while ix.read(_confidence) != 0.45:
        assert time.perf_counter() < deadline
        time.sleep(0.02)
    watch.stop()
    git(corpus.root, "checkout", "--", A1)
    assert git(corpus.root, "status", "--porcelain") == ""
    plain = Indexer(corpus.root, today=date(2026, 11, 30))
    assert plain.read(_confidence) == 0.8
    assert_incremental_equals_rebuild(corpus.root, tmp_path)


def test_lost_events_fall_back_to_the_full_look_and_say_so(
        corpus: Corpus, watched: tuple[Indexer, CorpusWatch]) -> None:
    """An overflowed queue (watchdog logs "events were lost"): the next read looks at
    everything. (The overflow itself is the library's warning, raised here through its
    own logger: overflowing the kernel's queue would change the machine's limits.)"""
    ix, watch = watched
    path = corpus.root / A1
    path.write_bytes(path.read_bytes().replace(b"confidence: 0.8", b"confidence: 0.3"))
    time.sleep(0.3)
    watch.take()  # (the events the overflow lost)
    logging.getLogger("watchdog.observers.inotify_c").warning(
        "Inotify queue overflowed; filesystem events were lost")
    seen = watch.take()
    assert seen.whole and seen.why is not None and "lost" in seen.why
    watch.lost(seen.why)  # (given back: the read below takes it)
    assert ix.read(_confidence) == 0.3


def test_a_watch_that_cannot_be_set_up_says_why_and_every_read_looks_at_everything(
        corpus: Corpus, tmp_path: Path) -> None:
    watch = CorpusWatch(corpus.root, tmp_path / "no-such-git-dir").start()
    try:
        assert not watch.live
        for _ in range(2):
            seen = watch.take()
            assert seen.whole and seen.why and "cannot all be watched" in seen.why
    finally:
        watch.stop()
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.watch = watch
    ix.read(_paths)
    path = corpus.root / A1
    path.write_bytes(path.read_bytes().replace(b"confidence: 0.8", b"confidence: 0.3"))
    assert ix.read(_confidence) == 0.3


def test_a_new_agent_tip_is_told(corpus: Corpus, watched: tuple[Indexer, CorpusWatch]) -> None:
    """A new tip of an agent/* branch, local or remote-tracking (refs/remotes/*/agent/*),
    and packed-refs: `refs` is set (the review queue reloads on it)."""
    _ix, watch = watched
    head = git(corpus.root, "rev-parse", "HEAD").strip()
    for ref in ("refs/heads/agent/codex-1", "refs/remotes/origin/agent/codex-2"):
        watch.take()
        git(corpus.root, "update-ref", ref, head)
        deadline = time.perf_counter() + 20  # (how soon: bench/watch_bench.py)
        while not watch.take().refs:
            assert time.perf_counter() < deadline, ref
            time.sleep(0.01)
    git(corpus.root, "pack-refs", "--all")
    deadline = time.perf_counter() + 20
    while not watch.take().refs:
        assert time.perf_counter() < deadline, "packed-refs"
        time.sleep(0.01)


def test_reading_the_files_asks_the_kernel_for_no_event(
        corpus: Corpus, watched: tuple[Indexer, CorpusWatch], monkeypatch: pytest.MonkeyPatch
        ) -> None:
    """A read of a fact file is not a change: the watch never subscribes to opens and
    closes-after-reading. (It did: each read was two events, an update reading every file
    of a large corpus overflowed the kernel's queue, the overflow asked for a whole look,
    which read every file again — the 10-agent bench overflowed for 20 s.)"""
    _ix, watch = watched
    told: list[str] = []
    real = watch._event
    monkeypatch.setattr(watch, "_event", lambda event: (told.append(event.event_type), real(event)))
    files = sorted((corpus.root / "kb").rglob("*.md"))
    assert files
    for _ in range(3):
        for f in files:
            f.read_bytes()
    watch.lost("a test: look at everything")
    _ix.read(_paths)  # (a whole look: reads every file)
    time.sleep(0.5)
    assert told == []
    assert not watch.take().paths
