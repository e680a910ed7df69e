"""The Proposals tab (issue 13), driven as a user drives it: keys pressed in the tab, on
real repositories (the GUI fixture corpus with an agent branch built here with git; the
published corpus when ../shared has it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QLabel, QPushButton

from factdesk.gui.main_window import MainWindow
from factdesk.gui.proposals_panel import ProposalsPanel
from tests.conftest import BUNDLE, git
from tests.gui.conftest import FACT, IDS, open_window

pytestmark = pytest.mark.gui

AGENT = "agent/mindev.local-8ef0cd32"
NEW_OBS = "kb/gotchas/db/f6f6f6f6.md"
NEW_SYN = "kb/decisions/api/a7a7a7a7.md"
NEW_OBS2 = "kb/gotchas/ui/b8b8b8b8.md"


def _fact(front: str, title: str, body: str) -> str:
    return FACT.format(front=front, title=title, body=body)


def _agent_commit(repo: Path, message: str, files: dict[str, str | None], op: str = "learn") -> str:
    for rel, text in files.items():
        path = repo / rel
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message, author="mindev", email=f"mindev.local-8ef0cd32+{op}@agents.knomit.io")
    return git(repo, "rev-parse", "HEAD").strip()


def add_agent_branch(repo: Path) -> dict[str, str]:
    """An agent branch of four commits off `main`: a clean new observation, a synthesis
    seeded by a hypothesis (R1: refused), a second clean observation, and a job-state file
    only. Returns the commits by name."""
    git(repo, "checkout", "-q", "-b", AGENT)
    shas = {
        "obs": _agent_commit(repo, "learn: Replica lag exceeds 5 s under batch load", {
            NEW_OBS: _fact("type: observation\ndomain: [ledger-api]\nconfidence: 0.8\nsources: 1\n"
                           "refs: []", "Replica lag exceeds 5 s under batch load",
                           "Measured on the nightly batch.")}),
        "syn": _agent_commit(repo, "synthesize-review: distill migrations and locks", {
            NEW_SYN: _fact("type: synthesis\norigin: distilled\ndomain: [ledger-api]\n"
                           "confidence: 0.7\nsources: 1\nrefs: ['kb/gotchas/db/b2b2b2b2.md']",
                           "Migrations and locks", "Seeded by a hypothesis: R1.")}, op="learn"),
        "obs2": _agent_commit(repo, "learn: The settings page reloads twice", {
            NEW_OBS2: _fact("type: observation\ndomain: [ui]\nconfidence: 0.6\nsources: 1\nrefs: []",
                            "The settings page reloads twice", "Seen in the trace.")}),
        "state": _agent_commit(repo, "job: checkpoint", {".knomit/jobs/learn.json": '{"step": 3}\n'}),
    }
    git(repo, "checkout", "-q", "main")
    return shas


@pytest.fixture
def agent_repo(repo: Path) -> tuple[Path, dict[str, str]]:
    return repo, add_agent_branch(repo)


@pytest.fixture
def review_window(qtbot, agent_repo, data_dir):  # type: ignore[no-untyped-def]
    repo, _shas = agent_repo
    win = open_window(qtbot, repo)
    yield win
    win.close()


def show_tab(qtbot, win: MainWindow) -> ProposalsPanel:  # type: ignore[no-untyped-def]
    panel = win.proposals
    win.center.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.loaded and bool(panel.items), timeout=10_000)
    panel.list.setFocus()
    return panel


def wait_checked(qtbot, panel: ProposalsPanel) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: panel.checks_done, timeout=30_000)


def press(qtbot, panel: ProposalsPanel, key: Qt.Key) -> None:  # type: ignore[no-untyped-def]
    target = QApplication.focusWidget() or panel.list
    qtbot.keyClick(target, key)


def head_message(repo: Path) -> str:
    return git(repo, "log", "-1", "--no-merges", "--format=%an <%ae>|%cn|%B", "main")


def test_tab_lists_every_proposal_with_its_badges(qtbot, review_window, agent_repo) -> None:  # type: ignore[no-untyped-def]
    _repo, shas = agent_repo
    panel = show_tab(qtbot, review_window)
    assert [i.shas[0] for i in panel.items] == [shas["obs"], shas["syn"], shas["obs2"], shas["state"]]
    assert review_window.center.tabText(review_window.center.indexOf(panel)) == "Proposals (4)"
    status = review_window.status.review_label.text()
    assert "main" in status and "4 proposals" in status
    wait_checked(qtbot, panel)
    badges = {i.shas[0]: panel.model.text(n, 3) for n, i in enumerate(panel.items)}
    assert badges[shas["obs"]] == "✓ clean"
    assert "R1" in badges[shas["syn"]]
    # (a `.json` under .knomit/jobs/ is a file decided like a fact: never clean, issue 24 #4)
    assert badges[shas["state"]] == "◇ files outside kb/"


def when_modal(name: str, act) -> None:  # type: ignore[no-untyped-def]
    """Once the modal dialog `name` is up, `act(dialog)` (as a user answers it)."""
    def poll() -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is not None and dialog.objectName() == name:
            act(dialog)
        else:
            QTimer.singleShot(20, poll)

    QTimer.singleShot(20, poll)


def click(dialog, name: str) -> None:  # type: ignore[no-untyped-def]
    dialog.findChild(QPushButton, name).click()


def decided(qtbot, win: MainWindow, before: str) -> str:  # type: ignore[no-untyped-def]
    """The new commit on main once the decision landed and the queue was read again."""
    repo = win.session.repo
    qtbot.waitUntil(lambda: git(repo, "rev-parse", "main").strip() != before, timeout=15_000)
    panel = win.proposals
    qtbot.waitUntil(lambda: not panel.pending and not panel._loader.running, timeout=15_000)
    return git(repo, "rev-parse", "main").strip()


def test_accept_key_commits_and_the_queue_advances(qtbot, review_window, agent_repo) -> None:  # type: ignore[no-untyped-def]
    repo, shas = agent_repo
    panel = show_tab(qtbot, review_window)
    wait_checked(qtbot, panel)
    assert panel.current_item().shas == (shas["obs"],)
    before = git(repo, "rev-parse", "main").strip()
    press(qtbot, panel, Qt.Key.Key_A)
    # the queue moved on at once, before the commit landed
    assert panel.current_item().shas == (shas["syn"],)
    decided(qtbot, review_window, before)
    log = head_message(repo)
    assert log.startswith("mindev <mindev.local-8ef0cd32+learn@agents.knomit.io>|")
    assert "Factdesk-Action: accept" in log and f"Factdesk-Proposal: {shas['obs']}" in log
    assert (repo / NEW_OBS).exists()
    assert [i.shas[0] for i in panel.items] == [shas["syn"], shas["obs2"], shas["state"]]
    assert panel.current_item().shas == (shas["syn"],)
    assert "3 proposals" in review_window.status.review_label.text()
    # the index followed (the accepted fact is in it) and the undo stack names the decision
    qtbot.waitUntil(lambda: review_window.undo_stack.labels is not None
                    and "accept" in (review_window.undo_stack.labels[0] or ""), timeout=10_000)
    assert review_window.nav.id_of(NEW_OBS) is not None


def test_undo_reopens_an_accepted_proposal(qtbot, review_window, agent_repo) -> None:  # type: ignore[no-untyped-def]
    repo, shas = agent_repo
    panel = show_tab(qtbot, review_window)
    before = git(repo, "rev-parse", "main").strip()
    press(qtbot, panel, Qt.Key.Key_A)
    accepted = decided(qtbot, review_window, before)
    assert shas["obs"] not in {i.shas[0] for i in panel.items}
    review_window.undo()
    decided(qtbot, review_window, accepted)
    qtbot.waitUntil(lambda: shas["obs"] in {i.shas[0] for i in panel.items}, timeout=10_000)
    assert not (repo / NEW_OBS).exists()


def test_reject_asks_a_reason_and_records_it(qtbot, review_window, agent_repo) -> None:  # type: ignore[no-untyped-def]
    repo, shas = agent_repo
    panel = show_tab(qtbot, review_window)
    asked: list[str] = []
    review_window.ask_text = lambda title, label, default: asked.append(label) or "duplicate of a1a1"
    before = git(repo, "rev-parse", "main").strip()
    press(qtbot, panel, Qt.Key.Key_R)
    assert asked and "Replica lag" in asked[0]
    decided(qtbot, review_window, before)
    log = head_message(repo)
    assert "Factdesk-Action: reject" in log and "duplicate of a1a1" in log
    assert f"Factdesk-Proposal: {shas['obs']}" in log
    assert not (repo / NEW_OBS).exists()
    panel.set_status_filter("rejected")
    assert [i.shas[0] for i in panel.items] == [shas["obs"]]


def test_reject_cancelled_changes_nothing(qtbot, review_window, agent_repo) -> None:  # type: ignore[no-untyped-def]
    repo, _shas = agent_repo
    panel = show_tab(qtbot, review_window)
    review_window.ask_text = lambda *a: None
    before = git(repo, "rev-parse", "main").strip()
    press(qtbot, panel, Qt.Key.Key_R)
    qtbot.wait(300)
    assert git(repo, "rev-parse", "main").strip() == before and not panel.pending


def test_skip_selects_the_next_at_once(qtbot, review_window, agent_repo) -> None:  # type: ignore[no-untyped-def]
    repo, shas = agent_repo
    panel = show_tab(qtbot, review_window)
    before = git(repo, "rev-parse", "main").strip()
    press(qtbot, panel, Qt.Key.Key_S)
    assert panel.current_item().shas == (shas["syn"],)
    press(qtbot, panel, Qt.Key.Key_S)
    assert panel.current_item().shas == (shas["obs2"],)
    assert panel.model.text(0, 4) == "skipped"
    assert git(repo, "rev-parse", "main").strip() == before  # nothing recorded


def test_refused_shows_the_rule_and_override_records_it(qtbot, review_window, agent_repo) -> None:  # type: ignore[no-untyped-def]
    repo, shas = agent_repo
    panel = show_tab(qtbot, review_window)
    wait_checked(qtbot, panel)
    assert panel.select_sha(shas["syn"])
    assert "R1" in panel.badge.text()
    seen: list[str] = []

    def override(dialog) -> None:  # type: ignore[no-untyped-def]
        seen.append(dialog.windowTitle())
        click(dialog, "refusalDialog_override")

    when_modal("refusalDialog", override)
    review_window.ask_text = lambda *a: "the hypothesis was confirmed last week"
    before = git(repo, "rev-parse", "main").strip()
    press(qtbot, panel, Qt.Key.Key_A)
    decided(qtbot, review_window, before)
    assert seen and "R1" in seen[0]
    log = head_message(repo)
    assert "Factdesk-Override: R1" in log and "confirmed last week" in log
    assert (repo / NEW_SYN).exists()


def test_refusal_cancelled_keeps_it_open(qtbot, review_window, agent_repo) -> None:  # type: ignore[no-untyped-def]
    repo, shas = agent_repo
    panel = show_tab(qtbot, review_window)
    wait_checked(qtbot, panel)
    panel.select_sha(shas["syn"])
    shown: list[str] = []

    def cancel(dialog) -> None:  # type: ignore[no-untyped-def]
        shown.append(dialog.windowTitle() + " " + dialog.findChild(QLabel, "refusalDialogText").text())
        click(dialog, "refusalDialog_cancel")

    when_modal("refusalDialog", cancel)
    before = git(repo, "rev-parse", "main").strip()
    press(qtbot, panel, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: bool(shown), timeout=10_000)
    qtbot.waitUntil(lambda: not panel.pending, timeout=5000)
    assert git(repo, "rev-parse", "main").strip() == before
    assert panel.current_item().shas == (shas["syn"],)  # back on the refused one
    assert "R1" in shown[0]


def test_edit_then_accept(qtbot, review_window, agent_repo) -> None:  # type: ignore[no-untyped-def]
    repo, shas = agent_repo
    panel = show_tab(qtbot, review_window)

    def correct(dialog) -> None:  # type: ignore[no-untyped-def]
        from PySide6.QtWidgets import QLineEdit, QPlainTextEdit

        dialog.findChild(QLineEdit, "edit_confidence").setText("0.6")
        body = dialog.findChild(QPlainTextEdit, "edit_body")
        body.setPlainText(body.toPlainText() + "Checked twice.\n")
        click(dialog, "proposalEditorOk")

    when_modal("proposalEditor", correct)
    before = git(repo, "rev-parse", "main").strip()
    press(qtbot, panel, Qt.Key.Key_E)
    decided(qtbot, review_window, before)
    log = head_message(repo)
    assert f"Factdesk-Edited: {NEW_OBS}" in log and f"Factdesk-Proposal: {shas['obs']}" in log
    text = (repo / NEW_OBS).read_text()
    assert "confidence: 0.6" in text and "Checked twice." in text
    assert "Measured on the nightly batch." in text  # the rest as the agent wrote it


def test_per_fact_view_accepts_one_fact(qtbot, review_window, agent_repo) -> None:  # type: ignore[no-untyped-def]
    repo, _shas = agent_repo
    panel = show_tab(qtbot, review_window)
    panel.set_mode("fact")
    assert [i.path for i in panel.items] == [NEW_OBS, NEW_SYN, NEW_OBS2]
    panel.step(2)
    assert panel.current_item().path == NEW_OBS2
    before = git(repo, "rev-parse", "main").strip()
    press(qtbot, panel, Qt.Key.Key_A)
    decided(qtbot, review_window, before)
    assert f"Factdesk-Path: {NEW_OBS2}" in head_message(repo)
    assert [i.path for i in panel.items] == [NEW_OBS, NEW_SYN]


def test_accept_all_clean_is_previewed_first(qtbot, review_window, agent_repo) -> None:  # type: ignore[no-untyped-def]
    repo, shas = agent_repo
    panel = show_tab(qtbot, review_window)
    wait_checked(qtbot, panel)
    listed: list[str] = []

    def look_then_cancel(dialog) -> None:  # type: ignore[no-untyped-def]
        from PySide6.QtWidgets import QPlainTextEdit

        listed.append(dialog.findChild(QPlainTextEdit, "acceptCleanList").toPlainText())
        dialog.reject()

    when_modal("acceptCleanPreview", look_then_cancel)
    before = git(repo, "rev-parse", "main").strip()
    qtbot.mouseClick(panel.clean_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(listed), timeout=10_000)
    assert shas["obs"][:10] in listed[0] and shas["obs2"][:10] in listed[0]
    assert shas["syn"][:10] not in listed[0]
    qtbot.wait(200)
    assert git(repo, "rev-parse", "main").strip() == before  # a preview commits nothing
    when_modal("acceptCleanPreview", lambda d: click(d, "acceptCleanOk"))
    qtbot.mouseClick(panel.clean_button, Qt.MouseButton.LeftButton)
    decided(qtbot, review_window, before)
    log = head_message(repo)
    assert f"Factdesk-Proposal: {shas['obs']}" in log and f"Factdesk-Proposal: {shas['obs2']}" in log
    assert shas["syn"] not in log
    assert [i.shas[0] for i in panel.items][:1] == [shas["syn"]]


def test_screenshot_1366(qtbot, review_window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    review_window.resize(1366, 768)
    panel = show_tab(qtbot, review_window)
    wait_checked(qtbot, panel)
    panel.select_row(1)
    qtbot.wait(800)
    review_window.grab().save(str(tmp_path / "proposals-1366.png"))
    review_window.grab().save("/tmp/propgui-1366.png")


def _conflicting(repo: Path) -> str:
    """An agent branch and the curator both change the pool fact since they parted."""
    pool = IDS["pool"]
    git(repo, "checkout", "-q", "-b", "agent/other.host-11112222")
    text = (repo / pool).read_text()
    sha = _agent_commit(repo, "update: pool exhausts at 150 clients",
                        {pool: text.replace("The pool", "At 150 clients the pool")}, op="update")
    git(repo, "checkout", "-q", "main")
    (repo / pool).write_text(text.replace("The pool", "Measured again: the pool"))
    git(repo, "commit", "-qam", "curate: pool wording", author="curator", email="curator@example.org")
    return sha


@pytest.mark.parametrize("choice", ["keep", "take", "edit"])
def test_conflict_offers_keep_or_take(qtbot, repo, data_dir, choice) -> None:  # type: ignore[no-untyped-def]
    sha = _conflicting(repo)
    win = open_window(qtbot, repo)
    try:
        panel = show_tab(qtbot, win)
        assert panel.select_sha(sha)
        wait_checked(qtbot, panel)
        assert "conflict" in panel.model.text(panel.current_row(), 3)
        when_modal("conflictDialog", lambda d: click(d, f"conflictDialog_{choice}"))
        if choice == "edit":
            def merge(dialog) -> None:  # type: ignore[no-untyped-def]
                from PySide6.QtWidgets import QPlainTextEdit

                body = dialog.findChild(QPlainTextEdit, "edit_body")
                body.setPlainText(body.toPlainText().replace("At 150 clients the pool",
                                                             "Measured again: at 150 clients the pool"))
                click(dialog, "proposalEditorOk")

            when_modal("proposalEditor", merge)
        win.ask_text = lambda *a: "the agent measured it, ours was a guess"
        before = git(repo, "rev-parse", "main").strip()
        press(qtbot, panel, Qt.Key.Key_A)
        decided(qtbot, win, before)
        log = head_message(repo)
        text = (repo / IDS["pool"]).read_text()
        if choice == "keep":
            assert "Factdesk-Action: reject" in log and "Measured again" in text
        elif choice == "edit":
            assert "Factdesk-Edited: " + IDS["pool"] in log
            assert "Measured again: at 150 clients the pool" in text
        else:
            assert "Factdesk-Override: conflict" in log and "At 150 clients" in text
    finally:
        win.close()


@pytest.fixture
def real_repo(tmp_path: Path) -> Path:
    if not BUNDLE.exists():
        pytest.skip(f"the published corpus is not here ({BUNDLE.name} under ../shared/corpora)")
    dest = tmp_path / "real"
    git(tmp_path, "clone", "-q", str(BUNDLE), "real")
    git(dest, "branch", AGENT, f"origin/{AGENT}")
    return dest


@pytest.mark.slow
def test_real_corpus_lists_every_agent_commit(qtbot, real_repo, data_dir) -> None:  # type: ignore[no-untyped-def]
    """The published corpus: the agent branch's 104 commits listed (once, though the local
    branch and its remote-tracking twin both hold them), the net view's 62 facts per fact,
    its syntheses' ontology errors found; a clean one accepted with A, then undone."""
    win = open_window(qtbot, real_repo)
    try:
        win.resize(1366, 768)
        panel = show_tab(qtbot, win)
        # the local branch and its remote-tracking twin: one queue each (they hold the same commits)
        branch = next(b for b in panel.queue.branches if b.name == AGENT)
        assert branch.ahead >= 104
        panel.set_branch(AGENT)
        assert len(panel.items) == len({i.shas[0] for i in panel.items}) >= 104
        wait_checked(qtbot, panel)
        errors = [i for n, i in enumerate(panel.items) if "✗" in panel.model.text(n, 3)]
        assert errors, "the syntheses' ontology errors are shown"
        panel.set_mode("fact")
        assert len(panel.items) == 62  # 26 added, 35 changed, 1 deleted
        panel.set_mode("commit")
        panel.select_row(0)
        qtbot.wait(500)
        win.grab().save(str(real_repo.parent / "proposals-real.png"))
        clean = next(i for n, i in enumerate(panel.items) if panel.model.text(n, 3) == "✓ clean")
        panel.select_sha(clean.shas[0])
        before = git(real_repo, "rev-parse", "HEAD").strip()
        press(qtbot, panel, Qt.Key.Key_A)
        accepted = decided(qtbot, win, before)
        assert clean.shas[0] not in {i.shas[0] for i in panel.items}
        win.undo()
        decided(qtbot, win, accepted)
        qtbot.waitUntil(lambda: clean.shas[0] in {i.shas[0] for i in panel.items}, timeout=15_000)
    finally:
        win.close()


def _team(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A bare remote of `repo` (its `origin`) and a second clone working on it."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "fetch", "-q", "origin")
    git(repo, "branch", "-q", "--set-upstream-to=origin/main", "main")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    return bare, other


def test_sync_brings_a_new_agent_branch_with_a_progress_bar(qtbot, repo, data_dir, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _bare, other = _team(repo, tmp_path)
    win = open_window(qtbot, repo)
    try:
        panel = win.proposals
        win.center.setCurrentWidget(panel)
        qtbot.waitUntil(lambda: panel.loaded, timeout=10_000)
        assert not panel.items
        # meanwhile an agent pushes its branch to the shared remote
        git(other, "checkout", "-q", "-b", "agent/ci.host-99990000")
        sha = _agent_commit(other, "learn: Retries double the load", {
            "kb/gotchas/db/c9c9c9c9.md": _fact("type: observation\ndomain: [ledger-api]\n"
                                               "confidence: 0.7\nsources: 1\nrefs: []",
                                               "Retries double the load", "Seen twice.")})
        git(other, "push", "-q", "origin", "agent/ci.host-99990000")
        progress: list[float] = []
        panel.sync_did_progress.connect(lambda _w, f: progress.append(f))
        with qtbot.waitSignal(panel.sync_did_finish, timeout=30_000) as done:
            win.actions_by_name["sync"].trigger()
            assert win.status.sync_bar.isVisible()
        assert not isinstance(done.args[0], BaseException), done.args[0]
        qtbot.waitUntil(lambda: sha in {i.shas[0] for i in panel.items}, timeout=20_000)
        assert progress and not win.status.sync_bar.isVisible()
        assert "1 proposal" in win.status.review_label.text()
    finally:
        win.close()


def test_sync_conflict_names_the_facts(qtbot, repo, data_dir, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QMessageBox

    _bare, other = _team(repo, tmp_path)
    pool = IDS["pool"]
    (other / pool).write_text((other / pool).read_text().replace("The pool", "Their pool"))
    git(other, "commit", "-qam", "curate: their wording", author="bob", email="bob@example.org")
    git(other, "push", "-q", "origin", "main")
    (repo / pool).write_text((repo / pool).read_text().replace("The pool", "Our pool"))
    git(repo, "commit", "-qam", "curate: our wording", author="ana", email="ana@example.org")
    before = git(repo, "rev-parse", "main").strip()
    win = open_window(qtbot, repo)
    try:
        with qtbot.waitSignal(win.proposals.sync_did_finish, timeout=30_000) as done:
            win.actions_by_name["sync"].trigger()
        assert type(done.args[0]).__name__ == "SyncConflict"
        boxes = [b for b in win.findChildren(QMessageBox, "errorBox") if b.isVisible()]
        assert boxes and pool in boxes[-1].text() and "Sync stopped" in boxes[-1].windowTitle()
        assert git(repo, "rev-parse", "main").strip() == before  # nothing merged
    finally:
        win.close()


def test_record_the_review_merge_from_the_menu(qtbot, agent_repo, data_dir) -> None:  # type: ignore[no-untyped-def]
    """A review merge a crash lost (here: decisions made with no merge) is recorded by the
    window's File ▸ Record the review merge, on the writer lane (issue 22, item 6)."""
    from factdesk.core import open_corpus
    from factdesk.curation import Identity
    from factdesk.review.decide import Review

    repo, shas = agent_repo
    review = Review(open_corpus(repo), Identity("ana", "ana@example.org"), merge_policy="never")
    review.reject(list(shas.values()), "no merge follows this one")
    assert not git(repo, "log", "-1", "--format=%s").startswith("merge:")
    win = open_window(qtbot, repo)
    try:
        panel = win.proposals
        win.center.setCurrentWidget(panel)
        qtbot.waitUntil(lambda: panel.loaded, timeout=10_000)
        with qtbot.waitSignal(panel.merge_did_finish, timeout=30_000) as done:
            win.actions_by_name["mergeReviewed"].trigger()
        assert isinstance(done.args[0], list) and len(done.args[0]) == 1, done.args[0]
        assert git(repo, "log", "-1", "--format=%H|%s").startswith(f"{done.args[0][0]}|merge: {AGENT}")
        assert "review merge" in panel.status.text()
    finally:
        win.close()


DISTILLED = "kb/decisions/api/d0d0d0d0.md"


def test_awaiting_attestation_is_a_second_source(qtbot, repo, data_dir) -> None:  # type: ignore[no-untyped-def]
    """Distilled/discovered facts already on main that no curator attested: A attests one;
    one the attestation cannot complete says what it lacks (and stays)."""
    (repo / DISTILLED).write_text(_fact(
        "type: synthesis\norigin: distilled\ndomain: [ledger-api]\nconfidence: 0.8\nsources: 1\n"
        "refs: ['kb/gotchas/db/a1a1a1a1.md']\nclaim_type: synthesis\nclaimant_agent_id: codex\n"
        "claimant_type: tool\nsubject_kind: codebase\nsubject_ref: repo:ledger",
        "Pool limits bound the batch size", "From the pool observation."))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "synthesize-review: distill pool limits", author="codex",
        email="codex+learn@agents.knomit.io")
    win = open_window(qtbot, repo)
    try:
        panel = win.proposals
        win.center.setCurrentWidget(panel)
        qtbot.waitUntil(lambda: panel.loaded, timeout=10_000)
        panel.set_branch("@awaiting")
        qtbot.waitUntil(lambda: panel.awaiting is not None and bool(panel.items), timeout=10_000)
        paths = [i.path for i in panel.items]
        assert DISTILLED in paths and IDS["syn"] in paths
        panel.select_row(paths.index(DISTILLED))
        panel.list.setFocus()
        before = git(repo, "rev-parse", "main").strip()
        press(qtbot, panel, Qt.Key.Key_A)
        qtbot.waitUntil(lambda: git(repo, "rev-parse", "main").strip() != before
                        or win.last_error is not None, timeout=15_000)
        assert win.last_error is None
        assert "attest" in git(repo, "log", "-1", "--format=%s", "main")
        qtbot.waitUntil(lambda: DISTILLED not in [i.path for i in panel.items], timeout=15_000)
        assert IDS["syn"] in [i.path for i in panel.items]
    finally:
        win.close()


def test_a_newer_read_never_drops_the_running_ones_answer(qtbot, review_window) -> None:  # type: ignore[no-untyped-def]
    """At start the window's refresh and its index update ask for the queue on top of the
    tab's own read: the running read's answer is shown, then one more read follows (the
    list took two reads' time to appear when each new request dropped the running one)."""
    panel = review_window.proposals
    qtbot.waitUntil(lambda: panel.loaded and not panel._loader.running, timeout=10_000)
    answers: list[int] = []
    panel.queue_did_load.connect(answers.append)
    panel.load()
    panel.load()
    panel.load()
    qtbot.waitUntil(lambda: len(answers) >= 2 and not panel._loader.running, timeout=10_000)
    qtbot.wait(200)
    assert len(answers) == 2


def test_a_decision_made_just_before_closing_is_committed(qtbot, repo, data_dir) -> None:  # type: ignore[no-untyped-def]
    shas = add_agent_branch(repo)
    win = open_window(qtbot, repo)
    panel = show_tab(qtbot, win)
    press(qtbot, panel, Qt.Key.Key_A)
    win.close()  # (at once: the decision still waited to go to the writer)
    log = git(repo, "log", "-3", "--format=%B", "main")
    assert f"Factdesk-Proposal: {shas['obs']}" in log


def _clean_in_cli(repo: Path, capsys) -> list[str]:  # type: ignore[no-untyped-def]
    """The proposals `factdesk accept --all-clean --preview` would take."""
    import json

    from factdesk.cli import main

    capsys.readouterr()
    assert main(["accept", "--all-clean", "--branch", AGENT, "--reason", "r", "--preview",
                 "--format", "json", "--kb", str(repo)]) == 0
    return list(json.loads(capsys.readouterr().out)["proposals"])


def _clean_badges(panel: ProposalsPanel) -> list[str]:
    return [panel.items[n].shas[0] for n in range(len(panel.items))
            if panel.model.text(n, 3).startswith("✓")]


def test_accept_all_clean_counts_agree_with_the_cli_and_the_badges(
        qtbot, review_window, agent_repo, capsys) -> None:  # type: ignore[no-untyped-def]
    """Issue 24 #4: the preview said 73, the CLI 98, the badges a third thing. One
    definition (`review.clean`): the preview lists what the change set names, and the rows
    badged ✓ are those. Here a fact added then deleted again (the branch leaves it as it
    was), a commit by another author on the branch (named, not dropped) and job state."""
    repo, shas = agent_repo
    git(repo, "checkout", "-q", AGENT)
    extra = "kb/gotchas/db/0e0e0e0e.md"
    shas["add"] = _agent_commit(repo, "learn: Lag spikes at 9:00", {extra: _fact(
        "type: observation\ndomain: [ledger-api]\nconfidence: 0.7\nsources: 1\nrefs: []",
        "Lag spikes at 9:00", "Seen twice.")})
    shas["drop"] = _agent_commit(repo, "retract: Lag spikes at 9:00", {extra: None}, op="retract")
    (repo / "kb/gotchas/ui/0f0f0f0f.md").write_text(_fact(
        "type: observation\ndomain: [ui]\nconfidence: 0.6\nsources: 1\nrefs: []",
        "The menu flickers", "By hand."), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "learn: The menu flickers", author="mallory", email="mallory@example.org")
    shas["other"] = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "main")
    panel = show_tab(qtbot, review_window)
    panel.load()
    qtbot.waitUntil(lambda: any(i.shas[0] == shas["other"] for i in panel.items), timeout=10_000)
    wait_checked(qtbot, panel)
    cli = _clean_in_cli(repo, capsys)
    assert cli == [shas["obs"], shas["obs2"], shas["add"], shas["drop"]]
    assert _clean_badges(panel) == cli
    review_window.resize(1366, 768)
    qtbot.wait(100)
    review_window.grab().save("/tmp/desk-proposals-badges.png")
    listed: list[tuple[str, str]] = []

    def look_then_cancel(dialog) -> None:  # type: ignore[no-untyped-def]
        from PySide6.QtWidgets import QPlainTextEdit

        said = " ".join(label.text() for label in dialog.findChildren(QLabel)) + " " + \
            dialog.findChild(QPlainTextEdit, "acceptCleanLeft").toPlainText()
        listed.append((dialog.findChild(QPlainTextEdit, "acceptCleanList").toPlainText(), said))
        dialog.grab().save("/tmp/desk-accept-clean-preview.png")
        dialog.reject()

    when_modal("acceptCleanPreview", look_then_cancel)
    qtbot.mouseClick(panel.clean_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(listed), timeout=15_000)
    text, said = listed[0]
    taken = [line.split()[0] for line in text.splitlines() if line.strip()]
    assert taken == [sha[:10] for sha in cli]
    assert "4 proposals" in said
    assert "3 proposals stay open" in said  # (the error, the job-state file, mallory's)
    assert shas["syn"][:10] in said and "R1" in said  # left open, named with why
    assert shas["other"][:10] in said and "mallory" in said


@pytest.mark.slow
def test_real_corpus_clean_badges_agree_with_the_cli(qtbot, real_repo, data_dir, capsys) -> None:  # type: ignore[no-untyped-def]
    """Issue 24 #4 on the published corpus: the rows badged ✓ are what `accept --all-clean
    --preview` would take, one for one."""
    git(real_repo, "config", "user.name", "ana")
    git(real_repo, "config", "user.email", "ana@example.org")
    win = open_window(qtbot, real_repo)
    try:
        win.resize(1366, 768)
        panel = show_tab(qtbot, win)
        panel.set_branch(AGENT)
        wait_checked(qtbot, panel)
        badged = _clean_badges(panel)
        win.grab().save("/tmp/desk-proposals-real.png")
        assert badged and badged == _clean_in_cli(real_repo, capsys)
    finally:
        win.close()


def test_a_completed_reject_then_quit_leaves_no_interrupted_action(qtbot, review_window, agent_repo) -> None:  # type: ignore[no-untyped-def]
    """Issue 24 #5: a false "An interrupted action was found" at the next start after a
    reject and Quit. The window defers git's index sync; a reject changes no file, and its
    journal was held for a sync that never came: the next start took it for an
    interruption (tests/review/test_no_false_recovery.py has the unit test)."""
    from factdesk.curation.gitwrite import recover
    from factdesk.curation.recovery import state_dir

    repo, shas = agent_repo
    panel = show_tab(qtbot, review_window)
    review_window.ask_text = lambda *a: "duplicate of a1a1"  # type: ignore[method-assign]
    before = git(repo, "rev-parse", "main").strip()
    press(qtbot, panel, Qt.Key.Key_R)
    decided(qtbot, review_window, before)
    assert f"Factdesk-Proposal: {shas['obs']}" in git(repo, "log", "-1", "--format=%B", "main")
    qtbot.waitUntil(lambda: not review_window.session.lane.busy, timeout=10_000)
    review_window.close()  # Quit
    journal = state_dir(repo) / "journal"
    assert (sorted(p.name for p in journal.iterdir()) if journal.is_dir() else []) == []
    assert recover(repo) == []  # the next start: nothing was interrupted


def test_a_run_of_moves_checks_only_the_row_it_rests_on(qtbot, review_window, agent_repo,  # type: ignore[no-untyped-def]
                                                        monkeypatch) -> None:
    """The selected proposal is checked on demand before its badge streams in, but only
    once the selection rests: a run of presses starts no check (nor a thread, 2–8 ms of
    the window's time each while agents write) for the rows it passes (issue 26)."""
    from factdesk.gui import proposal_source

    _repo, shas = agent_repo
    panel = show_tab(qtbot, review_window)
    wait_checked(qtbot, panel)
    qtbot.waitUntil(lambda: not panel._loader.running, timeout=10_000)
    asked: list[str] = []
    real = proposal_source.check_one
    monkeypatch.setattr(proposal_source, "check_one",
                        lambda indexer, queue, sha: (asked.append(sha), real(indexer, queue, sha))[1])
    panel.select_row(0)
    panel.checked.clear()  # (as before the stream reached them)
    press(qtbot, panel, Qt.Key.Key_Down)
    press(qtbot, panel, Qt.Key.Key_Down)
    assert panel.current_item().shas == (shas["obs2"],)
    qtbot.waitUntil(lambda: shas["obs2"] in panel.checked, timeout=10_000)
    qtbot.wait(300)
    assert asked == [shas["obs2"]]
    assert panel.model.text(2, 3) == "✓ clean"
