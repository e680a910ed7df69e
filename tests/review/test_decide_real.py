"""Decisions on the published corpus (../shared/corpora/agentic-engineering-kb.bundle; skipped
when absent): accept and reject some of `agent/mindev.local-8ef0cd32`'s proposals, the
dependency rule on its chained updates, undo them, and `factdesk check` reads the result."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.core import open_corpus
from factdesk.curation import Identity, Refused
from factdesk.review.decide import Review
from tests.conftest import git

BRANCH = "agent/mindev.local-8ef0cd32"


@pytest.fixture
def real(real_corpus: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "kb"
    subprocess.run(["git", "clone", "-q", str(real_corpus), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "branch", "-q", BRANCH, f"origin/{BRANCH}"], check=True)
    return dest


def commits(repo: Path) -> list[tuple[str, str, list[str]]]:
    """(sha, subject, files) of each agent commit, oldest first."""
    out = []
    for sha in git(repo, "rev-list", "--reverse", "--no-merges", f"main..{BRANCH}").split():
        files = git(repo, "diff-tree", "--no-commit-id", "-r", "--name-only", sha).split()
        out.append((sha, git(repo, "log", "-1", "--format=%s", sha).strip(), files))
    return out


def test_accept_reject_undo_on_the_published_corpus(real: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    listed = commits(real)
    assert len(listed) == 104
    first, second = listed[0], listed[1]  # learn 3 facts; update one of them (chained)
    assert set(second[2]) <= set(first[2])
    ix = open_corpus(real)
    ix.update()
    review = Review(ix, Identity("ana", "ana@example.org"))
    head0 = git(real, "rev-parse", "HEAD").strip()
    with pytest.raises(Refused) as err:
        review.accept([second[0][:10]], "the update")
    assert err.value.rule == "depends" and f"accept {first[0][:12]} first" in str(err.value)
    accepted = review.accept([first[0][:10]], "read from the primary PDF")
    assert git(real, "log", "-1", "--format=%an|%ce", accepted.commit or "").strip() == \
        "mindev.local-8ef0cd32|ana@example.org"
    for path in first[2]:
        assert (real / path).read_bytes() == git(real, "show", f"{first[0]}:{path}").encode()
    rejected = review.reject([second[0][:10]], "the rewording loses the rule")
    assert rejected.commit and git(real, "status", "--porcelain") == ""
    monkeypatch.setenv("FACTDESK_CURATOR_NAME", "ana")
    monkeypatch.setenv("FACTDESK_CURATOR_EMAIL", "ana@example.org")
    capsys.readouterr()
    main(["check", "--kb", str(real), "--format", "json"])  # reads the result (exit: its errors)
    assert '"facts"' in capsys.readouterr().out
    review.curation.undo()
    review.curation.undo()
    assert all(not (real / p).exists() for p in first[2])
    assert git(real, "diff", "--stat", head0, "HEAD").strip() == ""  # back where it was
    assert review.decided().of(first[0], first[2][0]) is None  # reopened
    fsck = subprocess.run(["git", "-C", str(real), "fsck", "--no-dangling"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr


def test_the_clean_ones_in_one_commit_then_the_review_merge(real: Path) -> None:
    ix = open_corpus(real)
    ix.update()
    review = Review(ix, Identity("ana", "ana@example.org"))
    cs = review.accept_all_clean(BRANCH, "the clean batch")
    assert cs.commit and git(real, "status", "--porcelain") == ""
    open_after = [a for a in (review.proposal(s) for s, _subj, _f in commits(real))
                  if review.decided().is_open(a) and a.facts]
    # the syntheses that break the principles' ontology rules stay open (not clean)
    assert open_after
    review.reject([a.sha for a in open_after], "break the principles' rules")
    head = git(real, "log", "-1", "--format=%P|%s", "HEAD").strip()
    parents, subject = head.split("|")
    assert len(parents.split()) == 2 and subject.startswith(f"merge: {BRANCH} into main")
    assert git(real, "rev-list", "--count", f"HEAD..{BRANCH}").strip() == "0"
    assert (real / ".knomit/jobs").is_dir()  # the agent's job state came over
