"""A curator's confirmation with a new observation (issue 24 #3): the observation's
claimant is the curator as `user`; the confirming commit registers the curator as `user`
in `.factdesk/agents.yaml` when absent, so it brings no `[A1] claimant … is not in the
agent registry` and the Agents view lists one person once — on the demo corpus (which has
a registry), through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.corpus.registry_io import load_registry
from factdesk.demo import build_demo_corpus
from tests.conftest import git

HYP = "kb/decisions/ledger-api/caching/e851a9fe.md"
HYP2 = "kb/gotchas/ledger-api/jobs/1d29247b.md"


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> object:
    capsys.readouterr()
    main([*argv, "--format", "json"])
    return json.loads(capsys.readouterr().out)


def test_the_confirming_curator_is_registered_once_as_user(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = build_demo_corpus(tmp_path / "demo")
    git(repo, "config", "user.name", "Lee Curator")
    git(repo, "config", "user.email", "lee@example.org")
    kb = ["--kb", str(repo)]
    body = tmp_path / "body.md"
    body.write_text("Cache hit rate stayed at 97 % for 30 days.\n\nSeen on the dashboard.\n")
    assert load_registry(repo).agent_for_email("lee@example.org") is None
    done = _json(capsys, ["settle", HYP, "--confirm-new", "The cache held for 30 days",
                          "--body-file", str(body), "--reason", "measured", *kb])
    assert done["ok"], done  # type: ignore[index]
    changed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert ".factdesk/agents.yaml" in changed  # in the confirming commit itself
    new = next(p for p in changed if p.startswith("kb/") and p != HYP)
    agent = load_registry(repo).agent_for_email("lee@example.org")
    assert agent is not None and agent.type == "user" and agent.id == "lee"
    assert b"claimant_agent_id: lee" in (repo / new).read_bytes()
    checked = _json(capsys, ["check", *kb])
    found = [p for p in checked["errors"] + checked["warnings"] + checked.get("infos", [])  # type: ignore[index]
             if p["path"] == new]
    assert found == [], found
    # one person, one row: the commits' author and the observation's claimant are one id
    ids = [a["id"] for a in _json(capsys, ["agents", *kb])["agents"]]  # type: ignore[index]
    assert ids.count("lee") == 1 and "Lee Curator" not in ids
    # a second confirmation registers nobody again
    assert main(["settle", HYP2, "--confirm-new", "Reconcile held", "--new-body", "30 nights.",
                 "--reason", "measured", *kb]) == 0
    assert ".factdesk/agents.yaml" not in git(repo, "show", "--name-only", "--format=", "HEAD")
    # and an undo of the first takes the registration back with it
    assert main(["undo", "--reason", "oops", *kb]) == 0
    assert main(["undo", "--reason", "oops", *kb]) == 0
    assert load_registry(repo).agent_for_email("lee@example.org") is None
