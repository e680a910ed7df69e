"""The Agents tab (issue 16) driven with keys and clicks on a real git corpus: it opens
with every agent (unregistered ones flagged), selecting one filters the fact table, the
inspector's track-record link opens it, and the registry actions commit once each with
their reason, say what happened to the authority findings, and undo."""

from __future__ import annotations

from pathlib import Path

import yaml
from PySide6.QtCore import QPoint, Qt

from factdesk.corpus.registry_io import REGISTRY_PATH
from factdesk.gui.agent_model import COLUMNS, brier_text, evidence_text
from factdesk.gui.agents_panel import AgentsPanel, findings_words
from factdesk.gui.main_window import MainWindow
from tests.conftest import git
from tests.gui.conftest import fact_id, submit


def open_agents(qtbot, window: MainWindow) -> AgentsPanel:  # type: ignore[no-untyped-def]
    window.ask_identity = lambda: ("Ana Curator", "ana@example.org")  # type: ignore[method-assign]
    panel = window.agents
    with qtbot.waitSignal(panel.did_load, timeout=20_000):
        qtbot.keyClick(window.table.view, Qt.Key.Key_8, Qt.KeyboardModifier.ControlModifier)
    assert window.center.currentWidget() is panel
    return panel


def select(qtbot, panel: AgentsPanel, agent: str) -> None:  # type: ignore[no-untyped-def]
    panel.table.setFocus()
    for _ in range(panel.model.rowCount() + 1):
        if panel.selected_id() == agent:
            return
        qtbot.keyClick(panel.table, Qt.Key.Key_Down)
    raise AssertionError(f"{agent} is not listed")


def registry(repo: Path) -> dict:
    return yaml.safe_load((repo / REGISTRY_PATH).read_text())


def test_the_tab_lists_every_agent_and_selecting_one_filters_the_table(
        qtbot, window: MainWindow, repo: Path, tmp_path: Path) -> None:
    # one open proposal: a commit of builder's on its agent branch
    git(repo, "checkout", "-q", "-b", "agent/builder")
    (repo / "kb/gotchas/db/f6f6f6f6.md").write_text(
        "---\ntype: observation\nconfidence: 0.5\nsources: 1\nrefs: []\n---\n# Proposed\n\nBody.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "learn: proposed", author="builder",
        email="builder+learn@agents.knomit.io")
    git(repo, "checkout", "-q", "main")
    panel = window.agents
    with qtbot.waitSignal(panel.proposals_did_load, timeout=30_000):
        panel = open_agents(qtbot, window)
    assert {r["id"]: r["proposals"] for r in panel.model.rows}["builder"] == 1
    assert {r["id"]: r["proposals"] for r in panel.model.rows}["codex"] == 0
    ids = {r["id"]: r for r in panel.model.rows}
    # the claimant of the facts (codex, unregistered) and who committed (knomit)
    assert "codex" in ids and "knomit" in ids
    assert ids["codex"]["registered"] is False
    assert panel.model.data(panel.model.index(panel.model.row_of("codex"), 1)) == "unregistered"
    assert panel.model.columnCount() == len(COLUMNS)
    select(qtbot, panel, "codex")
    # the fact table behind shows codex's claims alone; the Agents tab stays in front
    assert window.search.text() == "agent:codex"
    assert window.center.currentWidget() is panel
    claimed = ids["codex"]["facts"]
    qtbot.waitUntil(lambda: window.table.model.rowCount() == claimed, timeout=5000)
    assert "codex" in panel.title.text() and "Calibration" in panel.details.toPlainText()
    assert panel.buttons["register"].isEnabled() and not panel.buttons["set-type"].isEnabled()
    # Enter: the Facts tab, filtered
    qtbot.keyClick(panel.table, Qt.Key.Key_Return)
    assert window.center.currentIndex() == 0 and window.search.text() == "agent:codex"
    # the user's own query there survives the tab's background reload
    submit(window, qtbot, "type:hypothesis")
    with qtbot.waitSignal(panel.did_load, timeout=20_000):
        panel.refresh()
    assert panel.selected_id() == "codex" and window.search.text() == "type:hypothesis"


def test_the_inspectors_track_record_link_opens_the_agents_record(
        qtbot, window: MainWindow) -> None:
    window.show_fact(fact_id(window, "pool"))  # claimed by codex
    link = window.inspector.agent_link
    assert link.isVisible() and "codex" in link.text()
    with qtbot.waitSignal(window.agents.did_load, timeout=20_000):
        qtbot.mouseClick(link, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.agents.selected_id() == "codex", timeout=5000)
    assert window.center.currentWidget() is window.agents


def test_register_then_promote_with_a_reason_commits_says_the_findings_and_undoes(
        qtbot, window: MainWindow, repo: Path) -> None:
    panel = open_agents(qtbot, window)
    select(qtbot, panel, "codex")
    head = git(repo, "rev-parse", "HEAD").strip()
    qtbot.mouseClick(panel.buttons["register"], Qt.MouseButton.LeftButton)
    dialog = panel.dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.agent_id.text() == "codex"
    assert dialog.email.text() == "codex@agents.knomit.io"  # its git e-mail, without +op
    assert not dialog.ok_button.isEnabled()  # a reason is required
    qtbot.keyClicks(dialog.reason, "codex writes our observations")
    assert dialog.ok_button.isEnabled()
    with qtbot.waitSignal(window.index_did_update, timeout=20_000):
        qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    assert git(repo, "rev-parse", "HEAD~1").strip() == head
    assert git(repo, "log", "-1", "--format=%s").startswith("register: codex as tool")
    assert "codex writes our observations" in git(repo, "log", "-1", "--format=%B")
    assert registry(repo)["agents"]["codex"]["type"] == "tool"
    qtbot.waitUntil(lambda: any(r["id"] == "codex" and r["registered"]
                                for r in panel.model.rows), timeout=20_000)
    assert "Registry changed" in panel.banner.text()
    # promote: the record comes first, then the reason
    select(qtbot, panel, "codex")
    assert panel.buttons["set-type"].isEnabled()
    qtbot.mouseClick(panel.buttons["set-type"], Qt.MouseButton.LeftButton)
    dialog = panel.dialog
    assert dialog is not None
    dialog.type_box.setFocus()
    dialog.type_box.setCurrentText("persona")
    assert "About the user" in dialog.evidence.toPlainText()
    assert "→ persona" in dialog.evidence.toPlainText()
    qtbot.keyClicks(dialog.reason, "it cites and it is right")
    with qtbot.waitSignal(window.index_did_update, timeout=20_000):
        qtbot.keyClick(dialog.reason, Qt.Key.Key_Return)
    assert git(repo, "log", "-1", "--format=%s").startswith("set-type: codex tool → persona")
    assert registry(repo)["agents"]["codex"]["type"] == "persona"
    # a persona must cite: the facts of codex without refs are findings now
    qtbot.waitUntil(lambda: "appeared" in panel.banner.text(), timeout=5000)
    assert "Registry changed" in panel.banner.text()
    qtbot.waitUntil(lambda: any(r["id"] == "codex" and r["type"] == "persona"
                                for r in panel.model.rows), timeout=20_000)
    # undo: the type is tool again
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    panel.table.setFocus()
    with qtbot.waitSignal(window.index_did_update, timeout=20_000):
        qtbot.keyClick(panel.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert registry(repo)["agents"]["codex"]["type"] == "tool"
    qtbot.waitUntil(lambda: any(r["id"] == "codex" and r["type"] == "tool"
                                for r in panel.model.rows), timeout=20_000)


def test_a_refused_action_says_why_and_commits_nothing(qtbot, window: MainWindow,
                                                      repo: Path) -> None:
    panel = open_agents(qtbot, window)
    head = git(repo, "rev-parse", "HEAD").strip()
    qtbot.mouseClick(panel.buttons["add-type"], Qt.MouseButton.LeftButton)
    dialog = panel.dialog
    assert dialog is not None
    qtbot.keyClicks(dialog.name, "tool")  # exists already
    qtbot.keyClicks(dialog.description, "again")
    dialog.verdicts["user"].setCurrentText("forbidden")
    qtbot.keyClicks(dialog.reason, "try")
    with qtbot.waitSignal(window.ops.lane.busy_did_change, timeout=20_000,
                          check_params_cb=lambda busy: not busy):
        qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Not done" in panel.banner.text(), timeout=5000)
    assert "exists already" in panel.banner.text()
    assert git(repo, "rev-parse", "HEAD").strip() == head


def test_words() -> None:
    rec = {"id": "codex", "registered": True, "type": "tool", "facts": 4, "retracted_facts": 1,
           "by_claim_type": {"observation": 3, "report": 1}, "by_subject_kind": {"user": 2},
           "user_facts": 2, "user_corrections": 1, "corrections": 1, "correction_rate": 0.2,
           "authority_findings": 0, "brier": 0.1234, "settled": 7,
           "hypotheses": {"confirmed": 5, "refuted": 2, "promoted": 1, "open": 1, "overdue": 0}}
    assert brier_text(rec) == "0.123 (n=7)"
    text = evidence_text(rec, "persona")
    assert "About the user (subject_kind: user): 2 facts, 1 corrected" in text
    assert "Brier 0.123 over 7 settled predictions" in text
    assert findings_words(2, 0, 5) == ("Registry changed: 2 authority findings appeared, "
                                       "0 disappeared (5 in all).")


def test_a_suggestion_is_worded_with_its_figures_thresholds_and_settings_file() -> None:
    from factdesk.gui.agent_model import suggestion_lines
    from factdesk.reflect.agents import AgentRecord, Thresholds, suggest
    from factdesk.reflect.calibration import Prediction

    r = AgentRecord("codex", type="tool", registered=True, user_facts=6, facts=40,
                    predictions=[Prediction(f"p{i}", 0.9, 1) for i in range(12)])
    rec = r.as_dict()
    assert rec["suggestion"] is None  # (as_dict carries what build_records set)
    rec["suggestion"] = suggest(r, Thresholds())
    words = suggestion_lines(rec, Path("/data/agent-suggestions.yaml"))
    assert words.startswith("Suggested: promote tool → persona.")
    assert "Brier 0.010 ≤ 0.15" in words and "6 facts about the user ≥ 5" in words
    assert "over 12 settled predictions (at least 10)" in words
    assert "/data/agent-suggestions.yaml" in words and "Never applied on its own." in words


def test_sorting_by_a_header_keeps_the_selected_agent(qtbot, window: MainWindow) -> None:
    """A click on a column header reorders the rows; the selection moves with its agent
    (the shared CellsModel sort carries persistent indexes; the Agents table's own sort
    left the selection on the row number, so another agent was shown selected)."""
    panel = open_agents(qtbot, window)
    assert panel.model.rowCount() >= 2
    last = panel.model.rows[-1]["id"]
    select(qtbot, panel, last)
    for column in (0, 0):  # ascending, then descending by name
        header = panel.table.horizontalHeader()
        qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                         pos=QPoint(header.sectionViewportPosition(column) + 5, 5))
        assert panel.selected_id() == last


def test_registry_dialogs_draw_nothing_over_their_fields(qtbot, window: MainWindow, tmp_path: Path) -> None:
    """Issue 24 #13: Register / Change type / Retire drew a white rectangle over the start of
    the agent id: the form's fields the action does not use were still children of the
    dialog, shown at its top-left corner, outside any layout. Each visible widget of each
    dialog is one the action lays out, and none overlaps another."""
    from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPlainTextEdit

    panel = open_agents(qtbot, window)
    select(qtbot, panel, "codex")
    for action in ("register", "retire", "set-type", "add-type"):
        dialog = panel.open_action(action)
        qtbot.waitExposed(dialog)
        dialog.grab().save(f"/tmp/desk-agent-dialog-{action}.png")
        shown = [w for kind in (QLineEdit, QPlainTextEdit, QComboBox, QLabel)
                 for w in dialog.findChildren(kind) if w.isVisible() and w.width() > 0]
        for i, a in enumerate(shown):
            for b in shown[i + 1:]:
                if a.isAncestorOf(b) or b.isAncestorOf(a):
                    continue
                ra = a.geometry().translated(a.parentWidget().mapTo(dialog, QPoint(0, 0)))
                rb = b.geometry().translated(b.parentWidget().mapTo(dialog, QPoint(0, 0)))
                assert not ra.intersects(rb), (action, a.objectName() or type(a).__name__,
                                               b.objectName() or type(b).__name__)
        dialog.close()
