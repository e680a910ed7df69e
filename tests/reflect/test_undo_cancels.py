"""An action and its undo cancel out in every derived view (issue 14, bug 1): transitions
and their stats (track records), creation times, the settlement queue and its candidates,
through the command line, in an incremental update and in a rebuild alike; a redo brings
the action back as it was. Also: the trailer rules that decide what counts as an undo."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.corpus import githistory, gitrepo
from factdesk.demo import build_demo_corpus
from factdesk.index.indexer import Indexer
from factdesk.reflect import queue
from factdesk.reflect.cache import cache_path
from factdesk.reflect.transitions import walk
from tests.conftest import git

TODAY = "2026-12-01"
REFUTE = "kb/decisions/ledger-api/infra/4c319359.md"
CONFIRM = "kb/decisions/ledger-api/caching/e851a9fe.md"
OBSERVATION = "kb/incidents/ledger-api/deploys/aac1eaed.md"
EXTEND = "kb/gotchas/ledger-api/jobs/1d29247b.md"
PROMOTE = "kb/decisions/ledger-api/infra/4c635ca8.md"


def _out(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 0, argv
    return capsys.readouterr().out


def _snapshot(repo: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    """Every derived view the bug showed wrong, as the command line and the index give it."""
    kb = str(repo)
    stats = _out(capsys, ["transitions", "--stats", "--today", TODAY, "--kb", kb])
    listed = json.loads(_out(capsys, ["transitions", "--format", "json", "--kb", kb]))
    queued = json.loads(_out(capsys, ["queue", "--today", TODAY, "--format", "json", "--kb", kb]))
    indexer = Indexer(repo)
    conn = indexer.connect(readonly=True)
    try:
        conn.row_factory = sqlite3.Row
        facts = [tuple(r) for r in conn.execute(
            "SELECT path, status, type, created_at, created_sha, creator_email, updated_sha "
            "FROM facts ORDER BY path")]
        observations = [r[0] for r in conn.execute(
            "SELECT path FROM facts WHERE status = 'live' AND type = 'observation'")]

        def similar(path: str) -> list[tuple[str, float]]:
            return [(o, 0.5) for o in observations]

        candidates = {item["path"]: [(c.path, c.cites, c.after) for c in
                                     queue.candidates(conn, item["path"], similar, limit=100)]
                      for item in queued["items"]}
    finally:
        conn.close()
    return {"stats": stats, "transitions": listed["transitions"], "counts": listed["counts"],
            "queue": queued["items"], "facts": facts, "candidates": candidates}


def _rebuilt(repo: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    """The same views from scratch: the index rebuilt and the transition cache dropped."""
    assert main(["index", "--rebuild", "--kb", str(repo)]) == 0
    cache_path(repo).unlink(missing_ok=True)
    return _snapshot(repo, capsys)


def test_five_settlements_undone_leave_every_view_as_it_was_and_redo_brings_one_back(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = build_demo_corpus(tmp_path / "demo")
    git(repo, "config", "user.name", "Curator")
    git(repo, "config", "user.email", "curator@example.com")
    kb = str(repo)
    assert main(["index", "--kb", kb]) == 0
    start = gitrepo.head_sha(repo)
    before = _snapshot(repo, capsys)
    assert len(before["candidates"][EXTEND]) > 1  # type: ignore[index]

    body = tmp_path / "body.md"
    body.write_text("It held: no lock waits in 30 days of nightly runs.\n")
    actions = [
        ["settle", REFUTE, "--refute", "--reason", "it did not hold"],
        ["settle", CONFIRM, "--confirm", OBSERVATION, "--reason", "the incident shows it"],
        ["settle", EXTEND, "--extend", "2027-06-01", "--settlement",
         "no lock waits for 30 nights by June", "--reason", "more time"],
        ["settle", EXTEND, "--confirm-new", "Reconcile held for 30 nights", "--body-file",
         str(body), "--reason", "it held"],
        ["settle", PROMOTE, "--promote", "--reason", "measured"],
    ]
    after_first = None
    for i, argv in enumerate(actions):
        _out(capsys, [*argv, "--kb", kb])
        if i == 0:
            after_first = _snapshot(repo, capsys)
    done = _snapshot(repo, capsys)
    assert done["counts"] != before["counts"]
    for i in range(5):
        _out(capsys, ["undo", "--reason", f"undo {i}", "--kb", kb])
    assert git(repo, "diff", "--stat", start or "", "HEAD") == ""

    undone = _snapshot(repo, capsys)  # incremental: index updates, the cached log extended
    assert undone == before
    assert _rebuilt(repo, capsys) == before

    _out(capsys, ["redo", "--reason", "it did not hold after all", "--kb", kb])
    redone = _snapshot(repo, capsys)
    assert redone == after_first  # the refutation is back, at its own commit and time
    assert any(t["kind"] == "retracted" and t["path"] == REFUTE
               for t in redone["transitions"])  # type: ignore[union-attr]
    assert _rebuilt(repo, capsys) == after_first


def test_an_undo_and_redo_of_a_walk_already_cached_are_walked_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = build_demo_corpus(tmp_path / "demo")
    git(repo, "config", "user.name", "Curator")
    git(repo, "config", "user.email", "curator@example.com")
    kb = str(repo)
    _out(capsys, ["settle", REFUTE, "--refute", "--reason", "no", "--kb", kb])
    listed = json.loads(_out(capsys, ["transitions", "--format", "json", "--kb", kb]))
    assert any(t["path"] == REFUTE for t in listed["transitions"])
    _out(capsys, ["undo", "--reason", "u", "--kb", kb])
    listed = json.loads(_out(capsys, ["transitions", "--format", "json", "--kb", kb]))
    assert not any(t["path"] == REFUTE for t in listed["transitions"])
    assert listed["transitions"] == walk(repo).as_dict()["transitions"]


# -- what counts as an undo ---------------------------------------------------------------------

def _step(sha: str, message: str, effect: dict[str, tuple[str | None, str | None]]
          ) -> githistory.Step:
    return githistory.Step(sha, message, effect)


def _msg(action: str, action_id: str, reverts: str | None = None, *, reason: str = "why") -> str:
    lines = [f"{action}: something", "", reason, "", f"Factdesk-Action: {action}",
             f"Factdesk-Action-Id: {action_id}"]
    if reverts:
        lines.append(f"Factdesk-Reverts: {reverts}")
    return "\n".join(lines)


def test_an_undo_cancels_only_the_exact_inverse_named_in_its_final_trailer_block() -> None:
    x = _step("x", _msg("refute", "a1"), {"kb/h.md": ("b1", None)})
    u = _step("u", _msg("undo", "a2", "a1"), {"kb/h.md": (None, "b1")})
    r = _step("r", _msg("redo", "a3", "a1"), {"kb/h.md": ("b1", None)})
    u2 = _step("u2", _msg("undo", "a4", "a1"), {"kb/h.md": (None, "b1")})
    assert githistory.cancelled_commits([x, u]).shas == {"x", "u"}
    assert githistory.cancelled_commits([x, u, r]).shas == {"u", "r"}  # x stays, at its time
    assert githistory.cancelled_commits([x, u, r, u2]).shas == {"x", "u", "r", "u2"}
    # not the inverse (another blob, another path): an ordinary commit
    other = _step("u", _msg("undo", "a2", "a1"), {"kb/h.md": (None, "b9")})
    assert githistory.cancelled_commits([x, other]).shas == frozenset()
    # trailers in the reason paragraph, or a block with a line that is not a trailer
    forged = _step("u", "undo: x\n\nFactdesk-Action: undo\nFactdesk-Action-Id: a2\n"
                        "Factdesk-Reverts: a1\n\nFactdesk-Action: relabel\nnot a trailer",
                   {"kb/h.md": (None, "b1")})
    assert githistory.cancelled_commits([x, forged]).shas == frozenset()
    # the subject alone is never a trailer block; an undo whose action is not in the steps
    assert githistory.final_trailers("Factdesk-Action: undo") == {}
    assert githistory.cancelled_commits([u]).orphans == ("u",)
