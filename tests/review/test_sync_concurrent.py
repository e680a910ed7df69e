"""Two curators and an agent at once (issue 13): the agent pushes its agent/<host>-<8hex>
branch while both curators curate with factdesk's own actions and sync, in threads, against
one bare remote. No decision and no agent commit is lost, `git fsck` is clean, and both
curators end with the same main."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from factdesk.core import open_corpus
from factdesk.curation import Conflict, Curation
from factdesk.curation.trust import trusted_decisions
from factdesk.review.sync import sync
from tests.conftest import Corpus, git
from tests.review.test_sync import clone_as, fsck, tip

ROUNDS = 4
AGENT_COMMITS = 6
BRANCH = "agent/box-0123abcd"


def test_two_curators_and_an_agent_sync_concurrently(corpus: Corpus, tmp_path: Path) -> None:
    ana_facts = [f"kb/gotchas/db/ana{i}.md" for i in range(ROUNDS)]
    bob_facts = [f"kb/gotchas/db/bob{i}.md" for i in range(ROUNDS)]
    for path in ana_facts + bob_facts:
        corpus.fact(path, title=f"Fact {Path(path).stem}")
    corpus.commit("learn: facts to curate")
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(corpus.root), str(bare))
    ana = clone_as(bare, tmp_path / "ana", "ana")
    bob = clone_as(bare, tmp_path / "bob", "bob")
    agent = clone_as(bare, tmp_path / "agent", "codex")
    git(agent, "checkout", "-q", "-b", BRANCH)

    decisions: dict[str, list[tuple[str, str]]] = {"ana": [], "bob": []}  # (action id, commit)
    agent_commits: list[str] = []
    errors: list[BaseException] = []
    go = threading.Barrier(3)

    def curator(name: str, repo: Path, facts: list[str]) -> None:
        try:
            go.wait()
            for i, path in enumerate(facts):
                ix = open_corpus(repo)
                ix.update()
                done = Curation(ix).relabel([path], {"type": "insight"}, f"{name} round {i}")
                assert done.commit is not None
                decisions[name].append((done.action_id, done.commit))
                for _ in range(5):
                    try:
                        sync(repo)
                        break
                    except Conflict:
                        time.sleep(0.05)  # the branch moved under the join: sync again
        except BaseException as exc:
            errors.append(exc)

    def agent_work() -> None:
        try:
            go.wait()
            for i in range(AGENT_COMMITS):
                (agent / "kb" / "gotchas" / "db" / f"agent{i}.md").write_text(
                    f"---\ntype: observation\n---\n# Agent fact {i}\n")
                git(agent, "add", "-A")
                git(agent, "commit", "-qm", f"learn: agent fact {i}")
                agent_commits.append(tip(agent))
                git(agent, "push", "-q", "origin", BRANCH)
                time.sleep(0.1)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=curator, args=("ana", ana, ana_facts)),
               threading.Thread(target=curator, args=("bob", bob, bob_facts)),
               threading.Thread(target=agent_work)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors
    # settle: each syncs until both agree with the remote
    for _ in range(4):
        sync(ana)
        sync(bob)
        if tip(ana) == tip(bob) == tip(bare, "main"):
            break
    final = tip(bare, "main")
    assert tip(ana) == tip(bob) == final
    for repo in (ana, bob):
        assert git(repo, "status", "--porcelain") == ""
        trusted = {d.action_id for d in trusted_decisions(repo)}
        for name in ("ana", "bob"):
            for action_id, commit in decisions[name]:
                git(repo, "merge-base", "--is-ancestor", commit, "HEAD")  # (raises if lost)
                assert action_id in trusted, (name, action_id)
        for path in ana_facts + bob_facts:
            assert "type: insight" in (repo / path).read_text(), path
        # every agent commit arrived, on the remote-tracking agent branch
        assert tip(repo, f"refs/remotes/origin/{BRANCH}") == agent_commits[-1]
        for commit in agent_commits:
            git(repo, "merge-base", "--is-ancestor", commit, f"refs/remotes/origin/{BRANCH}")
    assert tip(bare, BRANCH) == agent_commits[-1]
    for repo in (ana, bob, bare):
        fsck(repo)
    # nothing was rewritten: every merge is a true merge with the curator as committer
    for line in git(ana, "log", "--merges", "--format=%P|%ce", final).splitlines():
        parents, committer = line.split("|")
        assert len(parents.split()) == 2 and committer in ("ana@example.org", "bob@example.org")
