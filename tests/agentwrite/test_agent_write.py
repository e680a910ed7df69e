"""Agent writes (issue 26): a proposed fact is checked by the rules before it is written,
then lands as one commit on `agent/<id>` built with git's plumbing only — the curator's
work tree, index and checked-out branch are untouched."""

from __future__ import annotations

import pytest

from factdesk.core import open_corpus
from factdesk.review.agent_input import AgentWriteRefused, Limits
from factdesk.review.agent_write import AgentIdentity, AgentWriter, agent_identity
from factdesk.review.proposals import load_queue
from tests.conftest import Corpus, git


def _writer(corpus: Corpus, agent: str = "codex", **limits: int) -> AgentWriter:
    return AgentWriter(open_corpus(corpus.root), agent_identity(corpus.root, agent),
                       limits=Limits(**limits))


def _index_bytes(corpus: Corpus) -> bytes:
    return (corpus.root / ".git" / "index").read_bytes()


def test_a_legal_fact_lands_on_the_agent_branch_only(corpus: Corpus) -> None:
    corpus.write("scratch.txt", "the curator's uncommitted work\n")
    git(corpus.root, "add", "scratch.txt")
    before, index = corpus.snapshot(), _index_bytes(corpus)
    w = _writer(corpus)
    out = w.propose_fact("The ledger pool drains after 40 minutes", "Seen in three deploys.",
                         "observation", domain=["gotchas/db"], refs=["kb/gotchas/db/a1a1a1a1.md"],
                         claim_type="observation", subject_kind="codebase")
    assert out["branch"] == "agent/codex" and out["topic"] == "gotchas"
    assert out["topic_from"] == "domain" and out["path"].startswith("kb/gotchas/db/")
    assert corpus.snapshot() == before and _index_bytes(corpus) == index
    assert git(corpus.root, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    log = git(corpus.root, "log", "-1", "--format=%H%n%an <%ae>%n%cn <%ce>%n%s", "agent/codex")
    assert log.splitlines() == [out["sha"], "codex <codex+learn@agents.knomit.io>",
                                "codex <codex@agents.knomit.io>",
                                "learn: The ledger pool drains after 40 minutes"]
    text = git(corpus.root, "show", f"agent/codex:{out['path']}")
    assert "claimant_agent_id: codex\n" in text and "claimant_type" not in text  # unverified
    queue = load_queue(corpus.root)
    (p,) = queue.proposals
    assert p.sha == out["sha"] and [f.path for f in p.facts] == [out["path"]]
    # the second write builds on the branch's own tip
    out2 = w.propose_fact("Second", "More.", "observation", topic="decisions", category="api")
    assert out2["topic_from"] == "topic" and out2["path"].startswith("kb/decisions/api/")
    assert git(corpus.root, "rev-parse", "agent/codex~1").strip() == out["sha"]


def test_a_hypothesis_without_settlement_is_refused_with_h1(corpus: Corpus) -> None:
    w = _writer(corpus)
    with pytest.raises(AgentWriteRefused) as err:
        w.propose_fact("Retries will drop", "A guess.", "hypothesis", topic="gotchas")
    assert str(err.value).startswith("[H1] a hypothesis needs a settlement criterion")
    assert git(corpus.root, "branch", "--list", "agent/*") == ""
    ok = w.propose_fact("Retries will drop", "A guess.", "hypothesis", topic="gotchas",
                        settle_by="2099-01-31", settlement="the retry rate in the weekly report")
    assert ok["sha"]


def test_rules_refuse_with_their_code(corpus: Corpus) -> None:
    corpus.fact("kb/gotchas/db/d4d4d4d4.md", title="A guess", type="hypothesis",
                body="settles by 2099-01-01 when the rate is below 5")
    corpus.commit("learn: a hypothesis")
    w = _writer(corpus)
    with pytest.raises(AgentWriteRefused, match=r"^\[R1\] synthesis cites hypothesis"):
        w.propose_fact("A synthesis", "From a guess.", "synthesis",
                       refs=["kb/gotchas/db/d4d4d4d4.md"], topic="gotchas")
    with pytest.raises(AgentWriteRefused, match=r"^\[A1\] .*report"):
        w.propose_fact("Ana prefers tabs", "She said so.", "observation", topic="gotchas",
                       claim_type="assertion", subject_kind="user", subject_ref="ana")
    with pytest.raises(AgentWriteRefused, match=r"^\[topic\] topic 'nowhere'"):
        w.propose_fact("T", "B", "observation", topic="nowhere")
    with pytest.raises(AgentWriteRefused, match=r"^\[(topic|input)\]"):
        w.propose_fact("T", "B", "observation", topic="../../etc")
    with pytest.raises(AgentWriteRefused, match=r"^\[input\] category"):
        w.propose_fact("T", "B", "observation", topic="gotchas", category="a/../../b")
    with pytest.raises(AgentWriteRefused, match=r"^\[input\] title holds a lone surrogate"):
        w.propose_fact("bad \ud800", "B", "observation", topic="gotchas")
    with pytest.raises(AgentWriteRefused, match=r"^\[input\] the body is"):
        w.propose_fact("T", "x" * 70_000, "observation", topic="gotchas")
    with pytest.raises(AgentWriteRefused, match=r"^\[input\] settlement holds a control"):
        w.propose_fact("T", "B", "hypothesis", topic="gotchas", settle_by="2099-01-01",
                       settlement="x\nclaimant_agent_id: ana")
    with pytest.raises(AgentWriteRefused, match=r"^\[type\]"):
        w.propose_fact("T", "B", "policy", kind="epistemic", topic="gotchas")
    assert git(corpus.root, "branch", "--list", "agent/*") == ""


def test_the_rate_is_limited_per_agent(corpus: Corpus) -> None:
    w = _writer(corpus, per_minute=3)
    for i in range(3):
        w.propose_fact(f"Fact {i}", "B", "observation", topic="gotchas")
    with pytest.raises(AgentWriteRefused, match=r"^\[rate\] more than 3 writes in a minute"):
        w.propose_fact("Fact 4", "B", "observation", topic="gotchas")


def test_identity_from_the_registry(corpus: Corpus) -> None:
    corpus.write(".factdesk/agents.yaml", "agents:\n  ana: {type: user, email: ana@example.org}\n"
                 "  codex: {type: tool, email: codex@agents.knomit.io}\n")
    git(corpus.root, "add", "-A")
    git(corpus.root, "commit", "-qm", "registry", author="ana", email="ana@example.org")
    assert agent_identity(corpus.root, "codex") == AgentIdentity("codex", "tool")
    assert agent_identity(corpus.root, "stranger").type == "unverified"
    with pytest.raises(AgentWriteRefused, match=r"^\[identity\] ana is registered as a user"):
        agent_identity(corpus.root, "ana")
    with pytest.raises(AgentWriteRefused, match=r"^\[identity\]"):
        agent_identity(corpus.root, "../main")
    out = _writer(corpus).propose_fact("Typed", "B", "observation", topic="gotchas")
    assert out["claimant_type"] == "tool"
    assert "claimant_type: tool\n" in git(corpus.root, "show", f"agent/codex:{out['path']}")


def test_a_merged_branch_restarts_from_the_curated_tip(corpus: Corpus) -> None:
    w = _writer(corpus)
    first = w.propose_fact("One", "B", "observation", topic="gotchas")
    git(corpus.root, "merge", "-q", "--no-ff", "-m", "review merge", "agent/codex")
    main = git(corpus.root, "rev-parse", "main").strip()
    second = w.propose_fact("Two", "B", "observation", topic="gotchas")
    parent = git(corpus.root, "rev-parse", f"{second['sha']}^").strip()
    assert parent == main != first["sha"]


def test_my_proposals_shows_status_and_the_curators_reason(corpus: Corpus) -> None:
    from factdesk.curation import Identity
    from factdesk.review.decide import Review

    w = _writer(corpus)
    kept = w.propose_fact("Kept", "B", "observation", topic="gotchas")
    dropped = w.propose_fact("Dropped", "B", "observation", topic="gotchas")
    assert [p["status"] for p in w.my_proposals()["proposals"]] == ["open", "open"]
    Review(open_corpus(corpus.root), Identity("ana", "ana@example.org")).reject(
        [dropped["sha"]], "a duplicate of the pool fact")
    mine = {p["sha"]: p for p in w.my_proposals()["proposals"]}
    assert mine[dropped["sha"]]["status"] == "rejected"
    assert mine[dropped["sha"]]["reason"] == "a duplicate of the pool fact"
    assert mine[kept["sha"]]["status"] == "open" and mine[kept["sha"]]["reason"] is None
    assert [p["sha"] for p in w.my_proposals("rejected")["proposals"]] == [dropped["sha"]]
    with pytest.raises(AgentWriteRefused, match=r"^\[input\] status"):
        w.my_proposals("bogus")


def test_send_message_lands_on_the_agent_branch_and_comes_over_as_its_own(corpus: Corpus) -> None:
    before = corpus.snapshot()
    w = _writer(corpus)
    out = w.send_message(["claude-code"], "Please add lock_timeout before the migration.",
                         "the ledger migration is next", ["kb/gotchas/db/b2b2b2b2.md"])
    assert out["path"].startswith("msg/") and corpus.snapshot() == before
    text = git(corpus.root, "show", f"agent/codex:{out['path']}")
    assert "from: codex\n" in text and "delivery: queued\n" in text
    (p,) = load_queue(corpus.root).proposals
    assert p.other_files == (out["path"],)  # review.carry: its own message comes over
    with pytest.raises(AgentWriteRefused, match=r"^\[M3\]"):
        w.send_message(["claude-code"], "About a ghost.", "why", ["kb/gotchas/db/ffffffff.md"])
    with pytest.raises(AgentWriteRefused, match=r"^\[input\] to: '\.\./x'"):
        w.send_message(["../x"], "B", "why")


def test_a_write_is_checked_against_the_curated_branch_not_the_work_tree(corpus: Corpus) -> None:
    """The curator's uncommitted fact is no part of the curated branch: a proposal citing it
    is refused as citing no fact (and the write never looks at the work tree's files, which
    at 100,000 facts cost seconds a write: docs/benchmarks.md)."""
    w = _writer(corpus)
    w.propose_fact("First", "B", "observation", topic="gotchas")
    corpus.fact("kb/gotchas/db/f6f6f6f6.md", title="The curator's draft")
    with pytest.raises(AgentWriteRefused, match=r"^\[ref-broken\]"):
        w.propose_fact("Cites a draft", "B", "observation", topic="gotchas",
                       refs=["kb/gotchas/db/f6f6f6f6.md"])
    corpus.commit("learn: the draft")
    assert w.propose_fact("Cites it now", "B", "observation", topic="gotchas",
                          refs=["kb/gotchas/db/f6f6f6f6.md"])["sha"]


def test_a_write_skips_the_twin_name_scan_it_would_let_through(corpus: Corpus) -> None:
    """`dup_id` never refuses a write (ALLOWED) and a fresh random name has no twin: the
    write's check leaves out its look-up, a scan of every path (0.12 s of a write at
    100,000 facts: docs/benchmarks.md); review's check keeps it."""
    from factdesk.index import review_reads

    ix = open_corpus(corpus.root)
    twin = "kb/decisions/api/a1a1a1a1.md"
    data = (corpus.root / "kb/gotchas/db/a1a1a1a1.md").read_bytes()

    def codes(**kw: bool) -> list[str]:
        out = ix.read(lambda conn: review_reads.check_proposed(
            conn, ix.rule_setting(), {twin: data}, [twin], {}, **kw))
        return [p.code for p in out[twin].problems]

    assert "dup_id" in codes()
    assert "dup_id" not in codes(twins=False)
