"""SearchBar: the query line with field/value completion, an error line and filter chips.

The query language is the core's (`factdesk.index.query`); this widget only edits text.
Chips are removable buttons, one per `field:value` token of the current query.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCompleter,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from factdesk.gui import theme
from factdesk.index.query import FIELDS, SINGLE_VALUED, field_of
from factdesk.index.search import facet_counts

if TYPE_CHECKING:
    import sqlite3

TOKEN_RE = re.compile(r'-?\w+:"(?:[^"]|"")*"?|-?\w+:\S+|"(?:[^"]|"")*"?|\S+')
FIELD_TOKEN_RE = re.compile(r"^-?(\w+):(.+)$")
#: query field → facet column whose distinct values complete it
VALUE_COLUMNS = {"type": "type", "kind": "kind", "origin": "origin", "claim": "claim_type",
                 "claimant": "claimant", "subject": "subject_kind", "topic": "topic",
                 "op": "op"}
FIXED_VALUES = {
    "status": ["live", "broken", "retracted", "problems"],
    "has": ["problems", "errors", "envelope", "weight", "refs"],
    "since": ["last-visit"],
}


def query_tokens(text: str) -> list[str]:
    """Split a query into tokens, keeping quoted phrases and `field:"a b"` whole."""
    return TOKEN_RE.findall(text)


def quote_value(value: str) -> str:
    if value and re.fullmatch(r"[^\s\"]+", value):
        return value
    return '"' + value.replace('"', '""') + '"'


def add_term(text: str, field: str, value: str) -> str:
    """`text` with `field:value` added unless already present. For a field a fact has one
    value of (`SINGLE_VALUED`), it takes the place of that field's filter: a click on a
    second folder or type switches to it (both together matched nothing)."""
    term = f"{field}:{quote_value(value)}"
    tokens = query_tokens(text)
    if term in tokens:
        return text
    if field in SINGLE_VALUED:
        same = [i for i, t in enumerate(tokens) if (m := FIELD_TOKEN_RE.match(t))
                and not t.startswith("-") and field_of(m[1]) == field]
        if same:
            tokens[same[0]] = term
            return " ".join(t for i, t in enumerate(tokens) if i not in same[1:])
    return " ".join([*tokens, term])


def remove_token(text: str, token: str) -> str:
    tokens = query_tokens(text)
    if token in tokens:
        tokens.remove(token)
    return " ".join(tokens)


class QueryLineEdit(QLineEdit):
    """A line edit that completes the word under the cursor (field names, then values)."""

    escape_did_press = Signal()

    def __init__(self, values_for: Callable[[str], list[str]], parent: QWidget | None = None):
        super().__init__(parent)
        self._values_for = values_for
        self._model = QStringListModel(self)
        self.completer_popup = QCompleter(self._model, self)
        self.completer_popup.setWidget(self)
        self.completer_popup.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer_popup.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.completer_popup.activated.connect(self.insert_completion)
        self.textEdited.connect(self._update_completions)

    def _word(self) -> tuple[int, str]:
        before = self.text()[: self.cursorPosition()]
        start = max(before.rfind(" "), -1) + 1
        return start, before[start:]

    def completions_for(self, word: str) -> list[str]:
        """Candidates for the word being typed: `field:` names, or `field:value` values."""
        neg = "-" if word.startswith("-") else ""
        word = word.removeprefix("-")
        if ":" in word:
            field = word.split(":", 1)[0].lower()
            return [f"{neg}{field}:{quote_value(v)}" for v in self._values_for(field)]
        return [f"{neg}{name}:" for name in FIELDS]

    def _update_completions(self, _text: str) -> None:
        _start, word = self._word()
        if not word:
            self.completer_popup.popup().hide()
            return
        self._model.setStringList(self.completions_for(word))
        self.completer_popup.setCompletionPrefix(word)
        if self.completer_popup.completionCount():
            self.completer_popup.complete()
        else:
            self.completer_popup.popup().hide()

    def insert_completion(self, completion: str) -> None:
        start, word = self._word()
        text = self.text()
        end = start + len(word)
        sep = "" if completion.endswith(":") else " "
        self.setText(text[:start] + completion + sep + text[end:].lstrip())
        self.setCursorPosition(start + len(completion) + len(sep))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        popup = self.completer_popup.popup()
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if popup.isVisible() and enter and not popup.currentIndex().isValid():
            # no completion chosen: Return applies what was typed (the completer would
            # hide itself and swallow the key, leaving the filter for a second Return)
            popup.hide()
        elif popup.isVisible() and (enter or event.key() in (Qt.Key.Key_Escape, Qt.Key.Key_Tab)):
            event.ignore()  # the completer's popup handles these
            return
        if event.key() == Qt.Key.Key_Escape:
            self.escape_did_press.emit()
            return
        super().keyPressEvent(event)


class SearchBar(QWidget):
    """Query line + error text + chips; emits `query_did_submit(text)` on Enter."""

    query_did_submit = Signal(str)

    def __init__(self, connection: Callable[[], sqlite3.Connection | None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._connection = connection
        self.line = QueryLineEdit(self.values_for, self)
        self.line.setObjectName("searchLine")
        self.line.setPlaceholderText('Search  (/)   e.g. type:hypothesis confidence:<0.5 "retry"')
        self.line.setClearButtonEnabled(True)
        self.line.returnPressed.connect(self.submit)
        # the clear button (and a query erased by hand) shows everything again, chips too:
        # it emptied the text and left the filter applied
        self.line.textEdited.connect(lambda text: None if text else self.submit())
        self.line.escape_did_press.connect(self.clear)
        self.error = QLabel(self)
        self.error.setObjectName("searchError")
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        theme.styled(self.error, lambda: f"color: {theme.ERROR.color};")
        self.error.setWordWrap(True)
        self.error.hide()
        self.chips = QWidget(self)
        self.chips.setObjectName("searchChips")
        self._chips_layout = QHBoxLayout(self.chips)
        self._chips_layout.setContentsMargins(0, 0, 0, 0)
        self.no_chips = QLabel("No field filters: click a facet or type field:value", self.chips)
        self.no_chips.setTextFormat(Qt.TextFormat.PlainText)
        theme.styled(self.no_chips, lambda: f"color: {theme.DERIVED.color};")
        self._chips_layout.addWidget(self.no_chips)
        self._chips_layout.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.line)
        layout.addWidget(self.error)
        layout.addWidget(self.chips)
        # The chip row keeps its height when empty: a facet click that adds the first chip
        # then repaints the row alone instead of resizing (and repainting) the table below.
        self.chips.setFixedHeight(self._make_chip("type:observation").sizeHint().height())

    def values_for(self, field: str) -> list[str]:
        if field in FIXED_VALUES:
            return FIXED_VALUES[field]
        conn = self._connection()
        column = VALUE_COLUMNS.get(field)
        if conn is None or column is None:
            return []
        return [str(v) for v, _n in facet_counts(conn, column, "") if v]

    def text(self) -> str:
        return self.line.text()

    def set_query(self, text: str, *, submit: bool = True) -> None:
        self.line.setText(text)
        if submit:
            self.submit()

    def submit(self) -> None:
        self.query_did_submit.emit(self.line.text().strip())

    def clear(self) -> None:
        """Esc: clear the query and show everything."""
        self.set_query("")

    def show_error(self, message: str | None) -> None:
        self.error.setText(message or "")
        self.error.setVisible(bool(message))

    def show_chips(self, text: str) -> None:
        """One removable chip per field filter of the applied query."""
        while self._chips_layout.count() > 2:  # the chips before the hint and the stretch
            item = self._chips_layout.takeAt(0)
            widget = item.widget()
            if widget is not None:
                widget.hide()
                widget.setParent(None)
                widget.deleteLater()
        for token in query_tokens(text):
            m = FIELD_TOKEN_RE.match(token)
            if not m or field_of(m[1]) is None:
                continue  # (`foo:bar`, a URL: plain text, no filter to remove)
            chip = self._make_chip(token)
            chip.setParent(self.chips)
            chip.clicked.connect(lambda _=False, t=token: self.set_query(
                remove_token(self.line.text(), t)))
            self._chips_layout.insertWidget(self._chips_layout.count() - 2, chip)
        self.no_chips.setVisible(self._chips_layout.count() == 2)

    @staticmethod
    def _make_chip(token: str) -> QPushButton:
        chip = QPushButton(f"{theme.clip(token, 200)}  ×")
        chip.setObjectName("chip")
        chip.setFlat(True)
        chip.setCursor(Qt.CursorShape.PointingHandCursor)
        chip.setToolTip(theme.tooltip(f"Remove {token}"))
        chip.setAccessibleName(f"Remove filter {theme.clip(token, 200)}")
        theme.styled(chip, lambda: (
            f"QPushButton {{ border: 1px solid {theme.CHIP_EDGE.color}; border-radius: 9px; "
            f"padding: 1px 8px; background: {theme.CHIP_BG.color}; color: {theme.CHIP_TEXT.color}; }}"))
        return chip
