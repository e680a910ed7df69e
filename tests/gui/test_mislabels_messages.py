"""The Mislabels tab's two additions, with keys and clicks on a real git corpus: Move to
messages for a `message-in-memory` finding (issue 17: the fact leaves kb/, a message appears
under msg/, undoable), and the full-list switch (issue 18: `mislabels --all`)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from factdesk.corpus.messages import parse_message
from factdesk.gui.main_window import MainWindow
from tests.conftest import git
from tests.gui.conftest import IDS, _commit, _write
from tests.gui.test_mislabels import go_to, open_queue

REQUEST = "kb/gotchas/deploys/9a9a9a9a.md"


def add_request(repo: Path) -> None:
    _write(repo, REQUEST, "---\ntype: observation\ndomain: [deploys]\nconfidence: 0.7\nsources: 1\n"
           f"refs: ['{IDS['pool']}']\n"
           "claim_type: observation\nclaimant_agent_id: claude-code\nclaimant_type: tool\n"
           "subject_kind: codebase\n---\n"
           "# @codex please hold ledger deploys until the lock_timeout fix lands\n\n"
           "The pool fact explains why.\n")
    _commit(repo, "learn: deploy hold", author="claude-code")


def test_move_to_messages_from_the_queue_then_undo(qtbot, window: MainWindow, repo: Path) -> None:
    add_request(repo)
    open_queue(qtbot, window)
    panel = window.mislabels
    assert any((s.path, s.code) == (REQUEST, "message-in-memory") for s in panel.queue)
    go_to(qtbot, panel, REQUEST)
    while panel.current().code != "message-in-memory":
        qtbot.keyClick(panel, Qt.Key.Key_J)
    assert panel.buttons["accept"].text() == "Move to messages (A)"
    assert panel.heading.text() == "Proposed fix:"
    assert "move to messages to codex" in panel.proposal.text()
    asked: list[tuple[str, ...]] = []

    def answer(*question: str) -> str:
        asked.append(question)
        return question[2]  # the prefilled recipient, as Enter takes it

    window.ask_text = answer  # type: ignore[method-assign]
    before = git(repo, "rev-parse", "HEAD").strip()
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(panel, Qt.Key.Key_A)
    assert asked and asked[0][2] == "codex"  # prefilled: the text addresses codex
    assert not (repo / REQUEST).exists()
    assert git(repo, "log", "-1", "--format=%s").startswith("to-messages: @codex please hold")
    added = git(repo, "show", "--name-status", "--format=", "HEAD").split("\n")
    new = [line.split("\t")[1] for line in added if line.startswith("A\t")]
    assert [line.split("\t")[1] for line in added if line.startswith("D\t")] == [REQUEST]
    assert len(new) == 1 and new[0].startswith("msg/")
    message = parse_message(new[0], (repo / new[0]).read_bytes()).message
    assert message is not None
    assert (message.sender, message.to) == ("claude-code", ("codex",))
    assert message.referenced_memory_ids == (IDS["pool"],)
    assert "message-in-memory" in (message.context_explanation or "")
    assert all(s.path != REQUEST for s in panel.queue)
    # the Messages tab has it, between claude-code and codex
    window.center.setCurrentWidget(window.messages)
    qtbot.waitUntil(lambda: window.messages.view is not None and window.messages.view.count == 1,
                    timeout=20_000)
    assert window.center.tabText(window.center.indexOf(window.messages)) == "Messages (1)"
    assert window.messages.model.index(0, 0).data() == "claude-code ↔ codex"
    assert window.messages.current_message().path == new[0]
    # one undo brings the fact back and takes the message away
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.undo()
    assert (repo / REQUEST).exists() and not (repo / new[0]).exists()
    assert git(repo, "rev-parse", "HEAD~2").strip() == before
    qtbot.waitUntil(lambda: window.messages.view is not None and window.messages.view.count == 0,
                    timeout=10_000)


def test_move_to_messages_without_a_recipient_changes_nothing(qtbot, window: MainWindow,
                                                             repo: Path) -> None:
    add_request(repo)
    open_queue(qtbot, window)
    panel = window.mislabels
    go_to(qtbot, panel, REQUEST)
    while panel.current().code != "message-in-memory":
        qtbot.keyClick(panel, Qt.Key.Key_J)
    window.ask_text = lambda *a: ""  # type: ignore[method-assign]  # cancelled
    head = git(repo, "rev-parse", "HEAD")
    qtbot.keyClick(panel, Qt.Key.Key_A)
    qtbot.wait(300)
    assert git(repo, "rev-parse", "HEAD") == head and (repo / REQUEST).exists()


def test_the_full_list_switch(qtbot, window: MainWindow, repo: Path) -> None:
    open_queue(qtbot, window)
    panel = window.mislabels
    short = len(panel.queue)
    assert all(s.code != "no-envelope" for s in panel.queue)
    box = panel.all_box
    assert not box.isChecked() and box.isVisible()
    with qtbot.waitSignal(panel.queue_did_load, timeout=20_000):
        qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
    assert box.isChecked() and panel.full
    assert len(panel.queue) > short
    assert any(s.code == "no-envelope" for s in panel.queue)
    assert "full list" in panel.status.text()
    assert window.center.tabText(window.center.indexOf(panel)) == f"Mislabels ({len(panel.queue)})"
    # Alt+L (the mnemonic) turns it off again: the short list
    panel.setFocus()
    with qtbot.waitSignal(panel.queue_did_load, timeout=20_000):
        qtbot.keyClick(panel, Qt.Key.Key_L, Qt.KeyboardModifier.AltModifier)
    assert not box.isChecked() and not panel.full and len(panel.queue) == short
    # a refresh after a commit keeps the switch's choice
    with qtbot.waitSignal(panel.queue_did_load, timeout=20_000):
        qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
    full = len(panel.queue)
    with qtbot.waitSignal(panel.queue_did_load, timeout=20_000):
        panel.load()
    assert panel.full and len(panel.queue) == full
