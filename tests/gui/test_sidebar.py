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

