"""A sync killed (SIGKILL) in the middle of moving the branch: the next factdesk command
finishes it or rolls it back, never builds a commit of its own, and loses nothing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from factdesk import faults
from tests.conftest import git
from tests.review.test_sync import B, Team, fsck, parents, team, tip  # noqa: F401  (the fixture)
from tests.review.test_sync_cli import cli


@pytest.mark.parametrize("point", faults.SYNC_POINTS)
@pytest.mark.parametrize("kind", ["merge", "fast-forward"])
def test_a_killed_sync_is_finished_or_rolled_back(team: Team, point: str, kind: str) -> None:  # noqa: F811
    assert cli(team.ana, "relabel", "kb/gotchas/db/a1a1a1a1.md", "--type", "insight",
               "--reason", "ana").returncode == 0
    assert cli(team.ana, "sync").returncode == 0
    if kind == "merge":
        assert cli(team.bob, "relabel", B, "--type", "insight", "--reason", "bob").returncode == 0
    before = tip(team.bob)
    env = {**os.environ, faults.ENV: point, "FACTDESK_CURATOR_NAME": "bob",
           "FACTDESK_CURATOR_EMAIL": "bob@example.org"}
    killed = subprocess.run([sys.executable, "-m", "factdesk.cli", "sync", "--kb", str(team.bob)],
                            capture_output=True, text=True, env=env, timeout=180)
    assert killed.returncode == -9, killed.stderr
    moved = tip(team.bob) != before
    assert moved == (point == "sync.published")
    again = cli(team.bob, "sync")
    assert again.returncode == 0, again.stderr
    assert "recovered an interrupted action" in again.stderr
    assert git(team.bob, "status", "--porcelain") == ""
    assert tip(team.bob) == tip(team.bare, "main")
    assert (team.bob / "kb/gotchas/db/a1a1a1a1.md").read_bytes() == \
        (team.ana / "kb/gotchas/db/a1a1a1a1.md").read_bytes()
    if kind == "merge":
        assert parents(team.bob, "HEAD")[0] == before and len(parents(team.bob, "HEAD")) == 2
        assert "type: insight" in (team.bob / B).read_text()
    else:
        assert tip(team.bob) == tip(team.ana)
    # no commit of recovery's own: the history is ana's line (and bob's merge)
    authors = git(team.bob, "log", "--format=%ae", f"{before}..HEAD").split()
    assert all(a in ("ana+relabel@example.org", "bob+sync@example.org") for a in authors), authors
    fsck(team.bob)
