"""git's look at the work tree started as a short-lived command starts (`gitlook.look_early`,
issue 23 #1): the index read that follows takes the same answer it would have asked git
for, only for the corpus it was started for, only while fresh, and nothing is left
running when nobody takes it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from factdesk.cli import main
from factdesk.core import open_corpus
from factdesk.corpus import gitlook
from tests.conftest import Corpus, git


@pytest.fixture
def indexed(corpus: Corpus) -> Corpus:
    open_corpus(corpus.root).update()  # (`.git/factdesk`: a corpus indexed before)
    tracked = git(corpus.root, "ls-files", "kb").split()
    edited = corpus.root / tracked[0]
    edited.write_text(edited.read_text() + "\nAn edit not committed.\n")
    git(corpus.root, "update-index", "--skip-worktree", tracked[-1])
    corpus.fact("kb/gotchas/db/untracked1.md", title="Not added to git")
    return corpus


def test_the_early_answer_is_the_one_git_gives_then(indexed: Corpus) -> None:
    plain = gitlook.status_paths(indexed.root, "kb")
    assert plain is not None and len(plain) == 3  # (an edit, an untracked file, a flag)
    gitlook.look_early(indexed.root)
    assert gitlook._early
    assert gitlook.status_paths(indexed.root, "kb") == plain
    assert not gitlook._early  # (taken: the next read asks git again)


def test_an_early_look_at_another_corpus_or_a_stale_one_is_not_taken(
        indexed: Corpus, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path_factory.mktemp("other")
    git(other, "init", "-q", "-b", "main")
    (other / "kb").mkdir()
    (other / ".git" / "factdesk").mkdir()
    gitlook.look_early(other)
    early = gitlook._early[0]
    assert gitlook.status_paths(indexed.root, "kb") == gitlook.status_paths(indexed.root, "kb")
    assert not gitlook._early and early.procs.others.returncode is not None
    # taken too late, git is asked again: an edit made since is seen
    monkeypatch.setattr(gitlook, "EARLY_S", 0.0)
    gitlook.look_early(indexed.root)
    indexed.fact("kb/gotchas/db/later000.md", title="Written after the command started")
    assert "kb/gotchas/db/later000.md" in (gitlook.status_paths(indexed.root, "kb") or ())


def test_a_corpus_never_indexed_gets_no_early_look(corpus: Corpus) -> None:
    """A first index (or a rebuild) asks git nothing of the kind: no git to compete with."""
    gitlook.look_early(corpus.root)
    assert not gitlook._early


def test_a_read_from_the_command_line_takes_it_and_says_what_the_work_tree_holds(
        indexed: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    indexed.fact("kb/gotchas/db/cli00000.md", title="Zanzibar lanterns are indexed")
    assert main(["search", "zanzibar", "--kb", str(indexed.root)]) == 0
    assert "cli00000" in capsys.readouterr().out
    assert not gitlook._early


def test_nothing_is_left_running_when_no_read_takes_it(indexed: Corpus) -> None:
    """A process that started a look no read took ends at once (the exit hook stops git
    and joins the thread that drains it: a wrong order hung or raised) and leaves no git."""
    code = ("import sys, time\n"
            "from pathlib import Path\n"
            "from factdesk.corpus import gitlook\n"
            "gitlook.look_early(Path(sys.argv[1]))\n"
            "assert gitlook._early\n"
            "print(gitlook._early[0].procs.tracked.pid, gitlook._early[0].procs.others.pid)\n")
    done = subprocess.run([sys.executable, "-c", code, str(indexed.root)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for pid in done.stdout.split():
        assert not _alive(int(pid))


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
