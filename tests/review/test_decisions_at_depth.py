"""Decisions deep in a long curated history (issue 23 #7): every trusted decision counts, however
many came after it — no depth cap — and the parsed-message cache that keeps that cheap
(`index.decision_log`) is rebuildable and never trusted over git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from factdesk.corpus import githistory
from factdesk.curation.trust import trusted_decisions
from factdesk.curation.undo import read_stacks
from factdesk.index import decision_log
from factdesk.review.proposals import load_queue
from tests.conftest import Corpus, git
from tests.review.decide_helpers import A, agent_commit, fact_text, review_of

#: more decisions than the old reader's cap (`-n2000`)
MANY = 2100


def add_decisions(repo: Path, n: int, *, start: int = 0, branch: str = "main") -> str:
    """`n` trusted `confirm` decisions (empty commits, as a curator's confirm of nothing
    changed would be) on `branch`, written in one `git fast-import`; the new tip."""
    tip = git(repo, "rev-parse", branch).strip()
    lines = []
    for i in range(start, start + n):
        msg = (f"confirm: fact {i}\n\nFactdesk-Action: confirm\n"
               f"Factdesk-Action-Id: {i + 1:016x}\n").encode()
        when = 1_700_000_000 + i
        lines += [f"commit refs/heads/{branch}".encode(),
                  f"author ana <ana+confirm@example.org> {when} +0000".encode(),
                  f"committer ana <ana@example.org> {when} +0000".encode(),
                  f"data {len(msg)}".encode(), msg]
        if i == start:
            lines.append(f"from {tip}".encode())
        lines.append(b"")
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], input=b"\n".join(lines),
                   check=True, capture_output=True)
    return git(repo, "rev-parse", branch).strip()


@pytest.fixture
def deep(corpus: Corpus) -> tuple[Corpus, str]:
    """A rejected proposal, then MANY decisions above the reject."""
    sha = agent_commit(corpus, "update: pool", {A: fact_text("Pool exhausts at 250 clients")},
                       op="update")
    review_of(corpus).reject([sha], "no load test backs 250")
    add_decisions(corpus.root, MANY)
    return corpus, sha


def test_a_decision_older_than_two_thousand_others_still_counts(deep: tuple[Corpus, str]) -> None:
    corpus, sha = deep
    found = trusted_decisions(corpus.root)
    assert len(found) == MANY + 1
    assert found[-1].action == "reject" and found[-1].values("Factdesk-Proposal") == [sha]
    queue = load_queue(corpus.root)
    (proposal,) = [p for p in queue.proposals if p.sha == sha]
    assert proposal.status == "rejected"  # (not reopened)
    undo, _redo = read_stacks(corpus.root)
    assert len(undo) == MANY + 1 and undo[0].action == "reject"


def test_the_cache_reads_only_new_commits_and_never_serves_a_rewritten_line(
        deep: tuple[Corpus, str], monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, _sha = deep
    repo = corpus.root
    cold = trusted_decisions(repo)
    assert decision_log.cache_path(repo).exists()
    read: list[int] = []
    real = githistory.decision_log

    def counting(*args: object, **kw: object) -> list[githistory.LoggedCommit]:
        out = real(*args, **kw)  # type: ignore[arg-type]
        read.append(len(out))
        return out

    monkeypatch.setattr(githistory, "decision_log", counting)
    assert trusted_decisions(repo) == cold and read == []  # (the same tip: no log read)
    add_decisions(repo, 3, start=MANY)
    grown = trusted_decisions(repo)
    assert len(grown) == MANY + 4 and grown[3:] == cold
    assert read == [3]  # only the new commits were read from git
    # a rewritten line: the newest 5 decisions dropped, 2 others in their place
    git(repo, "update-ref", "refs/heads/main", "HEAD~5")
    add_decisions(repo, 2, start=10_000)
    rewritten = trusted_decisions(repo)
    assert [d.action_id for d in rewritten[:2]] == [f"{10_002:016x}", f"{10_001:016x}"]
    assert rewritten[2:] == grown[5:]
    decision_log.cache_path(repo).unlink()
    assert trusted_decisions(repo) == rewritten  # == a rebuild from git alone


def test_a_replaced_parent_or_a_damaged_cache_is_read_from_git(deep: tuple[Corpus, str]) -> None:
    corpus, _sha = deep
    repo = corpus.root
    before = trusted_decisions(repo)
    # graft the tip onto its 10th ancestor: git now sees 9 decisions fewer on the line
    git(repo, "replace", "--graft", "HEAD", "HEAD~10")
    assert trusted_decisions(repo) == [before[0], *before[10:]]
    git(repo, "replace", "-d", git(repo, "rev-parse", "HEAD").strip())
    assert trusted_decisions(repo) == before
    path = decision_log.cache_path(repo)
    path.write_bytes(b"not a database" * 100)
    assert trusted_decisions(repo) == before
    assert list(path.parent.glob(f"{path.name}.corrupt-*"))
