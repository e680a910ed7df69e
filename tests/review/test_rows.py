"""`review.rows` (issue 24): the queue per commit and per fact, and each row's findings,
on a real repository with an agent branch; `factdesk proposals --findings/--by-fact`
answers from the same functions as the Proposals tab."""

from __future__ import annotations

import json

import pytest

from factdesk.cli import main
from factdesk.index.indexer import Indexer
from factdesk.review import rows
from factdesk.review.checks import check_all
from factdesk.review.clean import clean_set
from factdesk.review.proposals import load_queue
from tests.conftest import Corpus
from tests.review.test_queue import BRANCH, build


def _checked(root):  # type: ignore[no-untyped-def]
    indexer = Indexer(root)
    indexer.update()
    queue = load_queue(indexer.repo)
    checked = {p.sha: p for p in check_all(indexer, queue)}
    verdicts = {s: v for b in queue.branches for s, v in clean_set(queue, b.name, checked).verdicts.items()}
    return queue, checked, verdicts


def test_rows_per_commit_and_per_fact(corpus: Corpus) -> None:
    a = build(corpus)
    queue, checked, verdicts = _checked(a.root)
    shown = rows.shown(queue, None, checked)
    per_commit = rows.rows(queue, shown)
    assert [r.shas[0] for r in per_commit] == list(a.shas.values())
    per_fact = rows.rows(queue, shown, mode=rows.FACT)
    by_path = {r.path: r for r in per_fact}
    assert by_path["kb/decisions/api/c3c3c3c3.md"].change == "deleted"
    assert by_path["kb/gotchas/db/44444444.md"].shas == (a.shas["update2"],)
    assert rows.waiting(queue) == len(a.shas)
    by_sha = {p.sha: p for p in shown}
    found = {r.key: rows.findings(rows.row_facts(r, by_sha), rows.verdict_of(verdicts, r.shas))
             for r in per_commit}
    distill = found[("c", a.shas["distill"])]
    assert distill.errors and "R1" in distill.codes and distill.rank() == 0
    assert found[("c", a.shas["update"])].conflict
    assert not found[("c", a.shas["learn"])].problem
    errors = [r.shas[0] for r in per_commit if rows.matches(found[r.key], "error")]
    assert a.shas["distill"] in errors and a.shas["learn"] not in errors
    worst = rows.worst_first(per_commit, found)
    assert found[worst[0].key].errors and not found[worst[-1].key].problem


def test_cli_findings_and_by_fact(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    a = build(corpus)
    queue, checked, _verdicts = _checked(a.root)
    assert main(["proposals", "--kb", str(a.root), "--findings", "error", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ids = [p["id"] for p in out["proposals"]]
    assert a.shas["distill"] in ids and a.shas["learn"] not in ids
    assert all(p["findings"]["errors"] > 0 for p in out["proposals"])
    # the per-fact rows are the tab's: `review.rows.rows` in fact mode
    assert main(["proposals", "--kb", str(a.root), "--by-fact", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    shown = rows.shown(queue, None, checked)
    want = [(r.path, r.change, list(r.shas)) for r in rows.rows(queue, shown, mode=rows.FACT)]
    assert [(f["path"], f["change"], f["proposals"]) for f in out["facts"]] == want
    assert main(["proposals", "--kb", str(a.root), "--by-fact", "--findings", "conflict"]) == 0
    text = capsys.readouterr().out
    assert "kb/gotchas/db/b2b2b2b2.md" in text and "conflict" in text and BRANCH in text
    assert "kb/gotchas/db/66666666.md" not in text
