"""Each proposed version checked as if accepted (review.checks) on real git repositories and
a real index: the hand-built agent branch, the published corpus, a generated corpus."""

from __future__ import annotations

import time
from pathlib import Path

from factdesk.index.indexer import Indexer
from factdesk.review.checks import check_all, check_proposal, problem_counts, proposal_diff
from factdesk.review.model import Proposal
from factdesk.review.proposals import load_queue
from tests.conftest import Corpus, GeneratedCorpus
from tests.review.test_queue import AgentCorpus, build

R_CODES = {"R1_hypothesis_source": "R1", "R1_pragmatic_source": "R1", "R3_discovered_seed": "R3"}


def _checked(root: Path) -> tuple[Indexer, dict[str, Proposal]]:
    indexer = Indexer(root)
    indexer.update()
    queue = load_queue(root)
    return indexer, {p.sha: p for p in check_all(indexer, queue)}


def _codes(p: Proposal, *, new: bool = True) -> set[tuple[str, str]]:
    return {(x.code, x.severity) for f in p.facts for x in f.problems or () if x.new == new}


def test_each_rule_found_as_if_accepted(corpus: Corpus) -> None:
    a: AgentCorpus = build(corpus)
    _, by = _checked(a.root)
    s = a.shas
    assert _codes(by[s["learn"]]) == set()
    assert by[s["state"]].facts == ()
    distill = by[s["distill"]]
    assert ("R1", "error") in _codes(distill)
    r1 = next(x for x in distill.facts[0].problems or () if x.code == "R1")
    assert "kb/gotchas/db/11111111.md" in r1.message and r1.new
    # it cites a fact only the branch has: the open proposal that adds it is named
    branch_ref = next(x for x in distill.facts[0].problems or () if x.code == "ref-branch")
    assert s["learn"][:10] in branch_ref.message and "66666666" in branch_ref.message
    assert distill.facts[0].depends_on == (s["learn"],)
    # its weight as if accepted: the hypothesis adds nothing, the branch's fact 0.8 × 1
    assert distill.facts[0].evidence_weight_computed is not None
    assert abs(distill.facts[0].evidence_weight_computed - 0.8 / 1.8) < 1e-9
    assert ("R3", "error") in _codes(by[s["discover"]])
    assert by[s["update"]].facts[0].conflict
    # the curated version already has its broken ref: reported, but not new
    update2 = by[s["update2"]]
    assert ("ref-broken", "warning") in _codes(update2, new=False)
    assert _codes(update2) == set()
    deletion = by[s["dedup"]].facts[0]
    assert [(x.code, x.severity) for x in deletion.problems or ()] == [("ref-retracted", "warning")]
    assert "kb/gotchas/db/44444444.md" in (deletion.problems or ())[0].message
    claimed = by[s["claimed"]]
    a1 = [x for x in claimed.facts[0].problems or () if x.code == "A1"]
    assert a1 and "claimant mismatch" in a1[0].message and "devbox-1a2b3c4d" in a1[0].message
    assert ("ontology-rule", "error") in _codes(by[s["principle"]])
    assert problem_counts(by[s["principle"]])[0] >= 1


def test_check_proposal_matches_check_all_and_diff(corpus: Corpus) -> None:
    a = build(corpus)
    indexer, by = _checked(a.root)
    queue = load_queue(a.root)
    one = check_proposal(indexer, queue, a.shas["distill"][:10])
    assert one == by[a.shas["distill"]]
    diff = proposal_diff(a.root, queue, queue.find(a.shas["update"]))
    assert "--- curated:kb/gotchas/db/b2b2b2b2.md" in diff
    assert "-The curator's own correction: 38 s." in diff
    assert "+Agent's version: 40 s measured twice." in diff
    added = proposal_diff(a.root, queue, queue.find(a.shas["learn"]))
    assert added.startswith("(new: the curated branch has no kb/gotchas/db/66666666.md)")


def test_accepted_earlier_proposal_is_no_dependency(corpus: Corpus) -> None:
    """Once the fact the distill cites is on the curated branch, the distill no longer
    depends on the branch (no ref-branch)."""
    from tests.conftest import git

    a = build(corpus, curator_conflict=False)
    git(a.root, "checkout", "-q", a.shas["learn"], "--", "kb/gotchas/db/66666666.md")
    git(a.root, "commit", "-qm", "take 66666666")
    _, by = _checked(a.root)
    distill = by[a.shas["distill"]].facts[0]
    assert not any(x.code == "ref-branch" for x in distill.problems or ())
    assert distill.depends_on == ()


def test_real_corpus_problems(real_corpus: Path) -> None:
    indexer, by = _checked(real_corpus)
    distills = [p for p in by.values() if p.kind == "distill"]
    assert len(distills) == 3
    for p in distills:
        rules = [x for x in p.facts[0].problems or ()
                 if x.code == "ontology-rule" and x.severity == "error" and x.new]
        assert len(rules) == 2, p.subject
        assert p.facts[0].path.startswith("kb/principles/")
    deletions = [f for p in by.values() for f in p.facts if f.change == "deleted"]
    left = [x for f in deletions for x in f.problems or () if x.code == "ref-retracted"]
    assert len(left) == 1 and "leaves 2 citations" in left[0].message
    assert left[0].severity == "warning"
    # one proposal's checks on demand, well under the budget on this corpus
    queue = load_queue(real_corpus)
    started = time.perf_counter()
    check_proposal(indexer, queue, distills[0].sha)
    assert time.perf_counter() - started < 1.0


def test_generated_corpus_breaks_found(generated_corpus: GeneratedCorpus) -> None:
    root, manifest = generated_corpus
    _, by = _checked(root)
    for m in manifest["proposals"]:
        p = by[m["sha"]]
        want = {R_CODES[b] for b in m["breaks"]}
        got = {x.code for f in p.facts for x in f.problems or ()
               if x.code in ("R1", "R3") and x.severity == "error"}
        assert got == want, (m["subject"], m["breaks"], got)
