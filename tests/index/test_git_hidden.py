"""Issue 15 #7: files and edits that `git status` hides are facts all the same. A file's
place in the work tree decides whether it is a fact (FORMAT.md's location rule), whatever
git's ignore rules and index flags say; the incremental update sees them as a rebuild
does (I1)."""

from __future__ import annotations

import os
import time
from datetime import date
from pathlib import Path

import pytest

from factdesk.index import worktree
from factdesk.index.indexer import Indexer
from tests.conftest import Corpus, git
from tests.index.test_indexer import assert_incremental_equals_rebuild

A1 = "kb/gotchas/db/a1a1a1a1.md"


def _confidence(ix: Indexer, path: str) -> float | None:
    conn = ix.connect(readonly=True)
    try:
        row = conn.execute("SELECT confidence FROM facts WHERE path = ? AND status = 'live'",
                           (path,)).fetchone()
        return None if row is None else row[0]
    finally:
        conn.close()


@pytest.mark.parametrize("ignore_file", [".git/info/exclude", ".gitignore"])
def test_a_fact_git_ignores_is_indexed_and_forgotten_incrementally(
        corpus: Corpus, tmp_path: Path, ignore_file: str) -> None:
    (corpus.root / ignore_file).write_text("kb/gotchas/db/hidden*\n")
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    corpus.fact("kb/gotchas/db/hidden01.md", title="An agent's draft git ignores")
    assert ix.update().mode == "incremental"
    assert _confidence(ix, "kb/gotchas/db/hidden01.md") == 0.8
    assert_incremental_equals_rebuild(corpus.root, tmp_path)
    hidden = corpus.root / "kb/gotchas/db/hidden01.md"
    hidden.write_bytes(hidden.read_bytes().replace(b"confidence: 0.8", b"confidence: 0.35"))
    ix.update()
    assert _confidence(ix, "kb/gotchas/db/hidden01.md") == 0.35
    hidden.unlink()
    ix.update()
    assert _confidence(ix, "kb/gotchas/db/hidden01.md") is None
    assert_incremental_equals_rebuild(corpus.root, tmp_path)


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged"])
def test_an_edit_under_a_git_index_flag_is_seen(corpus: Corpus, tmp_path: Path,
                                                flag: str) -> None:
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    git(corpus.root, "update-index", flag, A1)
    path = corpus.root / A1
    path.write_bytes(path.read_bytes().replace(b"confidence: 0.8", b"confidence: 0.35"))
    assert git(corpus.root, "status", "--porcelain") == ""  # git does not tell
    assert ix.update().mode == "incremental"
    assert _confidence(ix, A1) == 0.35
    assert_incremental_equals_rebuild(corpus.root, tmp_path)
    path.unlink()
    ix.update()
    assert _confidence(ix, A1) is None
    assert_incremental_equals_rebuild(corpus.root, tmp_path)


def test_a_same_size_edit_with_its_mtime_put_back_is_seen(corpus: Corpus, tmp_path: Path) -> None:
    """An edit that keeps the size and puts the modification time back (`touch -r`, a copy
    tool preserving times), in a repository whose config tells git to compare less of a
    file's stat data (`core.checkStat=minimal`, `core.trustctime=false`): the change time
    still differs, and factdesk's git calls compare it (issue 23 #1: the no-op read asks
    git's stat cache instead of walking the work tree, and must see what the walk saw)."""
    git(corpus.root, "config", "core.checkStat", "minimal")
    git(corpus.root, "config", "core.trustctime", "false")
    path = corpus.root / A1
    old = 1_600_000_000 * 10**9
    os.utime(path, ns=(old, old))
    git(corpus.root, "update-index", "--refresh")
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    assert _confidence(ix, A1) == 0.8
    time.sleep(1.1)  # (git compares the change time to the second)
    path.write_bytes(path.read_bytes().replace(b"confidence: 0.8", b"confidence: 0.3"))
    os.utime(path, ns=(old, old))
    assert git(corpus.root, "status", "--porcelain") == ""  # git, as configured, does not tell
    assert ix.update().mode == "incremental"
    assert _confidence(ix, A1) == 0.3
    assert_incremental_equals_rebuild(corpus.root, tmp_path)


def _no_walk(repo: Path, root: str) -> dict[str, tuple[int, int]]:
    raise AssertionError("a read walked the work tree")


def test_a_read_that_finds_nothing_changed_walks_no_work_tree(
        corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23 #1: what can differ is asked of git (its stat cache, its list of untracked,
    ignored and flagged files), never found by a stat walk of every fact file in Python —
    for a no-op read and for an update after an edit alike; git-hidden files still seen."""
    (corpus.root / ".git/info/exclude").write_text("kb/gotchas/db/hidden*\n")
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    monkeypatch.setattr(worktree, "stamps", _no_walk)
    assert ix.update().mode == "unchanged"
    corpus.fact("kb/gotchas/db/hidden02.md", title="An ignored draft")
    path = corpus.root / A1
    path.write_bytes(path.read_bytes().replace(b"confidence: 0.8", b"confidence: 0.45"))
    stats = ix.update()
    assert stats.mode == "incremental"
    assert set(stats.changed) >= {A1, "kb/gotchas/db/hidden02.md"}
    assert _confidence(ix, A1) == 0.45
    assert ix.update().mode == "unchanged"
    monkeypatch.undo()
    assert_incremental_equals_rebuild(corpus.root, tmp_path)
