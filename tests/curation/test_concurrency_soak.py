"""Soak of the concurrency cases of issue 15 (RELIABILITY.md §3.5, D08, E06, E09, E10): in
each round an agent process (or a second factdesk process) does its move after a random
delay while this process relabels, so the moves land before, inside and after the action
at random. After every round the invariants are checked and each breach is counted as a
violation; the test fails on any.

    agent commit -a   an agent's `git commit -qam autosave` (it takes in whatever is on disk)
    staged target     an agent stages the deletion of the fact factdesk relabels
    branch switch     an agent runs `git checkout -b` in the same work tree
    two factdesk      a second factdesk process recovers and relabels (the same file in half
                      the rounds), both updating the one SQLite index

Checked each round: every acknowledged commit is on main's first-parent line; the fact on
disk equals HEAD's and git's index equals HEAD's for it (else the action's error said so);
the agent's staged deletion is still staged; no false "recovered" report. At the end:
main is linear, `git fsck` is clean, and (two factdesk) the index equals a rebuild.

The fast variant (10 rounds a case) runs in the normal suite; the slow one (SOAK_ROUNDS,
default 120) runs with `-m slow`, e.g. `make bench` or
`pytest -m slow -s tests/curation/test_concurrency_soak.py`.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from factdesk.core import open_corpus
from factdesk.curation import Curation, CurationError, recover
from factdesk.curation.gitwrite import pending_actions
from factdesk.index.indexer import Indexer
from tests.conftest import Corpus
from tests.index.test_indexer import dump

A = "kb/gotchas/db/a1a1a1a1.md"
B = "kb/gotchas/db/b2b2b2b2.md"
TYPES = ["pattern", "concept", "observation", "process"]
SLOW_ROUNDS = int(os.environ.get("SOAK_ROUNDS", "120"))
CASES = ["agent commit -a", "staged target", "branch switch", "two factdesk"]
AGENT_ENV = {"GIT_AUTHOR_NAME": "codex", "GIT_AUTHOR_EMAIL": "codex+update@agents.knomit.io",
             "GIT_COMMITTER_NAME": "codex", "GIT_COMMITTER_EMAIL": "codex@agents.knomit.io"}


def _git(repo: Path, *args: str, ok: tuple[bytes, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    """An agent's git call: retried while another git process holds a lock."""
    for _ in range(200):
        proc = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-C", str(repo), *args],
                              capture_output=True, env={**os.environ, **AGENT_ENV})
        if proc.returncode == 0 or any(s in proc.stdout + proc.stderr for s in ok) or (
                ok and not proc.stderr.strip()):  # `commit -q` with nothing to commit says nothing
            return proc
        if b".lock" not in proc.stderr and b"cannot lock ref" not in proc.stderr:
            raise RuntimeError(f"git {args}: {proc.stderr.decode()}")
        time.sleep(0.005)
    raise RuntimeError(f"git {args}: gave up on locks")


def _out(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True,
                          text=True).stdout


def _blob(repo: Path, rev: str, path: str) -> str | None:
    proc = subprocess.run(["git", "-C", str(repo), "rev-parse", "-q", "--verify", f"{rev}:{path}"],
                          capture_output=True, text=True)
    return proc.stdout.strip() or None


def _staged(repo: Path, path: str) -> str | None:
    out = _out(repo, "ls-files", "-s", "--", path).split()
    return out[1] if out else None


def _disk(repo: Path, path: str) -> str | None:
    file = repo / path
    if not file.exists():
        return None
    return subprocess.run(["git", "hash-object", "--no-filters", "--", str(file)], capture_output=True,
                          check=True, text=True).stdout.strip()


# -- the other writer, one move per round -------------------------------------------------------


def _agent(case: str, repo: Path, rounds: int, seed: int, start: object, end: object) -> None:
    rng = random.Random(seed)
    for i in range(rounds):
        start.wait(60)  # type: ignore[attr-defined]
        time.sleep(rng.uniform(0, 0.12))
        if case == "agent commit -a":
            _git(repo, "commit", "-qam", f"autosave {i}", ok=(b"nothing to commit", b"no changes added"))
        elif case == "staged target":
            _git(repo, "rm", "-q", "--cached", "-f", "--", A)
        elif case == "branch switch":
            _git(repo, "checkout", "-q", "-b", f"agent-{i}")
        end.wait(60)  # type: ignore[attr-defined]


def _second_factdesk(repo: Path, rounds: int, seed: int, start: object, end: object,
                     results: object) -> None:
    rng = random.Random(seed)
    cur = Curation(open_corpus(repo))
    for i in range(rounds):
        start.wait(60)  # type: ignore[attr-defined]
        time.sleep(rng.uniform(0, 0.12))
        reports = [r.message for r in recover(repo)]  # what every CLI command does first
        path = A if i % 2 else B
        try:
            done = cur.relabel([path], {"type": TYPES[(i + 1) % 4]}, f"second {i}")
            outcome = ("acked", done.commit, reports)
        except CurationError as exc:
            outcome = ("refused", str(exc), reports)
        except Exception as exc:
            outcome = ("crashed", f"{type(exc).__name__}: {exc}", reports)
        results.put(outcome)  # type: ignore[attr-defined]
        end.wait(60)  # type: ignore[attr-defined]


# -- the soak -----------------------------------------------------------------------------------


def soak(corpus: Corpus, case: str, rounds: int, seed: int = 15) -> tuple[Counter[str], list[str]]:
    repo = corpus.root
    ctx = multiprocessing.get_context("fork")
    start, end = ctx.Barrier(2), ctx.Barrier(2)
    results = ctx.Queue()
    if case == "two factdesk":
        Indexer(repo).update()
        other = ctx.Process(target=_second_factdesk, args=(repo, rounds, seed + 1, start, end, results))
    else:
        other = ctx.Process(target=_agent, args=(case, repo, rounds, seed + 1, start, end))
    other.start()
    cur = Curation(open_corpus(repo), update_index=case == "two factdesk")
    rng = random.Random(seed)
    acked: list[str] = []
    stats: Counter[str] = Counter()
    violations: list[str] = []

    def violation(i: int, what: str) -> None:
        violations.append(f"{case} round {i}: {what}")

    try:
        for i in range(rounds):
            start.wait(60)
            time.sleep(rng.uniform(0, 0.04))
            said = ""
            try:
                done = cur.relabel([A], {"type": TYPES[i % 4]}, f"round {i}")
                assert done.commit and done.committed
                if done.committed.branch == "refs/heads/main":
                    acked.append(done.commit)
                    stats["acked"] += 1
                else:  # the agent had switched before the action began: it acts there
                    stats["acked on the agent's branch"] += 1
                    if done.commit not in _out(repo, "rev-list", done.committed.branch).split():
                        violation(i, f"acknowledged commit lost from {done.committed.branch}")
                if done.committed and done.committed.warnings:
                    stats["acked with a warning"] += 1
                    said = " ".join(done.committed.warnings)
            except CurationError as exc:
                said = str(exc)
                stats[f"refused: {_kind(said)}"] += 1
            except Exception as exc:
                violation(i, f"crashed: {type(exc).__name__}: {exc}")
            end.wait(60)
            if case == "two factdesk":
                kind, detail, reports = results.get(timeout=60)
                if kind == "acked":
                    acked.append(detail)
                    stats["second acked"] += 1
                elif kind == "refused":
                    stats[f"second refused: {_kind(detail)}"] += 1
                else:
                    violation(i, f"second factdesk {kind}: {detail}")
                if reports:
                    violation(i, f"a live action taken for an interrupted one: {reports}")
            _check_round(repo, case, i, said, violation)
            _reset(repo, case, i)
    finally:
        other.join(60)
        if other.is_alive():
            other.kill()
    _check_end(repo, case, acked, violation)
    stats["rounds"] = rounds
    return stats, violations


def _kind(message: str) -> str:
    for key in ("took in this change", "switched", "staged by another writer", "branch moved",
                "changed on disk", "another factdesk action", "uncommitted", "kept moving"):
        if key in message:
            return key
    return message[:60]


def _check_round(repo: Path, case: str, i: int, said: str, violation: Callable[[int, str], None]) -> None:
    head, disk, staged = _blob(repo, "HEAD", A), _disk(repo, A), _staged(repo, A)
    if disk != head and "still hold" not in said:  # a divergence must have been said
        violation(i, f"the disk ({disk}) differs from HEAD ({head}) for {A}, unreported; main has "
                     f"{_blob(repo, 'main', A)}, the action said: {said or 'nothing'}")
    if case == "staged target":
        if staged is not None:
            violation(i, "the agent's staged deletion was thrown away")
        if head is None:
            violation(i, "the agent's staged deletion was committed by factdesk")
    elif staged != head and "still hold" not in said:
        violation(i, f"git's index ({staged}) differs from HEAD ({head}) for {A}")
    if case == "branch switch":
        branch = _out(repo, "symbolic-ref", "HEAD").strip()
        if branch != f"refs/heads/agent-{i}":
            violation(i, f"HEAD is {branch}, not the agent's branch")
    if pending_actions(repo) and case != "two factdesk":
        violation(i, f"a journal was left: {pending_actions(repo)}")


def _reset(repo: Path, case: str, i: int) -> None:
    if case == "staged target":
        _git(repo, "reset", "-q", "--", A)
    elif case == "branch switch":
        _git(repo, "checkout", "-q", "main")
        _git(repo, "branch", "-q", "-D", f"agent-{i}")


def _check_end(repo: Path, case: str, acked: list[str], violation: Callable[[int, str], None]) -> None:
    line = set(_out(repo, "rev-list", "--first-parent", "main").split())
    lost = [sha for sha in acked if sha not in line]
    if lost:
        violation(-1, f"acknowledged commits lost from main: {lost}")
    if _out(repo, "rev-list", "--merges", "main").strip():
        violation(-1, "main is not linear")
    fsck = subprocess.run(["git", "-C", str(repo), "fsck", "--no-dangling"], capture_output=True)
    if fsck.returncode != 0:
        violation(-1, f"git fsck: {fsck.stderr.decode()}")
    if _out(repo, "status", "--porcelain").strip():
        violation(-1, f"the work tree is not clean: {_out(repo, 'status', '--porcelain')}")
    if case == "two factdesk":
        recover(repo)  # the second process's deferred work, if any
        inc = Indexer(repo, today=date(2026, 11, 30))
        inc.update()
        fresh = Indexer(repo, today=date(2026, 11, 30))
        incremental = dump(inc)
        fresh.update(rebuild=True)
        if dump(fresh) != incremental:
            violation(-1, "the index differs from a rebuild (I1)")


@pytest.mark.parametrize("case", CASES)
def test_concurrency_soak_fast(corpus: Corpus, case: str) -> None:
    stats, violations = soak(corpus, case, rounds=10)
    assert not violations, (stats, violations)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_concurrency_soak(corpus: Corpus, case: str) -> None:
    began = time.monotonic()
    stats, violations = soak(corpus, case, rounds=SLOW_ROUNDS)
    print(f"\nsoak [{case}] {dict(stats)}; {len(violations)} violations; "
          f"{time.monotonic() - began:.0f} s", *violations[:5], sep="\n")
    assert not violations, (stats, violations[:20])
