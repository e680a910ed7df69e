"""The suspected-mislabel heuristics: what each one flags, what it leaves alone (the decoys),
and that every proposal is a combination the model allows."""

from __future__ import annotations

import itertools

import pytest

from factdesk.model.enums import FactType, is_legal_kind_type, is_legal_origin_for_type
from factdesk.model.fact import Envelope, Fact
from factdesk.model.mislabels import (
    CODES,
    MislabelContext,
    Proposal,
    find_hedge,
    illegal_reasons,
    introduced_reasons,
    resulting_state,
    suggest,
    suggest_all,
)
from factdesk.model.registry import Agent, Registry

REPO_ID = "0123456789ab"
REGISTRY = Registry(agents={
    "claude-code": Agent("claude-code", "tool", "claude-code@agents.knomit.io"),
    "codex": Agent("codex", "tool", "codex@agents.knomit.io"),
    "librarian": Agent("librarian", "persona", "librarian@agents.knomit.io"),
    "memory-graph": Agent("memory-graph", "view", "memory-graph@agents.knomit.io"),
    "icog": Agent("icog", "peer", "icog@agents.knomit.io"),
    "ana": Agent("ana", "user", "ana@example.org"),
})
PATH = "kb/gotchas/db/a1a1a1a1.md"


def ctx(creator: str | None = "codex+learn@agents.knomit.io", **kw: object) -> MislabelContext:
    creators = {PATH: creator} if creator else {}
    return MislabelContext(repo_id=REPO_ID, registry=REGISTRY, creators=creators, **kw)  # type: ignore[arg-type]


def fact(title: str = "Connection pool exhausts at 200 clients", *, body: str = "Measured on staging.",
         type: str = "observation", kind: str = "epistemic", refs: tuple[str, ...] = ("https://x.org/a",),
         origin: str = "authored", origin_raw: str | None = None, **env: str) -> Fact:
    return Fact(path=PATH, title=title, body=body, kind=kind, type=type, origin=origin,
                origin_raw=origin_raw, refs=refs, confidence=0.8, sources=1,
                envelope=Envelope(**env), key_lines={"type": 2, "refs": 7, "claim_type": 8,
                                                      "claimant_agent_id": 9, "claimant_type": 10},
                title_line=14)


def codes(f: Fact, c: MislabelContext | None = None) -> list[str]:
    return [s.code for s in suggest(f, c or ctx())]


def only(f: Fact, code: str, c: MislabelContext | None = None):  # type: ignore[no-untyped-def]
    found = [s for s in suggest(f, c or ctx()) if s.code == code]
    assert len(found) == 1, [s.code for s in suggest(f, c or ctx())]
    return found[0]


# ---------------------------------------------------------------- hedged observation

@pytest.mark.parametrize("title, word", [
    ("The 502s are probably the ALB idle timeout", "probably"),
    ("I think the queue should be around 40k messages at peak", "i think"),
    ("Pool exhaustion is likely to recur under load", "likely"),
    ("The cache might be stale after deploys", "might"),
    ("Latency should be around 200 ms when warm", "should be around"),
    ("The fix is expected to land once the pool grows", "is expected to"),
    ("We think retries mask the outage", "we think"),
])
def test_hedged_title_is_a_guess(title: str, word: str) -> None:
    s = only(fact(title, claim_type="observation"), "hedged-observation")
    assert repr(word) in s.explanation and "title" in s.explanation
    assert s.line == 14
    assert s.proposal == {"type": "hypothesis", "claim_type": "hypothesis"}
    assert s.needs_input == ("settlement",)


def test_hedge_in_first_body_sentence() -> None:
    s = only(fact(body="It is likely that the pool is the bottleneck. More text here."),
             "hedged-observation")
    assert "first sentence" in s.explanation and "'likely'" in s.explanation
    assert s.proposal == {"type": "hypothesis"}  # no recorded claim_type: the derived one follows


def test_existing_criterion_needs_no_input() -> None:
    f = fact("The pool probably exhausts at 200 clients", body="Settles by 2027-01-31: p99 under 1 s.")
    assert only(f, "hedged-observation").needs_input == ()


@pytest.mark.parametrize("f", [
    # decoy: the hedge is only inside a quoted source
    fact(body='The vendor changelog says "this will probably regress under load", but we measured '
              "41% on the canary in our own run."),
    fact(body="The release notes state “the queue is likely the bottleneck”, we measured 2.3x."),
    # decoy: a hedged hypothesis is correctly typed
    fact("The pool probably exhausts at 200 clients", type="hypothesis", settle_by="2027-01-01"),
    # a hedge deeper in the body is not the claim
    fact(body="We measured 200 clients. The cause might be pgbouncer."),
    # words that contain a hedge but are not one
    fact("An unlikely race between workers and the mighty scheduler"),
    fact("Timeouts should be set per route"),
])
def test_not_hedged(f: Fact) -> None:
    assert "hedged-observation" not in codes(f)


def test_find_hedge_ignores_code_spans() -> None:
    assert find_hedge("Set `probably_retry=false` in the config") is None
    assert find_hedge("We suspect the cache") == "we suspect"


# ---------------------------------------------------------------- imperative epistemic

@pytest.mark.parametrize("title, first", [
    ("Never add a NOT NULL column and backfill it in the same migration", "policy"),
    ("Always pin the model version in production", "policy"),
    ("Must validate webhook signatures before parsing", "policy"),
    ("Do not retry non-idempotent POSTs", "policy"),
    ("Avoid long transactions during business hours", "heuristic"),
])
def test_imperative_on_epistemic(title: str, first: str) -> None:
    s = only(fact(title, claim_type="observation"), "imperative-epistemic")
    assert s.proposal == {"type": first, "kind": "pragmatic", "claim_type": "assertion"}
    assert {p.changes["type"] for p in s.proposals} == {"policy", "heuristic"}


@pytest.mark.parametrize("f", [
    fact("Never retry the ledger writes", type="policy", kind="pragmatic"),       # decoy
    fact("Always cache tokens per tenant", type="heuristic", kind="pragmatic"),   # decoy
    fact("Neverland is the staging cluster's name"),
    fact("Retries always amplify an outage"),
    fact("Never cite hypotheses", type="synthesis", origin="distilled", origin_raw="distilled",
         refs=("kb/a/1.md", "kb/a/2.md")),
])
def test_not_imperative(f: Fact) -> None:
    assert "imperative-epistemic" not in codes(f)


def test_imperative_claim_type_never_becomes_forbidden() -> None:
    # a tool's observation about the user, typed epistemic: "assertion" would be forbidden
    f = fact("Always ask ana before schema changes", claim_type="observation", claimant_agent_id="codex",
             claimant_type="tool", subject_kind="user")
    s = only(f, "imperative-epistemic")
    assert s.proposal["claim_type"] != "assertion"
    assert not illegal_reasons(f, s.proposals[0], ctx())


# ---------------------------------------------------------------- authority

def test_tool_asserts_user() -> None:
    f = fact("Ana is the tech lead", type="concept", claim_type="assertion", claimant_agent_id="claude-code",
             claimant_type="tool", subject_kind="user", subject_ref="user:ana")
    s = only(f, "tool-asserts-user", ctx("claude-code+learn@agents.knomit.io"))
    assert s.proposal == {"claim_type": "report"}
    assert {p.changes["claim_type"] for p in s.proposals} == {"report", "inference", "observation"}
    assert "claude-code (tool)" in s.explanation and "user:ana" in s.explanation
    assert s.line == 8


def test_tool_asserts_user_with_derived_claimant() -> None:
    # no claimant in the file: the commit author (codex, a tool) is the claimant
    f = fact("Ana owns migrations", type="reference", claim_type="assertion", subject_kind="user")
    assert "tool-asserts-user" in codes(f)


@pytest.mark.parametrize("f", [
    fact("Ana approves migrations", claim_type="observation", claimant_type="tool", subject_kind="user"),
    fact("Ana approves migrations", claim_type="report", claimant_type="tool", subject_kind="user"),
    fact("I lead ledger-api", type="concept", claim_type="assertion", claimant_agent_id="ana",
         claimant_type="user", subject_kind="self"),
    fact("icog consumes webhooks", type="concept", claim_type="assertion", claimant_agent_id="icog",
         claimant_type="peer", subject_kind="self"),
])
def test_authority_decoys(f: Fact) -> None:
    found = codes(f, ctx(None))
    assert "tool-asserts-user" not in found and "asserts-other-agent" not in found


def test_asserts_other_agent() -> None:
    f = fact("memory-graph rebuilds nightly", type="concept", claim_type="assertion",
             claimant_agent_id="codex", claimant_type="tool", subject_kind="other_agent")
    assert only(f, "asserts-other-agent").proposal == {"claim_type": "report"}


# ---------------------------------------------------------------- claimant mismatch

def test_claimant_names_another_agent() -> None:
    f = fact(type="pattern", claim_type="assertion", claimant_agent_id="librarian", claimant_type="persona",
             subject_kind="world")
    s = only(f, "claimant-mismatch")
    assert s.proposal == {"claimant_agent_id": "codex", "claimant_type": "tool"}
    assert "librarian" in s.explanation and "codex (tool)" in s.explanation


def test_claimant_wrong_type() -> None:
    f = fact(claim_type="observation", claimant_agent_id="codex", claimant_type="user",
             subject_kind="codebase")
    s = only(f, "claimant-mismatch")
    assert s.proposal == {"claimant_type": "tool"} and s.line == 10


def test_claimant_self_subject_follows_the_old_claimant() -> None:
    # "ana asserts about herself", but a tool wrote it: the subject is the user, and a tool
    # may not assert it, so the claim type drops to a report
    f = fact(type="concept", claim_type="assertion", claimant_agent_id="ana", claimant_type="user",
             subject_kind="self")
    s = only(f, "claimant-mismatch")
    assert s.proposal == {"claimant_agent_id": "codex", "subject_kind": "user", "subject_ref": "user:ana",
                          "claimant_type": "tool", "claim_type": "report"}
    assert not illegal_reasons(f, s.proposals[0], ctx())


def test_claimant_matches_author() -> None:
    f = fact(type="concept", claim_type="assertion", claimant_agent_id="ana", claimant_type="user",
             subject_kind="self")
    assert "claimant-mismatch" not in codes(f, ctx("ana+learn@example.org"))
    assert "claimant-mismatch" not in codes(f, ctx(None))  # no history: nothing to compare


# ---------------------------------------------------------------- syntheses and refs

LOCAL_A = "kb/gotchas/db/b2b2b2b2.md"
LOCAL_B = "kb/decisions/api/c3c3c3c3.md"


@pytest.mark.parametrize("refs, evidence", [
    ((LOCAL_A,), "1 local fact ref:"),
    ((f"kb://{REPO_ID}/{LOCAL_A}", "https://x.org/a", "https://x.org/b"), "1 local fact ref (plus 2 URLs)"),
    ((LOCAL_A, "kb://fedcba987654/kb/gotchas/x/12345678.md"), "1 local fact ref (plus 1 foreign kb ref)"),
    ((LOCAL_A, f"kb://{REPO_ID}/{LOCAL_A}"), "1 local fact ref:"),   # one source, cited twice
    ((PATH, LOCAL_A), "1 local fact ref:"),                         # a self-ref is no source
])
def test_single_source_synthesis(refs: tuple[str, ...], evidence: str) -> None:
    f = fact(type="synthesis", origin="distilled", origin_raw="distilled", refs=refs, claim_type="synthesis")
    s = only(f, "single-source-synthesis")
    assert evidence in s.explanation
    # an insight may not be distilled: the origin key is removed, never rewritten to another value
    assert s.proposal == {"type": "insight", "origin": None, "claim_type": "inference"}
    assert s.proposals[1].action == "edit" and s.proposals[1].needs_input == ("refs",)


def test_a_synthesis_with_no_origin_written_may_become_an_insight() -> None:
    # its origin is the type's default (distilled for a synthesis, authored for an
    # insight): the distilled default was carried to the insight and ruled it illegal
    f = fact(type="synthesis", origin="distilled", origin_raw=None, refs=(LOCAL_A,),
             claim_type="synthesis")
    s = only(f, "single-source-synthesis")
    assert s.proposal == {"type": "insight", "claim_type": "inference"}


def test_two_local_refs_in_mixed_forms_is_a_synthesis() -> None:
    f = fact(type="synthesis", origin="distilled", origin_raw="distilled",
             refs=(LOCAL_A, f"kb://{REPO_ID}/{LOCAL_B}"))
    assert "single-source-synthesis" not in codes(f)


def test_observation_without_refs() -> None:
    s = only(fact(refs=()), "observation-without-refs")
    assert s.proposal == {"type": "hypothesis"} and s.needs_input == ("settlement",)
    assert s.proposals[1].needs_input == ("refs",)
    assert "observation-without-refs" not in codes(fact(refs=(LOCAL_A,)))   # decoy: one local ref


def test_persona_without_refs() -> None:
    f = fact(type="pattern", refs=(), claimant_agent_id="librarian", claimant_type="persona",
             claim_type="assertion", subject_kind="world")
    s = only(f, "persona-without-refs", ctx("librarian+learn@agents.knomit.io"))
    assert s.proposals[0].action == "edit" and s.needs_input == ("refs",)
    derived = fact(type="pattern", refs=())       # persona only through the commit author
    assert "persona-without-refs" in codes(derived, ctx("librarian+learn@agents.knomit.io"))
    one_url = fact(type="pattern", refs=("https://x.org/a",), claimant_type="persona")
    assert "persona-without-refs" not in codes(one_url, ctx("librarian+learn@agents.knomit.io"))


# ---------------------------------------------------------------- legacy envelopes

def test_explicit_legacy_claim_type() -> None:
    f = fact(type="reference", claim_type="legacy", subject_kind="codebase")
    s = only(f, "legacy-envelope")
    assert s.proposals[0].action == "attest"
    assert s.proposal == {"claim_type": "assertion", "claimant_agent_id": "codex", "claimant_type": "tool"}
    assert s.proposals[1].changes["claim_type"] == "report"


def test_no_envelope_is_opt_in() -> None:
    f = fact()
    assert codes(f) == []
    s = only(f, "no-envelope", ctx(include_no_envelope=True))
    assert s.explanation == "no claim envelope; derived from git: codex (tool)"
    assert s.needs_input == ("subject_kind",)
    unregistered = only(f, "no-envelope", ctx("mindev+learn@agents.knomit.io", include_no_envelope=True))
    assert "(None)" not in unregistered.explanation
    assert s.proposal == {"claim_type": "observation", "claimant_agent_id": "codex", "claimant_type": "tool"}


def test_underivable_provenance_is_legacy() -> None:
    c = ctx("someone@example.com")
    s = only(fact(), "legacy-envelope", c)
    assert set(s.needs_input) == {"claimant_agent_id", "claimant_type", "subject_kind"}


# ---------------------------------------------------------------- every proposal is legal

TYPES = [t.value for t in FactType]


def _all_facts() -> list[Fact]:
    out = []
    titles = ["Never retry writes", "The pool probably exhausts", "Ana leads the team", "Plain title 3"]
    envs: list[dict[str, str]] = [
        {}, {"claim_type": "assertion", "claimant_type": "tool", "subject_kind": "user"},
        {"claim_type": "legacy"},
        {"claimant_agent_id": "ana", "claimant_type": "user", "subject_kind": "self"},
        {"claim_type": "observation", "claimant_type": "persona", "subject_kind": "other_agent"},
    ]
    for t, title, env, refs, origin in itertools.product(
            TYPES, titles, envs, [(), (LOCAL_A,)], ["authored", "distilled", "discovered"]):
        kind = "pragmatic" if t in ("policy", "heuristic") else "epistemic"
        if not is_legal_origin_for_type(origin, t):
            continue
        e = dict(env)
        if "claim_type" in e and t in ("hypothesis", "synthesis") and e["claim_type"] != "legacy":
            e["claim_type"] = "hypothesis" if t == "hypothesis" else "synthesis"
        out.append(fact(title, type=t, kind=kind, refs=refs, origin=origin, origin_raw=origin, **e))
    return out


def test_every_proposal_is_legal() -> None:
    c = ctx()
    seen = set()
    for f in _all_facts():
        for s in suggest(f, c):
            seen.add(s.code)
            assert s.code in CODES
            assert s.proposals, s
            for p in s.proposals:
                assert not introduced_reasons(f, p, c), (f, p, introduced_reasons(f, p, c))
                if not illegal_reasons(f, Proposal({}), c):
                    assert not illegal_reasons(f, p, c), (f, p)
                state = resulting_state(f, p.changes, c)
                assert is_legal_kind_type(state["kind"] or "", state["type"] or "")
                assert all(isinstance(v, str | None) and type(v) in (str, type(None))
                           for v in p.changes.values()), p.changes
    assert {"hedged-observation", "imperative-epistemic", "tool-asserts-user", "single-source-synthesis",
            "observation-without-refs", "persona-without-refs", "legacy-envelope"} <= seen


def test_illegal_reasons_names_the_rule() -> None:
    f = fact(claimant_type="tool", subject_kind="user", claim_type="observation")
    assert illegal_reasons(f, Proposal({"type": "policy"}), ctx()) == [
        "kind epistemic does not allow type policy"]
    assert "a hypothesis needs a settlement criterion" in illegal_reasons(
        f, Proposal({"type": "hypothesis", "claim_type": "hypothesis"}), ctx())
    assert any("may not make an assertion about user" in r
               for r in illegal_reasons(f, Proposal({"claim_type": "assertion"}), ctx()))
    assert any("origin distilled" in r for r in illegal_reasons(
        f, Proposal({"origin": "distilled"}), ctx()))


def test_suggest_all_orders_the_queue() -> None:
    a = fact("Never retry writes")
    b = Fact(**{**{k: getattr(a, k) for k in a.__slots__}, "path": "kb/a/00000000.md",
                "title": "Pool probably exhausts"})
    c = fact("Ana leads", type="concept", claim_type="assertion", claimant_type="tool", subject_kind="user")
    out = suggest_all([a, b, c], ctx())
    assert [s.code for s in out] == ["tool-asserts-user", "hedged-observation", "imperative-epistemic"]
    assert out[0].as_dict()["proposals"][0]["changes"] == {"claim_type": "report"}  # type: ignore[index]
