"""The index's folder and its lock, as a user meets them (issue 15): an unwritable
`.git/factdesk` is said in words, never taken for a damaged index; an update after
factdesk's own commit gives up on a stopped updater after a bounded wait."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.errors import IndexUnwritable
from factdesk.index import indexer as indexer_module
from factdesk.index import locking
from factdesk.index.indexer import Indexer
from tests.conftest import Corpus, git


def _immutable(folder: Path) -> bool:
    """Make `folder` immutable (root is not stopped by permission bits); False when this
    system cannot."""
    if shutil.which("chattr") is None:
        return False
    return subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0


@pytest.fixture
def frozen_index_folder(corpus: Corpus) -> Iterator[Indexer]:
    ix = Indexer(corpus.root)
    ix.update()
    if not _immutable(ix.path.parent):
        pytest.skip("chattr +i is not available here")
    try:
        yield ix
    finally:
        subprocess.run(["chattr", "-i", str(ix.path.parent)], check=True)


def test_an_unwritable_index_folder_is_said_not_moved_aside(
        corpus: Corpus, frozen_index_folder: Indexer,
        capsys: pytest.CaptureFixture[str]) -> None:
    ix = frozen_index_folder
    before = sorted(p.name for p in ix.path.parent.iterdir())
    (corpus.root / "kb/gotchas/db/a1a1a1a1.md").write_text("changed\n")
    with pytest.raises(IndexUnwritable, match="cannot be written"):
        ix.update()
    assert main(["search", "pool", "--kb", str(corpus.root)]) == 1
    err = capsys.readouterr().err
    assert "the index's folder cannot be written" in err and "Traceback" not in err
    assert sorted(p.name for p in ix.path.parent.iterdir()) == before  # nothing moved aside
    assert ix.set_aside == []


def test_the_update_after_a_commit_gives_up_on_a_stopped_updater(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another factdesk process holds the update lock and never lets go: the relabel is
    committed, and its index update says so after a bounded wait instead of hanging."""
    from factdesk.curation import Curation

    monkeypatch.setattr(indexer_module, "AFTER_COMMIT_WAIT", 0.3)  # (10 s in the product)
    ix = Indexer(corpus.root)
    ix.update()
    cur = Curation(ix)
    with locking.update_lock(ix.path):  # (a second open file: flock conflicts in-process too)
        result = cur.relabel(["kb/gotchas/db/a1a1a1a1.md"], {"type": "insight"}, "a reason")
    assert result.commit and git(corpus.root, "rev-parse", "HEAD").strip() == result.commit
    assert result.index is not None and result.index.mode == "behind"
    assert result.index.note is not None
    assert result.index.note.startswith("committed; the index will catch up")
    assert ix.update().mode == "incremental"  # and it does


def test_a_relabel_behind_a_stopped_updater_is_refused_in_words(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("factdesk.cli.curation_cmds.AFTER_COMMIT_WAIT", 0.3)
    ix = Indexer(corpus.root)
    ix.update()
    head = git(corpus.root, "rev-parse", "HEAD")
    with locking.update_lock(ix.path):
        code = main(["relabel", "kb/gotchas/db/a1a1a1a1.md", "--type", "insight",
                     "--reason", "x", "--kb", str(corpus.root)])
    assert code == 1
    assert "another factdesk process has been updating the index" in capsys.readouterr().err
    assert git(corpus.root, "rev-parse", "HEAD") == head  # nothing committed
