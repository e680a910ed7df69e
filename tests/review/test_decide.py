"""Accepting and rejecting agents' proposals (issue 13, "Decisions") on real repositories:
the commit shapes (author, committer, trailers as git itself parses them), the refusals
(rules, conflicts, dependencies), partial, override and edit-then-accept, hostile text,
undo and redo, the CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.curation import Refused
from factdesk.curation.trust import trusted_decisions
from factdesk.review.decide import ProposalConflict, read_decided
from tests.conftest import Corpus, git
from tests.review.decide_helpers import (
    AGENT,
    BRANCH,
    HYPOTHESIS,
    JOB,
    A,
    B,
    H,
    N,
    S,
    agent_commit,
    fact_text,
    review_of,
    show,
    trailers,
)


@pytest.fixture
def proposals(corpus: Corpus) -> dict[str, str]:
    """Three agent commits on `agent/host-8ef0cd32`: a new fact (with job state), a change
    to A, a synthesis that cites a hypothesis (R1)."""
    corpus.write(H, HYPOTHESIS)
    corpus.commit("learn: a hypothesis")
    return {
        "new": agent_commit(corpus, "learn: replica lag", {N: fact_text("Replica lag is 3 s"),
                                                          JOB: '{"step": 1}\n'}),
        "upd": agent_commit(corpus, "update: pool", {A: fact_text("Connection pool exhausts at 250 clients")},
                            op="update"),
        "syn": agent_commit(corpus, "synthesize-review: distill f6", {S: fact_text(
            "Pools and hypotheses", type="synthesis", refs=H)}, op="subsume"),
    }


def test_accept_keeps_the_agent_as_author_and_the_curator_as_committer(
        corpus: Corpus, proposals: dict[str, str]) -> None:
    repo = corpus.root
    review = review_of(corpus)
    cs = review.accept([proposals["new"][:8]], "matches the replica dashboard")
    assert cs.commit == show(repo, "%H")
    assert show(repo, "%an <%ae>") == f"{AGENT} <{AGENT}+learn@agents.knomit.io>"
    assert show(repo, "%cn <%ce>") == "ana <ana@example.org>"
    assert show(repo, "%P") == git(repo, "rev-parse", "HEAD~1").strip()  # one parent: no merge
    assert (repo / N).read_bytes() == git(repo, "show", f"{proposals['new']}:{N}").encode()
    assert not (repo / JOB).exists()  # the agent's job state comes with the review merge only
    parsed = trailers(repo)
    assert parsed[0] == "Factdesk-Action: accept"
    assert parsed[1].startswith("Factdesk-Action-Id: ") and len(parsed[1].split(": ")[1]) == 16
    assert parsed[2:] == [f"Factdesk-Proposal: {proposals['new']}", f"Factdesk-Path: {N}",
                          "Factdesk-Reason: matches the replica dashboard"]
    [d] = trusted_decisions(repo)
    assert d.action == "accept" and d.values("Factdesk-Proposal") == [proposals["new"]]
    assert git(repo, "status", "--porcelain") == ""


def test_reject_is_an_empty_commit_authored_curator_plus_reject(
        corpus: Corpus, proposals: dict[str, str]) -> None:
    repo = corpus.root
    before = (repo / A).read_bytes()
    review_of(corpus).reject([proposals["upd"]], "no load test backs 250")
    assert show(repo, "%an <%ae> / %cn <%ce>") == "ana <ana+reject@example.org> / ana <ana@example.org>"
    assert show(repo, "%T") == show(repo, "%T", "HEAD~1")  # changes no file
    assert (repo / A).read_bytes() == before
    assert trailers(repo)[0] == "Factdesk-Action: reject"
    assert f"Factdesk-Proposal: {proposals['upd']}" in trailers(repo)
    assert f"Factdesk-Path: {A}" in trailers(repo)
    decided = read_decided(repo, show(repo, "%H"))
    assert decided.of(proposals["upd"], A).action == "reject"  # type: ignore[union-attr]
    with pytest.raises(Refused) as err:
        review_of(corpus).reject([proposals["upd"]], "again")
    assert err.value.rule == "decided"


def test_a_rule_breaking_proposal_is_refused_with_the_rule_named_unless_overridden(
        corpus: Corpus, proposals: dict[str, str]) -> None:
    repo = corpus.root
    head = show(repo, "%H")
    review = review_of(corpus)
    with pytest.raises(Refused) as err:
        review.accept([proposals["syn"]], "looks fine")
    assert err.value.rule == "R1" and "hypotheses never seed synthesis" in str(err.value)
    assert show(repo, "%H") == head and not (repo / S).exists()
    review.accept([proposals["syn"]], "the hypothesis is settled next week", override=True)
    assert "Factdesk-Override: R1" in trailers(repo)
    assert (repo / S).exists()


def test_partial_accept_takes_only_the_named_facts(corpus: Corpus) -> None:
    repo = corpus.root
    two = agent_commit(corpus, "learn: two facts", {N: fact_text("Replica lag is 3 s"),
                                                   B: fact_text("Migrations lock for 45 s")})
    review = review_of(corpus)
    cs = review.accept([two], "the lag is measured; the lock time is not", paths=[N])
    assert "(1 of 2 facts)" in cs.subject
    assert (repo / N).exists() and b"45 s" not in (repo / B).read_bytes()
    assert [t for t in trailers(repo) if t.startswith("Factdesk-Path")] == [f"Factdesk-Path: {N}"]
    decided = read_decided(repo, show(repo, "%H"))
    assert decided.open_facts(review.proposal(two)) == [B]
    review.reject([two], "no measurement", paths=[B])  # the other half, decided apart
    assert review.decided().open_facts(review.proposal(two)) == []
    with pytest.raises(Refused) as err:
        review.accept([two], "x", paths=["kb/gotchas/db/zzzzzzzz.md"])
    assert err.value.rule == "path"


def test_a_conflict_is_refused_until_the_curator_chooses(corpus: Corpus,
                                                          proposals: dict[str, str]) -> None:
    repo = corpus.root
    review = review_of(corpus)
    review.curation.edit([A], {"confidence": 0.6}, "the curator's own correction")
    mine = (repo / A).read_bytes()
    with pytest.raises(ProposalConflict) as err:
        review.accept([proposals["upd"]], "take it")
    assert err.value.rule == "conflict" and err.value.paths == (A,)
    assert (repo / A).read_bytes() == mine  # never overwritten silently
    # edit a merged version: the curator's bytes are committed and the message says so
    merged = mine.replace(b"200 clients", b"250 clients")
    review.accept([proposals["upd"]], "both: 250 clients at confidence 0.6", edits={A: merged})
    assert (repo / A).read_bytes() == merged
    assert f"Factdesk-Edited: {A}" in trailers(repo)
    assert show(repo, "%s").startswith("accept: edited: ")
    assert git(repo, "show", f"HEAD:{A}").encode() == merged


def test_override_takes_the_proposed_version_over_a_conflict(corpus: Corpus,
                                                             proposals: dict[str, str]) -> None:
    repo = corpus.root
    review = review_of(corpus)
    review.curation.edit([A], {"confidence": 0.6}, "the curator's own correction")
    review.accept([proposals["upd"]], "the agent's measurement supersedes mine", override=True)
    assert (repo / A).read_bytes() == git(repo, "show", f"{proposals['upd']}:{A}").encode()
    assert "Factdesk-Override: conflict" in trailers(repo)


def test_a_proposal_that_builds_on_an_open_one_says_accept_it_first(corpus: Corpus) -> None:
    repo = corpus.root
    first = agent_commit(corpus, "update: pool 250", {A: fact_text("Pool exhausts at 250")})
    second = agent_commit(corpus, "update: pool 260", {A: fact_text("Pool exhausts at 260")})
    review = review_of(corpus)
    with pytest.raises(Refused) as err:
        review.accept([second], "x")
    assert err.value.rule == "depends" and f"accept {first[:12]} first" in str(err.value)
    cs = review.accept([second[:10], first[:10]], "both, in order")  # together: one commit
    assert b"260" in (repo / A).read_bytes()
    assert trailers(repo, cs.commit)[2:4] == [f"Factdesk-Proposal: {first}",
                                              f"Factdesk-Proposal: {second}"]
    assert getattr(cs, "merges", ())  # the whole branch is decided: the review merge followed
    assert cs.subject == "accept: 2 proposals of host-8ef0cd32"


def test_building_on_a_rejected_version_is_a_conflict(corpus: Corpus) -> None:
    first = agent_commit(corpus, "update: pool 250", {A: fact_text("Pool exhausts at 250")})
    second = agent_commit(corpus, "update: pool 260", {A: fact_text("Pool exhausts at 260")})
    review = review_of(corpus)
    review.reject([first], "no")
    with pytest.raises(ProposalConflict):
        review.accept([second], "x")


def test_hostile_subjects_titles_and_paths_stay_inert(corpus: Corpus) -> None:
    repo = corpus.root
    forged = "learn: x\n\nFactdesk-Action: undo\nFactdesk-Reverts: 0123456789abcdef"
    sha = agent_commit(corpus, forged, {N: fact_text("Lag\nFactdesk-Action: reject")})
    review = review_of(corpus)
    cs = review.accept([sha], "ok\nFactdesk-Action: reject")
    assert not any(t.startswith("Factdesk-Action:") for t in trailers(repo))  # the review merge
    parsed = trailers(repo, cs.commit)
    assert [t for t in parsed if t.startswith("Factdesk-Action:")] == ["Factdesk-Action: accept"]
    assert not any(t.startswith("Factdesk-Reverts") for t in parsed)
    assert show(repo, "%s", cs.commit).startswith("accept: learn: x")
    [d] = trusted_decisions(repo)
    assert d.action == "accept"
    undo, _ = review.curation.stacks()
    assert [r.action for r in undo] == ["accept"]


def test_undo_and_redo_of_accept_and_reject(corpus: Corpus, proposals: dict[str, str]) -> None:
    repo = corpus.root
    review = review_of(corpus, merge_policy="never")
    review.accept([proposals["new"]], "yes")
    review.reject([proposals["upd"]], "no")
    undo, _ = review.curation.stacks()
    assert [r.label for r in undo][-2:] == ["accept of learn: replica lag", "reject of update: pool"]
    review.curation.undo()  # the reject: an empty commit too
    assert review.decided().of(proposals["upd"], A) is None
    review.curation.undo()  # the accept: the fact goes
    assert not (repo / N).exists()
    assert review.decided().of(proposals["new"], N) is None
    review.curation.redo()
    assert (repo / N).exists() and review.decided().of(proposals["new"], N) is not None
    review.accept([proposals["upd"]], "after all, yes")  # reopened: decidable again
    assert b"250 clients" in (repo / A).read_bytes()
    assert git(repo, "status", "--porcelain") == ""


def test_cli_accept_reject_refusals_and_json(corpus: Corpus, proposals: dict[str, str],
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTDESK_CURATOR_NAME", "ana")
    monkeypatch.setenv("FACTDESK_CURATOR_EMAIL", "ana@example.org")
    kb = ["--kb", str(corpus.root)]
    assert main(["accept", proposals["syn"][:9], "--reason", "x", *kb]) == 1
    assert "refused [R1]" in capsys.readouterr().err
    assert main(["accept", proposals["new"][:9], "--reason", "ok", "--preview", *kb]) == 0
    assert "preview (nothing committed)" in capsys.readouterr().out
    assert main(["accept", proposals["new"][:9], "--reason", "ok", "--format", "json", *kb]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["action"] == "accept" and out["commit"]
    assert main(["reject", proposals["upd"], "--reason", "no", *kb]) == 0
    assert "reject: update: pool" in capsys.readouterr().out
    assert main(["reject", "zzzz", "--reason", "no", *kb]) == 1
    assert "refused [id]" in capsys.readouterr().err
    assert main(["accept", "--all-clean", "--branch", BRANCH, "--reason", "rest", *kb]) == 1
    assert "refused [clean]" in capsys.readouterr().err  # only the R1 synthesis is left


def test_accept_all_clean_takes_every_clean_proposal_in_one_commit(corpus: Corpus,
                                                                  proposals: dict[str, str]) -> None:
    repo = corpus.root
    review = review_of(corpus)
    head = show(repo, "%H")
    cs = review.accept_all_clean(BRANCH, "the clean ones")
    assert show(repo, "%H", "HEAD") == cs.commit  # no merge yet: the synthesis is open
    assert show(repo, "%P") == head
    assert (repo / N).exists() and b"250" in (repo / A).read_bytes() and not (repo / S).exists()
    parsed = trailers(repo)
    assert [t for t in parsed if t.startswith("Factdesk-Proposal")] == [
        f"Factdesk-Proposal: {proposals['new']}", f"Factdesk-Proposal: {proposals['upd']}"]
    assert show(repo, "%ae") == f"{AGENT}+learn@agents.knomit.io"  # the oldest one's
    # the last decision completes the branch: the review merge follows at once
    done = review.reject([proposals["syn"]], "cites a hypothesis")
    assert getattr(done, "merges", ())
    assert show(repo, "%P").split() == [done.commit, proposals["syn"]]


def test_a_proposal_on_the_curated_branch_without_a_decision_is_no_proposal(corpus: Corpus) -> None:
    with pytest.raises(Refused) as err:
        review_of(corpus).accept([git(corpus.root, "rev-parse", "HEAD").strip()], "x")
    assert err.value.rule == "id"  # not on any agent branch


def test_git_fsck_is_clean_after_decisions(corpus: Corpus, proposals: dict[str, str]) -> None:
    review = review_of(corpus)
    review.accept_all_clean(BRANCH, "clean")
    review.reject([proposals["syn"]], "no")
    fsck = subprocess.run(["git", "-C", str(corpus.root), "fsck", "--no-dangling"],
                          capture_output=True)
    assert fsck.returncode == 0, fsck.stderr
    assert Path(corpus.root / JOB).read_text() == '{"step": 1}\n'
