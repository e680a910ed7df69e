"""Shared fixtures: real git corpora built in tmp_path, and the shared corpora when present."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
BUNDLE = SHARED / "corpora" / "agentic-engineering-kb.bundle"
MAKE_CORPUS = SHARED / "bench" / "make_corpus.py"
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_DATE": "2026-11-01T10:00:00Z",
    "GIT_COMMITTER_DATE": "2026-11-01T10:00:00Z",
}

GOOD_FACT = """---
type: {type}
domain: [ledger-api, reliability]
confidence: 0.8
sources: 1
entities: [Postgres]
refs: [{refs}]
---
# {title}

{body}
"""


def git(repo: Path, *args: str, author: str = "claude-code",
        email: str = "claude-code+learn@agents.knomit.io", env: dict[str, str] | None = None
        ) -> str:
    full_env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": email,
                "GIT_COMMITTER_NAME": author, "GIT_COMMITTER_EMAIL": email, **(env or {})}
    out = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-C", str(repo), *args],
                         capture_output=True, env=full_env, check=True)
    return out.stdout.decode()


class Corpus:
    """A small real knomit corpus in a git repository, for tests."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, rel: str, text: str | bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        return path

    def fact(self, rel: str, *, title: str = "A fact", type: str = "observation",
             refs: str = "", body: str = "Body text with 3 numbers.") -> Path:
        return self.write(rel, GOOD_FACT.format(type=type, title=title, refs=refs, body=body))

    def commit(self, message: str, *, author: str = "claude-code", op: str = "learn") -> str:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-qm", message, author=author,
            email=f"{author}+{op}@agents.knomit.io")
        return git(self.root, "rev-parse", "HEAD").strip()

    def snapshot(self) -> dict[str, bytes]:
        out = {}
        for p in sorted(self.root.rglob("*")):
            if p.is_file() and ".git" not in p.relative_to(self.root).parts:
                out[p.relative_to(self.root).as_posix()] = p.read_bytes()
        out["HEAD"] = git(self.root, "rev-parse", "HEAD").encode()
        return out


def pytest_configure(config: pytest.Config) -> None:
    """The suite never depends on the machine's git configuration: a global config of its
    own names a test curator. With a new HOME (CI, a clean clone) git has no identity, and
    the window's first commit asked for one in a modal dialog that no test answers — the
    run hung there (issue 22). A user's own global config (hooks, signing, templates)
    must not change what the tests see either. Tests of a missing identity point
    GIT_CONFIG_GLOBAL at an empty file themselves."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="factdesk-tests-git-"))
    (folder / "gitconfig").write_text("[user]\n\tname = Test Curator\n"
                                      "\temail = test-curator@example.org\n")
    os.environ["GIT_CONFIG_GLOBAL"] = str(folder / "gitconfig")
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    # every Python child (the CLI runs the tests start) prints all its threads' stacks when
    # it is sent SIGABRT: see `no_child_hangs_silently`
    os.environ.setdefault("PYTHONFAULTHANDLER", "1")


#: how long a test's own background threads may take to end after it (a window closed in
#: the test lets its embedding or index thread finish on its own)
THREAD_GRACE_S = 60.0


def _app_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate()
            if t.name.startswith("factdesk-") and t.is_alive() and not t.name.endswith("-sender")]


def _stacks(threads: list[threading.Thread]) -> str:
    frames = sys._current_frames()
    out = []
    for t in threads:
        frame = frames.get(t.ident or -1)
        stack = "".join(traceback.format_stack(frame)) if frame else "  (no Python frame)\n"
        out.append(f"thread {t.name}:\n{stack}")
    return "\n".join(out)


def _every_stack() -> str:
    """Every Python thread's stack, named (the main thread's shows the wait itself)."""
    names = {t.ident: t.name for t in threading.enumerate()}
    return "\n".join(f"thread {names.get(ident, ident)}:\n{''.join(traceback.format_stack(frame))}"
                     for ident, frame in sys._current_frames().items())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):  # type: ignore[no-untyped-def]
    """A wait that timed out (pytest-qt's `waitSignal`/`waitUntil`) is a hang cut short:
    the failure shows every thread's stack as it was then (issue 22: the embedding
    worker's 120 s wait failed once in a loaded full run with nothing to tell why)."""
    outcome = yield
    excinfo = outcome.excinfo
    if excinfo is not None and type(excinfo[1]).__name__ == "TimeoutError" \
            and type(excinfo[1]).__module__.startswith("pytestqt"):
        sys.stderr.write(f"\n--- every thread's stack when the wait timed out ---\n{_every_stack()}")


@pytest.fixture(autouse=True)
def no_thread_outlives_its_test() -> Iterator[None]:
    """A test's background threads (the app's `factdesk-*` threads, the QThreads a closed
    window let go) end before the next test starts: one left running is the state that
    made later tests hang (issue 22). Fails the test that left one, with its stack."""
    before = set(_app_threads())
    yield
    deadline = time.monotonic() + THREAD_GRACE_S
    workers = sys.modules.get("factdesk.gui.workers")
    if workers is not None:
        left = workers.still_running(THREAD_GRACE_S)  # (QThreads: waits without the loop)
        if left:
            pytest.fail(f"{left} background QThread(s) still running {THREAD_GRACE_S:.0f} s "
                        "after the test", pytrace=False)
    while (leaked := [t for t in _app_threads() if t not in before]) and time.monotonic() < deadline:
        leaked[0].join(0.05)
    if leaked:
        pytest.fail(f"background threads still running {THREAD_GRACE_S:.0f} s after the "
                    f"test:\n{_stacks(leaked)}", pytrace=False)


#: after this long a test's child processes still running are made to print their stacks
#: and end (before pytest-timeout's 300 s, which sees only this process's threads)
CHILD_DUMP_S = 200.0


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux /proc; none elsewhere)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2:].split()
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, frontier = [], [pid]
    while frontier:
        children = parents.get(frontier.pop(), [])
        found += children
        frontier += children
    return found


def _abort_children(test: str) -> None:
    """The watchdog's end: name each child still running, with the kernel's view of where
    it waits, then SIGABRT it — a Python child prints every thread's stack to its stderr
    (PYTHONFAULTHANDLER, set above), which the test's failure shows."""
    import signal

    for pid in _descendants(os.getpid()):
        proc = Path("/proc") / str(pid)
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            waits = {t.name: (t / "wchan").read_text() for t in (proc / "task").iterdir()}
        except OSError:
            continue
        sys.__stderr__.write(f"\n[watchdog] {test}: child {pid} still running after "
                             f"{CHILD_DUMP_S:.0f} s: {cmd.strip()}\n  waiting in (per "
                             f"thread): {waits}\n")
        sys.__stderr__.flush()
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGABRT)


@pytest.fixture(autouse=True)
def no_child_hangs_silently(request: pytest.FixtureRequest) -> Iterator[None]:
    """A child process that hangs (the CLI a test runs) is made to show where, with every
    thread's stack, and to end, so that the test fails in words instead of pytest-timeout
    dumping only the parent waiting on a pipe (issue 22: `factdesk index` hung once after a
    full disk was freed)."""
    timer = threading.Timer(CHILD_DUMP_S, _abort_children, args=(request.node.nodeid,))
    timer.name = "test-child-watchdog"
    timer.daemon = True
    timer.start()
    yield
    timer.cancel()


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    root = tmp_path / "kbrepo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    c = Corpus(root)
    c.write(".knomit/ontology.yaml", ONTOLOGY)
    c.write("README.md", "# test corpus\n")
    c.commit("init: create knowledge base\n\nknomit-repo-nonce: 0123456789ab", author="knomit",
             op="init")
    c.fact("kb/gotchas/db/a1a1a1a1.md", title="Connection pool exhausts at 200 clients")
    c.fact("kb/gotchas/db/b2b2b2b2.md", title="Migrations lock the ledger table for 40 s")
    c.fact("kb/decisions/api/c3c3c3c3.md", title="Rate limit is 100 requests per minute",
           type="reference")
    c.commit("learn: first facts")
    return c


ONTOLOGY = """id: test-kb
name: Test KB
topics:
  gotchas:
    description: sharp edges
  decisions:
    description: decisions
  principles:
    description: designer intent
    validations:
      - name: must-be-pragmatic-policy
        message: principles must declare kind=pragmatic and type=policy
        rule: fact.kind === 'pragmatic' && fact.type === 'policy'
"""


@pytest.fixture(scope="session")
def real_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not BUNDLE.exists():
        pytest.skip(f"the real corpus bundle is absent ({BUNDLE}); it ships in ../shared")
    dest = tmp_path_factory.mktemp("real") / "agentic-engineering-kb"
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "branch", "-q", "--track",
                    "agent/mindev.local-8ef0cd32", "origin/agent/mindev.local-8ef0cd32"],
                   check=True)
    return dest


GeneratedCorpus = tuple[Path, dict]


@pytest.fixture(scope="session")
def generated_corpus(tmp_path_factory: pytest.TempPathFactory) -> GeneratedCorpus:
    return _generate(tmp_path_factory, facts=1200, commits=300, seed=11)


def _generate(factory: pytest.TempPathFactory, *, facts: int, commits: int, seed: int
              ) -> GeneratedCorpus:
    if not MAKE_CORPUS.exists():
        pytest.skip(f"the corpus generator is absent ({MAKE_CORPUS}); it ships in ../shared")
    out = factory.mktemp(f"gen{seed}") / "kb"
    subprocess.run([sys.executable, str(MAKE_CORPUS), "--facts", str(facts), "--commits",
                    str(commits), "--seed", str(seed), "--out", str(out), "--quiet",
                    "--plant-frac", "0.004", "--now", "2026-11-30"], check=True)
    manifest = json.loads(out.with_name("kb.manifest.json").read_text())
    return out, manifest


@pytest.fixture
def copy_tree() -> Callable[[Path, Path], Path]:
    def _copy(src: Path, dest: Path) -> Path:
        shutil.copytree(src, dest, symlinks=True)
        return dest

    return _copy


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that use qtbot are GUI tests: `pytest -m "not gui"` runs the core suite."""
    for item in items:
        if {"qtbot", "qapp"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.gui)
