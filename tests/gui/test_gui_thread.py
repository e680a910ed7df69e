"""The GUI-thread watch (tests/gui/conftest.py `gui_thread_watch`, autouse) can fail: git
run by app code on the main thread is recorded, the same call on a worker is not."""

from __future__ import annotations

import threading

from factdesk.corpus.gitrepo import blob_id
from factdesk.gui.history_panel import version_diff
from tests.conftest import Corpus


def test_the_watch_sees_git_run_by_the_app_on_the_gui_thread(corpus: Corpus, gui_thread_watch) -> None:
    path = "kb/gotchas/db/a1a1a1a1.md"
    before = blob_id((corpus.root / path).read_bytes())
    corpus.write(path, (corpus.root / path).read_bytes() + b"more\n")
    corpus.commit("learn: an edit")
    worker = threading.Thread(target=version_diff, args=(corpus.root, path, before, None, ("a", "b")))
    worker.start()
    worker.join()
    assert gui_thread_watch.violations == []  # (a worker's git, and the test's own, are fine)
    version_diff(corpus.root, path, before, None, ("a", "b"))  # app code, on this thread
    seen = list(gui_thread_watch.violations)
    gui_thread_watch.violations.clear()  # (else this test fails at teardown, as it should)
    assert seen and all("subprocess git" in v and "version_diff" in v for v in seen)
