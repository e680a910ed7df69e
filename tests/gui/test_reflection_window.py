"""Transitions tab in the main window, and the inspector's provenance line (attestation,
track record)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from factdesk.gui.main_window import MainWindow
from tests.gui.conftest import IDS, fact_id
from tests.semantic.guard import requires_model


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


@requires_model
def test_semantic_search_in_the_window_and_the_model_setting(qtbot, repo: Path, data_dir: Path,
                                                             monkeypatch) -> None:
    """With embeddings on (the static model, built offline from the installed MiniLM), the
    window embeds in the background, `similar:` lists neighbours and the model choice is a
    setting; the GUI never waits for the model."""
    from factdesk.gui.app import make_settings

    monkeypatch.setenv("FACTDESK_SEMANTIC", "on")
    win = MainWindow(repo, make_settings(), watch=False, update_on_open=False)
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.index_did_update, timeout=20_000):
        win.reindex()
    assert win.actions_by_name["model_static"].isChecked()
    if win.semantic.session is None:  # not ready yet: said under the search bar, no rows
        win.apply_query("similar:pool")
        assert "similar:" in win.search.error.text() and win.table.model.rowCount() == 0
    qtbot.waitUntil(lambda: win.semantic.session is not None or win.semantic.notice is not None,
                    timeout=300_000)
    assert win.semantic.session is not None, win.semantic.notice
    neighbours = win.semantic.session.neighbours(IDS["pool"], 5)  # type: ignore[attr-defined]
    assert len(neighbours) == 4 and IDS["pool"] not in [n.path for n in neighbours]  # 5 live facts
    assert win.apply_query(f"similar:{IDS['pool']}")
    # the table lists exactly the neighbours above the model's similarity floor, best first
    above = [n.path for n in win.semantic.session.similar(IDS["pool"], 200)]  # type: ignore[attr-defined]
    conn = win.session.conn
    shown = [conn.execute("SELECT path FROM facts WHERE id = ?", (i,)).fetchone()[0]
             for i in win.table.model.ids]
    assert shown == above
    # each row shows its similarity to the target, in the Similarity column
    scores = [f"{n.score:.3f}" for n in win.semantic.session.similar(IDS["pool"], 200)]  # type: ignore[attr-defined]
    column = win.table.state.column_index("similarity")
    assert [win.table.model.index(r, column).data() for r in range(len(shown))] == scores
    started: list[bool] = []
    # not the slow full model here (tests/semantic loads it)
    win.semantic.start = lambda: started.append(True)  # type: ignore[method-assign]
    win.actions_by_name["model_full"].trigger()
    assert win.settings.value("semantic/model") == "full" and win.semantic.model() == "full"
    assert win.actions_by_name["model_full"].isChecked()
    assert not win.actions_by_name["model_static"].isChecked()
    # re-embedding with the new model: at once, or when the previous embedding thread ends
    qtbot.waitUntil(lambda: started == [True], timeout=10_000)
    assert win.semantic.session is None
    win.close()
