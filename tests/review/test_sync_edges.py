"""Sync's edges (issue 22, minor): an unborn branch, a differently named unborn branch, an
upstream that was force-rewritten — each said in true words."""

from __future__ import annotations

from pathlib import Path

import pytest

from factdesk.curation import Refused
from factdesk.review.sync import sync
from tests.conftest import git
from tests.review.test_sync import A, Team, team, tip  # noqa: F401  (the fixture)
from tests.review.test_sync_cli import cli


def _fresh(tmp_path: Path, bare: Path, branch: str) -> Path:
    repo = tmp_path / f"fresh-{branch}"
    tmp_path.mkdir(parents=True, exist_ok=True)
    git(tmp_path, "init", "-q", "-b", branch, str(repo))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "config", "user.name", "cy")
    git(repo, "config", "user.email", "cy@example.org")
    return repo


def test_an_unborn_branch_starts_from_the_remotes(team: Team, tmp_path: Path) -> None:  # noqa: F811
    repo = _fresh(tmp_path, team.bare, "main")
    commits = int(git(team.bare, "rev-list", "--count", "main").strip())
    done = sync(repo)
    assert done.joined == "started" and done.incoming == commits
    assert tip(repo) == tip(team.bare, "main") and (repo / A).exists()
    said = cli(_fresh(tmp_path / "again", team.bare, "main"), "sync")
    assert said.returncode == 0, said.stderr
    assert f"main: started from origin/main ({commits} commits)" in said.stdout
    assert "0 commits arrived" not in said.stdout


def test_a_differently_named_unborn_branch_is_refused_in_words(
        team: Team, tmp_path: Path) -> None:  # noqa: F811
    repo = _fresh(tmp_path, team.bare, "trunk")
    with pytest.raises(Refused, match="trunk has no commits yet and origin has no branch "
                                      r"named trunk \(it has: main\)"):
        sync(repo)
    said = cli(repo, "sync")
    assert said.returncode == 1
    assert "git checkout main" in said.stderr and "refspec" not in said.stderr
    assert "Traceback" not in said.stderr


def test_an_upstream_force_rewrite_is_mentioned(team: Team, tmp_path: Path) -> None:  # noqa: F811
    team.curation(team.ana).relabel([A], {"type": "insight"}, "ana's call")
    sync(team.ana)
    sync(team.bob)
    gone = tip(team.bob)
    # bob rewrites the shared main behind everyone's back: his own commit instead of ana's
    git(team.bob, "reset", "-q", "--hard", "HEAD~1")
    (team.bob / "README.md").write_text("# rewritten\n")
    git(team.bob, "commit", "-qam", "docs: rewritten", author="bob", email="bob@example.org")
    git(team.bob, "push", "-q", "--force", "origin", "main")
    done = sync(team.ana)
    said = "\n".join(done.warnings)
    assert "rewrote main" in said and gone[:12] in said, said
    assert "forced" in said
