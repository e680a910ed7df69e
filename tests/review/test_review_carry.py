"""What the review merge brings over without a decision (issue 22, item 1; docs/review.md,
"What comes over undecided"): only the agent's private `.knomit/<area>/<…>.md` files and
its own messages. Every other file outside kb/ — the ontology, the registry, another
sender's message, `.gitattributes`, anything — is decided like a fact: listed in the queue
with what it changes, accepted or rejected, never carried by the merge."""

from __future__ import annotations

import pytest

from factdesk.cli import main
from factdesk.curation import Refused
from factdesk.review.proposals import load_queue
from tests.conftest import ONTOLOGY, Corpus, git
from tests.review.decide_helpers import AGENT, BRANCH, A, N, agent_commit, fact_text, review_of, show

NO_RULES = ONTOLOGY.split("    validations:")[0]
MSG_DIR = "msg/2026/11"


def message(sender: str, to: str, delivery: str = "queued", body: str = "Please re-run the "
            "ingest.") -> str:
    return (f"---\nfrom: {sender}\nto: [{to}]\nsent: 2026-11-02T09:14:00Z\n"
            f"delivery: {delivery}\n---\n{body}\n")


def test_a_rejected_branch_brings_no_ontology_forged_message_or_attribute(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    repo = corpus.root
    corpus.fact("kb/principles/api/d4d4d4d4.md", title="Prefer small changes")  # (fails the rule)
    corpus.commit("learn: a principle")
    before = {p: git(repo, "show", f"HEAD:{p}") for p in (".knomit/ontology.yaml",)}
    forged = f"{MSG_DIR}/1a2b3c4d.md"
    p1 = agent_commit(corpus, "update: pool", {
        ".knomit/ontology.yaml": NO_RULES, forged: message("ana", AGENT),
        ".gitattributes": "*.md filter=evil\n", A: fact_text("Pool exhausts at 250 clients")},
        op="update")
    q = load_queue(repo)
    [p] = q.proposals
    kinds = {f.path: f.kind for f in p.files}
    assert kinds == {".knomit/ontology.yaml": "ontology", forged: "message",
                     ".gitattributes": "file"}
    onto = next(f for f in p.files if f.kind == "ontology")
    assert any("must-be-pragmatic-policy" in line and "removed" in line for line in onto.summary)
    assert main(["proposals", "--kb", str(repo)]) == 0
    text = capsys.readouterr().out
    assert "~ .knomit/ontology.yaml  [ontology: decided like a fact]" in text
    assert "rule removed: must-be-pragmatic-policy at principles" in text
    # how many findings on main it would remove: the one fact the rule fails today
    assert "on the curated branch: 0 findings would appear, 1 would disappear" in text
    review = review_of(corpus)
    cs = review.reject([p1], "no")
    assert getattr(cs, "merges", ())  # every item decided: the merge is recorded
    assert show(repo, "%P").split()[1] == p1
    assert git(repo, "show", "HEAD:.knomit/ontology.yaml") == before[".knomit/ontology.yaml"]
    assert git(repo, "ls-tree", "--name-only", "HEAD", "--", forged, ".gitattributes") == ""
    assert not (repo / forged).exists() and not (repo / ".gitattributes").exists()
    assert git(repo, "status", "--porcelain") == ""
    assert {p.sha: p.status for p in load_queue(repo).proposals}[p1] == "rejected"


def test_an_ontology_change_is_decided_like_a_fact(corpus: Corpus) -> None:
    repo = corpus.root
    p1 = agent_commit(corpus, "learn: lag", {".knomit/ontology.yaml": NO_RULES,
                                              N: fact_text("Replica lag is 3 s")})
    review = review_of(corpus)
    # a proposal touching anything outside kb/ is never clean, whole (issue 24 #4)
    with pytest.raises(Refused) as refused:
        review.accept_all_clean(BRANCH, "nightly")
    assert refused.value.rule == "clean" and "outside kb/" in str(refused.value)
    cs = review.accept([p1], "the fact holds", paths=[N])
    assert (repo / N).exists() and not getattr(cs, "merges", ())
    assert "validations" in (repo / ".knomit/ontology.yaml").read_text()
    assert {p.sha: p.status for p in load_queue(repo).proposals}[p1] == "partial"
    cs = review.accept([p1], "the rule was wrong", paths=[".knomit/ontology.yaml"])
    assert (repo / ".knomit/ontology.yaml").read_text() == NO_RULES
    assert show(repo, "%s", "HEAD^1").startswith("accept:")  # the decision, then the merge
    assert getattr(cs, "merges", ())
    assert {p.sha: p.status for p in load_queue(repo).proposals}[p1] == "accepted"
    assert git(repo, "status", "--porcelain") == ""


def test_only_private_files_and_own_messages_come_over_undecided(corpus: Corpus) -> None:
    repo = corpus.root
    # a message to the agent, already on the curated branch
    inbox = f"{MSG_DIR}/0badcafe.md"
    corpus.write(inbox, message("codex", AGENT))
    back = f"{MSG_DIR}/0ddba11e.md"
    corpus.write(back, message("codex", AGENT, "read"))
    other = f"{MSG_DIR}/0c0ffee0.md"
    corpus.write(other, message("codex", "claude-code"))
    corpus.commit("msg: inbox", author="ana", op="message")
    own = f"{MSG_DIR}/5e5e5e5e.md"
    state = ".knomit/jobs/distill.md"
    p1 = agent_commit(corpus, "learn: lag", {N: fact_text("Replica lag is 3 s"),
                                              state: "---\nstep: 1\n---\n# state\n"})
    p2 = agent_commit(corpus, "msg: mine", {
        own: message(AGENT, "codex"),                          # own: carried
        inbox: message("codex", AGENT, "read"),                # delivery forward: carried
        back: message("codex", AGENT, "delivered"),            # backward: decided
        other: message("codex", "claude-code", "read"),        # not addressed to it: decided
        ".knomit/jobs/raw.json": "{}\n",                       # not `.md`: decided
        ".knomit/notes.md": "loose\n",                         # loose in .knomit/: decided
    }, op="message")
    q = load_queue(repo)
    by = {p.sha: p for p in q.proposals}
    assert by[p1].other_files == (state,) and by[p1].files == ()
    assert set(by[p2].other_files) == {own, inbox}
    assert {f.path for f in by[p2].files} == {back, other, ".knomit/jobs/raw.json",
                                              ".knomit/notes.md"}
    review = review_of(corpus)
    review.accept([p1], "ok")
    assert git(repo, "log", "-1", "--format=%s") .startswith("accept:")  # p2 is open: no merge
    cs = review.reject([p2], "no")
    assert getattr(cs, "merges", ())
    carried = set(git(repo, "diff", "--name-only", "HEAD^1", "HEAD").split())
    assert carried == {own, inbox, state}
    assert (repo / inbox).read_text() == message("codex", AGENT, "read")
    assert (repo / back).read_text() == message("codex", AGENT, "read")
    assert (repo / other).read_text() == message("codex", "claude-code")
    assert not (repo / ".knomit/jobs/raw.json").exists() and not (repo / ".knomit/notes.md").exists()


def test_a_message_claiming_another_sender_or_branch_is_decided(corpus: Corpus) -> None:
    # `from` must equal the commit's author id and the branch's id
    p1 = agent_commit(corpus, "msg: as codex", {f"{MSG_DIR}/11111111.md": message("codex", "x")},
                      op="message")
    p2 = agent_commit(corpus, "msg: other branch", {f"{MSG_DIR}/22222222.md":
                                                    message("other-1", "x")},
                      op="message", branch="agent/other-1")
    p3 = agent_commit(corpus, "msg: broken", {f"{MSG_DIR}/33333333.md": f"---\nfrom: {AGENT}\n---\n"},
                      op="message")
    by = {p.sha: p for p in load_queue(corpus.root).proposals}
    assert [f.kind for f in by[p1].files] == ["message"] and by[p1].other_files == ()
    assert [f.kind for f in by[p2].files] == [] and by[p2].other_files  # its own: carried
    assert [f.kind for f in by[p3].files] == ["message"]  # not well-formed


def test_own_messages_alone_come_over_on_demand(corpus: Corpus,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    repo = corpus.root
    own = f"{MSG_DIR}/5e5e5e5e.md"
    p1 = agent_commit(corpus, "msg: mine", {own: message(AGENT, "codex")}, op="message")
    assert [p.status for p in load_queue(repo).proposals] == ["open"]  # nothing to decide
    assert main(["merge-reviewed", "--branch", BRANCH, "--kb", str(repo)]) == 0
    assert "review merge recorded" in capsys.readouterr().err
    assert show(repo, "%P").split()[1] == p1 and (repo / own).exists()
    assert main(["merge-reviewed", "--branch", BRANCH, "--kb", str(repo)]) == 0
    assert "nothing to record" in capsys.readouterr().out


def test_a_new_rule_says_how_many_findings_it_brings_to_main(corpus: Corpus) -> None:
    from factdesk.core import open_corpus
    from factdesk.review.checks import check_proposal

    stricter = ONTOLOGY.replace("topics:\n", "validations:\n  - name: sure-enough\n"
                                "    message: be sure\n    rule: fact.confidence > 0.9\n"
                                "topics:\n", 1)
    p1 = agent_commit(corpus, "ontology: stricter", {".knomit/ontology.yaml": stricter})
    ix = open_corpus(corpus.root)
    ix.update()
    [onto] = check_proposal(ix, load_queue(corpus.root), p1).files
    assert onto.summary == ("rule added: sure-enough at root",
                            "on the curated branch: 3 findings would appear, 0 would disappear")
