"""The search bar: typing a query, errors, chips, completion, `/` and Esc."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from tests.gui.conftest import fact_id, submit


def chips(window) -> list[QPushButton]:
    return [c for c in window.search.chips.findChildren(QPushButton, "chip") if c.parent()]


def test_typed_query_filters_the_table(window, qtbot) -> None:
    submit(window, qtbot, "type:hypothesis")
    assert window.table.model.ids == [fact_id(window, "hyp")]
    assert window.status.count_label.text() == "1 fact"
    submit(window, qtbot, "pool")
    assert fact_id(window, "pool") in window.table.model.ids


def test_bad_query_shows_red_error_and_keeps_rows(window, qtbot) -> None:
    before = list(window.table.model.ids)
    submit(window, qtbot, "confidence:lots")
    assert window.search.error.isVisible()
    assert "confidence" in window.search.error.text()
    assert window.search.error.textFormat() == Qt.TextFormat.PlainText
    assert window.table.model.ids == before
    submit(window, qtbot, "type:policy")
    assert not window.search.error.isVisible()


def test_a_misspelt_value_that_finds_nothing_says_the_word_meant(window, qtbot) -> None:
    submit(window, qtbot, "type:hypotesis")  # (0 facts, and no word why)
    assert window.table.model.rowCount() == 0
    assert window.search.error.isVisible()
    assert window.search.error.text() == (
        "No facts: type:hypotesis is no type (did you mean type:hypothesis?)")
    submit(window, qtbot, "type:hypothesis")
    assert window.table.model.rowCount() and not window.search.error.isVisible()


def test_only_field_filters_get_chips_and_similar_says_why_it_is_off(window, qtbot) -> None:
    submit(window, qtbot, "type:observation foo:bar claim_type:observation")
    assert [c.text() for c in chips(window)] == ["type:observation  ×", "claim_type:observation  ×"]
    submit(window, qtbot, "similar:pool")  # (the GUI tests run with FACTDESK_SEMANTIC=off)
    assert window.search.error.text() == ("semantic search is off in this window "
                                          "(FACTDESK_SEMANTIC=off): similar: needs it")


def test_chips_show_filters_and_remove_them(window, qtbot) -> None:
    submit(window, qtbot, "type:observation domain:ledger-api pool")
    assert [c.text() for c in chips(window)] == ["type:observation  ×", "domain:ledger-api  ×"]
    qtbot.mouseClick(chips(window)[0], Qt.MouseButton.LeftButton)
    assert window.search.text() == "domain:ledger-api pool"
    assert [c.text() for c in chips(window)] == ["domain:ledger-api  ×"]
    assert window.search.no_chips.isHidden()
    table_height = window.table.view.height()
    qtbot.mouseClick(chips(window)[0], Qt.MouseButton.LeftButton)
    assert chips(window) == [] and not window.search.no_chips.isHidden()
    assert window.table.view.height() == table_height  # the chip row keeps its place


def test_slash_focuses_and_escape_clears(window, qtbot) -> None:
    window.set_query("type:policy")
    window.table.view.setFocus()
    qtbot.keyClick(window.table.view, Qt.Key.Key_Slash)
    assert window.search.line.hasFocus()
    qtbot.keyClick(window.search.line, Qt.Key.Key_Escape)
    assert window.search.text() == ""
    assert window.table.model.rowCount() == 5
    window.set_query("type:policy")  # and in the table (Esc did nothing there)
    window.table.view.setFocus()
    qtbot.keyClick(window.table.view, Qt.Key.Key_Escape)
    assert window.search.text() == "" and window.table.model.rowCount() == 5


def test_completion_offers_fields_then_values(window, qtbot) -> None:
    line = window.search.line
    assert "type:" in line.completions_for("ty")
    values = line.completions_for("type:")
    assert {"type:hypothesis", "type:policy"} <= set(values)
    assert "-status:retracted" in line.completions_for("-status:")
    line.clear()
    qtbot.keyClicks(line, "foo ori")
    assert line.completer_popup.completionCount() >= 1
    line.insert_completion("origin:")
    assert line.text() == "foo origin:"
    line.completer_popup.popup().hide()


def test_return_with_the_completion_popup_open_applies_the_typed_filter(window, qtbot) -> None:
    # bug 4: the popup swallowed Return: the typed filter waited for a second Return
    line = window.search.line
    line.setFocus()
    line.clear()
    qtbot.keyClicks(line, "type:hypothesis")
    assert line.completer_popup.popup().isVisible()  # (it offers type:hypothesis)
    qtbot.keyClick(line, Qt.Key.Key_Return)  # once
    assert window.table.model.ids == [fact_id(window, "hyp")]
    assert [c.text() for c in chips(window)] == ["type:hypothesis  ×"]
    assert not line.completer_popup.popup().isVisible()


def test_a_chosen_completion_is_still_inserted_by_return(window, qtbot) -> None:
    line = window.search.line
    line.setFocus()
    line.clear()
    qtbot.keyClicks(line, "type:hypo")
    popup = line.completer_popup.popup()
    assert popup.isVisible()
    qtbot.keyClick(popup, Qt.Key.Key_Down)  # the user picks the offer
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert line.text() == "type:hypothesis "


def test_the_clear_button_clears_the_filter_and_its_chips(window, qtbot) -> None:
    # bug 4: it emptied the text but left the chips and the filter
    from PySide6.QtWidgets import QToolButton

    submit(window, qtbot, "type:hypothesis")
    assert window.table.model.rowCount() == 1 and chips(window)
    button = next(b for b in window.search.line.findChildren(QToolButton) if b.isVisible())
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.search.text() == ""
    assert window.table.model.rowCount() == 5 and chips(window) == []
