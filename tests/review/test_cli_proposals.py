"""`factdesk proposals` and `factdesk proposals show` through the command line, on a real
git repository with an agent branch."""

from __future__ import annotations

import json

import pytest

from factdesk.cli import main
from tests.conftest import Corpus
from tests.review.test_queue import BRANCH, build, decide


def test_json_contract(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    a = build(corpus)
    assert main(["proposals", "--kb", str(a.root), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"branches", "proposals"} <= set(out)
    (branch,) = out["branches"]
    assert {"name", "agent", "ahead", "base"} <= set(branch)
    assert branch["name"] == BRANCH and branch["ahead"] == 9 and len(branch["base"]) == 40
    assert [p["id"] for p in out["proposals"]] == list(a.shas.values())
    for p in out["proposals"]:
        assert {"id", "branch", "subject", "op", "kind", "status", "overridden",
                "facts"} <= set(p)
        for f in p["facts"]:
            assert {"path", "change", "conflict", "problems"} <= set(f)
            assert f["change"] in ("added", "modified", "deleted")
            for x in f["problems"]:
                assert {"code", "severity", "message", "new"} <= set(x)
    by = {p["id"]: p for p in out["proposals"]}
    assert any(x["code"] == "R1" and x["new"] for x in by[a.shas["distill"]]["facts"][0]["problems"])
    assert by[a.shas["update"]]["facts"][0]["conflict"] is True
    assert by[a.shas["state"]]["facts"] == [] and by[a.shas["state"]]["other_files"]


def test_status_filter_and_text(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    a = build(corpus)
    decide(a.root, "reject", "b" * 16, [a.shas["discover"]])
    assert main(["proposals", "--kb", str(a.root), "--status", "rejected", "--format",
                 "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["id"] for p in out["proposals"]] == [a.shas["discover"]]
    assert out["proposals"][0]["status"] == "rejected"
    assert main(["proposals", "--kb", str(a.root)]) == 0
    text = capsys.readouterr().out
    assert f"{BRANCH}  agent devbox-1a2b3c4d: 9 commits ahead" in text
    assert "8 proposals open:" in text
    assert "error R1: synthesis cites hypothesis kb/gotchas/db/11111111.md" in text
    assert "CONFLICT" in text and ".knomit/jobs/crawl-state.md  (the agent's own state" in text
    assert a.shas["discover"][:12] not in text


def test_show(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    a = build(corpus)
    assert main(["proposals", "show", a.shas["update"][:8], "--kb", str(a.root)]) == 0
    text = capsys.readouterr().out
    assert "CONFLICT" in text and "+Agent's version: 40 s measured twice." in text
    assert main(["proposals", "show", a.shas["distill"], "--kb", str(a.root), "--format",
                 "json", "--no-similar"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["id"] == a.shas["distill"] and shown["diff"].startswith("(new:")
    assert shown["facts"][0]["depends_on"] == [a.shas["learn"]]
    assert shown["near_duplicates"] is None


def test_refusals_exit_1(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    a = build(corpus)
    assert main(["proposals", "show", "0000000", "--kb", str(a.root)]) == 1
    assert "no proposal has this id" in capsys.readouterr().err
    assert main(["proposals", "--kb", str(a.root), "--branch", "agent/nobody"]) == 1
    assert f"no agent branch named 'agent/nobody' (there are: {BRANCH})" in capsys.readouterr().err
