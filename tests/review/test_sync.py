"""review.sync with real repositories: a bare remote and curator clones that curate with
factdesk's own actions and sync (issue 13, "Sync: git is the distributed engine")."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from factdesk.core import open_corpus
from factdesk.corpus import gitremote
from factdesk.curation import Curation, Refused
from factdesk.curation.trust import trusted_decisions
from factdesk.curation.undo import read_stacks
from factdesk.review.sync import SyncConflict, sync
from tests.conftest import Corpus, git

A = "kb/gotchas/db/a1a1a1a1.md"
B = "kb/gotchas/db/b2b2b2b2.md"
C = "kb/decisions/api/c3c3c3c3.md"


@dataclass
class Team:
    bare: Path
    ana: Path
    bob: Path

    def curation(self, who: Path) -> Curation:
        ix = open_corpus(who)
        ix.update()
        return Curation(ix)


def clone_as(bare: Path, dest: Path, name: str) -> Path:
    gitremote.clone(str(bare), dest)
    git(dest, "config", "user.name", name)
    git(dest, "config", "user.email", f"{name}@example.org")
    return dest


@pytest.fixture
def team(corpus: Corpus, tmp_path: Path) -> Team:
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(corpus.root), str(bare))
    return Team(bare, clone_as(bare, tmp_path / "ana", "ana"), clone_as(bare, tmp_path / "bob", "bob"))


def tip(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "rev-parse", rev).strip()


def parents(repo: Path, rev: str) -> list[str]:
    return git(repo, "rev-list", "--parents", "-n1", rev).split()[1:]


def fsck(repo: Path) -> None:
    out = subprocess.run(["git", "-C", str(repo), "fsck", "--no-dangling", "--strict"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0 and "error" not in out.stderr, out.stderr


def state(repo: Path) -> tuple[str, str, str, dict[str, bytes]]:
    files = {p.relative_to(repo).as_posix(): p.read_bytes() for p in sorted(repo.rglob("*"))
             if p.is_file() and ".git" not in p.relative_to(repo).parts}
    return tip(repo), git(repo, "status", "--porcelain"), git(repo, "ls-files", "-s"), files


def test_fast_forward_then_push(team: Team) -> None:
    team.curation(team.ana).relabel([A], {"type": "insight"}, "an insight")
    done = sync(team.ana)
    assert done.joined == "ahead" and done.pushed is not None and done.pushed.status == "pushed"
    assert tip(team.bare, "main") == tip(team.ana)
    got = sync(team.bob)
    assert got.joined == "fast-forward" and got.incoming == 1 and got.merge is None
    assert tip(team.bob) == tip(team.ana)
    assert (team.bob / A).read_bytes() == (team.ana / A).read_bytes()
    assert git(team.bob, "status", "--porcelain") == ""
    assert got.pushed is not None and got.pushed.status == "up-to-date"
    again = sync(team.bob)
    assert again.joined == "up-to-date" and again.incoming == 0


def test_both_curated_different_facts_join_with_a_true_merge(team: Team) -> None:
    ana = team.curation(team.ana).relabel([A], {"type": "insight"}, "ana's call")
    bob = team.curation(team.bob).relabel([B], {"type": "insight"}, "bob's call")
    sync(team.ana)
    bob_before = tip(team.bob)
    done = sync(team.bob)
    assert done.joined == "merged" and done.merge == tip(team.bob) and done.incoming == 1
    assert parents(team.bob, "HEAD") == [bob_before, tip(team.ana)]  # first ours, then theirs
    assert git(team.bob, "log", "-1", "--format=%cn <%ce>|%ae").strip() == \
        "bob <bob@example.org>|bob+sync@example.org"
    assert done.pushed is not None and done.pushed.status == "pushed"
    assert (team.bob / A).read_bytes() == (team.ana / A).read_bytes()
    assert "type: insight" in (team.bob / B).read_text()
    assert git(team.bob, "status", "--porcelain") == ""
    back = sync(team.ana)
    assert back.joined == "fast-forward"
    assert tip(team.ana) == tip(team.bob) == tip(team.bare, "main")
    for repo in (team.ana, team.bob, team.bare):
        fsck(repo)
    # both decisions are trusted on both sides (trust follows the sync merge's second parent)
    for repo in (team.ana, team.bob):
        ids = {d.action_id for d in trusted_decisions(repo)}
        assert {ana.action_id, bob.action_id} <= ids
        undo, _ = read_stacks(repo)
        assert {r.action_id for r in undo} == {ana.action_id, bob.action_id}
    # and undo works on the other curator's decision too: a new commit, nothing rewritten
    team.curation(team.ana).undo()
    assert "type: insight" not in (team.ana / A).read_text()  # ana's own, the newest
    # (the stacks order: bob's line first, then ana's decision arriving through the merge)


def test_the_same_fact_changed_on_both_sides_stops_and_changes_nothing(team: Team) -> None:
    team.curation(team.ana).relabel([A], {"type": "insight"}, "ana's call")
    team.curation(team.bob).relabel([A], {"type": "reference"}, "bob's call")
    team.curation(team.bob).relabel([B], {"type": "insight"}, "another")
    sync(team.ana)
    remote_before = tip(team.bare, "main")
    before = state(team.bob)
    with pytest.raises(SyncConflict) as caught:
        sync(team.bob)
    assert caught.value.paths == [A]
    conflict = caught.value.conflicts[0]
    assert conflict.ours == git(team.bob, "log", "-1", "--format=%H", "--", A).strip()
    assert conflict.theirs == tip(team.ana)
    assert A in str(caught.value) and conflict.ours[:12] in str(caught.value)
    assert conflict.theirs[:12] in str(caught.value)
    assert state(team.bob) == before
    assert tip(team.bare, "main") == remote_before
    assert not (team.bob / ".git" / "MERGE_HEAD").exists()


def test_the_same_change_on_both_sides_is_no_conflict(team: Team) -> None:
    team.curation(team.ana).relabel([A], {"type": "insight"}, "ana's call")
    team.curation(team.bob).relabel([A], {"type": "insight"}, "bob agrees")
    sync(team.ana)
    assert sync(team.bob).joined == "merged"
    sync(team.ana)
    assert tip(team.ana) == tip(team.bob)


def test_uncommitted_work_is_never_touched(team: Team) -> None:
    team.curation(team.ana).relabel([A], {"type": "insight"}, "ana's call")
    sync(team.ana)
    team.curation(team.bob).relabel([B], {"type": "insight"}, "bob's call")
    (team.bob / C).write_text((team.bob / C).read_text() + "\nbob's draft\n")  # unstaged
    (team.bob / "kb" / "new.md").write_text("untracked draft\n")
    (team.bob / "README.md").write_text("staged\n")
    git(team.bob, "add", "README.md")
    draft = (team.bob / C).read_bytes()
    index_readme = git(team.bob, "ls-files", "-s", "README.md")
    done = sync(team.bob)
    assert done.joined == "merged"
    assert (team.bob / C).read_bytes() == draft
    assert (team.bob / "kb" / "new.md").read_text() == "untracked draft\n"
    assert git(team.bob, "ls-files", "-s", "README.md") == index_readme
    assert sorted(git(team.bob, "status", "--porcelain").splitlines()) == sorted([
        "?? kb/new.md", " M kb/decisions/api/c3c3c3c3.md", "M  README.md"])
    # the README change was never committed, the draft never swept in
    assert "bob's draft" not in git(team.bob, "show", f"HEAD:{C}")


def test_uncommitted_work_on_an_incoming_file_refuses_and_changes_nothing(team: Team) -> None:
    team.curation(team.ana).relabel([A], {"type": "insight"}, "ana's call")
    sync(team.ana)
    (team.bob / A).write_text((team.bob / A).read_text() + "\nbob's draft\n")
    before = state(team.bob)
    with pytest.raises(Refused, match=A):
        sync(team.bob)
    assert state(team.bob) == before


def test_detached_head_and_a_merge_in_progress_are_refused(team: Team) -> None:
    git(team.bob, "checkout", "-q", "--detach")
    with pytest.raises(Refused, match="detached"):
        sync(team.bob)
    git(team.bob, "checkout", "-q", "main")
    (team.bob / ".git" / "MERGE_HEAD").write_text(tip(team.bob) + "\n")
    with pytest.raises(Refused, match="merge is in progress"):
        sync(team.bob)


def test_a_rejected_push_is_a_result_and_never_forced(team: Team) -> None:
    """The local branch rewritten behind factdesk's back: push says rejected, the remote keeps
    its commits (no `+`, no --force, even with a forcing refspec configured)."""
    team.curation(team.ana).relabel([A], {"type": "insight"}, "ana's call")
    sync(team.ana)
    remote_tip = tip(team.bare, "main")
    git(team.bob, "config", "remote.origin.push", "+refs/heads/*:refs/heads/*")
    git(team.bob, "config", "push.default", "matching")
    (team.bob / "kb" / "other.md").write_text("x\n")
    git(team.bob, "add", "-A")
    git(team.bob, "commit", "-qm", "learn: other", author="bob", email="bob@example.org")
    result = gitremote.push(team.bob, "origin", "main")
    assert result.rejected and result.status == "rejected"
    assert "fetch first" in result.message or "non-fast-forward" in result.message
    assert tip(team.bare, "main") == remote_tip


def test_agent_branches_arrive_as_remote_tracking_refs(team: Team, tmp_path: Path) -> None:
    agent = clone_as(team.bare, tmp_path / "agent", "codex")
    git(agent, "checkout", "-q", "-b", "agent/box-0123abcd")
    (agent / "kb" / "gotchas" / "db" / "d4d4d4d4.md").write_text("---\ntype: fact\n---\n# new\n")
    git(agent, "add", "-A")
    git(agent, "commit", "-qm", "learn: d4")
    git(agent, "push", "-q", "origin", "agent/box-0123abcd")
    done = sync(team.ana)
    assert [u.ref for u in done.agent_updates] == ["refs/remotes/origin/agent/box-0123abcd"]
    assert done.agent_updates[0].old is None
    assert tip(team.ana, "refs/remotes/origin/agent/box-0123abcd") == tip(agent)
    # never a local branch from the fetch
    assert git(team.ana, "for-each-ref", "--format=%(refname)", "refs/heads/") == "refs/heads/main\n"
