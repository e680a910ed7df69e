"""gitremote.clone with real repositories: a local bare remote, progress, cancel, the URL
rules (RELIABILITY K01) and no program named by a repository's config."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from factdesk.corpus import gitremote
from factdesk.corpus.gitrepo import GitError
from tests.conftest import Corpus, git


def _bare(corpus: Corpus, tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(corpus.root), str(bare))
    return bare


def _marker_script(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "pwned"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> '{marker}'\nexit 1\n")
    script.chmod(0o755)
    return script, marker


@pytest.mark.parametrize("form", ["path", "file-url"])
def test_clone_a_local_bare_remote_with_progress(corpus: Corpus, tmp_path: Path, form: str) -> None:
    bare = _bare(corpus, tmp_path)
    url = str(bare) if form == "path" else bare.as_uri()
    seen: list[tuple[str, float]] = []
    dest = gitremote.clone(url, tmp_path / "mine", progress=lambda w, f: seen.append((w, f)))
    assert dest == tmp_path / "mine"
    assert (dest / "kb/gotchas/db/a1a1a1a1.md").read_bytes() == \
        (corpus.root / "kb/gotchas/db/a1a1a1a1.md").read_bytes()
    assert git(dest, "rev-parse", "HEAD") == git(corpus.root, "rev-parse", "HEAD")
    assert git(dest, "status", "--porcelain") == ""
    assert seen and seen[-1] == ("clone: done", 1.0)
    assert all(0.0 <= f <= 1.0 for _, f in seen)
    assert [f for _, f in seen] == sorted(f for _, f in seen)  # it only goes forward
    if form == "file-url":  # (a path clone copies objects without upload-pack's reports)
        assert any("receiving" in w for w, _ in seen)


def test_clone_into_an_empty_existing_folder_and_refuse_a_full_one(corpus: Corpus,
                                                                  tmp_path: Path) -> None:
    bare = _bare(corpus, tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert gitremote.clone(str(bare), empty) == empty
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    with pytest.raises(GitError, match="not an empty folder"):
        gitremote.clone(str(bare), full)
    assert (full / "keep.txt").read_text() == "mine"


def test_a_failed_clone_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="git clone failed"):
        gitremote.clone(str(tmp_path / "no-such-repo"), tmp_path / "dest")
    assert not (tmp_path / "dest").exists()


def test_cancel_kills_git_and_removes_the_partial_clone(corpus: Corpus, tmp_path: Path) -> None:
    """A remote big enough to take a while; cancel once git has reported progress."""
    big = tmp_path / "big"
    git(tmp_path, "init", "-q", "-b", "main", str(big))
    (big / "kb").mkdir()
    import os
    for i in range(300):
        (big / "kb" / f"f{i}.md").write_bytes(os.urandom(64 * 1024))  # incompressible
    git(big, "add", "-A")
    git(big, "commit", "-qm", "learn: big")
    bare = tmp_path / "big.git"
    git(tmp_path, "clone", "-q", "--bare", str(big), str(bare))
    started = threading.Event()
    dest = tmp_path / "partial"
    with pytest.raises(gitremote.CloneCancelled):
        gitremote.clone(bare.as_uri(), dest, progress=lambda w, f: started.set(),
                        cancelled=started.is_set)
    assert not dest.exists()
    # no git of ours is left running on that folder
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    assert str(dest) not in ps


@pytest.mark.parametrize("url", [
    "ext::sh -c touch% {marker}", "fd::3", "--upload-pack=touch {marker}", "-u",
    "http://example.com/kb.git", "git://example.com/kb.git", "hg::https://example.com/kb",
    "https://example.com/kb\n--upload-pack=x", ""])
def test_refused_urls_never_reach_git(url: str, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    with pytest.raises(GitError, match="refused remote URL"):
        gitremote.clone(url.format(marker=marker), tmp_path / "dest")
    assert not marker.exists() and not (tmp_path / "dest").exists()


def test_an_insteadof_rewrite_to_a_transport_helper_is_refused(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Even the user's own global config cannot turn a clone into `ext::` (checked after
    git's rewriting, and git itself runs with protocol.allow=never but https/ssh/file)."""
    marker = tmp_path / "pwned"
    cfg = tmp_path / "gitconfig"
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    subprocess.run(["git", "config", "--file", str(cfg), f"url.ext::sh -c touch% {marker}.insteadOf",
                    "https://evil.example/"], check=True)
    with pytest.raises(GitError, match="insteadOf"):
        gitremote.clone("https://evil.example/kb.git", tmp_path / "dest")
    assert not list(tmp_path.glob("pwned*"))  # (ext's command gets the rest of the URL)
    # the control: plain git does run it
    subprocess.run(["git", "-c", "protocol.ext.allow=always", "clone", "-q",
                    "https://evil.example/kb.git", str(tmp_path / "control")],
                   capture_output=True, check=False)
    assert list(tmp_path.glob("pwned*"))
