"""The status rules a hand mutation run left unguarded (issue 22, "Tests that can fail when
the trust rules break"): decisions written by hand on the curated branch, read back through
`load_queue` (trust.trusted_decisions → review.status.read_decisions) as the queue reads
them. Each test fails on one mutant of the rule it names:

(d) a reject counts only when its author's op token is `reject` (curation/trust.py);
(e) a decision counts once: the first commit with an action id decides (`in_effect`);
(f) `Factdesk-Override` marks an *accepted* proposal only (`read_decisions`)."""

from __future__ import annotations

from factdesk.review.proposals import load_queue
from tests.conftest import Corpus, git
from tests.review.decide_helpers import A, N, agent_commit, fact_text

CURATOR = ("ana", "ana@example.org")


def decision(corpus: Corpus, action: str, named: str, *, author: tuple[str, str] = CURATOR,
             action_id: str = "0123456789abcdef", extra: str = "", path: str = A) -> str:
    """A review decision as factdesk writes it — an empty commit, one final trailer block —
    committed by the curator on main."""
    message = (f"{action}: a proposal\n\nbecause\n\nFactdesk-Action: {action}\n"
               f"Factdesk-Action-Id: {action_id}\nFactdesk-Proposal: {named}\n"
               f"Factdesk-Path: {path}\n{extra}Factdesk-Reason: because")
    git(corpus.root, "commit", "-q", "--allow-empty", "-m", message, author=author[0],
        email=author[1], env={"GIT_COMMITTER_NAME": CURATOR[0],
                              "GIT_COMMITTER_EMAIL": CURATOR[1]})
    return git(corpus.root, "rev-parse", "HEAD").strip()


def proposal(corpus: Corpus, sha: str):  # type: ignore[no-untyped-def]
    return next(p for p in load_queue(corpus.root).proposals if p.sha == sha)


def test_d_a_reject_without_the_reject_op_token_decides_nothing(corpus: Corpus) -> None:
    p1 = agent_commit(corpus, "update: pool", {A: fact_text("Pool exhausts at 250")}, op="update")
    # the curator's own identity, but another op token (or none): not a reject factdesk wrote
    decision(corpus, "reject", p1, author=("ana", "ana+relabel@example.org"))
    decision(corpus, "reject", p1, author=CURATOR, action_id="1123456789abcdef")
    assert proposal(corpus, p1).status == "open"
    assert proposal(corpus, p1).decided_by == ()
    good = decision(corpus, "reject", p1, author=("ana", "ana+reject@example.org"),
                    action_id="2123456789abcdef")
    assert proposal(corpus, p1).status == "rejected"
    assert proposal(corpus, p1).decided_by == (good,)


def test_e_a_decision_counts_once_the_first_commit_with_its_id_decides(corpus: Corpus) -> None:
    p1 = agent_commit(corpus, "update: pool", {A: fact_text("Pool exhausts at 250")}, op="update")
    first = decision(corpus, "reject", p1, author=("ana", "ana+reject@example.org"))
    # the same action again (a copy: cherry-picked, replayed): it is the same decision
    decision(corpus, "reject", p1, author=("ana", "ana+reject@example.org"))
    p = proposal(corpus, p1)
    assert p.status == "rejected" and p.decided_by == (first,)
    # a later commit reusing that action id for another verdict decides nothing either
    decision(corpus, "accept", p1, author=("host-8ef0cd32",
                                           "host-8ef0cd32+update@agents.knomit.io"))
    p = proposal(corpus, p1)
    assert p.status == "rejected" and p.decided_by == (first,) and not p.overridden


def test_f_an_override_marks_an_accepted_proposal_only(corpus: Corpus) -> None:
    p1 = agent_commit(corpus, "update: pool", {A: fact_text("Pool exhausts at 250")}, op="update")
    decision(corpus, "reject", p1, author=("ana", "ana+reject@example.org"),
             extra="Factdesk-Override: R1\n")
    p = proposal(corpus, p1)
    assert p.status == "rejected" and not p.overridden
    # the same trailer on an accept marks it (the rule the mutant widened)
    p2 = agent_commit(corpus, "learn: lag", {N: fact_text("Lag")})
    decision(corpus, "accept", p2, author=("host-8ef0cd32", "host-8ef0cd32+learn@agents.knomit.io"),
             action_id="3123456789abcdef", extra="Factdesk-Override: R1\n", path=N)
    p = proposal(corpus, p2)
    assert p.status == "accepted" and p.overridden


def test_a_proposal_with_no_fact_takes_its_newest_decision() -> None:
    """A proposal that touches no fact (the agent's own state only) has the status of the
    newest decision in effect naming it — accepted, then rejected, then accepted again is
    accepted (the mutation run left `steps[-1]` → `steps[~1]` and `steps[+1]` alive: with
    two decisions `+1` is the newest too)."""
    from factdesk.review.status import Verdict, proposal_status

    everything: frozenset[str] = frozenset()
    verdict = Verdict(((everything, "accepted"), (everything, "rejected"), (everything, "accepted")))
    assert proposal_status(verdict, []) == "accepted"
    verdict = Verdict(((everything, "rejected"), (everything, "accepted"), (everything, "rejected")))
    assert proposal_status(verdict, []) == "rejected"
    # (the oldest and the newest differ: `steps[not 1]`, i.e. steps[0], reads the oldest)
    assert proposal_status(Verdict(((everything, "accepted"), (everything, "rejected"))), []) == "rejected"
    assert proposal_status(Verdict(), []) == "open" and proposal_status(None, []) == "open"
