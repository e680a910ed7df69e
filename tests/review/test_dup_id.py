"""Issue 22 #9: 8-hex names are not unique by design (FORMAT §1.4): a second fact with an
existing fact's 8-hex name is a `dup_id` warning in `check` and in the review, and
`show <8hex>` lists every match as ambiguous instead of finding none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from factdesk.review.checks import check_proposal
from factdesk.review.proposals import load_queue
from tests.conftest import Corpus
from tests.review.decide_helpers import agent_commit, fact_text, review_of

APP = Path(__file__).resolve().parents[2] / "app"
A = "kb/gotchas/db/a1a1a1a1.md"
TWIN = "kb/decisions/api/a1a1a1a1.md"


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(APP)}
    return subprocess.run([sys.executable, "-m", "factdesk.cli", *args, "--kb", str(repo)],
                          capture_output=True, text=True, env=env, timeout=120)


def test_a_proposal_reusing_an_8hex_name_gets_a_dup_id_warning(corpus: Corpus) -> None:
    sha = agent_commit(corpus, "learn: a twin", {TWIN: fact_text("Rate limits are per key")})
    review = review_of(corpus)
    checked = check_proposal(review.indexer, load_queue(corpus.root), sha)
    found = [p for f in checked.facts for p in f.problems or () if p.code == "dup_id"]
    assert found and found[0].severity == "warning" and A in found[0].message
    review.accept([sha], "a warning does not block")  # (it is accepted: warnings never block)


def test_check_warns_on_both_and_show_lists_every_match(corpus: Corpus) -> None:
    repo = corpus.root
    corpus.fact(TWIN, title="Rate limits are per key")
    corpus.commit("learn: a twin")
    out = json.loads(cli(repo, "check", "--format", "json").stdout)
    dups = {w["path"] for w in out["warnings"] if w["code"] == "dup_id"}
    assert dups == {A, TWIN}
    shown = cli(repo, "show", "a1a1a1a1")
    assert shown.returncode == 1
    assert "ambiguous" in shown.stderr and A in shown.stderr and TWIN in shown.stderr
    as_json = cli(repo, "show", "a1a1a1a1", "--format", "json")
    assert as_json.returncode == 1
    assert {m["path"] for m in json.loads(as_json.stdout)["ambiguous"]} == {A, TWIN}
    assert json.loads(cli(repo, "show", TWIN, "--format", "json").stdout)["path"] == TWIN
    one = json.loads(cli(repo, "show", A, "--format", "json").stdout)
    assert any(p["code"] == "dup_id" and TWIN in p["message"] for p in one["problems"])


def test_a_name_is_looked_up_through_an_index_not_by_reading_every_row(corpus: Corpus) -> None:
    """Issue 23 #7: a proposal's checks look up its facts' 8-hex names (twice a fact); a
    scan of every row for each was most of a queue's check time at 100,000 facts."""
    from factdesk.index import dup_ids
    from factdesk.index.indexer import Indexer

    corpus.fact(TWIN, title="Rate limits are per key")
    corpus.commit("learn: twin")
    indexer = Indexer(corpus.root)
    indexer.update()
    conn = indexer.connect(readonly=True)
    try:
        assert dup_ids.same_name(conn, A) == [TWIN]
        plan = " ".join(str(r[-1]) for r in conn.execute(
            f"EXPLAIN QUERY PLAN {dup_ids.SAME_NAME}", ("a1a1a1a1.md", A)))
        assert "USING INDEX facts_name" in plan and "SCAN facts" not in plan, plan
    finally:
        conn.close()
