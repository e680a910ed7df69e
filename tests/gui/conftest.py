"""GUI fixtures: one small real git corpus (built once), a redirected data dir per test,
and a MainWindow over that corpus with its index brought up to date."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from factdesk.gui.app import make_settings
from factdesk.gui.main_window import MainWindow
from tests.conftest import git

HOSTILE_TITLE = '<img src="file:///dev/zero">'
HOSTILE_BODY = """Raw HTML must stay text: <script>alert(1)</script> and <b>bold?</b>

![x](file:///etc/passwd)

![remote](http://example.invalid/pixel.png)

[https://bank.example](https://evil.example/phish)

[javascript](javascript:alert(1)) and [local file](file:///etc/passwd)

See also [the pool fact](kb/gotchas/db/a1a1a1a1.md).
"""

FACT = """---
{front}
---
# {title}

{body}
"""

FACTS: dict[str, tuple[str, str, str]] = {
    # path: (frontmatter, title, body)
    "kb/gotchas/db/a1a1a1a1.md": (
        "type: observation\ndomain: [ledger-api]\nconfidence: 0.9\nsources: 2\n"
        "entities: [Postgres]\nrefs: ['https://www.postgresql.org/docs/', "
        "'src://ledger/api/pool.go@main', 'kb/gotchas/db/b2b2b2b2.md', "
        "'kb/decisions/api/dead0001.md']\n"
        "claim_type: observation\nclaimant_agent_id: codex\nclaimant_type: tool\n"
        "subject_kind: codebase\nsubject_ref: repo:ledger",
        "Connection pool exhausts at 200 clients", "The pool **saturates** under load."),
    "kb/gotchas/db/b2b2b2b2.md": (
        "type: hypothesis\ndomain: [ledger-api]\nconfidence: 0.5\nsources: 1\nrefs: []",
        "Migrations will lock the ledger table", "Settles by 2020-01-01: a lock is observed."),
    "kb/decisions/api/c3c3c3c3.md": (
        "type: synthesis\norigin: distilled\ndomain: [ledger-api]\nconfidence: 0.8\n"
        "sources: 2\nevidence_weight: 0.99\nrefs: ['kb/gotchas/db/a1a1a1a1.md']",
        "Pool limits and rate limits interact", "Combines the pool observation."),
    "kb/principles/ops/d4d4d4d4.md": (
        "kind: pragmatic\ntype: policy\ndomain: [ops]\nconfidence: 1.0\nsources: 0\nrefs: []",
        "Never run migrations at peak", "A policy."),
    "kb/gotchas/ui/e5e5e5e5.md": (
        "type: observation\ndomain: [ui]\nconfidence: 0.6\nsources: 1\nrefs: []",
        HOSTILE_TITLE, HOSTILE_BODY),
}
RETRACTED = "kb/decisions/api/dead0001.md"
IDS = {"pool": "kb/gotchas/db/a1a1a1a1.md", "hyp": "kb/gotchas/db/b2b2b2b2.md",
       "syn": "kb/decisions/api/c3c3c3c3.md", "policy": "kb/principles/ops/d4d4d4d4.md",
       "hostile": "kb/gotchas/ui/e5e5e5e5.md", "retracted": RETRACTED}


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _commit(root: Path, message: str, author: str = "codex", op: str = "learn") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message, author=author, email=f"{author}+{op}@agents.knomit.io")


@pytest.fixture(scope="session")
def corpus_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A corpus with live, hypothesis, synthesis, policy, hostile and retracted facts and a
    two-version history for the pool fact."""
    root = tmp_path_factory.mktemp("gui") / "kbrepo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    _write(root, "README.md", "# gui test corpus\n")
    _commit(root, "init: create knowledge base", author="knomit", op="init")
    for rel, (front, title, body) in FACTS.items():
        text = FACT.format(front=front, title=title, body=body)
        if rel == IDS["pool"]:
            text = text.replace("saturates", "fills up")
        _write(root, rel, text)
    _write(root, RETRACTED, FACT.format(
        front="type: reference\ndomain: [api]\nconfidence: 0.7\nsources: 1\nrefs: []",
        title="Rate limit is 100 requests per minute", body="Superseded."))
    _commit(root, "learn: first facts")
    front, title, body = FACTS[IDS["pool"]]
    _write(root, IDS["pool"], FACT.format(front=front, title=title, body=body))
    _commit(root, "update: Connection pool exhausts at 200 clients", op="update")
    (root / RETRACTED).unlink()
    _commit(root, "retract: Rate limit is 100 requests per minute", op="retract")
    return root


@pytest.fixture
def repo(corpus_template: Path, tmp_path: Path) -> Path:
    """A private copy of the corpus (its index included once built)."""
    dest = tmp_path / "kbrepo"
    shutil.copytree(corpus_template, dest, symlinks=True)
    return dest


#: the one place where the GUI may run git on its own thread: opening the corpus checks that
#: the folder is a repository's top (`core.open_corpus`), once, before the window exists
STARTUP_CHECK = ("open_corpus",)


def _gui_frames() -> list[str]:
    """`file:line function` of the factdesk.gui frames on the calling stack (none: not
    the app's doing — a test's own git, say); empty too inside the startup check."""
    frames = []
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_name in STARTUP_CHECK and "factdesk" in code.co_filename:
            return []
        if "/factdesk/gui/" in code.co_filename.replace("\\", "/"):
            frames.append(f"{Path(code.co_filename).name}:{frame.f_lineno} {code.co_name}")
        frame = frame.f_back
    return frames


class GuiThreadWatch:
    """Records forbidden work started by the app on the GUI (main) thread: a subprocess
    (git above all), the writer lock, the index update lock (RELIABILITY, STYLE §7)."""

    def __init__(self) -> None:
        self.violations: list[str] = []
        self.allowed: str | None = None

    def allow(self, why: str) -> None:
        """A test that calls a worker's function directly on its own thread says why."""
        self.allowed = why

    def note(self, what: str) -> None:
        if self.allowed or threading.current_thread() is not threading.main_thread():
            return
        frames = _gui_frames()
        if frames:
            self.violations.append(f"{what} from the GUI thread, via {' < '.join(frames[:4])}")


@pytest.fixture(autouse=True)
def gui_thread_watch(monkeypatch: pytest.MonkeyPatch) -> Iterator[GuiThreadWatch]:
    """Fails a GUI test whose app code started a subprocess, or waited on the writer lock
    or the index update lock, on the GUI thread."""
    from factdesk.curation import gitwrite
    from factdesk.index import locking

    watch = GuiThreadWatch()
    real_popen = subprocess.Popen

    class WatchedPopen(real_popen):  # type: ignore[misc, valid-type]
        def __init__(self, args, *rest, **kw):  # type: ignore[no-untyped-def]
            watch.note(f"subprocess {args if isinstance(args, str) else ' '.join(map(str, args))[:120]}")
            super().__init__(args, *rest, **kw)

    def watched(name: str, real):  # type: ignore[no-untyped-def]
        @contextlib.contextmanager
        def lock(*args, **kw):  # type: ignore[no-untyped-def]
            watch.note(name)
            with real(*args, **kw):
                yield

        return lock

    monkeypatch.setattr(subprocess, "Popen", WatchedPopen)
    monkeypatch.setattr(gitwrite, "writer_lock", watched("the writer lock", gitwrite.writer_lock))
    monkeypatch.setattr(locking, "update_lock", watched("the index update lock", locking.update_lock))
    yield watch
    if watch.violations:
        pytest.fail("forbidden work on the GUI thread:\n" + "\n".join(dict.fromkeys(watch.violations)),
                    pytrace=False)


@pytest.fixture(autouse=True)
def no_background_embedding(monkeypatch: pytest.MonkeyPatch) -> None:
    """GUI tests do not load the embedding model unless they ask for it."""
    monkeypatch.setenv("FACTDESK_SEMANTIC", "off")


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    monkeypatch.setenv("FACTDESK_DATA_DIR", str(path))
    return path


def open_window(qtbot, repo: Path) -> MainWindow:
    """The main window over `repo`, shown, with its first index update finished."""
    win = MainWindow(repo, make_settings(), watch=False, update_on_open=False, semantic=False)
    qtbot.addWidget(win)
    win.resize(1400, 850)
    win.show()
    with qtbot.waitSignal(win.index_did_update, timeout=20_000):
        win.reindex()
    # the active window, as a user's is: keys then reach its focus widget, never a window
    # of an earlier test still being torn down (the j/k tests failed now and then)
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=3000)
    return win


@pytest.fixture
def window(qtbot, repo: Path, data_dir: Path) -> Iterator[MainWindow]:
    """The main window over `repo` (`open_window`)."""
    win = open_window(qtbot, repo)
    yield win
    win.close()


def fact_id(win: MainWindow, key: str) -> int:
    """The index id of one of the fixture facts (by its short name in IDS)."""
    conn = win.session.conn
    assert conn is not None
    return int(conn.execute("SELECT id FROM facts WHERE path = ?", (IDS[key],)).fetchone()[0])


def submit(window: MainWindow, qtbot, text: str) -> None:
    """Type `text` into the search bar as a user does, and press Enter."""
    line = window.search.line
    line.clear()
    qtbot.keyClicks(line, text)
    line.completer_popup.popup().hide()
    qtbot.keyClick(line, Qt.Key.Key_Return)


def relabel_dialog(qtbot, window: MainWindow):  # type: ignore[no-untyped-def]
    """The relabel editor once it is open (its facts are read in the background first)."""
    qtbot.waitUntil(lambda: window.relabel_dialog is not None and window.relabel_dialog.isVisible(),
                    timeout=5000)
    return window.relabel_dialog


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled demo corpus (factdesk.demo: facts, agents, messages, an agent branch with
    proposals), built once; `demo_repo` copies it."""
    from factdesk.demo import ensure_demo_workspace

    return Path(ensure_demo_workspace(tmp_path_factory.mktemp("demo")))


@pytest.fixture
def demo_repo(demo_template: Path, tmp_path: Path) -> Path:
    """A private copy of the demo corpus."""
    dest = tmp_path / "ledger-demo"
    shutil.copytree(demo_template, dest, symlinks=True)
    return dest
