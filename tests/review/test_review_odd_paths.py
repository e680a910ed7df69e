"""Hostile entry names in a proposal's tree (issue 22, items 7 and 8): a path with `..`
segments and a file name that is not UTF-8. Neither blocks the branch: a reject records
it, an accept refuses it in words, the later proposals stay decidable, and the queue's
JSON stays valid UTF-8."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.curation import Refused
from factdesk.curation.gittree import tree_entries
from factdesk.review.proposals import load_queue
from tests.conftest import GIT_ENV, Corpus, git
from tests.review.decide_helpers import AGENT, BRANCH, N, fact_text, review_of


def _git(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_NAME": AGENT,
           "GIT_AUTHOR_EMAIL": f"{AGENT}+learn@agents.knomit.io", "GIT_COMMITTER_NAME": AGENT,
           "GIT_COMMITTER_EMAIL": f"{AGENT}@agents.knomit.io"}
    return subprocess.run(["git", "-C", str(repo), *args], input=input, capture_output=True,
                          env=env, check=True).stdout


def _tree_with(repo: Path, tree: str | None, parts: list[bytes], blob: str) -> str:
    """`tree` (None: an empty one) with the blob at `parts` (raw entry names)."""
    entries = {}
    if tree is not None:
        for e in _git(repo, "ls-tree", "-z", tree).split(b"\0"):
            if e:
                meta, name = e.split(b"\t", 1)
                entries[name] = meta
    if len(parts) == 1:
        entries[parts[0]] = b"100644 blob " + blob.encode()
    else:
        meta = entries.get(parts[0], b"")
        sub = meta.split()[2].decode() if meta.startswith(b"040000") else None
        entries[parts[0]] = b"040000 tree " + _tree_with(repo, sub, parts[1:], blob).encode()
    listing = b"".join(meta + b"\t" + name + b"\0" for name, meta in entries.items())
    return _git(repo, "mktree", "-z", input=listing).decode().strip()


def plumb_commit(corpus: Corpus, path: bytes, text: bytes, message: str) -> str:
    """An agent commit on BRANCH adding one file at the raw `path` — built with git's
    plumbing, so names git's own commands refuse to write (`..` entries, non-UTF-8) can
    be made."""
    repo = corpus.root
    exists = subprocess.run(["git", "-C", str(repo), "rev-parse", "-q", "--verify",
                             f"refs/heads/{BRANCH}"], capture_output=True).returncode == 0
    parent = git(repo, "rev-parse", BRANCH if exists else "main").strip()
    blob = _git(repo, "hash-object", "-w", "--stdin", input=text).decode().strip()
    tree = _tree_with(repo, f"{parent}^{{tree}}", path.split(b"/"), blob)
    commit = _git(repo, "commit-tree", tree, "-p", parent, "-m", message).decode().strip()
    git(repo, "update-ref", f"refs/heads/{BRANCH}", commit)
    return commit


def test_a_rejected_dotdot_entry_does_not_block_the_branch(corpus: Corpus) -> None:
    repo = corpus.root
    first = plumb_commit(corpus, b"kb/gotchas/db/abababab.md", fact_text("First").encode(),
                         "learn: first")
    evil = plumb_commit(corpus, b"x/../../../evil.md", b"evil\n", "learn: evil")
    later = plumb_commit(corpus, N.encode(), fact_text("Replica lag is 3 s").encode(), "learn: lag")
    review = review_of(corpus)
    with pytest.raises(Refused) as err:
        review.accept([evil], "no")
    assert "x/../../../evil.md" in str(err.value) and err.value.rule == "path"
    review.reject([evil], "a path outside the repository")
    review.accept([first], "ok")
    cs = review.accept([later], "ok")  # (the last decision: the merge follows)
    assert (repo / N).exists() and getattr(cs, "merges", ())
    assert not (repo.parent / "evil.md").exists() and not (repo / "evil.md").exists()
    assert git(repo, "status", "--porcelain") == ""
    assert {p.sha: p.status for p in load_queue(repo).proposals} == {
        first: "accepted", evil: "rejected", later: "accepted"}


def test_a_dotdot_fact_path_is_refused_and_rejected(corpus: Corpus) -> None:
    repo = corpus.root
    evil = plumb_commit(corpus, b"kb/gotchas/../../../evil.md", b"evil\n", "learn: evil fact")
    later = plumb_commit(corpus, N.encode(), fact_text("Replica lag is 3 s").encode(), "learn: lag")
    review = review_of(corpus)
    with pytest.raises(Refused):
        review.accept([evil], "no")
    review.accept_all_clean(BRANCH, "ok")  # (the open `..` one is never clean: left open)
    assert (repo / N).exists() and not (repo.parent / "evil.md").exists()
    cs = review.reject([evil], "no")
    assert getattr(cs, "merges", ())
    assert {p.sha: p.status for p in load_queue(repo).proposals} == {evil: "rejected",
                                                                      later: "accepted"}
    # the write path's tree reads take such a name as absent, never as a git failure
    assert set(tree_entries(repo, evil, ["kb/gotchas/../../../evil.md", N, "README.md"])) == {
        "README.md"}


NAME = b"kb/gotchas/db/caf\xe9.md"


def test_a_non_utf8_name_is_escaped_refused_in_words_and_rejectable(
        corpus: Corpus, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    repo = corpus.root
    monkeypatch.setenv("FACTDESK_CURATOR_NAME", "ana")
    monkeypatch.setenv("FACTDESK_CURATOR_EMAIL", "ana@example.org")
    odd = plumb_commit(corpus, NAME, fact_text("Cafe").encode(), "learn: cafe")
    later = plumb_commit(corpus, N.encode(), fact_text("Replica lag is 3 s").encode(), "learn: lag")
    capsys.readouterr()
    assert main(["proposals", "--kb", str(repo), "--format", "json"]) == 0
    out = capsys.readouterr().out
    out.encode("utf-8")  # (valid UTF-8: no lone surrogate)
    paths = [f["path"] for p in json.loads(out)["proposals"] for f in p["facts"]]
    assert "kb/gotchas/db/caf\\xe9.md" in paths
    assert main(["proposals", "--kb", str(repo)]) == 0
    assert "caf\\xe9.md" in capsys.readouterr().out
    for fmt in ("json", "text"):
        assert main(["proposals", "show", odd[:10], "--no-similar", "--format", fmt,
                     "--kb", str(repo)]) == 0
        shown = capsys.readouterr().out
        assert "caf\\xe9.md" in (json.loads(shown)["facts"][0]["path"] if fmt == "json" else shown)
    assert main(["accept", odd[:10], "--reason", "x", "--kb", str(repo)]) == 1
    err = capsys.readouterr().err
    assert "not UTF-8" in err and "Traceback" not in err
    assert main(["reject", odd[:10], "--reason", "not UTF-8", "--kb", str(repo)]) == 0
    assert main(["accept", later[:10], "--reason", "ok", "--kb", str(repo)]) == 0
    capsys.readouterr()
    assert {p.sha: p.status for p in load_queue(repo).proposals} == {odd: "rejected",
                                                                      later: "accepted"}
    assert git(repo, "log", "-1", "--format=%s").startswith("merge:")  # the branch is done
