"""The write tools beyond a new fact (issue 26 #2): an agent proposes an update, a
retraction, the observation that settles a hypothesis, and reads its inbox — each checked
before it is written, each one plumbing commit on `agent/<id>` only."""

from __future__ import annotations

import pytest

from factdesk.core import open_corpus
from factdesk.review.agent_edits import retract_fact, settle_hypothesis, update_fact
from factdesk.review.agent_inbox import inbox
from factdesk.review.agent_input import AgentWriteRefused, Limits
from factdesk.review.agent_write import AgentWriter, agent_identity
from factdesk.review.proposals import load_queue
from tests.conftest import Corpus, git

HYP = "kb/gotchas/db/d4d4d4d4.md"


def _writer(corpus: Corpus, agent: str = "codex") -> AgentWriter:
    return AgentWriter(open_corpus(corpus.root), agent_identity(corpus.root, agent),
                       limits=Limits())


def _untouched(corpus: Corpus) -> tuple[dict[str, bytes], bytes]:
    return corpus.snapshot(), (corpus.root / ".git" / "index").read_bytes()


def _hypothesis(corpus: Corpus) -> None:
    corpus.write(HYP, "---\ntype: hypothesis\norigin: authored\ndomain: [ledger-api]\n"
                 "confidence: 0.6\nsources: 1\nentities: [Postgres]\nrefs: []\n"
                 "settle_by: 2099-01-31\nsettlement: the pool stays under 200 clients\n---\n"
                 "# The pool will hold after the upgrade\n\nA guess.\n")
    corpus.commit("learn: a hypothesis")


def test_update_of_its_own_fact_lands_on_its_branch(corpus: Corpus) -> None:
    w = _writer(corpus)
    first = w.propose_fact("Pool drains after 40 min", "Seen twice.", "observation",
                           topic="gotchas", category="db", confidence=0.6)
    before = _untouched(corpus)
    out = update_fact(w, first["path"], confidence=0.9, body="Seen in three deploys.",
                      entities=["Postgres"])
    assert out["branch"] == "agent/codex" and out["path"] == first["path"]
    assert out["changed"] == ["body", "confidence", "entities"]
    assert _untouched(corpus) == before
    log = git(corpus.root, "log", "-1", "--format=%ae%n%s", "agent/codex").splitlines()
    assert log == ["codex+update@agents.knomit.io", "update: Pool drains after 40 min"]
    text = git(corpus.root, "show", f"agent/codex:{first['path']}")
    assert "confidence: 0.9\n" in text and "Seen in three deploys." in text
    assert "claimant_agent_id: codex\n" in text and "entities: [Postgres]" in text
    assert git(corpus.root, "rev-parse", "agent/codex~1").strip() == first["sha"]
    # a hypothesis without a criterion is refused on update as on a new fact
    with pytest.raises(AgentWriteRefused, match=r"^\[H1\] a hypothesis needs a settlement"):
        update_fact(w, first["path"], type="hypothesis", title="The pool drains under load",
                    body="A guess.")
    with pytest.raises(AgentWriteRefused, match=r"^\[input\] nothing to change"):
        update_fact(w, first["path"])
    assert git(corpus.root, "rev-parse", "agent/codex").strip() == out["sha"]


def test_update_of_another_claimants_fact_is_refused(corpus: Corpus) -> None:
    w = _writer(corpus)
    with pytest.raises(AgentWriteRefused, match=r"^\[A1\] kb/gotchas/db/a1a1a1a1.md is "
                       r"claude-code's claim, not yours: .*propose a new fact citing it"):
        update_fact(w, "kb/gotchas/db/a1a1a1a1.md", confidence=0.1)
    for bad, code in (("../../etc/passwd", "input"), ("kb/../x.md", "input"),
                      ("msg/2026/01/aaaaaaaa.md", "input"), ("kb/gotchas/db/ffffffff.md", "fact")):
        with pytest.raises(AgentWriteRefused, match=rf"^\[{code}\]"):
            update_fact(w, bad, confidence=0.1)
    assert git(corpus.root, "branch", "--list", "agent/*") == ""


def test_retract_proposes_the_deletion_with_its_reason(corpus: Corpus) -> None:
    w = _writer(corpus)
    before = _untouched(corpus)
    out = retract_fact(w, "kb/gotchas/db/b2b2b2b2.md", "the migration no longer locks")
    assert _untouched(corpus) == before
    log = git(corpus.root, "log", "-1", "--format=%ae%n%s", "agent/codex").splitlines()
    assert log == ["codex+retract@agents.knomit.io",
                   "retract(the migration no longer locks): kb/gotchas/db/b2b2b2b2.md"]
    assert "b2b2b2b2" not in git(corpus.root, "ls-tree", "-r", "--name-only", "agent/codex")
    (p,) = load_queue(corpus.root).proposals
    assert p.sha == out["sha"] and p.kind == "retract" and p.op == "retract"
    assert [(f.path, f.change) for f in p.facts] == [("kb/gotchas/db/b2b2b2b2.md", "deleted")]
    # retracted on its branch: a second retraction has nothing to retract
    with pytest.raises(AgentWriteRefused, match=r"^\[fact\] kb/gotchas/db/b2b2b2b2.md is retracted on "
                       r"agent/codex already"):
        retract_fact(w, "kb/gotchas/db/b2b2b2b2.md", "again")
    with pytest.raises(AgentWriteRefused, match=r"^\[input\] reason"):
        retract_fact(w, "kb/gotchas/db/a1a1a1a1.md", "two\nlines")


def test_settle_confirmed_is_knomits_collision_path(corpus: Corpus) -> None:
    _hypothesis(corpus)
    w = _writer(corpus)
    before = _untouched(corpus)
    out = settle_hypothesis(w, HYP, "confirmed", "The pool held at 180 clients",
                            "Measured on the 2 Dec deploy.")
    assert _untouched(corpus) == before
    assert out["outcome"] == "confirmed" and out["path"].startswith("kb/gotchas/db/")
    files = git(corpus.root, "show", "--name-status", "--format=%ae%n%s", "agent/codex")
    assert files.splitlines()[:2] == ["codex+learn@agents.knomit.io",
                                      "learn: The pool held at 180 clients"]
    assert f"D\t{HYP}" in files and f"A\t{out['path']}" in files
    text = git(corpus.root, "show", f"agent/codex:{out['path']}")
    assert f"refs: [{HYP}]" in text and "type: observation" not in text.split("---")[0]
    assert "claimant_agent_id: codex\n" in text and "claim_type: observation\n" in text
    (p,) = load_queue(corpus.root).proposals
    assert {(f.path, f.change) for f in p.facts} == {(HYP, "deleted"), (out["path"], "added")}


def test_settle_refuses_what_is_no_settlement(corpus: Corpus) -> None:
    _hypothesis(corpus)
    # a synthesis derived from the hypothesis cannot confirm it through its refs (R4)
    corpus.fact("kb/gotchas/db/e5e5e5e5.md", title="Derived", type="synthesis", refs=HYP,
                body="From the guess, 3 times.")
    corpus.commit("learn: derived")
    w = _writer(corpus)
    with pytest.raises(AgentWriteRefused, match=r"^\[settle\] kb/gotchas/db/a1a1a1a1.md is "
                       r"typed observation"):
        settle_hypothesis(w, "kb/gotchas/db/a1a1a1a1.md", "confirmed", "T", "B")
    with pytest.raises(AgentWriteRefused, match=r"^\[R4\] the observation cannot confirm"):
        settle_hypothesis(w, HYP, "confirmed", "T", "Seen.", refs=["kb/gotchas/db/e5e5e5e5.md"])
    with pytest.raises(AgentWriteRefused, match=r"^\[input\] a refuting observation does not "
                       r"cite"):
        settle_hypothesis(w, HYP, "refuted", "T", "Seen.", refs=[HYP])
    with pytest.raises(AgentWriteRefused, match=r"^\[input\] outcome"):
        settle_hypothesis(w, HYP, "maybe", "T", "Seen.")
    assert git(corpus.root, "branch", "--list", "agent/*") == ""
    out = settle_hypothesis(w, HYP, "refuted", "The pool ran out at 150 clients",
                            "Measured on the 2 Dec deploy.")
    msg = git(corpus.root, "log", "-1", "--format=%ae%n%B", "agent/codex")
    assert msg.splitlines()[:4] == ["codex+retract@agents.knomit.io",
                                    f"retract(refuted): {HYP}", "", f"Evidence: {out['path']}"]
    assert HYP not in git(corpus.root, "show", f"agent/codex:{out['path']}")


def test_inbox_reads_the_curated_branch_and_its_own(corpus: Corpus) -> None:
    corpus.write("msg/2026/11/11111111.md", "---\nfrom: claude-code\nto: [codex]\n"
                 "sent: 2026-11-02T09:14:00Z\ndelivery: delivered\n"
                 "context_explanation: the migration is next\n---\nAdd lock_timeout.\n")
    corpus.write("msg/2026/11/22222222.md", "---\nfrom: claude-code\nto: [gemini]\n"
                 "sent: 2026-11-02T09:15:00Z\ndelivery: delivered\n---\nNot for codex.\n")
    corpus.commit("message: to codex, gemini")
    w = _writer(corpus)
    # a message on codex's own branch (a reply another writer put there), not yet curated
    other = _writer(corpus, "gemini")
    sent = other.send_message(["codex"], "Done on my side.", "closing the loop")
    git(corpus.root, "update-ref", "refs/heads/agent/codex", "agent/gemini")
    box = inbox(w)
    assert [(m["path"], m["branch"]) for m in box["messages"]] == [
        (sent["path"], "agent/codex"), ("msg/2026/11/11111111.md", "main")]
    first = box["messages"][1]
    assert first["from"] == "claude-code" and first["body"].strip() == "Add lock_timeout."
    assert first["context_explanation"] == "the migration is next"
    assert [m["path"] for m in inbox(w, delivery="queued")["messages"]] == [sent["path"]]
    assert inbox(_writer(corpus, "nobody"))["messages"] == []
    with pytest.raises(AgentWriteRefused, match=r"^\[input\] delivery"):
        inbox(w, delivery="bogus")
