"""The sidebar: facet counts, ontology tree, saved searches."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from factdesk.gui.app import make_settings
from factdesk.gui.sidebar import FacetSidebar


def find_item(tree: QTreeWidget, text: str) -> QTreeWidgetItem:
    items = tree.findItems(text, Qt.MatchFlag.MatchContains | Qt.MatchFlag.MatchRecursive, 0)
    assert items, f"{text!r} not in tree"
    return items[0]


def click(tree: QTreeWidget, qtbot, item: QTreeWidgetItem) -> None:
    tree.scrollToItem(item)
    rect = tree.visualItemRect(item)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_facet_counts_and_click_adds_filter(window, qtbot) -> None:
    facets = window.sidebar.facets
    type_group = find_item(facets, "Type")
    assert type_group.text(1) == "5"
    policy = find_item(facets, "§ policy")
    assert policy.text(1) == "1"
    click(facets, qtbot, policy)
    assert window.search.text() == "type:policy"
    assert window.table.model.rowCount() == 1
    # counts follow the query
    assert find_item(window.sidebar.facets, "Type").text(1) == "1"
    click(window.sidebar.facets, qtbot, find_item(window.sidebar.facets, "P pragmatic"))
    assert window.search.text() == "type:policy kind:pragmatic"


def test_ontology_tree_counts_and_filters_by_path(window, qtbot) -> None:
    tree = window.sidebar.ontology
    gotchas = find_item(tree, "gotchas")
    assert gotchas.text(1) == "3"
    click(tree, qtbot, gotchas)
    assert window.search.text() == "path:kb/gotchas/"
    assert window.table.model.rowCount() == 3
    # a second folder switches to it (the two paths together matched nothing)
    click(window.sidebar.ontology, qtbot, find_item(window.sidebar.ontology, "decisions"))
    assert window.search.text() == "path:kb/decisions/"
    assert window.table.model.rowCount() == 1


def test_a_second_value_of_a_single_valued_field_switches_to_it(window, qtbot) -> None:
    window.set_query("pool -type:reference type:policy domain:ops")
    window.add_filter("type", "observation")  # (what a facet's click does)
    assert window.search.text() == "pool -type:reference type:observation domain:ops"
    window.set_query("domain:ops")  # a fact has many domains: a second one narrows
    window.add_filter("domain", "ledger-api")
    assert window.search.text() == "domain:ops domain:ledger-api"


def test_saved_searches_persist(window, qtbot, data_dir) -> None:
    window.sidebar.save_search("hypotheses", "type:hypothesis")
    again = FacetSidebar(lambda: None, make_settings())
    qtbot.addWidget(again)
    assert again.saved_searches() == [("hypotheses", "type:hypothesis")]
    item = window.sidebar.saved.item(0)
    rect = window.sidebar.saved.visualItemRect(item)
    qtbot.mouseClick(window.sidebar.saved.viewport(), Qt.MouseButton.LeftButton,
                     pos=rect.center())
    assert window.search.text() == "type:hypothesis"
    assert window.table.model.rowCount() == 1
    window.sidebar.delete_search("hypotheses")
    assert window.sidebar.saved_searches() == []



def test_ontology_tree_makes_deep_folders_when_opened(window, qtbot) -> None:
    """Folders below the first level exist once their parent opens (lazy items), with the
    same counts and filters."""
    tree = window.sidebar.ontology
    gotchas = find_item(tree, "gotchas")
    assert gotchas.childCount() == 0 and not gotchas.isExpanded()
    assert gotchas.childIndicatorPolicy() == gotchas.ChildIndicatorPolicy.ShowIndicator
    tree.expandItem(gotchas)
    names = sorted(gotchas.child(i).text(0) for i in range(gotchas.childCount()))
    assert names == ["db", "ui"]
    db = window.sidebar.folder_item("kb/gotchas/db")
    assert db is not None and db.text(1) == "2"
    click(tree, qtbot, db)
    assert window.search.text() == "path:kb/gotchas/db/"
    assert window.table.model.rowCount() == 2
    assert window.sidebar.folder_item("kb/nowhere") is None


def test_ontology_tree_counted_on_a_worker_for_large_corpora(window, qtbot) -> None:
    """Above the size threshold the folders are counted off the GUI thread: the tree
    fills in when the worker reports, with the same items as the synchronous count."""
    sidebar = window.sidebar
    tree = sidebar.ontology

    def shape() -> list[tuple[str, str]]:
        out = []
        for i in range(tree.topLevelItemCount()):
            top = tree.topLevelItem(i)
            out.append((top.text(0), top.text(1)))
            out += [(top.child(j).text(0), top.child(j).text(1)) for j in range(top.childCount())]
        return out

    synchronous = shape()
    assert synchronous and find_item(tree, "gotchas").text(1) == "3"
    sidebar.async_threshold = 0
    with qtbot.waitSignal(sidebar.ontology_did_update, timeout=10_000):
        sidebar.refresh_ontology()
        sidebar.refresh_ontology()  # a second request while counting: counted again
    assert shape() == synchronous


def test_a_superseded_folder_count_is_dropped(window, qtbot) -> None:
    """A synchronous refresh after a worker started (the corpus fell under the threshold):
    the worker's later, older count must not overwrite the tree."""
    sidebar = window.sidebar
    fills: list[int] = []
    sidebar.ontology_did_update.connect(lambda: fills.append(1))
    sidebar.async_threshold = 0
    sidebar.refresh_ontology()  # a worker counts
    assert sidebar.counting
    sidebar.async_threshold = 10**9
    sidebar.refresh_ontology()  # filled at once, synchronously
    qtbot.waitUntil(lambda: not sidebar.counting, timeout=10_000)
    assert fills == []  # the worker's result came and was dropped
    assert find_item(sidebar.ontology, "gotchas").text(1) == "3"


def test_counts_answered_after_the_window_closes_are_dropped(window, qtbot) -> None:
    """`close_worker` waits for both counting threads; their answers, still queued for the
    GUI thread, must not fill a closing window's trees."""
    sidebar = window.sidebar
    updates: list[str] = []
    sidebar.facets_did_update.connect(updates.append)
    sidebar.ontology_did_update.connect(lambda: updates.append("(folders)"))
    sidebar.async_threshold = 0
    sidebar.refresh_facets("type:observation")
    sidebar.refresh_ontology()
    sidebar.close_worker()
    qtbot.wait(100)  # the queued answers are delivered
    assert updates == []


def test_the_same_counts_again_leave_the_trees_as_they_are(window, qtbot) -> None:
    """An index update that changed no count (an agent's commit elsewhere, a refs move)
    keeps the trees' items, their expansion and the selection: rebuilding them cost
    ~40 ms of the window's thread at every agent commit."""
    sidebar = window.sidebar
    gotchas = find_item(sidebar.ontology, "gotchas")
    policy = find_item(sidebar.facets, "§ policy")
    sidebar.refresh_ontology()
    sidebar.refresh_facets(sidebar.facet_query)
    assert find_item(sidebar.ontology, "gotchas") is gotchas
    assert find_item(sidebar.facets, "§ policy") is policy
    window.set_query("type:policy")  # other counts: the facet tree follows
    assert find_item(sidebar.facets, "Type").text(1) == "1"
