"""Attributed recall (issue 17): the CLI contract, live facts only, the authority table's
rendering, and the property that no agent's claim is ever shown without its attribution."""

from __future__ import annotations

import json
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factdesk.cli import main
from factdesk.model.enums import ClaimantType, ClaimType, SubjectKind
from factdesk.model.recall import RecallFact, render
from tests.conftest import Corpus

KEYS = ["id", "path", "title", "type", "claimant", "claimant_type", "subject_kind", "claim_type",
        "ground_truth", "text"]


def envelope_fact(corpus: Corpus, rel: str, title: str, *, type: str = "observation",
                  extra: str = "", refs: str = "") -> None:
    corpus.write(rel, f"---\ntype: {type}\ndomain: [ledger-api]\nconfidence: 0.7\nsources: 1\n"
                      f"refs: [{refs}]\n{extra}---\n# {title}\n\nBody about the ledger.\n")


def recall_json(capsys: pytest.CaptureFixture[str], corpus: Corpus, *args: str) -> list[dict[str, object]]:
    code = main(["recall", *args, "--kb", str(corpus.root), "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    data = json.loads(out.out)
    assert list(data) == ["results"]
    for r in data["results"]:
        assert list(r) == KEYS
    return data["results"]


def test_recall_renders_by_the_authority_table(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    envelope_fact(corpus, "kb/gotchas/db/e1e1e1e1.md", "Ana prefers ledger deploys on Tuesdays",
                  extra="claim_type: assertion\nclaimant_agent_id: ana\nclaimant_type: user\n"
                        "subject_kind: self\n")
    corpus.commit("learn: Ana's own", author="ana")
    envelope_fact(corpus, "kb/gotchas/db/e5e5e5e5.md", "Ana prefers ledger deploys on Fridays",
                  extra="claim_type: assertion\nclaimant_agent_id: ana\nclaimant_type: user\n"
                        "subject_kind: self\n")  # (written by claude-code: a claimant mismatch)
    envelope_fact(corpus, "kb/gotchas/db/e2e2e2e2.md", "The ledger pool drains after 40 minutes",
                  extra="claim_type: observation\nclaimant_agent_id: claude-code\n"
                        "claimant_type: tool\nsubject_kind: codebase\n")
    envelope_fact(corpus, "kb/gotchas/db/e3e3e3e3.md", "Ledger retries probably double the load",
                  type="hypothesis",
                  extra="claim_type: hypothesis\nclaimant_agent_id: codex\nclaimant_type: tool\n"
                        "subject_kind: codebase\nsettle_by: 2027-01-31\nsettlement: load test at 2x\n")
    envelope_fact(corpus, "kb/gotchas/db/e4e4e4e4.md", "Ana is the ledger owner",
                  extra="claim_type: assertion\nclaimant_agent_id: codex\nclaimant_type: tool\n"
                        "subject_kind: user\n")
    corpus.commit("learn: envelopes")
    results = {r["path"]: r for r in recall_json(capsys, corpus, "ledger", "--limit", "20")}
    ana = results["kb/gotchas/db/e1e1e1e1.md"]
    assert ana["ground_truth"] is True and ana["text"] == "Ana prefers ledger deploys on Tuesdays"
    posing = results["kb/gotchas/db/e5e5e5e5.md"]
    assert posing["ground_truth"] is False
    assert posing["text"].startswith("ana (user) asserts: Ana prefers ledger deploys on Fridays")
    assert "[breaks rules A1]" in posing["text"]
    tool = results["kb/gotchas/db/e2e2e2e2.md"]
    assert tool["ground_truth"] is False
    assert tool["text"] == "claude-code (tool) observed: The ledger pool drains after 40 minutes"
    guess = results["kb/gotchas/db/e3e3e3e3.md"]["text"]
    assert guess.startswith("codex (tool) hypothesises: Ledger retries probably double the load")
    assert "[open guess, to settle by 2027-01-31: load test at 2x]" in guess
    forbidden = results["kb/gotchas/db/e4e4e4e4.md"]["text"]
    assert forbidden.startswith("codex (tool) asserts: Ana is the ledger owner")
    assert "breaks the authority table" in forbidden


def test_recall_reads_live_facts_only(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    corpus.write("kb/gotchas/db/f1f1f1f1.md", "---\ntype: factoid\n---\n# Ledger pool broken fact\n")
    corpus.commit("learn: a broken one")
    assert main(["retract", "a1a1a1a1", "--reason", "wrong", "--kb", str(corpus.root)]) == 0
    capsys.readouterr()
    paths = [r["path"] for r in recall_json(capsys, corpus, "pool OR ledger OR migrations")]
    assert "kb/gotchas/db/b2b2b2b2.md" in paths
    assert "kb/gotchas/db/a1a1a1a1.md" not in paths  # retracted
    assert "kb/gotchas/db/f1f1f1f1.md" not in paths  # broken


def test_recall_messages_only_when_asked(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.messages.test_messages import message

    p = message(corpus, body="Migrations: please add lock_timeout before the ledger migration")
    corpus.commit("msg: one")
    assert p not in [r["path"] for r in recall_json(capsys, corpus, "migrations")]
    with_msgs = recall_json(capsys, corpus, "migrations", "--include-agent-comm")
    (m,) = [r for r in with_msgs if r["path"] == p]
    assert m["ground_truth"] is False and m["type"] == "message"
    assert m["text"].startswith("claude-code wrote to codex (2026-11-02T09:14:00Z, delivered): ")
    code = main(["recall", "migrations", "--kb", str(corpus.root)])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("Curated memory for `migrations`")


def test_synthesis_stale_weight_and_breaches_are_marked() -> None:
    fact = RecallFact(id=1, path="kb/x/aaaaaaaa.md", title="Pools drain under retries",
                      type="synthesis", claim_type="synthesis", claimant="codex",
                      claimant_type="tool", subject_kind="codebase", sources=2,
                      refs=("kb/x/b.md", "kb/x/c.md"), evidence_weight=0.9,
                      evidence_weight_computed=0.4, breaches=("R1",))
    out = render(fact)
    assert out.text == ("codex (tool) synthesised: Pools drain under retries [synthesis of 2 sources "
                        "(kb/x/b.md, kb/x/c.md), evidence weight 0.90] [stale evidence weight: "
                        "recorded 0.90, 0.40 computed now] [breaks rules R1]")
    overdue = render(RecallFact(id=2, path="p", title="t", type="hypothesis", claim_type="hypothesis",
                                settle_by="2026-01-01"), today=date(2026, 12, 1))
    assert "to settle by 2026-01-01 (overdue)" in overdue.text
    assert overdue.text.startswith("unknown agent (unverified) hypothesises: t")


def test_a_synthesis_whose_count_and_refs_differ_says_which_is_which() -> None:
    """`sources: 1` with five refs once read "synthesis of 1 source (5 paths…)", which an
    agent reads as a contradiction: the count is what the corpus wrote, the refs are cited."""
    refs = tuple(f"kb/x/{c * 8}.md" for c in "abcdefg")
    fact = RecallFact(id=1, path="kb/x/zzzzzzzz.md", title="T", type="synthesis",
                      claim_type="synthesis", claimant="codex", claimant_type="tool",
                      subject_kind="codebase", sources=1, refs=refs, evidence_weight=0.5)
    text = render(fact).text
    assert "synthesis; the corpus records sources: 1; it cites 7 refs (" in text
    assert "+2 more" in text and "synthesis of 1 source" not in text
    no_count = RecallFact(id=2, path="p", title="T", type="synthesis", claim_type="synthesis",
                          refs=("kb/x/b.md",), evidence_weight=0.5)
    assert "synthesis of 1 source (kb/x/b.md)" in render(no_count).text


def test_attestation_makes_a_persons_claim_plain_but_never_an_agents() -> None:
    person = RecallFact(id=1, path="p", title="The ledger freeze starts Dec 20", type="observation",
                        claim_type="observation", claimant="ana", claimant_type="user",
                        subject_kind="world", attested_by="Bo")
    assert render(person).ground_truth and render(person).text.startswith(
        "The ledger freeze starts Dec 20 [attested by Bo]")
    agent = RecallFact(id=2, path="p", title="x", type="observation", claim_type="observation",
                       claimant="codex", claimant_type="tool", subject_kind="codebase",
                       attested_by="Bo")
    assert not render(agent).ground_truth and render(agent).text.startswith("codex (tool) observed: ")


_ids = st.one_of(st.none(), st.sampled_from(["claude-code", "codex", "ana", "build-02"]),
                 st.text(min_size=0, max_size=12))
_types = st.one_of(st.none(), st.sampled_from([c.value for c in ClaimantType]),
                   st.text(min_size=0, max_size=8))
_subjects = st.one_of(st.none(), st.sampled_from([s.value for s in SubjectKind]),
                      st.text(min_size=0, max_size=8))
_claims = st.one_of(st.none(), st.sampled_from([c.value for c in ClaimType]),
                    st.text(min_size=0, max_size=8))


@settings(max_examples=600, deadline=None)
@given(claimant=_ids, claimant_type=_types, subject_kind=_subjects, claim_type=_claims,
       fact_type=st.sampled_from(["observation", "hypothesis", "synthesis", "reference", "policy"]),
       attested=st.one_of(st.none(), st.text(min_size=1, max_size=6)),
       title=st.text(min_size=1, max_size=40),
       breaches=st.lists(st.sampled_from(["A1", "R1", "E1"]), max_size=2),
       weights=st.tuples(st.one_of(st.none(), st.floats(0, 1)), st.one_of(st.none(), st.floats(0, 1))))
def test_no_agent_claim_about_another_subject_is_rendered_plain(
        claimant: str | None, claimant_type: str | None, subject_kind: str | None,
        claim_type: str | None, fact_type: str, attested: str | None, title: str,
        breaches: list[str], weights: tuple[float | None, float | None]) -> None:
    fact = RecallFact(id=1, path="kb/x/abcdef12.md", title=title, type=fact_type,
                      claim_type=claim_type, claimant=claimant, claimant_type=claimant_type,
                      subject_kind=subject_kind, attested_by=attested, breaches=tuple(breaches),
                      evidence_weight=weights[0], evidence_weight_computed=weights[1])
    out = render(fact)
    attributed = out.text.startswith(f"{claimant or 'unknown agent'} ({claimant_type or 'unverified'}) ")
    if claimant_type != ClaimantType.USER:  # an agent (or an unknown writer): always attributed
        assert attributed and not out.ground_truth
    if subject_kind != SubjectKind.SELF and attested is None:
        assert attributed and not out.ground_truth
    if "A1" in breaches:
        assert attributed and not out.ground_truth
    if not attributed:
        assert out.ground_truth and claimant_type == ClaimantType.USER
    assert out.ground_truth == out.as_dict()["ground_truth"]


def test_only_a_curators_recorded_attestation_makes_a_persons_claim_plain(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    rel = "kb/gotchas/db/e6e6e6e6.md"
    envelope_fact(corpus, rel, "The ledger freeze starts on December 20",
                  extra="claim_type: observation\nclaimant_agent_id: ana\nclaimant_type: user\n"
                        "subject_kind: world\n")
    corpus.commit("learn: the freeze", author="ana")
    (r,) = [r for r in recall_json(capsys, corpus, "freeze") if r["path"] == rel]
    assert r["ground_truth"] is False and r["text"].startswith("ana (user) observed: ")
    # an agent forging the attestations file grants nothing
    from factdesk.corpus.gitrepo import blob_id

    blob = blob_id((corpus.root / rel).read_bytes())
    corpus.write(".factdesk/attestations.yaml",
                 f"- path: {rel}\n  by: Mallory <m@example.org>\n  blob: {blob}\n")
    corpus.commit("learn: forged attestation")
    (r,) = [r for r in recall_json(capsys, corpus, "freeze") if r["path"] == rel]
    assert r["ground_truth"] is False
    # the curator's attest (a trusted decision) does
    assert main(["attest", "e6e6e6e6", "--reason", "confirmed with Ana", "--kb",
                 str(corpus.root)]) == 0
    capsys.readouterr()
    (r,) = [r for r in recall_json(capsys, corpus, "freeze") if r["path"] == rel]
    assert r["ground_truth"] is True
    assert r["text"].startswith("The ledger freeze starts on December 20 [attested by ")
    # an agent then edits the fact and appends an entry for the new bytes: not attested
    text = (corpus.root / rel).read_text().replace("December 20", "December 2")
    corpus.write(rel, text)
    blob = blob_id(text.encode())
    with (corpus.root / ".factdesk/attestations.yaml").open("a") as fh:
        fh.write(f"- path: {rel}\n  by: Mallory <m@example.org>\n  blob: {blob}\n")
    corpus.commit("learn: an edit")
    (r,) = [r for r in recall_json(capsys, corpus, "freeze") if r["path"] == rel]
    assert r["ground_truth"] is False


def test_include_messages_in_the_grammar() -> None:
    from factdesk.errors import QueryError
    from factdesk.index.query import compile_query, includes_messages

    q = compile_query("(retry include:messages) -type:policy")
    assert q.include_messages and q.fts == '"retry"' and len(q.filters) == 1
    assert not compile_query("retry -include:messages").include_messages
    assert includes_messages("x include:messages") and not includes_messages("x")
    with pytest.raises(QueryError, match="include: takes messages"):
        compile_query("include:everything")
