"""Another writer in the same checkout at the worst moment of an action (issue 15 #3, #4,
#5, #8, #9; RELIABILITY.md D08, E06, E10, §3.2, §3.5): an agent's `git commit -a` between
factdesk's file replace and its ref update, a staged target, a branch switch, a full disk,
and two factdesk processes. The agent's moves run in-process at the write path's named
points (`faults.at`), so each interleaving is exact; `test_soak.py` runs them at random
times instead."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from factdesk import faults, fsio
from factdesk.core import open_corpus
from factdesk.corpus.gitrepo import GitError
from factdesk.curation import Conflict, Curation, Refused, gitwrite, recover
from factdesk.curation.gitwrite import Failed, pending_actions
from tests.conftest import Corpus, git

A = "kb/gotchas/db/a1a1a1a1.md"
B = "kb/gotchas/db/b2b2b2b2.md"


def agent(repo: Path, *args: str) -> str:
    return git(repo, *args, author="codex", email="codex+update@agents.knomit.io")


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def at_head(repo: Path, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{path}"], capture_output=True,
                          check=True).stdout


def staged_blob(repo: Path, path: str) -> str | None:
    out = git(repo, "ls-files", "-s", "--", path).split()
    return out[1] if out else None


def status(repo: Path) -> str:
    return git(repo, "status", "--porcelain")


@pytest.fixture
def cur(corpus: Corpus) -> Curation:
    ix = open_corpus(corpus.root)
    ix.update()
    return Curation(ix, update_index=False)


def run_cli(repo: Path, *args: str, crash_at: str | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "FACTDESK_CURATOR_NAME": "ana", "FACTDESK_CURATOR_EMAIL": "ana@example.org"}
    if crash_at:
        env[faults.ENV] = crash_at
    return subprocess.run([sys.executable, "-m", "factdesk.cli", *args, "--kb", str(repo)],
                          capture_output=True, env=env, timeout=120)


# -- #3: an agent's `git commit -a` takes factdesk's change in --------------------------------


def test_an_agent_commit_a_that_takes_our_change_in_is_never_reverted(corpus: Corpus, cur: Curation) -> None:
    repo = corpus.root
    old = (repo / A).read_bytes()
    with faults.at("commit.before_cas", lambda: agent(repo, "commit", "-qam", "autosave")), \
            pytest.raises(Conflict, match=r"autosave.*took in this change") as caught:
        cur.relabel([A], {"type": "pattern"}, "a pattern")
    assert "codex" in str(caught.value)
    # HEAD is the agent's commit, holding the relabel: the disk agrees with it (before the
    # fix, the old bytes were put back, and the agent's next commit -a reverted the relabel)
    assert at_head(repo, A) == (repo / A).read_bytes() == old.replace(b"observation", b"pattern")
    assert status(repo) == "" and not pending_actions(repo)
    assert "nothing to commit" in subprocess.run(
        ["git", "-C", str(repo), "commit", "-am", "autosave 2"], capture_output=True, text=True).stdout


def _commit_in_flight(repo: Path, path: str, seconds: float) -> threading.Thread:
    """An agent's `git commit -a` caught in flight, as git does it: it has read the work
    tree (our new bytes) and holds git's index.lock and the branch's lock; `seconds` later
    its commit lands (the branch lock renamed onto the ref) and it lets the index go."""
    gd = repo / ".git"
    data = (repo / path).read_bytes()
    (gd / "index.lock").write_bytes((gd / "index").read_bytes())
    (gd / "refs/heads/main.lock").write_bytes(b"")

    def land() -> None:
        time.sleep(seconds)
        env = {**os.environ, "GIT_INDEX_FILE": str(gd / "agent-index")}
        blob = subprocess.run(["git", "-C", str(repo), "hash-object", "-w", "--stdin"], input=data,
                              check=True, capture_output=True, text=False).stdout.decode().strip()
        subprocess.run(["git", "-C", str(repo), "read-tree", "HEAD"], env=env, check=True)
        subprocess.run(["git", "-C", str(repo), "update-index", "--cacheinfo",
                        f"100644,{blob},{path}"], env=env, check=True)
        tree = subprocess.run(["git", "-C", str(repo), "write-tree"], env=env, check=True,
                              capture_output=True, text=True).stdout.strip()
        sha = agent(repo, "commit-tree", tree, "-p", head(repo), "-m", "autosave").strip()
        (gd / "refs/heads/main.lock").write_text(sha + "\n")
        os.rename(gd / "refs/heads/main.lock", gd / "refs/heads/main")
        os.rename(gd / "agent-index", gd / "index.lock")  # (git's index, with our path)
        os.rename(gd / "index.lock", gd / "index")

    thread = threading.Thread(target=land)
    thread.start()
    return thread


def test_an_agent_commit_in_flight_is_waited_for_never_reverted(corpus: Corpus, cur: Curation) -> None:
    """The soak's rarest round (it failed once in a loaded full run): the agent's commit -a
    had read our new bytes and held the branch's lock when our ref update came, so the update
    failed, and the file was put back as HEAD had it *then* — a moment before the agent's
    commit with our bytes landed. The disk disagreed with HEAD, unsaid, and the agent's next
    commit -a would revert the relabel under its name. Now the write path waits for the
    locks a git process in flight holds before it decides, and reads HEAD after."""
    repo = corpus.root
    old = (repo / A).read_bytes()
    flights: list[threading.Thread] = []
    with faults.at("commit.before_cas", lambda: flights.append(_commit_in_flight(repo, A, 0.4))), \
            pytest.raises(Conflict, match=r"took in this change"):
        cur.relabel([A], {"type": "pattern"}, "a pattern")
    for flight in flights:
        flight.join(10)
    assert at_head(repo, A) == (repo / A).read_bytes() == old.replace(b"observation", b"pattern")
    assert not pending_actions(repo)


def test_a_crash_then_an_agent_commit_a_is_recovered_as_committed(corpus: Corpus) -> None:
    repo = corpus.root
    old = (repo / A).read_bytes()
    proc = run_cli(repo, "relabel", A, "--type", "pattern", "--reason", "x", crash_at="action.file_replaced")
    assert proc.returncode == -signal.SIGKILL
    agent(repo, "commit", "-qam", "autosave")
    report = recover(repo)
    assert [r.outcome for r in report] == ["already committed"], report
    assert "took its change in" in report[0].message and "autosave" in report[0].message
    # before the fix: "rolled back", the disk observation while HEAD said pattern
    assert (repo / A).read_bytes() == at_head(repo, A) == old.replace(b"observation", b"pattern")
    assert status(repo) == "" and not pending_actions(repo)


def test_a_crash_then_an_agent_commit_of_another_file_still_completes(corpus: Corpus) -> None:
    """The neighbour: the branch moved, but not over our file: recovery completes our commit
    on the agent's (the tip comparison does not turn every moved branch into a rollback)."""
    repo = corpus.root
    proc = run_cli(repo, "relabel", A, "--type", "pattern", "--reason", "x", crash_at="action.file_replaced")
    assert proc.returncode == -signal.SIGKILL
    corpus.fact("kb/gotchas/db/e5e5e5e5.md", title="Agent fact")
    agent(repo, "add", "kb/gotchas/db/e5e5e5e5.md")
    agent(repo, "commit", "-qm", "learn: agent fact", "--", "kb/gotchas/db/e5e5e5e5.md")
    assert [r.outcome for r in recover(repo)] == ["completed"]
    assert git(repo, "log", "-1", "--format=%s").startswith("relabel: ")
    assert b"type: pattern" in at_head(repo, A) and status(repo) == ""


# -- #4: the agent's staged state for the target ------------------------------------------------


def test_a_staged_deletion_of_the_target_is_refused_and_kept(corpus: Corpus, cur: Curation) -> None:
    repo = corpus.root
    agent(repo, "rm", "-q", "--cached", A)
    h0, before = head(repo), (repo / A).read_bytes()
    with pytest.raises(Refused, match="staged by another writer") as caught:
        cur.relabel([A], {"type": "pattern"}, "p")
    assert caught.value.rule == "staged"
    assert head(repo) == h0 and (repo / A).read_bytes() == before
    assert staged_blob(repo, A) is None  # still staged for deletion (before the fix: gone)
    assert status(repo).splitlines() == [f"D  {A}", f"?? {A}"]


def test_a_staged_other_version_of_the_target_is_refused_and_kept(corpus: Corpus, cur: Curation) -> None:
    repo = corpus.root
    original = (repo / A).read_bytes()
    (repo / A).write_bytes(original.replace(b"0.8", b"0.3"))
    agent(repo, "add", A)
    staged = staged_blob(repo, A)
    (repo / A).write_bytes(original)  # the disk is HEAD's again; only the index differs
    with pytest.raises(Refused, match="another version of it"):
        cur.relabel([A], {"type": "pattern"}, "p")
    assert staged_blob(repo, A) == staged  # before the fix: a dangling blob


def test_a_staged_move_destination_is_refused(corpus: Corpus, cur: Curation) -> None:
    repo = corpus.root
    dest = "kb/gotchas/api/a1a1a1a1.md"
    blob = subprocess.run(["git", "-C", str(repo), "hash-object", "-w", "--stdin"], input=b"agent's\n",
                          capture_output=True, check=True).stdout.decode().strip()
    agent(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{dest}")
    with pytest.raises(Refused, match=f"{dest}: git's index holds another version"):
        cur.move({A: dest}, "reorganise")
    assert staged_blob(repo, dest) == blob


def test_what_an_agent_stages_while_we_commit_is_kept(corpus: Corpus, cur: Curation) -> None:
    """The index sync writes only entries that still hold what they held when the action was
    checked, under git's own index.lock."""
    repo = corpus.root
    with faults.at("commit.ref_updated", lambda: agent(repo, "update-index", "--force-remove", "--", A)):
        result = cur.relabel([A], {"type": "pattern"}, "p")
    assert result.commit == head(repo)
    assert staged_blob(repo, A) is None  # the agent's staged deletion survived our sync
    assert not (repo / ".git/index.lock").exists()


def test_our_own_deferred_sync_is_not_taken_for_staged_work(corpus: Corpus) -> None:
    repo = corpus.root
    ix = open_corpus(repo)
    ix.update()
    cur = Curation(ix, update_index=False, defer_index_sync=True)
    first = cur.relabel([A], {"type": "pattern"}, "first")
    second = cur.relabel([A], {"type": "concept"}, "second")  # the index still holds the old A
    second.finish(repo)
    first.finish(repo)
    assert status(repo) == "" and not pending_actions(repo)
    assert b"type: concept" in at_head(repo, A)


# -- #5: a branch switch during the action ---------------------------------------------------


def test_a_branch_switch_before_the_ref_update_aborts(corpus: Corpus, cur: Curation) -> None:
    repo = corpus.root
    h0, before = head(repo), (repo / A).read_bytes()
    with faults.at("commit.before_cas", lambda: agent(repo, "checkout", "-q", "-b", "other")), \
            pytest.raises(Conflict, match="switched from refs/heads/main to refs/heads/other"):
        cur.relabel([A], {"type": "pattern"}, "p")
    # before the fix: success reported on main, and the relabel left staged on `other`
    assert git(repo, "rev-parse", "main").strip() == h0
    assert git(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/other"
    assert (repo / A).read_bytes() == before and status(repo) == ""
    assert not pending_actions(repo)


@pytest.mark.parametrize("switch", ["new branch here", "existing branch at the old tip"])
def test_a_branch_switch_right_after_the_ref_update_keeps_the_commit_and_says_so(
        corpus: Corpus, cur: Curation, switch: str) -> None:
    repo = corpus.root
    before = (repo / A).read_bytes()
    if switch == "new branch here":
        args = ["checkout", "-q", "-b", "other"]  # made from main's new tip: it holds the relabel
    else:
        agent(repo, "branch", "other")  # at the old tip: the relabel is not on it
        args = ["checkout", "-q", "other"]
    with faults.at("commit.ref_updated", lambda: agent(repo, *args)):
        result = cur.relabel([A], {"type": "pattern"}, "p")
    assert result.committed is not None
    assert result.commit == git(repo, "rev-parse", "main").strip()
    assert any("switched to refs/heads/other" in w for w in result.committed.warnings)
    # the work tree follows `other`: the file and git's index are as that branch has them
    assert (repo / A).read_bytes() == at_head(repo, A) and status(repo) == ""
    assert ((repo / A).read_bytes() == before) == (switch != "new branch here")


@pytest.mark.parametrize(("point", "deferred"), [("commit.index_synced", False),
                                                 ("commit.published", False),
                                                 ("commit.published", True)])
def test_a_checkout_that_read_head_before_the_ref_moved_is_caught_late_and_said(
        corpus: Corpus, point: str, deferred: bool) -> None:
    """The soak's flake (branch switch round 91: the disk differed from HEAD, unreported):
    `git checkout -b` resolves HEAD (main, at the old tip) first, writes the index, and
    only then makes its branch and points HEAD at it. When the ref moves in between and
    HEAD is read before the checkout writes it, the action looked unswitched, and the work
    tree kept the new bytes under a branch at the old tip. Here the checkout's second half
    lands after the post-update read of HEAD: before factdesk syncs git's index, after it,
    and with the sync deferred (the GUI's way)."""
    repo = corpus.root
    h0, before = head(repo), (repo / A).read_bytes()
    late = lambda: (agent(repo, "branch", "other", h0),  # noqa: E731
                    agent(repo, "symbolic-ref", "HEAD", "refs/heads/other"))
    ix = open_corpus(repo)
    ix.update()
    cur = Curation(ix, update_index=False, defer_index_sync=deferred)
    with faults.at(point, late):
        result = cur.relabel([A], {"type": "pattern"}, "p")
    assert not result.committed or not result.committed.pending_sync  # nothing left to sync
    assert result.committed is not None
    assert result.commit == git(repo, "rev-parse", "main").strip()  # the commit stands
    # before the fix: no warning, the file kept the relabel under `other` (and git's index too)
    said = " ".join(result.committed.warnings)
    assert "switched to refs/heads/other" in said and f"{A} put back" in said
    assert (repo / A).read_bytes() == before == at_head(repo, A) and status(repo) == ""
    assert not pending_actions(repo)


# -- #8: the system fails a write --------------------------------------------------------------


def _enospc(*_a: object, **_k: object) -> None:
    raise fsio.WriteFailed(errno.ENOSPC, "No space left on device", "x")


def test_a_failed_commit_whose_rollback_fails_too_is_never_completed_later(
        corpus: Corpus, cur: Curation, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC injected at the gitwrite/fsio boundary (a real full disk: test_disk_full.py):
    git fails to write the commit, then the old bytes cannot be written back either."""
    repo = corpus.root
    h0, old = head(repo), (repo / A).read_bytes()

    def no_commit(*_a: object, **_k: object) -> str:
        monkeypatch.setattr(fsio, "atomic_write", _enospc)  # the rollback's write fails too
        raise GitError("git commit-tree failed: fatal: unable to write object: No space left on device")

    monkeypatch.setattr(gitwrite, "_build_commit", no_commit)
    with pytest.raises(Failed) as caught:  # words, not a traceback (before: a WriteFailed OSError)
        cur.relabel([A], {"type": "pattern"}, "p")
    said = str(caught.value)
    assert "No space left on device" in said and "Nothing was committed" in said
    assert f"{A} could not be put back" in said and "never completes the action" in said
    assert head(repo) == h0 and (repo / A).read_bytes() != old
    monkeypatch.undo()
    report = recover(repo)  # before the fix: "completed", a commit the user was told had failed
    assert [r.outcome for r in report] == ["rolled back"], report
    assert head(repo) == h0 and (repo / A).read_bytes() == old and status(repo) == ""
    assert not pending_actions(repo)


def test_a_failure_before_the_ref_moves_is_failed_in_words_with_the_files_put_back(
        corpus: Corpus, cur: Curation, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = corpus.root
    snap = corpus.snapshot()

    def no_commit(*_a: object, **_k: object) -> str:
        raise GitError("git commit-tree failed: fatal: No space left on device")

    monkeypatch.setattr(gitwrite, "_build_commit", no_commit)
    with pytest.raises(Failed, match="Nothing was committed; the files were put back"):
        cur.relabel([A, B], {"type": "pattern"}, "p")
    assert corpus.snapshot() == snap and not pending_actions(repo)


def test_a_failure_after_the_ref_moved_is_a_commit_with_a_warning(
        corpus: Corpus, cur: Curation, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = corpus.root
    monkeypatch.setattr(gitwrite, "sync_index", _enospc)
    result = cur.relabel([A], {"type": "pattern"}, "p")  # before the fix: the OSError escaped
    assert result.commit == head(repo) and result.committed is not None
    assert "committed as" in result.committed.warnings[0]
    assert "No space left on device" in result.committed.warnings[0]
    monkeypatch.undo()
    assert [r.outcome for r in recover(repo)] == ["already committed"]
    assert status(repo) == ""


def test_the_cli_says_committed_with_the_warning(corpus: Corpus, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from factdesk.cli import main

    monkeypatch.setenv("FACTDESK_CURATOR_NAME", "ana")
    monkeypatch.setenv("FACTDESK_CURATOR_EMAIL", "ana@example.org")
    monkeypatch.setattr(gitwrite, "sync_index", _enospc)
    code = main(["relabel", A, "--type", "pattern", "--reason", "p", "--kb", str(corpus.root)])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert head(corpus.root)[:12] in out.out
    assert "warning: committed as" in out.err and "Traceback" not in out.err


# -- #9: two factdesk processes ----------------------------------------------------------------


def test_recovery_waits_for_the_lock_before_it_looks_at_journals(corpus: Corpus, cur: Curation) -> None:
    """A second command's recovery while the first is in the middle of its action: before the
    fix it listed the live journal, waited for the lock, then died on FileNotFoundError (or
    reported the other's action as interrupted)."""
    repo = corpus.root
    seen: list[object] = []

    def second_command() -> None:
        try:
            seen.append(recover(repo))
        except BaseException as exc:
            seen.append(exc)

    thread = threading.Thread(target=second_command)

    def start_second() -> None:
        thread.start()
        time.sleep(0.3)  # it is now waiting on the writer lock we hold

    with faults.at("action.journal_written", start_second):
        cur.relabel([A], {"type": "pattern"}, "p")
    thread.join(15)
    assert seen == [[]]


def test_a_journal_held_by_a_live_process_is_not_interrupted(corpus: Corpus) -> None:
    repo = corpus.root
    ix = open_corpus(repo)
    ix.update()
    deferred = Curation(ix, update_index=False, defer_index_sync=True)
    result = deferred.relabel([A], {"type": "pattern"}, "p")
    assert pending_actions(repo)
    proc = run_cli(repo, "undo", "--list")  # another process, while this one still holds it
    assert proc.returncode == 0 and b"recovered" not in proc.stderr
    assert pending_actions(repo)
    result.finish(repo)
    assert not pending_actions(repo) and status(repo) == ""


def test_two_cli_commands_at_once_both_finish(corpus: Corpus) -> None:
    repo = corpus.root
    env = {**os.environ, "FACTDESK_CURATOR_NAME": "ana", "FACTDESK_CURATOR_EMAIL": "ana@example.org"}
    procs = [subprocess.Popen([sys.executable, "-m", "factdesk.cli", "relabel", path, "--type", "pattern",
                               "--reason", "both", "--kb", str(repo)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for path in (A, B)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert all(b"Traceback" not in err and b"recovered" not in err for _, err in outs)
    assert b"type: pattern" in at_head(repo, A) and b"type: pattern" in at_head(repo, B)
    assert status(repo) == ""


def test_journal_temp_files_a_kill_left_are_removed(corpus: Corpus, cur: Curation) -> None:
    repo = corpus.root
    cur.relabel([A], {"type": "pattern"}, "p")
    journal_dir = repo / ".git/factdesk/journal"
    left = journal_dir / f"{fsio.TEMP_PREFIX}0123456789ab"
    left.write_bytes(b'{"action_id": "half')  # a journal write killed before its rename
    assert recover(repo) == []
    assert not left.exists()


def test_a_file_name_with_glob_characters_is_one_path_to_git(corpus: Corpus, cur: Curation) -> None:
    """The neighbour of the tip comparisons: git reads `--` arguments as pathspecs, so
    `[ab]1a1a1a1.md` matched `a1a1a1a1.md` too, and an agent's commit to that other file
    was taken for a change to ours (a spurious Conflict). Every pathspec is literal."""
    repo = corpus.root
    odd = "kb/gotchas/db/[ab]1a1a1a1.md"
    corpus.fact(odd, title="A fact whose name has brackets")
    corpus.commit("learn: odd name")
    seen = head(repo)
    (repo / A).write_bytes((repo / A).read_bytes().replace(b"0.8", b"0.6"))
    agent(repo, "commit", "-qam", "update: the other file")
    done = cur.relabel([odd], {"type": "pattern"}, "p", expected_head=seen)
    assert done.commit == head(repo)
