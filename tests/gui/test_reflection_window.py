"""Transitions tab in the main window, and the inspector's provenance line (attestation,
track record)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from factdesk.gui.main_window import MainWindow
from tests.gui.conftest import IDS, fact_id


def test_track_record_and_attestation_in_the_inspector(qtbot, window: MainWindow, repo: Path) -> None:
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.run_action(lambda: window.curation.confirm(IDS["hyp"], IDS["pool"], "the lock was seen"))
    with qtbot.waitSignal(window.transitions.did_load, timeout=20_000):
        qtbot.keyClick(window.table.view, Qt.Key.Key_6, Qt.KeyboardModifier.ControlModifier)
    # the pool fact already cited the hypothesis: its retraction is a confirmation (§6.6)
    assert [(t.kind, t.reason) for t in window.transitions.transitions
            if t.path == IDS["hyp"]][-1] == ("retracted", "confirmed")
    window.show_fact(fact_id(window, "pool"))
    qtbot.waitUntil(lambda: "Track record — codex:" in window.inspector.provenance.text(), timeout=5000)
    assert "1 confirmed" in window.inspector.provenance.text()
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.run_action(lambda: window.curation.attest([IDS["pool"]], "checked the commit by hand"))
    qtbot.waitUntil(lambda: "attested by" in window.inspector.provenance.text(), timeout=5000)
    assert "checked the commit by hand" in window.inspector.provenance.text()
