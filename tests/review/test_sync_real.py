"""Sync on the published corpus (../shared/corpora/agentic-engineering-kb.bundle; skipped when
absent): two curators behind a local bare remote accept, reject and undo proposals of
`agent/mindev.local-8ef0cd32` and sync; both end with the same main, the same statuses, and
`factdesk check` reads the result the same on both."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.core import open_corpus
from factdesk.corpus import gitremote
from factdesk.curation import Curation, Identity
from factdesk.review.decide import Review
from factdesk.review.proposals import load_queue
from factdesk.review.sync import sync
from tests.conftest import git
from tests.review.test_sync import fsck, tip

BRANCH = "agent/mindev.local-8ef0cd32"


def test_two_curators_review_and_sync_the_published_corpus(
        real_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(real_corpus), str(bare)], check=True)
    ana = gitremote.clone(bare.as_uri(), tmp_path / "ana")
    bob = gitremote.clone(str(bare), tmp_path / "bob")
    listed = git(ana, "rev-list", "--reverse", "--no-merges", f"main..origin/{BRANCH}").split()
    assert len(listed) == 104
    first, second = listed[0], listed[1]  # learn 3 facts; an update of one of them

    def review(repo: Path, name: str) -> Review:
        ix = open_corpus(repo)
        ix.update()
        return Review(ix, Identity(name, f"{name}@example.org"))

    review(ana, "ana").accept([first], "read from the primary PDF")
    assert sync(ana, curator=Identity("ana", "ana@example.org")).pushed.status == "pushed"  # type: ignore[union-attr]
    review(bob, "bob").reject([second], "the rewording loses the rule")
    done = sync(bob, curator=Identity("bob", "bob@example.org"))
    assert done.joined == "merged" and done.incoming >= 1
    assert sync(ana, curator=Identity("ana", "ana@example.org")).joined == "fast-forward"
    for repo in (ana, bob):
        status = {p.sha: p.status for p in load_queue(repo).proposals}
        assert status[first] == "accepted" and status[second] == "rejected"
    # ana undoes her accept (the newest decision on the shared line), and both sync again
    monkeypatch.setenv("FACTDESK_CURATOR_NAME", "ana")
    monkeypatch.setenv("FACTDESK_CURATOR_EMAIL", "ana@example.org")
    ix = open_corpus(ana)
    ix.update()
    Curation(ix).undo()
    sync(ana)
    sync(bob)
    assert tip(ana) == tip(bob) == tip(bare, "main")
    for repo in (ana, bob):
        status = {p.sha: p.status for p in load_queue(repo).proposals}
        assert status[first] == "open" and status[second] == "rejected"
        assert git(repo, "status", "--porcelain") == ""
        fsck(repo)
    found = []
    for repo in (ana, bob):
        capsys.readouterr()
        main(["check", "--kb", str(repo), "--format", "json"])
        found.append(json.loads(capsys.readouterr().out))
    assert found[0] == found[1] and found[0]["facts"] > 0
