"""Proposal checks kept by commit id (issue 23 #7: review at scale, `index.check_cache`): a
warm queue is checked from the cache, a new agent commit costs one check, and nothing the
cache holds is served once what the check read has changed — the curated branch, an
uncommitted edit of a cited fact, a decision on an earlier proposal, a rewritten branch.
Every answer equals the checks made with no cache at all; a damaged file is moved aside."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from factdesk.index import check_cache
from factdesk.index.indexer import Indexer
from factdesk.review import checks
from factdesk.review.model import Proposal
from factdesk.review.proposals import load_queue
from tests.conftest import Corpus, git
from tests.review.test_queue import BRANCH, AgentCorpus, build, decide

DISTILL_FACT = "kb/gotchas/db/77777777.md"
HYPOTHESIS_FACT = "kb/gotchas/db/11111111.md"


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The shas really checked (the real `_check` runs; it is only counted)."""
    done: list[str] = []
    real = checks._check

    def counting(env: checks._Env, queue: object, proposal: Proposal, *rest: object
                 ) -> Proposal:
        done.append(proposal.sha)
        return real(env, queue, proposal, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(checks, "_check", counting)
    return done


def _all(root: Path) -> dict[str, Proposal]:
    indexer = Indexer(root)
    indexer.update()
    return {p.sha: p for p in checks.check_all(indexer, load_queue(root))}


def _fresh(root: Path) -> dict[str, Proposal]:
    """The checks with no cache file at all (what a rebuild gives)."""
    path = check_cache.cache_path(root)
    for old in (path, *path.parent.glob(f"{path.name}-*")):
        old.unlink(missing_ok=True)
    return _all(root)


def _codes(p: Proposal) -> set[str]:
    return {x.code for f in p.facts for x in f.problems or ()}


@pytest.fixture
def agents(corpus: Corpus) -> Iterator[AgentCorpus]:
    yield build(corpus, curator_conflict=False)


def test_a_warm_queue_is_checked_from_the_cache_and_a_new_commit_is_read_as_new(
        agents: AgentCorpus, counted: list[str]) -> None:
    root = agents.root
    cold = _all(root)
    assert check_cache.cache_path(root).exists()
    assert sorted(counted) == sorted(cold)
    counted.clear()
    assert _all(root) == cold and counted == []  # (nothing changed: nothing checked)
    # a new agent commit at the branch's tip: that one is checked, the others are not
    git(root, "checkout", "-q", BRANCH)
    agents.c.write("kb/gotchas/db/cccccccc.md", "---\ntype: synthesis\norigin: distilled\n"
                   "confidence: 0.7\nsources: 1\nrefs: [kb/gotchas/db/11111111.md]\n---\n"
                   "# Seeded by a hypothesis\n\nBody with 1 number.\n")
    new = agents.agent_commit("new", "synthesize-review: distill kb/gotchas/db/cccccccc.md",
                              "subsume")
    git(root, "checkout", "-q", "main")
    counted.clear()
    grown = _all(root)
    assert counted == [new]
    assert "R1" in _codes(grown[new])
    assert {s: p for s, p in grown.items() if s != new} == cold
    assert grown == _fresh(root)


def test_a_change_of_what_a_check_read_is_never_served_from_the_cache(
        agents: AgentCorpus) -> None:
    root = agents.root
    distill = agents.shas["distill"]
    warm = _all(root)
    assert "R1" in _codes(warm[distill])  # (it cites the hypothesis)
    # an uncommitted edit of the cited fact: no longer a hypothesis, so no R1
    hypothesis = (root / HYPOTHESIS_FACT).read_text()
    (root / HYPOTHESIS_FACT).write_text(hypothesis.replace("type: hypothesis",
                                                           "type: observation"))
    edited = _all(root)
    assert "R1" not in _codes(edited[distill])
    # a second edit of the same file (the same dirty path): a hypothesis again
    (root / HYPOTHESIS_FACT).write_text(hypothesis.replace("# Pool", "# The pool"))
    again = _all(root)
    assert "R1" in _codes(again[distill])
    assert again == _fresh(root)
    git(root, "checkout", "-q", "--", HYPOTHESIS_FACT)
    # the curated branch takes the fact the distill builds on: no longer a dependency
    _all(root)
    git(root, "checkout", "-q", agents.shas["learn"], "--", "kb/gotchas/db/66666666.md")
    git(root, "commit", "-qm", "take 66666666")
    taken = _all(root)
    assert taken[distill].facts[0].depends_on == ()
    assert taken == _fresh(root)


def test_a_decision_on_an_earlier_proposal_rechecks_the_later_ones(
        agents: AgentCorpus) -> None:
    root = agents.root
    distill = agents.shas["distill"]
    assert _all(root)[distill].facts[0].depends_on == (agents.shas["learn"],)
    decide(root, "reject", "0123456789abcdef", [agents.shas["learn"]])
    after = _all(root)
    assert after[distill].facts[0].depends_on == ()  # (a rejected version is no dependency)
    assert after == _fresh(root)


def test_a_rewritten_branch_is_never_served_from_the_cache(agents: AgentCorpus) -> None:
    root = agents.root
    before = _all(root)
    # the branch rewritten from the distill on: the distill no longer cites the hypothesis
    git(root, "checkout", "-q", BRANCH)
    git(root, "reset", "-q", "--hard", f"{agents.shas['distill']}~1")
    agents.c.write(DISTILL_FACT, "---\ntype: synthesis\norigin: distilled\nconfidence: 0.7\n"
                   "sources: 1\nrefs: [kb/gotchas/db/66666666.md]\n---\n# Lag compounds\n\n"
                   "Body with 2 numbers.\n")
    rewritten = agents.agent_commit("distill2", "synthesize-review: distill again", "subsume")
    git(root, "checkout", "-q", "main")
    after = _all(root)
    assert agents.shas["distill"] not in after and rewritten in after
    assert "R1" in _codes(before[agents.shas["distill"]])
    assert "R1" not in _codes(after[rewritten])
    assert after == _fresh(root)


def test_a_damaged_cache_is_moved_aside_and_rebuilt(agents: AgentCorpus,
                                                    counted: list[str]) -> None:
    root = agents.root
    good = _all(root)
    path = check_cache.cache_path(root)
    path.write_bytes(b"not a database" * 100)
    counted.clear()
    assert _all(root) == good
    assert sorted(counted) == sorted(good)  # (checked again, none served from the garbage)
    assert list(path.parent.glob(f"{path.name}.corrupt-*"))
    # a damaged row: read as missing, checked again
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE checked SET value = '{not json'")
    counted.clear()
    assert _all(root) == good and sorted(counted) == sorted(good)


def test_the_same_commit_in_a_queue_without_its_dependency_is_checked_again(
        agents: AgentCorpus) -> None:
    """The branch's earlier open proposals are part of the key: a queue that leaves one out
    (as `proposals --status` and `--branch` pass the checks a part of it) is another input."""
    from dataclasses import replace

    root = agents.root
    distill, learn = agents.shas["distill"], agents.shas["learn"]
    indexer = Indexer(root)
    indexer.update()
    queue = load_queue(root)
    whole = {p.sha: p for p in checks.check_all(indexer, queue)}
    assert whole[distill].facts[0].depends_on == (learn,)
    part = replace(queue, proposals=tuple(p for p in queue.proposals if p.sha != learn))
    without = {p.sha: p for p in checks.check_all(indexer, part)}
    assert without[distill].facts[0].depends_on == ()
    assert {x.code for x in without[distill].facts[0].problems or ()} != \
        {x.code for x in whole[distill].facts[0].problems or ()}
    assert {p.sha: p for p in checks.check_all(indexer, queue)} == whole
    assert checks.check_proposal(indexer, part, distill) == without[distill]
