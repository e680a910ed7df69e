"""Issue 15 #7: files and edits that `git status` hides are facts all the same. A file's
place in the work tree decides whether it is a fact (FORMAT.md's location rule), whatever
git's ignore rules and index flags say; the incremental update sees them as a rebuild
does (I1)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

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
