"""`factdesk sync` through the command line, in a real process per curator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import git
from tests.review.test_sync import A, B, Team, team, tip  # noqa: F401  (the fixture)


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FACTDESK_CURATOR_NAME": repo.name,
           "FACTDESK_CURATOR_EMAIL": f"{repo.name}@example.org"}
    return subprocess.run([sys.executable, "-m", "factdesk.cli", *args, "--kb", str(repo)],
                          capture_output=True, text=True, env=env, timeout=180)


def test_sync_on_the_command_line(team: Team, tmp_path: Path) -> None:  # noqa: F811
    assert cli(team.ana, "relabel", A, "--type", "insight", "--reason", "ana").returncode == 0
    assert cli(team.bob, "relabel", B, "--type", "insight", "--reason", "bob").returncode == 0
    agent = tmp_path / "agent"
    git(tmp_path, "clone", "-q", str(team.bare), str(agent))
    git(agent, "checkout", "-q", "-b", "agent/box-0123abcd")
    (agent / "kb" / "x.md").write_text("---\ntype: fact\n---\n# x\n")
    git(agent, "add", "-A")
    git(agent, "commit", "-qm", "learn: x")
    git(agent, "push", "-q", "origin", "agent/box-0123abcd")

    first = cli(team.ana, "sync")
    assert first.returncode == 0, first.stderr
    assert "fetched origin: 1 new agent branch" in first.stdout
    assert "pushed main to origin" in first.stdout
    assert "fetch origin" in first.stderr  # progress on stderr
    second = cli(team.bob, "sync", "--remote", "origin", "--format", "json")
    assert second.returncode == 0, second.stderr
    out = json.loads(second.stdout)
    assert out["joined"] == "merged" and out["incoming"] == 1 and out["pushed"]["status"] == "pushed"
    assert out["merge"] == tip(team.bob)
    third = cli(team.ana, "sync")
    assert "fast-forwarded to origin/main (2 commits arrived)" in third.stdout
    assert tip(team.ana) == tip(team.bob) == tip(team.bare, "main")


def test_a_conflict_exits_1_naming_the_fact(team: Team) -> None:  # noqa: F811
    assert cli(team.ana, "relabel", A, "--type", "insight", "--reason", "ana").returncode == 0
    assert cli(team.bob, "relabel", A, "--type", "reference", "--reason", "bob").returncode == 0
    assert cli(team.ana, "sync").returncode == 0
    before = tip(team.bob)
    done = cli(team.bob, "sync")
    assert done.returncode == 1
    assert A in done.stderr and "nothing was merged" in done.stderr
    assert tip(team.ana)[:12] in done.stderr and before[:12] in done.stderr
    assert tip(team.bob) == before
    as_json = cli(team.bob, "sync", "--format", "json")
    assert as_json.returncode == 1
    assert [f["path"] for f in json.loads(as_json.stdout)["conflict"]["facts"]] == [A]


def test_an_unknown_remote_is_refused(team: Team) -> None:  # noqa: F811
    done = cli(team.ana, "sync", "--remote", "nope")
    assert done.returncode == 1 and "no remote named 'nope'" in done.stderr
