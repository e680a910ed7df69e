"""Problems panel, overview, live updates, window persistence, and the `run` entry point."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from factdesk.gui import app as gui_app
from factdesk.gui.app import make_settings
from factdesk.gui.main_window import MainWindow
from tests.gui.conftest import fact_id


def test_problems_grouped_by_code_and_double_click_jumps(window, qtbot) -> None:
    tree = window.problems.tree
    assert tree.topLevelItemCount() == 0  # filled when the tab is first shown, not before
    qtbot.keyClick(window.table.view, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    groups = {tree.topLevelItem(i).text(0).split(" ")[0]: tree.topLevelItem(i)
              for i in range(tree.topLevelItemCount())}
    assert {"H1", "R2", "ref-retracted"} <= set(groups)
    assert window.center.tabText(1) == f"Problems ({window.problems.total})"
    item = groups["H1"].child(0)
    assert item.text(1) == "Migrations will lock the ledger table"
    window.center.setCurrentWidget(window.problems)
    tree.expandAll()
    tree.itemDoubleClicked.emit(item, 0)
    assert window.center.currentIndex() == 0
    assert window.inspector.fact_id == fact_id(window, "hyp")


def test_overview_counts_and_curator_links(window, qtbot) -> None:
    window.center.setCurrentWidget(window.overview)  # panels fill when first shown
    chart = window.overview.charts["type"]
    assert dict(chart.bars)["observation"] == 2
    link = window.overview.links["problem:R2"]
    assert link.text().endswith("(1)")
    window.center.setCurrentWidget(window.overview)
    link.click()
    assert window.center.currentIndex() == 0
    assert window.search.text() == "problem:R2"
    assert window.table.model.ids == [fact_id(window, "syn")]
    window.overview.links["-has:envelope"].click()
    assert fact_id(window, "pool") not in window.table.model.ids
    window.overview.grab()  # paints the bars


def test_external_change_is_picked_up_live(qtbot, repo, data_dir) -> None:
    win = MainWindow(repo, make_settings(), watch=True, update_on_open=False)
    qtbot.addWidget(win)
    # (the folders are listed off the GUI thread: the watch starts when they are)
    with qtbot.waitSignals([win.index_did_update, win.watcher.did_watch], timeout=20_000):
        win.reindex()
    pool = fact_id(win, "pool")
    win.show_fact(pool)
    with qtbot.waitSignal(win.index_did_update, timeout=20_000):
        (repo / "kb/gotchas/db/f7f7f7f7.md").write_text(
            "---\ntype: hypothesis\ndomain: [x]\nconfidence: 0.4\nsources: 1\nrefs: []\n---\n"
            "# An agent just wrote this\n\nSettles by 2030-01-01.\n", encoding="utf-8")
    assert win.last_error is None
    assert win.table.model.rowCount() == 6
    assert win.table.current_id() == pool
    win.close()


def test_window_geometry_and_splitters_persist(window, repo, qtbot) -> None:
    window.resize(701, 555)
    window.splitter.setSizes([150, 350, 201])
    sizes = window.splitter.sizes()
    window.close()
    again = MainWindow(repo, make_settings(), watch=False, update_on_open=False)
    qtbot.addWidget(again)
    again.show()
    # (the tabs made after the first paint set the centre's least width: once they are made)
    qtbot.waitUntil(lambda: all(p.real is not None for p in again._later.values()), timeout=10_000)
    assert again.size().width() == 701
    assert again.splitter.sizes() == sizes
    again.close()


def test_run_opens_a_path_and_returns_the_exit_code(repo, data_dir, qtbot, monkeypatch
                                                    ) -> None:
    opened: list[MainWindow] = []

    def fake_exec() -> int:
        opened.extend(w for w in QApplication.topLevelWidgets()
                      if isinstance(w, MainWindow) and w.isVisible())
        for w in opened:
            w.close()
        return 0

    monkeypatch.setattr(QApplication, "exec", staticmethod(fake_exec))
    assert gui_app.run(repo) == 0
    assert len(opened) == 1 and opened[0].session.repo == repo.resolve()
    assert (data_dir / "settings.ini").exists()


def test_run_reports_a_missing_corpus(tmp_path, data_dir, monkeypatch) -> None:
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "exec", lambda box: shown.append(box.text()) or 0)
    assert gui_app.run(tmp_path / "nowhere") == 2
    assert shown and "Cannot open" in shown[0]
