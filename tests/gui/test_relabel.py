"""The relabel editor and the Edit menu's undo/redo, driven as a user would."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QApplication

from factdesk.corpus.codec import parse_fact
from factdesk.gui.main_window import MainWindow
from tests.conftest import git
from tests.gui.conftest import IDS, fact_id, relabel_dialog


def choose(qtbot, combo, text: str) -> None:  # type: ignore[no-untyped-def]
    """Pick a value the way a keyboard user does: focus the combo, type its first letters."""
    combo.setFocus()
    index = combo.findText(text)
    assert index >= 0, text
    combo.setCurrentIndex(index)


def open_on(qtbot, window: MainWindow, key: str):  # type: ignore[no-untyped-def]
    window.show_fact(fact_id(window, key))
    window.table.view.setFocus()
    qtbot.keyClick(window.table.view, Qt.Key.Key_R)
    return relabel_dialog(qtbot, window)


def test_relabel_from_the_table_commits_and_updates_the_table(qtbot, window: MainWindow, repo: Path,
                                                              tmp_path: Path) -> None:
    dialog = open_on(qtbot, window, "pool")
    choose(qtbot, dialog.combos["type"], "hypothesis")
    qtbot.keyClicks(dialog.edits["settle_by"], "2027-03-01")
    qtbot.waitUntil(lambda: "+type: hypothesis" in dialog.diff_view.toPlainText(), timeout=3000)
    diff = dialog.diff_view.toPlainText()
    assert "-claim_type: observation\n+claim_type: hypothesis" in diff
    assert "codex (tool) hypothesises" in dialog.attribution_label.text()
    assert not dialog.apply_button.isEnabled()  # no reason yet
    qtbot.keyClicks(dialog.reason_edit, "hedged: a guess about the pool")
    dialog.grab().save(str(tmp_path / "relabel.png"))
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(dialog.reason_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert not dialog.isVisible()
    log = git(repo, "log", "-1", "--format=%s")
    assert log.startswith("relabel: Connection pool exhausts at 200 clients (observation → hypothesis)")
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [IDS["pool"]]
    conn = window.session.conn
    assert conn.execute("SELECT type FROM facts WHERE path = ?", (IDS["pool"],)).fetchone()[0] == "hypothesis"
    assert window.inspector.path == IDS["pool"]  # the user's place is kept
    # git's own index is synced off the critical path, then the journal goes
    from factdesk.curation.gitwrite import pending_actions

    # (--no-optional-locks: the test's own status must not take git's index.lock, which the
    # sync on the writer lane needs at that moment: the race made this test flaky)
    qtbot.waitUntil(lambda: git(repo, "--no-optional-locks", "status", "--porcelain") == ""
                    and not pending_actions(repo),
                    timeout=5000)
    assert "hypothesis" in window.inspector.badges["type"].text()


def test_opening_the_editor_proposes_no_change(qtbot, window: MainWindow) -> None:
    # a fact that writes no claimant type or subject: the editor once opened on `tool` and
    # `self` for them, so that any relabel also wrote those two claims into the file
    dialog = open_on(qtbot, window, "hyp")
    assert dialog.combos["claimant_type"].currentText() == "(none)"
    assert dialog.combos["subject_kind"].currentText() == "(none)"
    assert dialog.changes() == {} and dialog.diff_view.toPlainText() == ""
    choose(qtbot, dialog.combos["type"], "pattern")
    qtbot.waitUntil(lambda: "+type: pattern" in dialog.diff_view.toPlainText(), timeout=3000)
    changed = [line for line in dialog.diff_view.toPlainText().splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed == ["-type: hypothesis", "+type: pattern"]


def test_the_combos_show_what_follows_from_a_new_type(qtbot, window: MainWindow) -> None:
    dialog = open_on(qtbot, window, "hyp")  # writes no kind and no claim type
    choose(qtbot, dialog.combos["type"], "policy")
    qtbot.waitUntil(lambda: "+type: policy" in dialog.diff_view.toPlainText(), timeout=3000)
    assert dialog.combos["kind"].currentText() == "pragmatic"  # as the diff writes it
    assert dialog.combos["claim_type"].currentText() == "assertion"  # derived from policy
    assert "+kind: pragmatic" in dialog.diff_view.toPlainText()
    choose(qtbot, dialog.combos["kind"], "epistemic")  # kept against the new type: refused
    qtbot.waitUntil(lambda: "kind×type" in dialog.error_label.text(), timeout=3000)
    choose(qtbot, dialog.combos["type"], "hypothesis")  # back: nothing left to change
    qtbot.waitUntil(lambda: "kind×type" not in dialog.error_label.text(), timeout=3000)
    assert dialog.changes() == {} and dialog.diff_view.toPlainText() == ""
    assert dialog.combos["claim_type"].currentText() == "hypothesis"


def test_a_fact_of_unknown_type_is_repaired_from_the_table(qtbot, window: MainWindow, repo: Path) -> None:
    # RELIABILITY B01: listed as broken with its type as written, and relabel is offered
    path = "kb/gotchas/db/f6f6f6f6.md"
    (repo / path).write_text("---\ntype: factoid\ndomain: [ledger-api]\nconfidence: 0.7\n"
                             "sources: 1\nrefs: []\nx-agent: {run: 7}\n---\n# Ledger writes are "
                             "idempotent\n\nSeen in 3 replays.\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "learn: a typo", author="codex", email="codex+learn@agents.knomit.io")
    with qtbot.waitSignal(window.index_did_update, timeout=20_000):
        window.reindex()
    conn = window.session.conn
    fid, status = conn.execute("SELECT id, status FROM facts WHERE path = ?", (path,)).fetchone()
    assert status == "broken"
    window.show_fact(fid)
    assert "R relabels it" in window.inspector.attribution.text()
    window.table.view.setFocus()
    qtbot.keyClick(window.table.view, Qt.Key.Key_R)
    dialog = relabel_dialog(qtbot, window)
    assert dialog.windowTitle() == "Relabel — Ledger writes are idempotent"
    assert dialog.combos["type"].currentText() == "factoid"  # what the file says, not a guess
    assert 'invalid type "factoid"' in dialog.error_label.text()
    assert dialog.diff_view.toPlainText() == "" and not dialog.apply_button.isEnabled()
    choose(qtbot, dialog.combos["type"], "observation")
    qtbot.waitUntil(lambda: "+type: observation" in dialog.diff_view.toPlainText(), timeout=3000)
    assert "-type: factoid" in dialog.diff_view.toPlainText()
    assert dialog.count_label.text() == "1 of 1 fact changes"
    qtbot.keyClicks(dialog.reason_edit, "the agent's typo")
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(dialog.reason_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert not dialog.isVisible()
    assert git(repo, "log", "-1", "--format=%s").startswith(
        "relabel: Ledger writes are idempotent (factoid → observation)")
    row = conn.execute("SELECT status, type FROM facts WHERE path = ?", (path,)).fetchone()
    assert tuple(row) == ("live", "observation")
    assert "observation" in window.inspector.badges["type"].text()


def test_illegal_values_are_disabled_with_the_rule_as_tooltip(qtbot, window: MainWindow) -> None:
    dialog = open_on(qtbot, window, "pool")
    model = dialog.combos["origin"].model()
    assert isinstance(model, QStandardItemModel)
    distilled = model.item(dialog.combos["origin"].findText("distilled"))
    assert not distilled.isEnabled()
    assert "origin×type" in distilled.toolTip()
    claim = dialog.combos["claim_type"]
    assertion = claim.model().item(claim.findText("assertion"))
    # codex (a tool) writing about the codebase may assert; about the user it may not
    assert assertion.isEnabled()
    choose(qtbot, dialog.combos["subject_kind"], "user")
    qtbot.waitUntil(lambda: not claim.model().item(claim.findText("assertion")).isEnabled(), timeout=3000)
    assert "A1" in claim.model().item(claim.findText("assertion")).toolTip()
    view = dialog.combos["claimant_type"].model().item(dialog.combos["claimant_type"].findText("view"))
    assert not view.isEnabled() and "view claimant writes nothing" in view.toolTip()


def test_refused_combination_cannot_be_applied(qtbot, window: MainWindow, repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    dialog = open_on(qtbot, window, "pool")
    dialog.set_field("subject_kind", "user")
    dialog.set_field("claim_type", "assertion")  # forced past the disabled item, as a test can
    qtbot.keyClicks(dialog.reason_edit, "try")
    qtbot.waitUntil(lambda: "A1" in dialog.error_label.text(), timeout=3000)
    assert not dialog.apply_button.isEnabled()
    dialog.apply()
    assert dialog.isVisible() and git(repo, "rev-parse", "HEAD") == head


def test_escape_cancels(qtbot, window: MainWindow, repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    dialog = open_on(qtbot, window, "pool")
    choose(qtbot, dialog.combos["type"], "pattern")
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible() and git(repo, "rev-parse", "HEAD") == head


def test_bulk_relabel_and_undo_redo_from_the_edit_menu(qtbot, window: MainWindow, repo: Path) -> None:
    window.set_query("type:observation")
    view = window.table.view
    view.setFocus()
    view.selectAll()
    paths = window.selected_paths()
    assert len(paths) >= 2
    before = {p: (repo / p).read_bytes() for p in paths}
    qtbot.keyClick(view, Qt.Key.Key_R)
    dialog = relabel_dialog(qtbot, window)
    assert dialog.bulk
    assert dialog.combos["type"].currentText() == "observation"  # all agree
    # one writes its claim type, the other's is derived: both are observations, and opening
    # the editor proposes nothing (it once wrote a claim_type into every file)
    assert dialog.combos["claim_type"].currentText() == "observation"
    assert dialog.changes() == {} and dialog.diff_view.toPlainText() == ""
    assert dialog.attribution_label.text().startswith("Agents will be shown (the first of these")
    choose(qtbot, dialog.combos["type"], "pattern")
    qtbot.waitUntil(lambda: "+type: pattern" in dialog.diff_view.toPlainText(), timeout=3000)
    assert "claim_type" not in dialog.diff_view.toPlainText()  # kept, and still derived
    assert dialog.combos["claim_type"].currentText() == "(keep each)"  # observation; assertion
    qtbot.keyClicks(dialog.reason_edit, "these are patterns")
    qtbot.waitUntil(lambda: f"{len(paths)} of {len(paths)} facts change" in dialog.count_label.text(),
                    timeout=3000)
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        dialog.apply()
    assert git(repo, "rev-list", "--count", "HEAD~1..HEAD").strip() == "1"
    assert sorted(git(repo, "show", "--name-only", "--format=", "HEAD").split()) == sorted(paths)
    window.findChild(type(window.menuBar()))  # menus exist
    edit_menu = window.actions_by_name["undo"].parent()
    # (the stacks are read on the writer lane after the update: the label follows)
    qtbot.waitUntil(lambda: window.actions_by_name["undo"].text() == f"Undo relabel of {len(paths)} facts",
                    timeout=5000)
    window.activateWindow()  # the window manager does this when the dialog closes
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(window.table.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert {p: (repo / p).read_bytes() for p in paths} == before
    qtbot.waitUntil(lambda: window.actions_by_name["redo"].text() == f"Redo relabel of {len(paths)} facts",
                    timeout=5000)
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(window.table.view, Qt.Key.Key_Z,
                       Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    for p in paths:
        fact = parse_fact(p, (repo / p).read_bytes()).fact
        assert fact is not None and fact.type == "pattern"
    assert edit_menu is not None
    QApplication.processEvents()


def test_conflict_when_the_file_changed_after_opening(qtbot, window: MainWindow, repo: Path) -> None:
    dialog = open_on(qtbot, window, "pool")
    choose(qtbot, dialog.combos["type"], "pattern")
    qtbot.keyClicks(dialog.reason_edit, "pattern")
    path = repo / IDS["pool"]
    path.write_bytes(path.read_bytes().replace(b"confidence: 0.9", b"confidence: 0.4"))
    git(repo, "commit", "-qam", "update: agent")
    head = git(repo, "rev-parse", "HEAD")
    dialog.apply()
    qtbot.waitUntil(lambda: "changed on disk since you looked" in dialog.error_label.text() or
                    "Conflict" in dialog.error_label.text(), timeout=5000)
    assert dialog.isVisible()
    assert git(repo, "rev-parse", "HEAD") == head
    assert b"confidence: 0.4" in path.read_bytes()


def test_retract_asks_nothing_more_than_a_reason(qtbot, window: MainWindow, repo: Path) -> None:
    window.show_fact(fact_id(window, "policy"))
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.retract_selected("a policy we dropped")
    assert not (repo / IDS["policy"]).exists()
    assert git(repo, "log", "-1", "--format=%s").startswith("retract(curation): ")


def test_after_a_retract_and_its_undo_the_place_is_kept(qtbot, window: MainWindow) -> None:
    # the curator was left with no row and an empty inspector (its tabs still counting the
    # retracted fact's problems), and the undone fact was not shown again
    ids = window.table.model.ids
    row = 1
    gone, neighbour = ids[row], ids[row + 1]
    window.show_fact(gone)
    assert window.table.current_id() == gone
    path = window.inspector.path
    asked: list[str] = []
    window.ask_text = lambda _t, label, _d: asked.append(label) or "superseded"  # type: ignore[method-assign]
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.retract_selected()
    title = window.session.conn.execute("SELECT title FROM facts WHERE path = ?", (path,)).fetchone()[0]
    assert asked == [f"Retract “{title}” ({path})? Reason:"]  # (it said "1 fact(s)")
    assert gone not in window.table.model.ids
    assert window.table.current_id() == neighbour == window.inspector.fact_id
    tabs = window.inspector.tabs
    shown = window.inspector
    assert tabs.tabText(tabs.indexOf(shown.problems)).startswith("Problems")
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.undo()
    assert window.inspector.path == path  # (under a new id: the row was made anew)
    assert window.table.current_id() == window.inspector.fact_id
    shown.show_fact(None)
    assert tabs.tabText(tabs.indexOf(shown.problems)) == "Problems"  # no stale count
    assert not any(box.isVisible() for box in shown.trust_boxes)  # (three empty frames)


def test_patched_table_order_equals_a_full_requery(qtbot, window: MainWindow, repo: Path) -> None:
    """After a relabel the table moves the changed facts in place (no full re-query); the
    order must be exactly what a re-query gives, for every sort and a few queries."""
    from factdesk.index.search import fact_ids

    kinds = ["pattern", "observation", "concept"]
    patched: list[bool] = []
    real_patch = window.table.patch
    window.table.patch = lambda ids: patched.append(real_patch(ids)) or patched[-1]  # type: ignore[method-assign]
    for n, (sort, desc, query) in enumerate([
            ("updated", True, ""), ("title", False, ""), ("confidence", True, ""),
            ("type", False, ""), ("path", True, ""), ("problems", True, ""),
            ("updated", True, "type:observation"), ("title", True, "pool"),
            ("claimant", False, "-kind:pragmatic")]):
        window.table.state.sort_key, window.table.state.descending = sort, desc
        window.set_query(query)
        with qtbot.waitSignal(window.index_did_update, timeout=10_000):
            window.run_action(lambda n=n: window.curation.relabel(
                [IDS["pool"]], {"type": kinds[n % 3]}, f"round {n}"))
        conn = window.session.conn
        expected = fact_ids(conn, query, sort=sort, descending=desc)
        assert window.table.model.ids == expected, (sort, desc, query)
    assert patched == [True] * 9  # every refresh was a patch, none fell back


def test_field_captions_are_readable(qtbot, window: MainWindow) -> None:
    """Each form row is named: its caption is shown at its full text width (an elastic
    label in a form was once squeezed to nothing, leaving a column of unnamed fields)."""
    from PySide6.QtWidgets import QFormLayout, QLabel

    dialog = open_on(qtbot, window, "pool")
    dialog.show()
    qtbot.waitExposed(dialog)
    forms = dialog.findChildren(QFormLayout)
    assert forms
    captions = [forms[0].labelForField(w) for w in (*dialog.combos.values(), *dialog.edits.values())]
    assert captions and all(isinstance(c, QLabel) for c in captions)
    for caption in captions:
        assert caption.isVisible() and caption.text()
        assert caption.width() >= caption.fontMetrics().horizontalAdvance(caption.text()), caption.text()


def test_undo_keys_work_after_the_edit_menu_was_opened(qtbot, window: MainWindow, repo: Path) -> None:
    qtbot.waitUntil(lambda: window.undo_stack.labels is not None, timeout=5000)  # (read on the lane)
    menu = window.menuBar().actions()[1].menu()  # Edit
    assert menu.title() == "&Edit"
    menu.popup(window.mapToGlobal(window.rect().center()))  # nothing to undo yet: greyed out
    qtbot.waitUntil(menu.isVisible, timeout=3000)
    assert not window.actions_by_name["undo"].isEnabled()
    menu.hide()
    qtbot.keyClick(window.table.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == "Nothing to undo",  # a word,
                    timeout=5000)  # not a dialog
    before = (repo / IDS["pool"]).read_bytes()
    window.activateWindow()  # (the closed popup left no window active offscreen)
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    dialog = open_on(qtbot, window, "pool")
    choose(qtbot, dialog.combos["type"], "pattern")
    qtbot.keyClicks(dialog.reason_edit, "a pattern")
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        dialog.apply()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    # the shortcut was dead: the action stayed disabled from the menu's last showing
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(window.table.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert (repo / IDS["pool"]).read_bytes() == before


def test_the_preview_names_the_claimant_the_inspector_names(qtbot, window: MainWindow) -> None:
    # issue 14, bug 7: a fact that writes no claimant (git's author is the claimant) was
    # previewed as "unknown agent" while the inspector named the claimant
    dialog = open_on(qtbot, window, "hyp")
    claimant = window.session.conn.execute("SELECT claimant FROM facts WHERE path = ?",
                                           (IDS["hyp"],)).fetchone()[0]
    assert claimant and claimant in window.inspector.badges["claimant"].text()
    text = dialog.attribution_label.text()
    assert "unknown agent" not in text and claimant in text
    dialog.set_field("claimant_agent_id", "someone-else")  # a new claimant is shown as chosen
    qtbot.waitUntil(lambda: "someone-else" in dialog.attribution_label.text(), timeout=3000)
