"""A completed decision leaves no journal behind (issue 24 #5): the window commits with
its index sync deferred; a reject changes no file, so there is nothing to sync, and its
journal was held for a sync that never came — the next start's recovery took it for an
interrupted action ("An interrupted action was found"). (Recovery itself still reports a
committed journal with no file: a kill right after such a decision's ref moved leaves one,
and its report is what records the review merge the kill lost: test_merge_lost.py.)"""

from __future__ import annotations

from factdesk.curation.changes import finish_change
from factdesk.curation.gitwrite import recover
from factdesk.curation.recovery import state_dir
from tests.conftest import Corpus
from tests.review.decide_helpers import N, agent_commit, fact_text, review_of


def test_a_deferred_reject_leaves_no_journal_and_recovery_says_nothing(corpus: Corpus) -> None:
    sha = agent_commit(corpus, "learn: replica lag", {N: fact_text("Replica lag is 3 s")})
    review = review_of(corpus, defer_index_sync=True)
    cs = review.reject([sha], "duplicate")
    finish_change(corpus.root, cs)  # (what the window runs once its view has updated)
    journal = state_dir(corpus.root) / "journal"
    assert sorted(p.name for p in journal.iterdir()) == []
    assert recover(corpus.root) == []
