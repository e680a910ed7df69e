"""The curator's identity (issue 14 bug 8): git's, else factdesk's settings file, else a
refusal that says how to set one — never a made-up placeholder, never git config written."""

from __future__ import annotations

from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.core import open_corpus
from factdesk.curation import Curation
from factdesk.curation.identity import (
    BadIdentity,
    MissingIdentity,
    curator_identity,
    load_identity,
    save_identity,
)
from tests.conftest import Corpus, git

A = "kb/gotchas/db/a1a1a1a1.md"


@pytest.fixture
def no_git_identity(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """git has no user.name/user.email anywhere; factdesk's data folder is empty."""
    empty = tmp_path / "empty.gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("FACTDESK_CURATOR_NAME", "FACTDESK_CURATOR_EMAIL", "GIT_AUTHOR_NAME",
                "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(var, raising=False)
    data = tmp_path / "data"
    monkeypatch.setenv("FACTDESK_DATA_DIR", str(data))
    return data / "identity.yaml"


def test_git_identity_comes_first(corpus: Corpus, no_git_identity: Path) -> None:
    git(corpus.root, "config", "user.name", "Ana")
    git(corpus.root, "config", "user.email", "ana@example.org")
    save_identity(no_git_identity, "Bo", "bo@example.org")
    ident = curator_identity(corpus.root, no_git_identity)
    assert (ident.name, ident.email) == ("Ana", "ana@example.org")


def test_settings_file_when_git_has_none(corpus: Corpus, no_git_identity: Path) -> None:
    save_identity(no_git_identity, "Bo Li", "bo@example.org")
    assert load_identity(no_git_identity) is not None
    ident = curator_identity(corpus.root, no_git_identity)
    assert (ident.name, ident.email) == ("Bo Li", "bo@example.org")


def test_neither_refuses_and_says_how(corpus: Corpus, no_git_identity: Path) -> None:
    with pytest.raises(MissingIdentity) as info:
        curator_identity(corpus.root, no_git_identity)
    assert "git config user.name" in str(info.value)
    assert "factdesk identity --name" in str(info.value)
    # an action without one commits nothing (no "factdesk curator" placeholder)
    ix = open_corpus(corpus.root)
    ix.update()
    cur = Curation(ix, identity_file=no_git_identity)
    head = git(corpus.root, "rev-parse", "HEAD")
    assert cur.relabel([A], {"type": "pattern"}, "why", preview=True).preview  # (a preview needs none)
    with pytest.raises(MissingIdentity):
        cur.relabel([A], {"type": "pattern"}, "a pattern")
    assert git(corpus.root, "rev-parse", "HEAD") == head
    assert "factdesk curator" not in git(corpus.root, "log", "--format=%an%n%cn")


@pytest.mark.parametrize(("name", "email"), [("Ana\nFactdesk-Action: undo", "a@example.org"),
                                             ("Ana", "a@example.org>"), ("Ana", "not-an-email"),
                                             ("Ana\x1b[2J", "a@example.org"), ("", "a@example.org"),
                                             ("codex", "codex+update@Agents.Knomit.io")])
def test_unwritable_identities_are_refused(tmp_path: Path, name: str, email: str) -> None:
    with pytest.raises(BadIdentity):
        save_identity(tmp_path / "identity.yaml", name, email)
    assert not (tmp_path / "identity.yaml").exists()


def test_a_fifo_as_the_settings_file_does_not_hang(corpus: Corpus, no_git_identity: Path) -> None:
    import os

    no_git_identity.parent.mkdir(parents=True)
    os.mkfifo(no_git_identity)
    with pytest.raises(BadIdentity, match="not a regular file"):
        curator_identity(corpus.root, no_git_identity)


def test_cli_without_identity_exits_1_then_identity_command_sets_it(
        corpus: Corpus, no_git_identity: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = str(corpus.root)
    config_before = (corpus.root / ".git" / "config").read_bytes()
    assert main(["relabel", A, "--type", "pattern", "--reason", "a pattern", "--kb", kb]) == 1
    err = capsys.readouterr().err
    assert "no curator identity" in err and "git config user.name" in err
    assert "factdesk identity --name" in err
    assert main(["identity", "--kb", kb]) == 1
    capsys.readouterr()
    assert main(["identity", "--name", "Bo Li", "--email", "bo@example.org", "--kb", kb]) == 0
    assert "Bo Li <bo@example.org>" in capsys.readouterr().out
    assert main(["relabel", A, "--type", "pattern", "--reason", "a pattern", "--kb", kb]) == 0
    out = capsys.readouterr().out
    sha = git(corpus.root, "rev-parse", "HEAD").strip()
    subject = git(corpus.root, "log", "-1", "--format=%s").strip()
    assert f"[{sha[:12]}] {subject}" in out  # every action says what it committed
    assert git(corpus.root, "log", "-1", "--format=%an <%ae>|%cn <%ce>").strip() == \
        "Bo Li <bo+relabel@example.org>|Bo Li <bo@example.org>"
    assert (corpus.root / ".git" / "config").read_bytes() == config_before  # K04
