"""The review queue's reads at scale (issue 23 #7): what a load costs must not grow with
the square of the proposals (git's pathspec matching) nor read the work tree twice."""

from __future__ import annotations

import pytest

from factdesk.corpus import gitrepo
from factdesk.curation.gittree import tree_entries
from factdesk.index.indexer import Indexer
from factdesk.review import proposals
from factdesk.review.proposals import load_queue
from tests.conftest import Corpus
from tests.review.test_queue import build


def test_the_curated_versions_are_read_with_no_pathspec_per_proposed_path(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    a = build(corpus)
    argvs: list[tuple[str, ...]] = []
    real = gitrepo.git_proc

    def recording(repo: object, *args: str, **kw: object) -> object:
        argvs.append(args)
        return real(repo, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(gitrepo, "git_proc", recording)
    proposals._CACHE.clear()
    queue = load_queue(a.root)
    paths = {f.path for p in queue.proposals for f in p.facts}
    assert paths and queue.tip_blobs
    # (`ls-tree <tip> -- <every path>`: git matches each entry against every pathspec)
    assert not [args for args in argvs if paths & set(args)]
    want = {p: blob for p, (_mode, blob) in tree_entries(a.root, queue.tip, sorted(paths)).items()}
    assert queue.tip_blobs == want


def test_proposals_brings_the_index_up_to_date_once(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from factdesk.cli import main

    a = build(corpus)
    calls: list[int] = []
    real = Indexer.update

    def counting(self: Indexer, *args: object, **kw: object) -> object:
        calls.append(1)
        return real(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Indexer, "update", counting)
    assert main(["proposals", "--kb", str(a.root), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["proposals"] and "awaiting_attestation" in out
    assert len(calls) == 1  # (each update walks the work tree: 1.3 s at 100,000 facts)


def test_a_warm_load_reads_no_branch_from_git_and_a_moved_tip_is_read_again(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    """A branch's read (its range, merge base and diffs) is fixed by the two tips' ids: a
    new process answers it from `index.check_cache`; a new commit or a rewrite moves the
    tip, and that branch is read from git again (with what it now holds)."""
    from tests.conftest import git
    from tests.review.test_queue import BRANCH

    a = build(corpus)
    proposals._CACHE.clear()
    cold = load_queue(a.root)
    argvs: list[tuple[str, ...]] = []
    real = gitrepo.git_proc

    def recording(repo: object, *args: str, **kw: object) -> object:
        argvs.append(args)
        return real(repo, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(gitrepo, "git_proc", recording)
    proposals._CACHE.clear()
    assert load_queue(a.root) == cold
    # (no range log, merge base or tree diff: those are the branch reads)
    assert not [args for args in argvs if args[0] in ("merge-base", "diff")
                or "--topo-order" in args]
    # the branch rewritten: its last proposal dropped
    git(a.root, "update-ref", f"refs/heads/{BRANCH}", f"{BRANCH}~1")
    proposals._CACHE.clear()
    argvs.clear()
    shorter = load_queue(a.root)
    assert [p.sha for p in shorter.proposals] == [p.sha for p in cold.proposals][:-1]
    assert [args for args in argvs if args[0] == "merge-base"]


def test_the_curated_versions_are_kept_by_tip_and_a_new_tip_is_read_again(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import git

    a = build(corpus)
    proposals._CACHE.clear()
    cold = load_queue(a.root)
    inputs: list[bytes] = []
    real = gitrepo.git_proc

    def recording(repo: object, *args: str, **kw: object) -> object:
        inputs.append(kw.get("input") or b"")  # type: ignore[arg-type]
        return real(repo, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(gitrepo, "git_proc", recording)
    proposals._CACHE.clear()
    assert load_queue(a.root).tip_blobs == cold.tip_blobs
    tip = cold.tip
    assert inputs and not [x for x in inputs if f"{tip}:".encode() in x]
    # the curated branch deletes a proposed fact: the new tip's tree is read, not the kept one
    path = next(iter(cold.tip_blobs))
    git(a.root, "rm", "-q", path)
    git(a.root, "commit", "-qm", "drop it")
    proposals._CACHE.clear()
    after = load_queue(a.root)
    assert path not in after.tip_blobs and after.tip_blobs == {
        p: b for p, b in cold.tip_blobs.items() if p != path}
