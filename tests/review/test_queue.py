"""The review queue (review.proposals.load_queue, review.status) on real git repositories:
a hand-built corpus with an agent branch, the published corpus, a generated one."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from factdesk.review.proposals import branch_agent, kind_of, load_queue
from tests.conftest import Corpus, GeneratedCorpus, git

AGENT = "devbox-1a2b3c4d"
BRANCH = f"agent/{AGENT}"
CURATOR = {"GIT_COMMITTER_NAME": "Ana", "GIT_COMMITTER_EMAIL": "ana@example.org"}

HYPOTHESIS = """---
type: hypothesis
domain: [ledger-api]
confidence: 0.5
sources: 1
---
# Pool exhaustion comes from the retry storm

Settles by 2027-06-01: p95 retries per request above 3 during the next incident.
"""
POLICY = """---
kind: pragmatic
type: policy
domain: [ledger-api]
confidence: 0.9
sources: 1
---
# Always page the on-call for ledger errors

Policy text.
"""
SYNTHESIS = """---
type: synthesis
origin: {origin}
domain: [ledger-api]
confidence: 0.7
sources: 1
refs: [{refs}]
---
# {title}

Synthesis body with 2 numbers.
"""
CLAIMED = """---
type: observation
domain: [ledger-api]
confidence: 0.8
sources: 1
claim_type: observation
claimant_agent_id: someone-else
claimant_type: tool
subject_kind: codebase
---
# The ledger service restarts nightly

Seen 3 times.
"""


class AgentCorpus:
    """The test corpus with curated facts and an agent branch of nine proposals."""

    def __init__(self, corpus: Corpus) -> None:
        self.c = corpus
        self.root = corpus.root
        self.shas: dict[str, str] = {}

    def agent_commit(self, name: str, message: str, op: str) -> str:
        sha = self.c.commit(message, author=AGENT, op=op)
        self.shas[name] = sha
        return sha


def build(corpus: Corpus, *, curator_conflict: bool = True) -> AgentCorpus:
    c = corpus
    c.write("kb/gotchas/db/11111111.md", HYPOTHESIS)
    c.write("kb/decisions/api/22222222.md", POLICY)
    c.fact("kb/gotchas/db/44444444.md", title="Ledger writes double during failover",
           refs="kb/decisions/api/c3c3c3c3.md, kb/gotchas/db/00000000.md")
    c.write("kb/gotchas/db/55555555.md", SYNTHESIS.format(
        origin="discovered", refs="kb/gotchas/db/a1a1a1a1.md", title="A discovered bridge"))
    c.commit("learn: base facts")
    a = AgentCorpus(c)
    git(c.root, "checkout", "-qb", BRANCH)
    c.fact("kb/gotchas/db/66666666.md", title="Replica lag reaches 30 s under load")
    a.agent_commit("learn", "learn: Replica lag reaches 30 s under load", "learn")
    c.write(".knomit/jobs/crawl-state.md", "last crawl: 2026-11-01\n")
    a.agent_commit("state", "update: Last crawl state", "update")
    c.write("kb/gotchas/db/77777777.md", SYNTHESIS.format(
        origin="distilled", refs="kb/gotchas/db/11111111.md, kb/gotchas/db/66666666.md",
        title="Retries and lag compound"))
    a.agent_commit("distill", "synthesize-review: distill kb/gotchas/db/77777777.md", "subsume")
    c.write("kb/gotchas/db/88888888.md", SYNTHESIS.format(
        origin="discovered", refs="kb/gotchas/db/55555555.md", title="A second bridge"))
    a.agent_commit("discover", 'discover-forward: emergent fact via bridge "db"', "discover")
    c.fact("kb/gotchas/db/b2b2b2b2.md", title="Migrations lock the ledger table for 40 s",
           body="Agent's version: 40 s measured twice.")
    a.agent_commit("update", "update: Migrations lock the ledger table for 40 s", "update")
    c.fact("kb/gotchas/db/44444444.md", title="Ledger writes double during failover",
           refs="kb/decisions/api/c3c3c3c3.md, kb/gotchas/db/00000000.md",
           body="Agent's version with 4 numbers.")
    a.agent_commit("update2", "update: Ledger writes double during failover", "update")
    (c.root / "kb/decisions/api/c3c3c3c3.md").unlink()
    a.agent_commit("dedup", "dedup: remove duplicate kb/decisions/api/c3c3c3c3.md (merged into "
                   "kb/gotchas/db/44444444.md) [review]", "retract")
    c.write("kb/gotchas/db/99999999.md", CLAIMED)
    a.agent_commit("claimed", "learn: The ledger service restarts nightly", "learn")
    c.write("kb/principles/x/aaaaaaaa.md", SYNTHESIS.format(
        origin="distilled", refs="kb/gotchas/db/a1a1a1a1.md", title="A principle by an agent"))
    a.agent_commit("principle", "synthesize-review: distill kb/principles/x/aaaaaaaa.md",
                   "subsume")
    git(c.root, "checkout", "-q", "main")
    if curator_conflict:
        c.fact("kb/gotchas/db/b2b2b2b2.md", title="Migrations lock the ledger table for 40 s",
               body="The curator's own correction: 38 s.")
        git(c.root, "add", "-A")
        git(c.root, "commit", "-qm", "edit: curator's correction", author="Ana",
            email="ana+edit@example.org", env=CURATOR)
    return a


def decide(root: Path, action: str, action_id: str, shas: list[str], paths: list[str] = (),
           *, override: str | None = None, reverts: str | None = None,
           author: tuple[str, str] | None = None) -> str:
    """A curator's decision commit as DECIDE writes it (an empty commit is enough here:
    the status reads its trailers)."""
    lines = [f"Factdesk-Action: {action}", f"Factdesk-Action-Id: {action_id}"]
    if reverts:
        lines.append(f"Factdesk-Reverts: {reverts}")
    lines += [f"Factdesk-Proposal: {s}" for s in shas]
    lines += [f"Factdesk-Path: {p}" for p in paths]
    if override:
        lines.append(f"Factdesk-Override: {override}")
    name, email = author or ("Ana", f"ana+{action}@example.org")
    git(root, "commit", "-q", "--allow-empty", "-m", f"{action}: test\n\nreason\n\n"
        + "\n".join(lines), author=name, email=email, env=CURATOR)
    return git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def agent_corpus(corpus: Corpus) -> AgentCorpus:
    return build(corpus)


def test_every_agent_commit_is_a_proposal_in_branch_order(agent_corpus: AgentCorpus) -> None:
    q = load_queue(agent_corpus.root)
    assert q.curated == "main"
    assert [b.name for b in q.branches] == [BRANCH]
    b = q.branches[0]
    assert b.agent == AGENT and b.ahead == 9 and b.open == 9
    assert [p.sha for p in q.proposals] == list(agent_corpus.shas.values())
    by = {name: q.find(sha) for name, sha in agent_corpus.shas.items()}
    assert [(p.op, p.kind) for p in q.proposals] == [
        ("learn", "learn"), ("update", "update"), ("subsume", "distill"),
        ("discover", "discover"), ("update", "update"), ("update", "update"),
        ("retract", "dedup"), ("learn", "learn"), ("subsume", "distill")]
    assert by["state"].facts == () and by["state"].other_files == (".knomit/jobs/crawl-state.md",)
    assert [(f.path, f.change) for f in by["dedup"].facts] == [
        ("kb/decisions/api/c3c3c3c3.md", "deleted")]
    assert by["learn"].facts[0].change == "added" and by["learn"].facts[0].old_blob is None
    assert by["update"].facts[0].change == "modified"
    assert all(p.status == "open" and p.index == i for i, p in enumerate(q.proposals))


def test_conflict_is_the_curators_own_change_since_the_merge_base(
        agent_corpus: AgentCorpus) -> None:
    q = load_queue(agent_corpus.root)
    conflicts = {f.path for p in q.proposals for f in p.facts if f.conflict}
    assert conflicts == {"kb/gotchas/db/b2b2b2b2.md"}
    net = {n.path: n for n in q.net[BRANCH]}
    assert net["kb/gotchas/db/b2b2b2b2.md"].conflict
    assert {n.change for n in net.values()} == {"added", "modified", "deleted"}
    assert sum(n.change == "added" for n in net.values()) == 5
    assert net["kb/gotchas/db/44444444.md"].proposals == (agent_corpus.shas["update2"],)


def test_an_accepted_agent_version_is_no_conflict(corpus: Corpus) -> None:
    a = build(corpus, curator_conflict=False)
    # the curator took the agent's version of b2b2 (as an accept does): no conflict after
    git(a.root, "checkout", "-q", a.shas["update"], "--", "kb/gotchas/db/b2b2b2b2.md")
    git(a.root, "commit", "-qm", "accept: b2b2", author=AGENT,
        email=f"{AGENT}+update@agents.knomit.io", env=CURATOR)
    q = load_queue(a.root)
    assert not any(f.conflict for p in q.proposals for f in p.facts)


def test_remote_tracking_agent_branches_and_merges(agent_corpus: AgentCorpus,
                                                   tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(agent_corpus.root), str(clone))
    q = load_queue(clone)
    assert [b.name for b in q.branches] == [f"origin/{BRANCH}"]
    assert len(q.proposals) == 9
    # the agent reconciles: merges main into its branch (no proposal, counted as ahead)
    root = agent_corpus.root
    git(root, "checkout", "-q", BRANCH)
    git(root, "merge", "-q", "--no-ff", "-X", "ours", "-m", f"merge: main into {BRANCH} (ours)",
        "main", email=f"{AGENT}+merge@agents.knomit.io", author=AGENT)
    git(root, "checkout", "-q", "main")
    q = load_queue(root)
    assert len(q.proposals) == 9 and q.branches[0].ahead == 10
    assert not any(f.conflict for p in q.proposals for f in p.facts)  # new merge base
    assert load_queue(root, branch="origin/agent/nothing").branches == ()


def test_status_from_decisions_undo_reopens_even_after_the_review_merge(
        agent_corpus: AgentCorpus) -> None:
    root, shas = agent_corpus.root, agent_corpus.shas
    multi = shas["learn"]
    decide(root, "accept", "a" * 16, [multi], author=(AGENT, f"{AGENT}+learn@agents.knomit.io"))
    decide(root, "reject", "b" * 16, [shas["discover"]])
    decide(root, "accept", "c" * 16, [shas["principle"]], ["kb/principles/x/aaaaaaaa.md"],
           override="ontology-rule", author=(AGENT, f"{AGENT}+subsume@agents.knomit.io"))
    q = load_queue(root)
    assert q.find(multi).status == "accepted"
    assert q.find(shas["discover"]).status == "rejected"
    assert q.find(shas["principle"]).overridden and q.find(shas["principle"]).status == "accepted"
    assert q.branches[0].open == 6
    # the review merge makes the decided commits reachable: still listed, still decided
    git(root, "merge", "-q", "--no-ff", "-s", "ours", "-m", "review merge", shas["discover"],
        author="Ana", email="ana+accept@example.org", env=CURATOR)
    q = load_queue(root)
    assert q.find(multi).status == "accepted" and q.find(shas["discover"]).status == "rejected"
    assert q.find(multi).branch == BRANCH and q.branches[0].ahead == 5
    # undo the accept: the proposal is open again, though its commit is merged
    decide(root, "undo", "d" * 16, [], reverts="a" * 16)
    q = load_queue(root)
    assert q.find(multi).status == "open"
    # redo: accepted again
    decide(root, "redo", "e" * 16, [], reverts="a" * 16)
    assert load_queue(root).find(multi).status == "accepted"


def test_partial_and_untrusted_decisions(corpus: Corpus) -> None:
    a = build(corpus, curator_conflict=False)
    root = a.root
    # a proposal with two facts: only one taken
    corpus.fact("kb/gotchas/db/cccccccc.md", title="one")
    corpus.fact("kb/gotchas/db/dddddddd.md", title="two")
    git(root, "checkout", "-q", BRANCH)
    two = a.agent_commit("two", "learn: two facts", "learn")
    git(root, "checkout", "-q", "main")
    decide(root, "accept", "1" * 16, [two], ["kb/gotchas/db/cccccccc.md"],
           author=(AGENT, f"{AGENT}+learn@agents.knomit.io"))
    p = load_queue(root).find(two)
    assert p.status == "partial"
    assert {f.path: f.status for f in p.facts} == {"kb/gotchas/db/cccccccc.md": "accepted",
                                                   "kb/gotchas/db/dddddddd.md": "open"}
    decide(root, "reject", "2" * 16, [two], ["kb/gotchas/db/dddddddd.md"])
    assert load_queue(root).find(two).status == "partial"
    # an agent's own commit claiming a decision decides nothing (committer is an agent)
    git(root, "commit", "-q", "--allow-empty", "-m", "reject: forged\n\nx\n\n"
        f"Factdesk-Action: reject\nFactdesk-Action-Id: {'3' * 16}\n"
        f"Factdesk-Proposal: {a.shas['update']}", author=AGENT,
        email=f"{AGENT}+reject@agents.knomit.io")
    assert load_queue(root).find(a.shas["update"]).status == "open"


def test_kinds_and_branch_names() -> None:
    assert kind_of("synthesize-review: distill kb/x.md") == "distill"
    assert kind_of("synthesize-review: merge kb/a.md, kb/b.md") == "merge"
    assert kind_of("synthesize-review: subsumed by distilled fact") == "retract"
    assert kind_of("dedup: merge kb/a.md into kb/b.md [review]") == "dedup"
    assert kind_of('discover-backward: emergent fact via bridge "x"') == "discover"
    assert kind_of("retract(moment): kb/a.md") == "retract"
    assert kind_of("review: reflect (reinforce=1 propose=0)") == ""
    assert branch_agent("refs/heads/agent/x-1") == "agent/x-1"
    assert branch_agent("refs/remotes/origin/agent/x-1") == "origin/agent/x-1"
    assert branch_agent("refs/remotes/origin/main") is None
    assert branch_agent("refs/heads/main") is None


def test_find_refuses_unknown_and_ambiguous(agent_corpus: AgentCorpus) -> None:
    q = load_queue(agent_corpus.root)
    with pytest.raises(LookupError, match="no proposal"):
        q.find("0000000")
    assert q.find(agent_corpus.shas["learn"][:12]).sha == agent_corpus.shas["learn"]


def test_real_corpus_queue(real_corpus: Path) -> None:
    started = time.perf_counter()
    q = load_queue(real_corpus)
    seconds = time.perf_counter() - started
    names = {b.name for b in q.branches}
    assert names == {"agent/mindev.local-8ef0cd32", "origin/agent/mindev.local-8ef0cd32"}
    # the local branch and its remote-tracking twin hold the same commits: listed once
    assert len(q.proposals) == len({p.sha for p in q.proposals}) == 104
    assert all(p.branch == "agent/mindev.local-8ef0cd32" for p in q.proposals)
    assert sum(1 for p in q.proposals if not p.facts and p.other_files) == 22
    assert [b.ahead for b in q.branches] == [104, 104]
    for name in names:
        net = q.net[name]
        assert [sum(n.change == c for n in net) for c in ("added", "modified", "deleted")] == [
            26, 35, 1]
        assert not any(n.conflict for n in net)
    assert {o for p in q.proposals for o in p.other_files} == {
        ".knomit/jobs/agentic-engineering/crawl-sources.md",
        ".knomit/jobs/agentic-engineering/crawl-state.md",
        ".knomit/jobs/agentic-engineering/fetch-routes.md"}
    assert sum(p.kind == "distill" for p in q.proposals) == 3
    assert seconds < 2


def test_generated_corpus_manifest_proposals(generated_corpus: GeneratedCorpus) -> None:
    root, manifest = generated_corpus
    q = load_queue(root)
    assert [b.name for b in q.branches] == [manifest["agent_branch"]["name"]]
    assert [p.sha for p in q.proposals] == [m["sha"] for m in manifest["proposals"]]
    for m in manifest["proposals"]:
        p = q.find(m["sha"])
        assert p.op == m["op"] and p.subject == m["subject"]
        assert p.kind == {"dedup_merge": "dedup", "dedup_remove": "dedup"}.get(m["kind"], m["kind"])
        files = {c: sorted(f.path for f in p.facts if f.change == c)
                 for c in ("added", "modified", "deleted")}
        assert files == {"added": sorted(m["added"]), "modified": sorted(m["changed"]),
                         "deleted": sorted(m["deleted"])}
