"""The fact table: id-list model, SQL sorting, columns, selection kept across re-queries."""

from __future__ import annotations

from PySide6.QtCore import Qt

from factdesk.gui.app import make_settings
from factdesk.gui.main_window import MainWindow
from factdesk.gui.table_model import FACT_ID_ROLE
from tests.gui.conftest import fact_id


def titles(win: MainWindow) -> list[str]:
    model = win.table.model
    col = win.table.state.column_index("title")
    return [model.index(r, col).data() for r in range(model.rowCount())]


def test_model_passes_qtmodeltester(window, qtmodeltester) -> None:
    qtmodeltester.check(window.table.model)


def test_table_lists_live_facts_and_caches_pages_lazily(window) -> None:
    model = window.table.model
    assert model.rowCount() == 5  # the retracted fact is hidden by default
    assert model._pages == {} or len(model._pages) <= 1
    type_col = window.table.state.column_index("type")
    shown = {model.index(r, type_col).data() for r in range(model.rowCount())}
    assert {"? hypothesis", "● observation", "Σ synthesis", "§ policy"} <= shown
    assert all(isinstance(model.index(r, 0).data(FACT_ID_ROLE), int)
               for r in range(model.rowCount()))


def test_header_click_sorts_in_sql(window, qtbot) -> None:
    header = window.table.view.horizontalHeader()
    title_col = window.table.state.column_index("title")
    header.setSortIndicator(title_col, Qt.SortOrder.AscendingOrder)
    names = titles(window)
    assert names == sorted(names, key=str.lower)
    assert window.table.state.sort_key == "title" and not window.table.state.descending
    header.setSortIndicator(title_col, Qt.SortOrder.DescendingOrder)
    assert titles(window) == sorted(names, key=str.lower, reverse=True)


def test_selection_survives_requery_and_sort(window) -> None:
    pool = fact_id(window, "pool")
    assert window.table.select_id(pool)
    window.table.view.horizontalHeader().setSortIndicator(
        window.table.state.column_index("path"), Qt.SortOrder.AscendingOrder)
    assert window.table.current_id() == pool
    window.set_query("ledger")
    assert window.table.current_id() == pool
    assert window.inspector.fact_id == pool


def test_columns_hidden_and_sort_persist(window, repo, qtbot) -> None:
    path_col = window.table.state.column_index("path")
    window.table.set_column_visible(path_col, False)
    window.table.view.horizontalHeader().setSortIndicator(
        window.table.state.column_index("confidence"), Qt.SortOrder.AscendingOrder)
    window.close()
    again = MainWindow(repo, make_settings(), watch=False, update_on_open=False)
    qtbot.addWidget(again)
    assert again.table.view.horizontalHeader().isSectionHidden(path_col)
    assert again.table.state.sort_key == "confidence"
    assert not again.table.state.descending
    menu = again.table.column_menu()
    checked = {a.text(): a.isChecked() for a in menu.actions() if a.isCheckable()}
    assert checked["Path"] is False and checked["Title"] is True
    again.close()


def test_retracted_rows_are_browsable(window) -> None:
    window.set_query("status:retracted")
    assert titles(window) == ["Rate limit is 100 requests per minute"]


def test_background_sort_orders_serve_clicks_and_queries_exactly(window, qtbot,
                                                                  monkeypatch) -> None:
    """Once the window is quiet the sort orders are read on a worker thread; header clicks
    and queries are then answered through them, with the SQL path's exact result."""
    from factdesk.index import search as search_module
    from factdesk.index.search import fact_ids

    served: list[int] = []
    real = search_module._through_order

    def spy(*args, **kwargs):  # the real function, counted
        served.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(search_module, "_through_order", spy)
    session = window.session
    window.set_query("")
    qtbot.waitUntil(lambda: not session.is_warming, timeout=10_000)
    assert session.orders.missing() == []
    header = window.table.view.horizontalHeader()
    for key in ("title", "confidence", "type", "updated"):
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            header.setSortIndicator(window.table.state.column_index(key), order)
            for query in ("", "type:observation", "ledger", "status:retracted", "-kind:epistemic"):
                window.set_query(query)
                expected = fact_ids(session.conn, query, sort=key,
                                    descending=order == Qt.SortOrder.DescendingOrder)
                assert window.table.model.ids == expected, (key, order, query)
    assert len(served) == 4 * 2 * 5 + 8  # every query and every header click: cached orders


def test_sort_orders_are_dropped_when_the_index_changes(window, repo, qtbot) -> None:
    """An agent's commit reaches the index: the cached orders go, the table shows the new
    fact in its place, and the orders are read again in the background."""
    from tests.gui.conftest import _commit, _write

    session = window.session
    qtbot.waitUntil(lambda: not session.is_warming and not session.orders.missing(),
                    timeout=10_000)
    window.table.view.horizontalHeader().setSortIndicator(
        window.table.state.column_index("title"), Qt.SortOrder.AscendingOrder)
    before = window.table.model.rowCount()
    _write(repo, "kb/gotchas/ledger/0000aaaa.md",
           "---\ntype: observation\ndomain: [ledger]\nconfidence: 0.9\nsources: 1\n---\n"
           "# AAA sorts first\n\nA new fact an agent wrote.\n")
    _commit(repo, "learn: a new fact")
    with qtbot.waitSignal(session.index_did_update, timeout=20_000):
        window.reindex()
    qtbot.waitUntil(lambda: window.table.model.rowCount() == before + 1, timeout=10_000)
    from factdesk.index.search import fact_ids

    def expected() -> list[int]:
        return fact_ids(session.conn, "", sort="title", descending=False)

    assert any(t.startswith("AAA sorts first") for t in titles(window))
    assert window.table.model.ids == expected()
    qtbot.waitUntil(lambda: not session.is_warming and not session.orders.missing(),
                    timeout=10_000)
    window.set_query("type:observation")
    window.set_query("")
    assert window.table.model.ids == expected()
    assert fact_id(window, "pool") in window.table.model.ids


def test_a_replaced_index_file_gets_a_new_reader_and_new_orders(window, qtbot) -> None:
    """A damaged index is moved aside and rebuilt at the same path: the window's reader
    follows the new file (the old connection would go on reading the moved one), and the
    sort orders are read again from it."""
    from factdesk.index import schema
    from factdesk.index.search import fact_ids

    session = window.session
    qtbot.waitUntil(lambda: not session.is_warming and not session.orders.missing(),
                    timeout=10_000)
    old_conn, old_orders = session.conn, session.orders
    expected = list(window.table.model.ids)
    assert schema.move_aside(session.indexer.path) is not None
    with qtbot.waitSignal(session.index_did_update, timeout=30_000):
        window.reindex()
    assert session.conn is not old_conn and session.orders is not old_orders
    qtbot.waitUntil(lambda: not session.is_warming and not session.orders.missing(),
                    timeout=10_000)
    window.set_query("")
    assert window.table.model.ids == fact_ids(session.conn, "", sort=window.table.state.sort_key,
                                              descending=window.table.state.descending)
    assert len(window.table.model.ids) == len(expected)


def test_an_index_update_keeps_the_rows_scrolled_to(qtbot, window, repo) -> None:
    for i in range(60):
        (repo / f"kb/gotchas/many/{i:08x}.md").parent.mkdir(parents=True, exist_ok=True)
        (repo / f"kb/gotchas/many/{i:08x}.md").write_text(
            f"---\ntype: observation\nconfidence: 0.5\nsources: 1\n---\n# Fact number {i}\n")
    with qtbot.waitSignal(window.index_did_update, timeout=20_000):
        window.reindex()
    view = window.table.view
    window.table.select_id(window.table.model.ids[1])
    bar = view.verticalScrollBar()
    assert bar.maximum() > 0
    bar.setValue(bar.maximum())  # reading far below the selected row
    (repo / "kb/gotchas/many/ffffffff.md").write_text(  # an agent's commit arrives
        "---\ntype: observation\n---\n# One more\n")
    with qtbot.waitSignal(window.index_did_update, timeout=20_000):
        window.reindex()
    assert window.table.current_id() == window.table.model.ids[1]
    assert view.rowAt(0) > 1  # the rows scrolled to stay (it jumped back to the selected one)


def test_since_last_visit_finds_what_changed_after_the_window_closed(qtbot, repo, data_dir) -> None:
    # nothing ever wrote the visit: since:last-visit matched every fact
    import time

    from factdesk.index.search import fact_ids
    from tests.conftest import git
    from tests.gui.conftest import _write, open_window

    first = open_window(qtbot, repo)
    first.close()
    conn = first.session.indexer.connect(readonly=True)
    visit = int(conn.execute("SELECT value FROM meta WHERE key = 'last_visit'").fetchone()[0])
    conn.close()
    assert abs(visit - time.time()) < 60
    time.sleep(1.1)  # (commit times are whole seconds)
    _write(repo, "kb/gotchas/db/f7f7f7f7.md",
           "---\ntype: observation\nconfidence: 0.5\nsources: 1\n---\n# New since the visit\n")
    now = f"@{int(time.time())} +0000"  # (the test corpus's commits carry a fixed date)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "learn: while the curator was away",
        env={"GIT_AUTHOR_DATE": now, "GIT_COMMITTER_DATE": now})
    second = open_window(qtbot, repo)
    ids = fact_ids(second.session.conn, "since:last-visit")
    paths = [second.session.conn.execute("SELECT path FROM facts WHERE id = ?", (i,)).fetchone()[0]
             for i in ids]
    assert paths == ["kb/gotchas/db/f7f7f7f7.md"]
    second.close()
