"""Who commits, and what each action committed (issue 14, bug 8, the GUI half): with no git
identity the app asks once for a name and an e-mail, keeps them in factdesk's settings
(never in git's config) and retries; after every action the status bar names the commit
with an Undo button."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from tests.conftest import git
from tests.gui.conftest import IDS, fact_id, open_window


@pytest.fixture
def no_git_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def test_a_missing_identity_is_asked_once_kept_and_the_action_retried(
        qtbot, repo: Path, data_dir: Path, no_git_identity) -> None:
    win = open_window(qtbot, repo)
    asked: list[bool] = []
    win.ask_identity = lambda: asked.append(True) or ("Ana Curator", "ana@example.org")  # type: ignore[method-assign]
    win.show_fact(fact_id(win, "policy"))
    with qtbot.waitSignal(win.index_did_update, timeout=10_000):
        win.retract_selected("a policy we dropped")
    assert asked == [True]
    assert not (repo / IDS["policy"]).exists()
    author = git(repo, "log", "-1", "--format=%an <%ae>").strip()
    assert author == "Ana Curator <ana+retract@example.org>"  # not a made-up curator
    assert "Ana Curator" in (data_dir / "identity.yaml").read_text()
    assert b"[user]" not in (repo / ".git" / "config").read_bytes()  # git's config untouched (K04)
    with qtbot.waitSignal(win.index_did_update, timeout=10_000):
        win.undo()  # kept: nothing asked again
    assert asked == [True] and (repo / IDS["policy"]).exists()
    win.close()


def test_a_refused_identity_question_commits_nothing(qtbot, repo: Path, data_dir: Path,
                                                     no_git_identity) -> None:
    win = open_window(qtbot, repo)
    head = git(repo, "rev-parse", "HEAD")
    win.ask_identity = lambda: None  # type: ignore[method-assign]  # (cancelled)
    win.show_fact(fact_id(win, "policy"))
    win.retract_selected("a policy we dropped")
    qtbot.waitUntil(lambda: win.last_error is not None, timeout=10_000)
    assert "user.name" in win.last_error  # says how to set one
    assert git(repo, "rev-parse", "HEAD") == head and (repo / IDS["policy"]).exists()
    win.close()


def test_the_status_bar_names_each_commit_and_its_undo_button_undoes_it(qtbot, window, repo: Path) -> None:
    before = (repo / IDS["pool"]).read_bytes()
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.run_action(lambda: window.curation.relabel([IDS["pool"]], {"type": "pattern"}, "a pattern"))
    sha, subject = git(repo, "log", "-1", "--format=%h %s").strip().split(" ", 1)
    notice = window.commit_notice
    assert notice.isVisible()
    assert notice.label.text() == f"{sha[:7]} {subject}"
    assert notice.button.text() == "Undo"
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.mouseClick(notice.button, Qt.MouseButton.LeftButton)
    assert (repo / IDS["pool"]).read_bytes() == before
    assert git(repo, "log", "-1", "--format=%s").startswith("undo: ")
    assert notice.button.text() == "Redo"  # the undo's notice offers it back
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.mouseClick(notice.button, Qt.MouseButton.LeftButton)
    assert (repo / IDS["pool"]).read_bytes() != before
