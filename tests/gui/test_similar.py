"""`similar:` in the table: each row says how similar it is (issue 14 #6), in a Similarity
column that the results are sorted by, nearest first (a click on its header reverses them).

The semantic session here is a stand-in with fixed scores (the window's real embedding is
tested in test_reflection_window.py, when the model is installed): what is tested is the
table's showing of the scores the semantic layer hands it."""

from __future__ import annotations

from PySide6.QtCore import Qt

from factdesk.gui.table_state import SIMILARITY
from factdesk.semantic.vectors import Neighbour
from tests.gui.conftest import IDS, fact_id, submit


class ScoredSession:
    """`similar(target, k)` as SemanticSession answers it: neighbours, nearest first."""

    def __init__(self, hits: list[tuple[str, float]]) -> None:
        self.hits = hits
        self.asked: list[str] = []

    def similar(self, target: str, k: int = 20) -> list[Neighbour]:
        self.asked.append(target)
        return [Neighbour(path, score) for path, score in self.hits[:k]]


HITS = [(IDS["syn"], 0.83), (IDS["hyp"], 0.61), (IDS["policy"], 0.42)]


def cell(window, row: int, key: str, role=Qt.ItemDataRole.DisplayRole):  # type: ignore[no-untyped-def]
    model = window.table.model
    return model.data(model.index(row, window.table.state.column_index(key)), role)


def test_similar_results_show_their_similarity_and_sort_by_it(window, qtbot) -> None:
    window.semantic.session = ScoredSession(HITS)
    header = window.table.view.horizontalHeader()
    section = window.table.state.column_index(SIMILARITY)
    assert header.isSectionHidden(section)  # (no similarity outside a similar: query)
    submit(window, qtbot, f"similar:{IDS['pool']}")
    assert not window.search.error.isVisible()
    assert window.table.model.ids == [fact_id(window, k) for k in ("syn", "hyp", "policy")]
    # the column shows, first, with the indicator on it: the rows are in its order
    assert not header.isSectionHidden(section) and header.visualIndex(section) == 0
    assert header.sortIndicatorSection() == section
    assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    assert [cell(window, r, SIMILARITY) for r in range(3)] == ["0.830", "0.610", "0.420"]
    assert cell(window, 0, "title").startswith("Pool limits and rate limits interact")
    # a click on its header: farthest first; the scores go with their rows
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=header.rect().topLeft() + _centre(header, section))
    assert window.table.model.ids == [fact_id(window, k) for k in ("policy", "hyp", "syn")]
    assert [cell(window, r, SIMILARITY) for r in range(3)] == ["0.420", "0.610", "0.830"]
    # another query: the column goes, the table's own sort is back on the header
    submit(window, qtbot, "type:hypothesis")
    assert header.isSectionHidden(section)
    assert header.sortIndicatorSection() == window.table.state.column_index(window.table.state.sort_key)
    assert window.table.state.sort_key != SIMILARITY


def _centre(header, section: int):  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QPoint

    return QPoint(header.sectionViewportPosition(section) + header.sectionSize(section) // 2,
                  header.height() // 2)
