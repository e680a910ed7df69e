"""Open and rejected proposals per agent (issue 16), joined to the records in the views:
`factdesk agents --proposals` and the Agents tab's column (gui/agent_proposals.py)."""

from __future__ import annotations

import json

import pytest

from factdesk.cli import main
from factdesk.gui.agent_proposals import proposal_counts
from tests.conftest import Corpus, git


def _branch(corpus: Corpus, agent: str, n: int) -> None:
    git(corpus.root, "checkout", "-q", "-b", f"agent/{agent}")
    for i in range(n):
        corpus.fact(f"kb/gotchas/db/f{i}f{i}f{i}f{i}.md", title=f"Proposed {i}")
        corpus.commit(f"learn: proposed {i}", author=agent)
    git(corpus.root, "checkout", "-q", "main")


def test_open_proposals_are_counted_per_agent_and_only_on_request(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    _branch(corpus, "builder", 2)
    counts = proposal_counts(corpus.root)
    assert counts.open == {"builder": 2} and counts.rejected == {}
    capsys.readouterr()
    assert main(["agents", "--kb", str(corpus.root), "--format", "json"]) == 0
    plain = {a["id"]: a for a in json.loads(capsys.readouterr().out)["agents"]}
    assert "proposals" not in plain["builder"]  # (the contract's fields, unless asked)
    assert main(["agents", "--kb", str(corpus.root), "--format", "json", "--proposals"]) == 0
    data = {a["id"]: a for a in json.loads(capsys.readouterr().out)["agents"]}
    assert data["builder"]["proposals"] == 2 and data["builder"]["rejected_proposals"] == 0
    assert data["claude-code"]["proposals"] == 0
    assert main(["agents", "--kb", str(corpus.root), "--proposals"]) == 0
    assert "prop" in capsys.readouterr().out
