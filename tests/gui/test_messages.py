"""The Messages tab and the inspector's backlinks (issue 17), driven with keys and clicks on
a real git corpus: threads grouped by the pair of agents, a message's detail, marking the
delivery state with a reason (one commit, undone from the Edit menu), and the messages that
reference a fact while the query includes them."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from factdesk.corpus.messages import parse_message, serialize_message
from factdesk.gui.main_window import MainWindow
from factdesk.gui.messages_panel import MessagesPanel
from factdesk.model.messages import message_path
from tests.conftest import git
from tests.gui.conftest import IDS, _commit, _write, fact_id, submit


def write_message(repo: Path, sender: str, to: list[str], sent: str, body: str, *,
                  delivery: str = "delivered", refs: tuple[str, ...] = (),
                  reply: str | None = None, why: str | None = None) -> str:
    path = message_path(sender, sent, body)
    fields: dict[str, object] = {"from": sender, "to": to, "sent": sent, "delivery": delivery,
                                 "context_explanation": why,
                                 "referenced_memory_ids": list(refs), "in_reply_to": reply}
    _write(repo, path, serialize_message(fields, body).decode())
    return path


def add_messages(repo: Path) -> dict[str, str]:
    """A thread of three between claude-code and codex (one queued), one message from codex
    to ana referencing the pool fact, committed by the agents."""
    ask = write_message(repo, "claude-code", ["codex"], "2026-11-20T09:14:00Z",
                        "Could you add lock_timeout to the pool migration?", delivery="read",
                        refs=(IDS["pool"],), why="the pool fact says it saturates")
    answer = write_message(repo, "codex", ["claude-code"], "2026-11-20T10:02:00Z",
                           "Done in the next migration.", reply=ask, delivery="delivered")
    thanks = write_message(repo, "claude-code", ["codex"], "2026-11-20T11:00:00Z",
                           "Thanks, merging.", reply=answer, delivery="queued")
    other = write_message(repo, "codex", ["ana"], "2026-11-21T08:00:00Z",
                          "The rate limit prediction settles next week.", delivery="queued",
                          refs=(IDS["pool"], IDS["hyp"]))
    _commit(repo, "message: lock_timeout thread", author="claude-code", op="message")
    return {"ask": ask, "answer": answer, "thanks": thanks, "other": other}


def open_tab(qtbot, window: MainWindow, count: int = 4) -> MessagesPanel:  # type: ignore[no-untyped-def]
    """View ▸ Ctrl+9; the store is read by then or soon (it is read after each index update,
    for the caption's count, even before the tab is first shown)."""
    panel = window.messages
    qtbot.keyClick(window, Qt.Key.Key_9, Qt.KeyboardModifier.ControlModifier)
    assert window.center.currentWidget() is panel
    qtbot.waitUntil(lambda: panel.view is not None and panel.view.count == count
                    and not panel._reader.running, timeout=20_000)
    return panel


def test_threads_by_pair_detail_and_mark_delivered_then_undo(qtbot, window: MainWindow,
                                                            repo: Path, tmp_path: Path) -> None:
    paths = add_messages(repo)
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.reindex()
    panel = open_tab(qtbot, window)
    tree, model = panel.tree, panel.model
    # two pairs, the most recently active first; the thread of three under its pair
    pairs = [model.index(i, 0).data() for i in range(model.rowCount())]
    assert pairs == ["ana ↔ codex", "claude-code ↔ codex"]
    thread = model.index(0, 0, model.index(1, 0))
    assert model.rowCount(thread) == 3 and thread.siblingAtColumn(1).data() == "1 queued"
    assert [model.index(i, 0, thread).data(Qt.ItemDataRole.UserRole + 2) for i in range(3)] == [
        paths["ask"], paths["answer"], paths["thanks"]]
    assert model.index(2, 1, thread).data() == "○ queued"
    assert window.center.tabText(window.center.indexOf(panel)) == "Messages (4)"
    assert panel.status.text() == "4 messages in 2 threads between 2 pairs of agents · 2 queued"
    panel.grab().save(str(tmp_path / "messages.png"))
    # click the first message of the thread: its detail, with the fact it references
    first = model.index(0, 0, thread)
    rect = tree.visualRect(first)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert panel.current_message().path == paths["ask"]
    assert panel.fields["from"].text() == "claude-code"
    assert panel.fields["context"].text() == "the pool fact says it saturates"
    assert "read" in panel.fields["delivery"].text()
    assert panel.refs.count() == 1 and IDS["pool"] in panel.refs.item(0).text()
    # the fact's title is read on a worker as the message is shown
    qtbot.waitUntil(lambda: "Connection pool exhausts" in panel.refs.item(0).text(), timeout=5000)
    # J moves to the next message (the answer)
    tree.setFocus()
    qtbot.keyClick(tree, Qt.Key.Key_J)
    assert panel.current_message().path == paths["answer"]
    # select the thread's row, press M: the dialog proposes the next state; a reason commits
    rect = tree.visualRect(thread)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert panel.selected_paths() == [paths["ask"], paths["answer"], paths["thanks"]]
    qtbot.keyClick(tree, Qt.Key.Key_M)
    qtbot.waitUntil(lambda: panel.mark_dialog is not None and panel.mark_dialog.isVisible(),
                    timeout=3000)
    dialog = panel.mark_dialog
    assert not dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()  # no reason yet
    dialog.state.setFocus()
    while dialog.state.currentText() != "acknowledged":
        qtbot.keyClick(dialog.state, Qt.Key.Key_Down)
    qtbot.keyClicks(dialog.reason, "answered in standup")
    head = git(repo, "rev-parse", "HEAD")
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(dialog.reason, Qt.Key.Key_Return)
    assert git(repo, "rev-parse", "HEAD^").strip() == head.strip()
    subject = git(repo, "log", "-1", "--format=%s%n%b")
    assert subject.startswith("mark: 3 messages (delivery → acknowledged)")
    assert "answered in standup" in subject
    for key in ("ask", "answer", "thanks"):
        parsed = parse_message(paths[key], (repo / paths[key]).read_bytes()).message
        assert parsed is not None and parsed.delivery == "acknowledged"
    assert sorted(git(repo, "show", "--name-only", "--format=", "HEAD").split()) == sorted(
        [paths["ask"], paths["answer"], paths["thanks"]])
    qtbot.waitUntil(lambda: all(m.delivery == "acknowledged" for m in panel._messages.values()
                                if m.path != paths["other"]), timeout=10_000)
    assert panel.tree.currentIndex().data(Qt.ItemDataRole.UserRole + 1) == ("thread", paths["ask"])
    # Edit ▸ Undo (Ctrl+Z) reverts it: one more commit, the states as they were
    window.activateWindow()  # (the closed dialog left no window active offscreen)
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(panel.tree, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert git(repo, "log", "-1", "--format=%s").startswith("undo: ")
    parsed = parse_message(paths["thanks"], (repo / paths["thanks"]).read_bytes()).message
    assert parsed is not None and parsed.delivery == "queued"
    qtbot.waitUntil(lambda: panel._messages[paths["thanks"]].delivery == "queued", timeout=10_000)


def test_a_refused_mark_is_said_and_changes_nothing(qtbot, window: MainWindow, repo: Path) -> None:
    paths = add_messages(repo)
    _write(repo, "msg/2026/11/0badf00d.md", "no frontmatter <b>here</b>\n")  # unreadable
    _commit(repo, "message: broken", author="codex", op="message")
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.reindex()
    panel = open_tab(qtbot, window)
    assert panel.status.text().endswith(
        "· 1 file under msg/ unreadable (factdesk check says why)")
    head = git(repo, "rev-parse", "HEAD")
    with qtbot.waitSignal(window.ops.operation_did_fail, timeout=10_000):
        panel.mark_delivery([paths["ask"]], "read", "already read")  # it is read already
    assert git(repo, "rev-parse", "HEAD") == head
    assert "already read" in (window.last_error or "")


def test_a_reference_selects_the_fact(qtbot, window: MainWindow, repo: Path) -> None:
    paths = add_messages(repo)
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.reindex()
    panel = open_tab(qtbot, window)
    panel.step(1)
    panel.select_message(paths["other"])  # (a backlink): it alone is selected, as J/K leave it
    assert panel.selected_paths() == [paths["other"]]
    assert panel.refs.count() == 2
    qtbot.waitUntil(lambda: "reading" not in panel.refs.item(1).text(), timeout=5000)
    assert panel.refs.item(1).text().startswith("Migrations will lock the ledger table — ")
    item = panel.refs.item(1)
    rect = panel.refs.visualItemRect(item)
    qtbot.mouseClick(panel.refs.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.center.currentIndex() == 0
    assert window.inspector.path == IDS["hyp"]


def test_the_inspector_shows_backlinks_while_messages_are_included(qtbot, window: MainWindow,
                                                                   repo: Path) -> None:
    paths = add_messages(repo)
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.reindex()
    tabs = window.inspector.tabs
    backlinks = window.messages.backlinks
    assert backlinks is not None
    window.show_fact(fact_id(window, "pool"))
    assert not tabs.isTabVisible(tabs.indexOf(backlinks))  # memory only: no messages shown
    with qtbot.waitSignal(backlinks.backlinks_did_load, timeout=10_000):
        submit(window, qtbot, "include:messages")
    assert tabs.isTabVisible(tabs.indexOf(backlinks))
    window.show_fact(fact_id(window, "pool"))
    qtbot.waitUntil(lambda: len(backlinks.messages) == 2, timeout=10_000)
    assert {m.path for m in backlinks.messages} == {paths["ask"], paths["other"]}
    assert tabs.tabText(tabs.indexOf(backlinks)) == "Messages (2)"
    # a fact nobody references
    with qtbot.waitSignal(backlinks.backlinks_did_load, timeout=10_000):
        window.show_fact(fact_id(window, "policy"))
    assert backlinks.messages == [] and tabs.tabText(tabs.indexOf(backlinks)) == "Messages (0)"
    # back to the pool fact; activating a backlink opens it in the Messages tab
    with qtbot.waitSignal(backlinks.backlinks_did_load, timeout=10_000):
        window.show_fact(fact_id(window, "pool"))
    tabs.setCurrentWidget(backlinks)
    backlinks.list.setCurrentRow(0)
    qtbot.keyClick(backlinks.list, Qt.Key.Key_Return)
    assert window.center.currentWidget() is window.messages
    qtbot.waitUntil(lambda: window.messages.current_message() is not None
                    and window.messages.current_message().path == backlinks.messages[0].path,
                    timeout=10_000)
    # the query without include:messages hides the tab again
    submit(window, qtbot, "pool")
    assert not tabs.isTabVisible(tabs.indexOf(backlinks))


def test_a_large_store_shows_threads_closed_but_the_current_one(qtbot, window: MainWindow,
                                                                repo: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Beyond EXPAND_ALL_UP_TO messages the threads are one row each (expanding every row
    walks them all on the GUI thread): pairs open, the current message's thread open."""
    from factdesk.gui import messages_panel

    monkeypatch.setattr(messages_panel, "EXPAND_ALL_UP_TO", 2)
    paths = add_messages(repo)
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.reindex()
    panel = open_tab(qtbot, window)
    tree, model = panel.tree, panel.model
    assert all(tree.isExpanded(model.index(i, 0)) for i in range(model.rowCount()))
    current = panel.current_message()
    assert current is not None
    other_pair = [i for i in range(model.rowCount())
                  if model.index(i, 0).data() != ("ana ↔ codex" if current.path == paths["other"]
                                                   else "claude-code ↔ codex")]
    assert all(not tree.isExpanded(model.index(0, 0, model.index(i, 0))) for i in other_pair)
    assert tree.isExpanded(tree.currentIndex().parent())
    # selecting a closed thread's row and M marks all of it, as when open
    thread = model.index(0, 0, model.index(1, 0))
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=tree.visualRect(thread).center())
    assert panel.selected_paths() == [paths["ask"], paths["answer"], paths["thanks"]]


def test_a_reference_to_no_fact_is_said_and_inert(qtbot, window: MainWindow, repo: Path) -> None:
    gone = write_message(repo, "codex", ["claude-code"], "2026-11-22T08:00:00Z",
                         "About the retracted rate limit.", refs=("kb/decisions/api/dead0001.md",
                                                                  IDS["policy"],
                                                                  "kb/gotchas/db/00000000.md"))
    _commit(repo, "message: dangling", author="codex", op="message")
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.reindex()
    panel = open_tab(qtbot, window, count=1)
    panel.select_message(gone)
    qtbot.waitUntil(lambda: "reading" not in panel.refs.item(0).text(), timeout=5000)
    # a retracted fact says so (its last version still opens, as everywhere)
    assert panel.refs.item(0).text() == ("Rate limit is 100 requests per minute — "
                                         "kb/decisions/api/dead0001.md (retracted)")
    assert panel.refs.item(1).text() == f"Never run migrations at peak — {IDS['policy']}"
    assert panel.refs.item(2).text() == "kb/gotchas/db/00000000.md (no such fact)"
    assert panel.refs.item(2).data(Qt.ItemDataRole.UserRole + 2) is None  # nothing to open
    qtbot.mouseClick(panel.refs.viewport(), Qt.MouseButton.LeftButton,
                     pos=panel.refs.visualItemRect(panel.refs.item(2)).center())
    assert window.center.currentWidget() is panel  # stayed
