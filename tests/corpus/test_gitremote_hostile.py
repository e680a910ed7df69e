"""RELIABILITY K01 as amended, for fetch, push and sync: a hostile repository config (and a
hostile local remote) never gets a program of its own run; the user's config still works."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from factdesk.core import open_corpus
from factdesk.corpus import gitremote
from factdesk.corpus.gitrepo import GitError
from factdesk.curation import Curation
from factdesk.review.sync import sync
from tests.conftest import Corpus, git

A = "kb/gotchas/db/a1a1a1a1.md"


def _script(tmp_path: Path, marker: Path) -> Path:
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> '{marker}'\nexit 1\n")
    script.chmod(0o755)
    return script


def _plant(repo: Path, bare: Path, script: Path, marker: Path) -> None:
    cfg = lambda *kv: git(repo, "config", *kv)  # noqa: E731
    cfg("core.sshCommand", str(script))
    cfg("core.askPass", str(script))
    cfg("core.fsmonitor", str(script))
    cfg("credential.helper", str(script))
    cfg("credential.https://127.0.0.1.helper", str(script))
    cfg("protocol.allow", "always")
    cfg("protocol.ext.allow", "always")
    cfg(f"url.ext::sh -c touch% {marker}.insteadOf", "evil://")
    cfg("remote.evil.url", "evil://x/kb")
    cfg("remote.evil.fetch", "+refs/heads/*:refs/remotes/evil/*")
    cfg("remote.ext.url", f"ext::sh -c touch% {marker}")
    cfg("remote.ext.fetch", "+refs/heads/*:refs/remotes/ext/*")
    cfg("remote.opt.url", f"--upload-pack=touch {marker}")
    cfg("remote.sshy.url", "ssh://127.0.0.1:1/kb.git")
    cfg("remote.sshy.fetch", "+refs/heads/*:refs/remotes/sshy/*")
    cfg("remote.origin.uploadpack", str(script))
    cfg("remote.origin.receivepack", str(script))
    # a configured refspec that would overwrite our own branch
    cfg("--add", "remote.origin.fetch", "+refs/heads/main:refs/heads/main")
    # the remote on this machine: every hook it could run on a push or a fetch
    hooks = bare / "hooks"
    for hook in ("pre-receive", "update", "post-receive", "post-update", "reference-transaction",
                 "push-to-checkout", "proc-receive"):
        (hooks / hook).write_text(f"#!/bin/sh\nexec '{script}' </dev/null\n")
        (hooks / hook).chmod(0o755)
    git(bare, "config", "core.hooksPath", str(hooks))


@pytest.fixture
def hostile(corpus: Corpus, tmp_path: Path) -> tuple[Path, Path, Path]:
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(corpus.root), str(bare))
    ana = gitremote.clone(str(bare), tmp_path / "ana")
    git(ana, "config", "user.name", "ana")
    git(ana, "config", "user.email", "ana@example.org")
    marker = tmp_path / "pwned"
    _plant(ana, bare, _script(tmp_path, marker), marker)
    return ana, bare, marker


def test_the_plants_are_real(hostile: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """Control: plain git runs the planted programs (so the test below can fail)."""
    ana, _bare, marker = hostile
    copy = tmp_path / "copy"
    shutil.copytree(ana, copy)
    for remote in ("sshy", "evil"):
        subprocess.run(["git", "-C", str(copy), "fetch", remote], capture_output=True, check=False)
        assert list(tmp_path.glob("pwned*")), remote
        for found in tmp_path.glob("pwned*"):
            found.unlink()
    (copy / "kb" / "x.md").write_text("x\n")
    subprocess.run(["git", "-C", str(copy), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(copy), "commit", "-qm", "x"], check=True, capture_output=True)
    # (the repository's receivepack named the script; git's default runs the remote's hooks)
    subprocess.run(["git", "-C", str(copy), "-c", "remote.origin.receivepack=git-receive-pack",
                    "push", "-q", "origin", "main"], capture_output=True, check=False)
    assert marker.exists()


def test_no_program_named_by_a_repository_runs_on_fetch_push_or_sync(
        hostile: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ana, bare, marker = hostile
    for var in ("GIT_ASKPASS", "SSH_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND"):
        monkeypatch.delenv(var, raising=False)
    ix = open_corpus(ana)
    ix.update()
    Curation(ix).relabel([A], {"type": "insight"}, "an insight")
    done = sync(ana, remote="origin")
    assert done.pushed is not None and done.pushed.status == "pushed"
    assert git(bare, "rev-parse", "main") == git(ana, "rev-parse", "HEAD")
    # every remote: the hostile ones are refused or fail, as warnings; origin works
    everything = sync(ana)
    said = "\n".join(everything.warnings)
    for name in ("evil", "ext", "opt", "sshy"):
        assert f"could not fetch {name}" in said, said
    assert "insteadOf" in said  # evil:// leads to ext:: after the rewrite
    for name in ("evil", "ext", "opt"):
        with pytest.raises(GitError, match="refused"):
            gitremote.fetch(ana, name)
    with pytest.raises(GitError, match="refused"):
        gitremote.push(ana, "ext", "main")
    assert not list(tmp_path.glob("pwned*")), marker.read_text()
    # the configured refspec never wrote a local branch
    assert git(ana, "for-each-ref", "--format=%(refname)", "refs/heads/") == "refs/heads/main\n"


def test_the_users_own_ssh_command_is_used(hostile: tuple[Path, Path, Path], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """K01 as amended: the user's global config is theirs to trust (their ssh wrapper runs),
    the repository's core.sshCommand does not."""
    ana, _bare, marker = hostile
    mine = tmp_path / "mine.ran"
    wrapper = tmp_path / "my-ssh.sh"
    wrapper.write_text(f"#!/bin/sh\necho \"$*\" >> '{mine}'\nexit 1\n")
    wrapper.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.delenv("GIT_SSH_COMMAND", raising=False)
    subprocess.run(["git", "config", "--global", "core.sshCommand", str(wrapper)], check=True)
    with pytest.raises(GitError, match="git fetch sshy failed"):
        gitremote.fetch(ana, "sshy")
    assert mine.exists() and "127.0.0.1" in mine.read_text()
    assert not marker.exists()


def test_an_ssh_remotes_upload_and_receive_pack_are_gits_own(
        hostile: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25 #7: git takes the *first* `remote.<r>.uploadpack` (`receivepack`) it reads,
    so the override given with `-c` after the repository's value was ignored, and over ssh
    the user's account on the server ran the repository's command. The ssh program here is
    the user's own, noting the command it is asked to run on the server."""
    ana, _bare, marker = hostile
    git(ana, "config", "remote.sshy.uploadpack", f"touch {marker}-upload;")
    git(ana, "config", "remote.sshy.receivepack", f"touch {marker}-receive;")
    asked = tmp_path / "asked"
    wrapper = tmp_path / "ssh"
    wrapper.write_text(f"#!/bin/sh\necho \"$*\" >> '{asked}'\nexit 1\n")
    wrapper.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.delenv("GIT_SSH_COMMAND", raising=False)
    subprocess.run(["git", "config", "--global", "core.sshCommand", str(wrapper)], check=True)
    with pytest.raises(GitError, match="git fetch sshy failed"):
        gitremote.fetch(ana, "sshy")
    with pytest.raises(GitError, match="git push sshy failed"):
        gitremote.push(ana, "sshy", "main")
    said = asked.read_text()
    assert "git-upload-pack '/kb.git'" in said and "git-receive-pack '/kb.git'" in said, said
    assert "touch" not in said and not list(tmp_path.glob("pwned*"))


def test_a_remote_name_or_branch_that_reads_as_an_option_is_refused(
        hostile: tuple[Path, Path, Path]) -> None:
    ana, _bare, marker = hostile
    with pytest.raises(GitError, match="refused"):
        gitremote.remote_urls(ana, "--upload-pack=x")
    with pytest.raises(GitError, match="refused"):
        gitremote.push(ana, "origin", "--force")
    with pytest.raises(GitError, match="refused"):
        gitremote.push(ana, "origin", "main:refs/heads/x")
    assert not marker.exists()


def _pack_ref(bare: Path, name: str, sha: str) -> None:
    """A branch written straight into the remote's packed-refs: git on the remote serves
    it, though no file system here can hold its loose ref (a component over 255 bytes)."""
    git(bare, "pack-refs", "--all")
    packed = bare / "packed-refs"
    header, *refs = packed.read_text().splitlines(keepends=True)
    refs.append(f"{sha} refs/heads/{name}\n")
    packed.write_text(header + "".join(sorted(refs, key=lambda ln: ln.split(" ", 1)[1])))


def test_a_branch_name_git_cannot_fetch_is_skipped_with_a_warning(
        corpus: Corpus, tmp_path: Path) -> None:
    """Issue 22 #11: a 300-byte branch name on the remote used to stop every sync."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(corpus.root), str(bare))
    ana = gitremote.clone(str(bare), tmp_path / "ana")
    git(ana, "config", "user.name", "ana")
    git(ana, "config", "user.email", "ana@example.org")
    main = git(bare, "rev-parse", "main").strip()
    git(bare, "branch", "agent/ok-12345678", "main")
    long = "agent/" + "a" * 300
    _pack_ref(bare, long, main)
    assert long in git(bare, "for-each-ref", "--format=%(refname)")
    done = sync(ana)
    said = "\n".join(done.warnings)
    assert long in said and "skipped" in said, said
    assert git(ana, "rev-parse", "refs/remotes/origin/agent/ok-12345678").strip() == main
    assert done.pushed is not None
    (skipped,) = [s for f in done.fetched for s in f.skipped]
    assert skipped == long


@pytest.fixture
def deploying(corpus: Corpus, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A non-bare remote on this machine that updates its work tree on a push
    (`receive.denyCurrentBranch=updateInstead`) through a smudge filter of its own config;
    `ana` a clone of it."""
    hub = tmp_path / "hub"
    git(tmp_path, "clone", "-q", str(corpus.root), str(hub))
    marker = tmp_path / "smudged"
    git(hub, "config", "receive.denyCurrentBranch", "updateInstead")
    git(hub, "config", "filter.evil.smudge", f"sh -c 'touch {marker}; cat'")
    (hub / ".git" / "info").mkdir(exist_ok=True)
    (hub / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    ana = gitremote.clone(str(hub), tmp_path / "ana")
    git(ana, "config", "user.name", "ana")
    git(ana, "config", "user.email", "ana@example.org")
    assert not list(tmp_path.glob("smudged*"))
    return hub, ana, marker


def test_the_deploying_remotes_smudge_is_real(deploying: tuple[Path, Path, Path],
                                               tmp_path: Path) -> None:
    """Control: a plain `git push` to it runs the remote's smudge filter."""
    hub, ana, marker = deploying
    copy = tmp_path / "copy"
    shutil.copytree(ana, copy)
    (copy / A).write_text((copy / A).read_text() + "\nmore\n")
    git(copy, "commit", "-qam", "x", author="ana", email="ana@example.org")
    subprocess.run(["git", "-C", str(copy), "push", "-q", "origin", "main"], check=True,
                   capture_output=True)
    assert marker.exists()
    assert git(hub, "rev-parse", "HEAD") == git(copy, "rev-parse", "HEAD")


def test_sync_never_runs_a_deploying_remotes_smudge_filter(deploying: tuple[Path, Path, Path],
                                                           tmp_path: Path) -> None:
    """Issue 22 #12: the push runs receive-pack in the remote, which checks the pushed
    commit out into its work tree: with the remote's program keys overridden (K01)."""
    hub, ana, _marker = deploying
    ix = open_corpus(ana)
    ix.update()
    Curation(ix).relabel([A], {"type": "insight"}, "an insight")
    done = sync(ana)
    assert done.pushed is not None and done.pushed.status == "pushed", done
    assert not list(tmp_path.glob("smudged*"))
    # the remote's work tree was updated, as it asked (without its filter)
    assert git(hub, "rev-parse", "HEAD") == git(ana, "rev-parse", "HEAD")
    assert "type: insight" in (hub / A).read_text()
