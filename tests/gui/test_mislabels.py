"""The suspected-mislabels queue worked with the keyboard on a real git corpus."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from factdesk.corpus.codec import parse_fact
from factdesk.gui.main_window import MainWindow
from factdesk.model.mislabels import Proposal, Suggestion
from tests.conftest import git
from tests.gui.conftest import _commit, _write, fact_id, relabel_dialog

HEDGED = "kb/gotchas/db/f6f6f6f6.md"
IMPERATIVE = "kb/gotchas/db/a7a7a7a7.md"


def add_mislabels(repo: Path) -> None:
    _write(repo, HEDGED, "---\ntype: observation\ndomain: [db]\nconfidence: 0.6\nsources: 1\n"
           "refs: ['https://example.org/pool']\n---\n# The pool will probably run dry at 300 clients\n\n"
           "It is likely that the pool runs dry at 300 clients.\n")
    _write(repo, IMPERATIVE, "---\ntype: observation\ndomain: [db]\nconfidence: 0.9\nsources: 1\n"
           "refs: ['https://example.org/migrations']\n---\n# Never run migrations during the batch window\n\n"
           "Migrations during the batch window lock the ledger.\n")
    _commit(repo, "learn: two more facts")


def go_to(qtbot, panel, path: str) -> None:  # type: ignore[no-untyped-def]
    """Press J until the queue shows `path` (K first, back to the top)."""
    for _ in range(len(panel.queue)):
        qtbot.keyClick(panel, Qt.Key.Key_K)
    for _ in range(len(panel.queue)):
        if panel.current().path == path:
            return
        qtbot.keyClick(panel, Qt.Key.Key_J)
    assert panel.current().path == path


def open_queue(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.reindex()
    with qtbot.waitSignal(window.mislabels.queue_did_load, timeout=20_000):
        window.center.setCurrentWidget(window.mislabels)
    window.mislabels.setFocus()


def test_accept_dismiss_and_edit_with_the_keyboard(qtbot, window: MainWindow, repo: Path,
                                                   tmp_path: Path) -> None:
    add_mislabels(repo)
    open_queue(qtbot, window)
    panel = window.mislabels
    codes = {(s.path, s.code) for s in panel.queue}
    assert (IMPERATIVE, "imperative-epistemic") in codes
    assert (HEDGED, "hedged-observation") in codes
    panel.grab().save(str(tmp_path / "mislabels.png"))
    # accept the imperative one: one key, one commit, the fact becomes a pragmatic policy
    go_to(qtbot, panel, IMPERATIVE)
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(panel, Qt.Key.Key_A)
    fact = parse_fact(IMPERATIVE, (repo / IMPERATIVE).read_bytes()).fact
    assert fact is not None and (fact.kind, fact.type) == ("pragmatic", "policy")
    assert git(repo, "log", "-1", "--format=%s").startswith("relabel: Never run migrations")
    assert all(s.path != IMPERATIVE for s in panel.queue)
    # dismiss another: recorded in git, with the fact's blob
    first = panel.current()
    window.ask_text = lambda *a: "checked by hand: correct as it is"  # type: ignore[method-assign]
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(panel, Qt.Key.Key_D)
    text = (repo / ".factdesk/dismissals.yaml").read_text()
    assert first.path in text and first.code in text and "checked by hand" in text
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [".factdesk/dismissals.yaml"]
    # a fresh queue remembers the dismissal (it is read from git, not a cache)
    with qtbot.waitSignal(window.mislabels.queue_did_load, timeout=20_000):
        panel.load()
    assert all((s.path, s.code) != (first.path, first.code) for s in panel.queue)
    # the hedged observation needs a settlement criterion: E opens the editor prefilled
    go_to(qtbot, panel, HEDGED)
    qtbot.keyClick(panel, Qt.Key.Key_A)  # needs input → the editor opens
    dialog = relabel_dialog(qtbot, window)
    assert dialog.combos["type"].currentText() == "hypothesis"
    qtbot.keyClicks(dialog.edits["settlement"], "pool errors at 300 clients in the load test")
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        dialog.apply()
    fact = parse_fact(HEDGED, (repo / HEDGED).read_bytes()).fact
    assert fact is not None and fact.type == "hypothesis"
    assert fact.envelope.settlement == "pool errors at 300 clients in the load test"
    assert all(s.path != HEDGED for s in panel.queue)


@pytest.mark.parametrize("key", [Qt.Key.Key_A, Qt.Key.Key_E])  # (E opened an editor without refs)
def test_accepting_a_request_for_sources_adds_to_the_refs_there(qtbot, window: MainWindow,
                                                                repo: Path, key: Qt.Key) -> None:
    add_mislabels(repo)
    open_queue(qtbot, window)
    panel = window.mislabels
    # a synthesis resting on one fact, whose preferred fix is to cite its other sources (the
    # heuristics offer that first when it may not become an insight): the answer replaced
    # the refs, so the one source it had was lost
    syn = "kb/decisions/api/c3c3c3c3.md"
    panel._loaded([Suggestion(syn, "single-source-synthesis", 6, "synthesis rests on 1 local fact ref",
                              (Proposal({}, ("refs",), action="edit", label="cite its other sources"),))])
    asked: list[tuple[str, str]] = []

    def answer(_title: str, label: str, default: str) -> str:
        asked.append((label, default))
        return f"{IMPERATIVE}, https://example.org/pool-report"

    window.ask_text = answer  # type: ignore[method-assign]
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(panel, key)
    assert asked == [("refs to add to “Pool limits and rate limits interact” (comma-separated):", "")]
    fact = parse_fact(syn, (repo / syn).read_bytes()).fact
    assert fact is not None
    assert list(fact.refs) == ["kb/gotchas/db/a1a1a1a1.md", IMPERATIVE,  # the one it had, kept
                               "https://example.org/pool-report"]


def test_the_queue_follows_changes_made_elsewhere(qtbot, window: MainWindow, repo: Path) -> None:
    add_mislabels(repo)
    open_queue(qtbot, window)
    panel = window.mislabels
    assert any(s.path == IMPERATIVE for s in panel.queue)
    # fixed from the Facts tab (or by an agent): it leaves the queue
    with qtbot.waitSignal(panel.queue_did_load, timeout=20_000):
        window.run_action(lambda: window.curation.relabel(
            [IMPERATIVE], {"kind": "pragmatic", "type": "policy"}, "an instruction"))
    assert all(s.path != IMPERATIVE for s in panel.queue)
    # and an undo brings it back
    with qtbot.waitSignal(panel.queue_did_load, timeout=20_000):
        window.undo()
    assert any(s.path == IMPERATIVE for s in panel.queue)


def test_a_number_key_takes_an_alternative(qtbot, window: MainWindow, repo: Path) -> None:
    add_mislabels(repo)
    open_queue(qtbot, window)
    panel = window.mislabels
    syn = "kb/decisions/api/c3c3c3c3.md"
    go_to(qtbot, panel, syn)
    assert panel.current().code == "single-source-synthesis"
    # (there was no key for an alternative: only the preferred proposal could be taken)
    assert "2 keep the synthesis and cite its other sources" in panel.proposal.text()
    window.ask_text = lambda *_a: IMPERATIVE  # type: ignore[method-assign]
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        qtbot.keyClick(panel, Qt.Key.Key_2)
    fact = parse_fact(syn, (repo / syn).read_bytes()).fact
    assert fact is not None and fact.type == "synthesis"  # not made an insight (proposal 1)
    assert list(fact.refs) == ["kb/gotchas/db/a1a1a1a1.md", IMPERATIVE]


def test_the_inspector_shows_the_fact_of_the_queue(qtbot, window: MainWindow, repo: Path) -> None:
    # issue 14, bug 3: the side-by-side pane showed the queue's fact, the inspector the
    # table's selection: two different facts on one screen
    add_mislabels(repo)
    window.show_fact(fact_id(window, "policy"))  # something else selected in the table
    open_queue(qtbot, window)
    panel = window.mislabels
    assert len(panel.queue) >= 2
    for _ in range(2):
        current = panel.current()
        assert window.inspector.path == current.path
        assert window.inspector.title.text() == panel.title.text()
        qtbot.keyClick(panel, Qt.Key.Key_J)


def test_an_earlier_item_committed_after_moving_on_leaves_the_queue_as_shown(
        qtbot, window: MainWindow, repo: Path) -> None:
    """The curator accepts an item and moves on (J, J) before its commit comes back: the
    committed item leaves the queue, the item shown stays shown, and the tab's count follows."""
    add_mislabels(repo)
    open_queue(qtbot, window)
    panel = window.mislabels
    assert len(panel.queue) >= 3
    first = panel.queue[0]
    for _ in range(len(panel.queue)):
        qtbot.keyClick(panel, Qt.Key.Key_K)
    qtbot.keyClick(panel, Qt.Key.Key_J)
    qtbot.keyClick(panel, Qt.Key.Key_J)
    shown, rest = panel.current(), [s for s in panel.queue if s is not first]
    with qtbot.waitSignal(panel.caption_did_change, timeout=2000) as caption:
        panel._did(first)  # (the success callback of the first item's action)
    assert panel.queue == rest and panel.current() is shown
    assert caption.args == [f"Mislabels ({len(rest)})"]
