"""corpus/gitclone.py: which URLs File ▸ Clone from URL… takes (said before git runs), the
folder a clone gets, and the clone through `gitremote.clone` (a local bare repository)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from factdesk.corpus import gitclone
from factdesk.corpus.gitclone import CloneCancelled, CloneRefused, check_url, clone, folder_name


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "kb" / "notes").mkdir(parents=True)
    _git(src, "init", "-q", "-b", "main")
    (src / "kb" / "notes" / "a1.md").write_text("---\ntype: observation\n---\n# A\n")
    _git(src, "add", "-A")
    _git(src, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "learn: A")
    dest = tmp_path / "remote" / "team-kb.git"
    dest.parent.mkdir()
    _git(tmp_path, "clone", "-q", "--bare", str(src), str(dest))
    return dest


@pytest.mark.parametrize("url", ["https://example.org/team/kb.git", "ssh://git@example.org/kb",
                                 "git@example.org:team/kb.git", "file:///srv/kb.git",
                                 "/srv/kb.git", "../kb", "  https://example.org/kb  "])
def test_these_urls_are_cloned(url: str) -> None:
    assert check_url(url) == url.strip()


@pytest.mark.parametrize(("url", "why"), [
    ("ext::sh -c touch% /tmp/factdesk-pwned", "ext:: URLs run a program"),
    ("fd::17", "fd:: URLs run a program"),
    ("-uhelp", "may not start with '-'"),
    ("--upload-pack=touch /tmp/x", "may not start with '-'"),
    ("http://example.org/kb", "http:// is not cloned"),
    ("git://example.org/kb", "git:// is not cloned"),
    ("https://example.org/kb\n", None),  # (stripped: a trailing newline is no control char)
    ("https://exa\x07mple.org", "control character"),
    ("", "no URL given"),
])
def test_these_are_refused_before_any_git_runs(url: str, why: str | None) -> None:
    if why is None:
        assert check_url(url) == url.strip()
        return
    with pytest.raises(CloneRefused, match=why.replace("(", r"\(")):
        check_url(url)


def test_the_folder_a_clone_gets() -> None:
    assert folder_name("git@example.org:team/kb.git") == "kb"
    assert folder_name("https://example.org/team/ledger-kb/") == "ledger-kb"
    assert folder_name("/srv/repos/agentic.git") == "agentic"
    assert folder_name("file:///") == "corpus"
    assert folder_name("https://example.org/a b&c") == "a-b-c"


def test_a_clone_of_a_local_bare_repository_reports_progress(bare: Path, tmp_path: Path) -> None:
    seen: list[tuple[str, float]] = []
    dest = clone(bare.as_uri(), tmp_path / "clones" / "kb", progress=lambda s, f: seen.append((s, f)))
    assert (dest / "kb" / "notes" / "a1.md").is_file()
    assert seen and all(0.0 <= f <= 1.0 for _s, f in seen)
    again = clone(str(bare), tmp_path / "clones" / "kb2")  # (a plain path)
    assert (again / ".git").is_dir()


def test_a_cancelled_clone_keeps_nothing(bare: Path, tmp_path: Path) -> None:
    dest = tmp_path / "clones" / "kb"
    with pytest.raises(CloneCancelled):
        clone(str(bare), dest, cancelled=lambda: True)
    assert not dest.exists()


def test_a_refused_url_never_reaches_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    called: list[object] = []
    monkeypatch.setattr(gitclone.gitremote, "clone", lambda *a, **k: called.append(a))
    with pytest.raises(CloneRefused):
        clone("ext::sh -c touch% " + str(tmp_path / "pwned"), tmp_path / "x")
    assert not called and not (tmp_path / "pwned").exists()
