"""The rules as a type checker: each rule fires on its case and stays quiet on the decoy."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factdesk.model.authority import AUTHORITY_TABLE, Authority, attribution, authority
from factdesk.model.enums import ClaimantType, ClaimType, SubjectKind
from factdesk.model.fact import Envelope, Fact
from factdesk.model.registry import Agent, Registry
from factdesk.model.rules import CheckContext, check_fact, has_settlement_criterion, read_settle_answer
from factdesk.model.weight import evidence_weight

REG = Registry(agents={"claude-code": Agent("claude-code", "tool", "claude-code@agents.knomit.io"),
                       "ana": Agent("ana", "user", "ana@example.org"),
                       "librarian": Agent("librarian", "persona", "librarian@agents.knomit.io")})


def fact(path: str, **kw: object) -> Fact:
    return Fact(path=path, title=kw.pop("title", "T"), body=kw.pop("body", "b"), **kw)  # type: ignore[arg-type]


def codes(f: Fact, facts: dict[str, Fact] | None = None, **ctx: object) -> list[str]:
    context = CheckContext(facts=facts or {f.path: f}, registry=REG, today=date(2026, 11, 30),
                           repo_id="0123456789ab", **ctx)  # type: ignore[arg-type]
    return [p.code for p in check_fact(f, context)]


def test_r1_synthesis_citing_hypothesis_or_policy() -> None:
    hyp = fact("kb/a/h.md", type="hypothesis", sources=1, confidence=0.6)
    pol = fact("kb/a/p.md", kind="pragmatic", type="policy", sources=1, confidence=0.9)
    obs = fact("kb/a/o.md", sources=1, confidence=0.9)
    syn = fact("kb/a/s.md", type="synthesis", origin="distilled", sources=1, confidence=0.8,
               refs=("kb/a/h.md", "kb://0123456789ab/kb/a/p.md", "kb/a/o.md"))
    facts = {f.path: f for f in (hyp, pol, obs, syn)}
    assert codes(syn, facts).count("R1") == 2
    ok = fact("kb/a/s2.md", type="synthesis", origin="distilled", sources=1, refs=("kb/a/o.md",))
    assert "R1" not in codes(ok, {**facts, ok.path: ok})


def test_r1_uses_the_type_when_the_synthesis_was_written() -> None:
    obs = fact("kb/a/o.md", sources=1)
    syn = fact("kb/a/s.md", type="synthesis", origin="distilled", refs=("kb/a/o.md",))
    facts = {obs.path: obs, syn.path: syn}
    assert "R1" in codes(syn, facts, cited_types_then={"kb/a/s.md": {"kb/a/o.md": "hypothesis"}})


def test_r2_evidence_weight_walks_lineage_and_ignores_guesses() -> None:
    a = fact("kb/a/a.md", confidence=0.9, sources=2)
    b = fact("kb/a/b.md", confidence=0.5, sources=1)
    guesses = [fact(f"kb/a/g{i}.md", type="hypothesis", confidence=0.9, sources=5)
               for i in range(10)]
    mid = fact("kb/a/m.md", type="synthesis", origin="distilled", confidence=0.7, sources=1,
               refs=("kb/a/b.md", "kb/a/m.md"))
    top = fact("kb/a/t.md", type="synthesis", origin="distilled", confidence=0.8, sources=1,
               refs=("kb/a/a.md", "kb/a/m.md", *(g.path for g in guesses)))
    facts = {f.path: f for f in (a, b, mid, top, *guesses)}
    s = 0.9 * 2 + 0.5 * 1  # a is terminal, m is traversed into b; guesses add zero
    assert evidence_weight(top, facts.get, None) == pytest.approx(s / (s + 1))
    dead = fact("kb/a/d.md", type="synthesis", origin="distilled", confidence=0.5, sources=2,
                refs=("kb/a/missing.md",))
    facts[dead.path] = dead
    only_dead = fact("kb/a/x.md", type="synthesis", refs=("kb/a/d.md",))
    assert evidence_weight(only_dead, facts.get, None) == pytest.approx(1.0 / 2.0)
    stale = fact("kb/a/st.md", type="synthesis", origin="distilled", refs=("kb/a/a.md",),
                 evidence_weight=0.5)
    assert "R2" in codes(stale, {**facts, stale.path: stale})


def test_r3_discovered_citing_discovered() -> None:
    d1 = fact("kb/a/d1.md", type="synthesis", origin="discovered", sources=1)
    d2 = fact("kb/a/d2.md", type="synthesis", origin="discovered", sources=1, refs=("kb/a/d1.md",))
    assert "R3" in codes(d2, {d1.path: d1, d2.path: d2})
    assert "R3" not in codes(d1, {d1.path: d1, d2.path: d2})


def test_evidence_weight_terminates_on_citation_cycles() -> None:
    """RELIABILITY B14: syntheses citing each other in a ring (and a long chain) count each
    fact once and end."""
    ring = [fact(f"kb/a/r{i}.md", type="synthesis", origin="distilled", confidence=0.5,
                 sources=1, refs=(f"kb/a/r{(i + 1) % 3}.md", "kb/a/leaf.md")) for i in range(3)]
    leaf = fact("kb/a/leaf.md", confidence=0.6, sources=2)
    facts = {f.path: f for f in (*ring, leaf)}
    s = 0.6 * 2  # the leaf, reached three ways, counted once; the ring adds no terminal
    assert evidence_weight(ring[0], facts.get, None) == pytest.approx(s / (s + 1))
    chain = [fact(f"kb/c/{i}.md", type="synthesis", origin="distilled", confidence=0.5,
                  sources=1, refs=(f"kb/c/{i + 1}.md",)) for i in range(5_000)]
    facts = {f.path: f for f in chain}
    assert 0.0 <= evidence_weight(chain[0], facts.get, None) < 1.0  # bounded depth, no recursion error


def test_h1_criterion_and_overdue() -> None:
    none = fact("kb/a/h.md", type="hypothesis", title="Caching helps", body="It just will.")
    assert not has_settlement_criterion(none) and "H1" in codes(none)
    due = fact("kb/a/h2.md", type="hypothesis", envelope=Envelope(settle_by="2026-10-01"))
    assert "H1" in codes(due)
    later = fact("kb/a/h3.md", type="hypothesis", envelope=Envelope(settle_by="2027-01-01",
                                                                   settlement="p95 < 120 ms"))
    assert "H1" not in codes(later)
    body = fact("kb/a/h4.md", type="hypothesis", body="Settles by 2026-01-02: the error rate")
    assert "H1" in codes(body)  # overdue by its body line


@pytest.mark.parametrize("day", ["2024-02-30", "2027-13-01", "2026-00-10", "2026-4-01"])
def test_an_impossible_settle_by_date_is_an_error_not_an_overdue_guess(day: str) -> None:
    """RELIABILITY B07: a date that does not exist (in the past or the future) is reported
    as such, and never taken for a deadline."""
    hyp = fact("kb/a/h.md", type="hypothesis", envelope=Envelope(settle_by=day,
                                                                 settlement="p95 < 120 ms"))
    found = check_fact(hyp, CheckContext(facts={hyp.path: hyp}, today=date(2026, 11, 30)))
    assert [(p.code, p.severity.value, p.message) for p in found] == [
        ("E1", "error", f"settle_by must be a real date YYYY-MM-DD, got {day!r}")]


@pytest.mark.parametrize(("ref", "code"), [
    ("C:\\Windows\\win.ini", "ref-absolute"), ("d:/data/x.md", "ref-absolute"),
    ("c:foo", "ref-syntax"), ("file:///etc/passwd", "ref-absolute"),
    ("/etc/passwd", "ref-absolute"), ("\\\\srv\\share\\x.md", "ref-absolute"),
    ("//srv/share/x.md", "ref-absolute"), ("kb/a\\b.md", "ref-syntax"),
    ("kb/a\x00b.md", "ref-syntax"), ("kb/a//b.md", "ref-syntax"), ("kb/./a.md", "ref-syntax"),
    ("../../secret.md", "ref-traversal"), ("kb/a/../../x.md", "ref-traversal"),
    ("kb\\..\\..\\x.md", "ref-traversal"),
])
def test_refs_naming_local_files_are_reported(ref: str, code: str) -> None:
    """RELIABILITY C01–C03: knomit reads `C:` as a URL scheme; factdesk says it is a path.
    Each is named for what it is (an absolute path, unclean syntax, a way out), and never
    opened."""
    cited = fact("kb/a/f.md", refs=(ref,), sources=1)
    found = [p.code for p in check_fact(cited, CheckContext(facts={cited.path: cited}))
             if p.code.startswith("ref-") and p.code != "ref-malformed"]
    assert found == [code]
    assert "ref-absolute" not in codes(fact("kb/a/g.md", refs=("https://x.org/a",), sources=1))


def test_a1_authority_cases() -> None:
    tool_user = fact("kb/a/1.md", sources=1, refs=("https://x",), envelope=Envelope(
        claim_type="assertion", claimant_agent_id="claude-code", claimant_type="tool",
        subject_kind="user"))
    assert "A1" in codes(tool_user, creators={"kb/a/1.md": "claude-code+learn@agents.knomit.io"})
    persona = fact("kb/a/2.md", sources=1, envelope=Envelope(
        claim_type="observation", claimant_agent_id="librarian", claimant_type="persona",
        subject_kind="world"))
    assert "A1" in codes(persona, creators={"kb/a/2.md": "librarian+learn@agents.knomit.io"})
    mismatch = fact("kb/a/3.md", sources=1, refs=("https://x",), envelope=Envelope(
        claim_type="observation", claimant_agent_id="ana", claimant_type="user",
        subject_kind="codebase"))
    assert "A1" in codes(mismatch, creators={"kb/a/3.md": "claude-code+learn@agents.knomit.io"})
    own = fact("kb/a/4.md", sources=1, refs=("https://x",), envelope=Envelope(
        claim_type="assertion", claimant_agent_id="ana", claimant_type="user",
        subject_kind="self"))
    assert "A1" not in codes(own, creators={"kb/a/4.md": "ana+learn@example.org"})


def test_authority_table_is_complete_and_reviewed() -> None:
    assert len(AUTHORITY_TABLE) == len(ClaimantType) * len(SubjectKind) * len(ClaimType)
    ground = [k for k, v in AUTHORITY_TABLE.items() if v is Authority.GROUND_TRUTH]
    assert ground == [("user", "self", "assertion")]
    assert all(v is Authority.FORBIDDEN for k, v in AUTHORITY_TABLE.items() if k[0] == "view")
    for c in ("tool", "persona", "peer"):
        assert authority(c, "user", "assertion") is Authority.FORBIDDEN
        assert authority(c, "user", "report") is Authority.ATTRIBUTED
        assert authority(c, "codebase", "assertion") is Authority.ATTRIBUTED


def test_attribution_sentence() -> None:
    assert attribution("Deploys run at 9", claimant="claude-code", claimant_type="tool",
                       subject_kind="codebase", claim_type="report") == \
        "claude-code (tool) reports: Deploys run at 9"
    assert attribution("I am on call", claimant="ana", claimant_type="user",
                       subject_kind="self", claim_type="assertion") == "I am on call"


@given(st.text(max_size=60))
def test_any_ref_is_either_refused_or_a_clean_path_inside_the_repository(raw: str) -> None:
    """RELIABILITY C03 (P5): whatever an agent writes as a ref, a local target that the
    checker lets through is a clean relative path: opened under the repository, it stays
    there."""
    import posixpath

    from factdesk.model.refs import RefKind, classify_ref, uncontained

    ref = classify_ref(raw, None)
    if ref.kind is not RefKind.LOCAL_FACT or ref.target is None or uncontained(ref.target):
        return
    target = ref.target
    assert posixpath.normpath(target) == target and not posixpath.isabs(target)
    assert ".." not in target.split("/") and "\\" not in target and "\x00" not in target
    assert posixpath.normpath(posixpath.join("/repo", target)).startswith("/repo/")


@pytest.mark.parametrize(("text", "want"), [
    ("2027-03-01", ("2027-03-01", None)),
    (" 2027-3-1 ", ("2027-03-01", None)),
    ("2027/3/1", ("2027-03-01", None)),
    ("p95 under 100 ms on the nightly load test", (None, "p95 under 100 ms on the nightly load test")),
    ("by 2027-03-01 the pool holds", (None, "by 2027-03-01 the pool holds")),  # a criterion
])
def test_a_settle_answer_is_a_date_or_a_criterion(text: str, want: tuple[str | None, str | None]) -> None:
    assert read_settle_answer(text) == want


@pytest.mark.parametrize("text", ["2027-2-30", "2027-13-01", "2027-00-10"])
def test_a_date_shaped_answer_that_names_no_day_is_an_error(text: str) -> None:
    with pytest.raises(ValueError, match="not a day that exists"):
        read_settle_answer(text)


@pytest.mark.parametrize(("text", "criterion"), [
    ("Switch to PR10's retry policy", False),  # issue 15: any digit counted
    ("v2 of the parser is better", False),
    ("3 agents said so", False),
    ("The cache helps", False),
    ("Pool exhausts at 200 clients", True),  # a threshold with a unit
    ("p95 latency stays < 200", True),
    ("Fails on at least 3 repositories", True),
    ("Regresses 40% of runs", True),
    ("Settled by March 2027", True),
    ("True before 2027-01-31", True),
    ("Refuted if the error rate does not fall", True),
    ("The eval is at problem control first measured systems", False),  # (a bare word)
    ("Holds once a retry storm is observed in production", True),
])
def test_a_criterion_is_a_date_a_threshold_or_an_observable(text: str, criterion: bool) -> None:
    from factdesk.model.rules import criterion_in_text

    assert criterion_in_text(text) is criterion
