"""`proposals --format json` keeps its whole answer (`index.check_cache.answer_key`, issue
23 #1, #7): asked again with nothing moved, it is served without a check; after anything
the answer depends on moves — an agent's commit, a curated commit or decision, an
uncommitted edit, the registry, a remote-tracking branch, the options — the answer is the
one a command with no cache at all gives."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from factdesk.cli import main, review_cmds
from factdesk.index import check_cache
from tests.conftest import Corpus, git
from tests.review.test_queue import BRANCH, AgentCorpus, build, decide


@pytest.fixture
def agents(corpus: Corpus) -> Iterator[AgentCorpus]:
    yield build(corpus, curator_conflict=False)


def _answer(root: Path, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    assert main(["proposals", "--kb", str(root), "--format", "json", *options]) == 0
    return capsys.readouterr().out


def _fresh(root: Path, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    """The answer with no cache file at all."""
    path = check_cache.cache_path(root)
    for old in (path, *path.parent.glob(f"{path.name}-*")):
        old.unlink(missing_ok=True)
    return _answer(root, capsys, *options)


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the command really checked its queue."""
    runs: list[int] = []
    real = review_cmds.check_all

    def counting(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        runs.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(review_cmds, "check_all", counting)
    return runs


def test_the_same_question_is_answered_from_the_kept_answer(
        agents: AgentCorpus, capsys: pytest.CaptureFixture[str], checked: list[int]) -> None:
    root = agents.root
    first = _answer(root, capsys)
    assert checked == [1] and json.loads(first)["proposals"]
    assert _answer(root, capsys) == first and checked == [1]  # (served: nothing checked)
    # another question is another answer, checked once and kept under its own key
    other = _answer(root, capsys, "--by-fact")
    assert other != first and checked == [1, 1]
    assert _answer(root, capsys, "--by-fact") == other and checked == [1, 1]
    assert _answer(root, capsys) == first and checked == [1, 1]


def _agent_commit(a: AgentCorpus) -> None:
    git(a.root, "checkout", "-q", BRANCH)
    a.c.fact("kb/gotchas/db/dddddddd.md", title="Backups take 3 hours")
    a.agent_commit("late", "learn: Backups take 3 hours", "learn")
    git(a.root, "checkout", "-q", "main")


def _curated_commit(a: AgentCorpus) -> None:
    a.c.fact("kb/gotchas/db/eeeeeeee.md", title="The curator adds a fact")
    git(a.root, "add", "-A")
    git(a.root, "commit", "-qm", "learn: the curator adds a fact", author="Ana",
        email="ana+learn@example.org")


def _decision(a: AgentCorpus) -> None:
    decide(a.root, "reject", "r-1", [a.shas["learn"]], ["kb/gotchas/db/66666666.md"])


def _edit(a: AgentCorpus) -> None:  # (uncommitted: a fact a proposal cites changes type)
    text = (a.root / "kb/gotchas/db/11111111.md").read_text("utf-8")
    (a.root / "kb/gotchas/db/11111111.md").write_text(
        text.replace("type: hypothesis", "type: observation"), "utf-8")


def _ontology(a: AgentCorpus) -> None:  # (uncommitted: the principles' rule goes)
    path = a.root / ".knomit" / "ontology.yaml"
    text = path.read_text("utf-8")
    path.write_text(text[:text.index("    validations:")], "utf-8")


def _remote_branch(a: AgentCorpus) -> None:
    head = git(a.root, "rev-parse", BRANCH).strip()
    git(a.root, "update-ref", "refs/remotes/origin/agent/elsewhere", head)


@pytest.mark.parametrize("move", [_agent_commit, _curated_commit, _decision, _edit, _ontology,
                                  _remote_branch])
def test_after_any_move_the_answer_is_the_one_without_a_cache(
        agents: AgentCorpus, capsys: pytest.CaptureFixture[str],
        move: Callable[[AgentCorpus], None]) -> None:
    root = agents.root
    before = _answer(root, capsys)
    assert _answer(root, capsys) == before  # (kept)
    move(agents)
    after = _answer(root, capsys)
    assert after == _fresh(root, capsys)
    assert after != before  # (each of these changes what the queue says)
