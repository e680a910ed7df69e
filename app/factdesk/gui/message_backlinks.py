"""The inspector's "Messages" tab (issue 17): the messages that reference the fact shown,
while the query includes messages (`include:messages`). Placed by the Messages tab
(`MessagesPanel(inspector=…)`), fed by the inspector's `fact_did_show`; each fact's list is
read on a worker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from factdesk.errors import QueryError
from factdesk.gui import theme
from factdesk.gui.inspector import text_label
from factdesk.gui.message_model import PATH_ROLE, delivery_text, sent_text
from factdesk.gui.workers import BackgroundRead
from factdesk.index.indexer import Indexer
from factdesk.index.query import includes_messages
from factdesk.model.messages import Message
from factdesk.recall import messages_referencing

if TYPE_CHECKING:
    from factdesk.gui.inspector import InspectorPanel


class MessageBacklinks(QWidget):
    """"Messages that reference this fact": a tab of the inspector, shown while the query
    includes messages (`include:messages`), read on a worker for each fact shown."""

    message_did_activate = Signal(str)
    backlinks_did_load = Signal(int)
    TAB = "Messages"

    def __init__(self, indexer: Indexer, inspector: InspectorPanel,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBacklinks")
        self._inspector = inspector
        self.included = False
        self.path: str | None = None
        self.messages: list[Message] = []
        self._reader = BackgroundRead(None, lambda path: _referencing(indexer, path),
                                      done=self._loaded, failed=self._failed, parent=self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.caption = text_label(self, "backlinksCaption")
        self.list = QListWidget(self)
        self.list.setObjectName("backlinksList")
        self.list.setWordWrap(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.itemActivated.connect(self._activated)
        self.list.itemDoubleClicked.connect(self._activated)
        layout.addWidget(self.caption)
        layout.addWidget(self.list, 1)
        tabs = inspector.tabs
        self._tab_index = tabs.addTab(self, self.TAB)
        tabs.setTabVisible(self._tab_index, False)
        signal = getattr(inspector, "fact_did_show", None)
        if signal is not None:
            signal.connect(self.fact_did_show)

    def query_did_apply(self, text: str) -> None:
        try:
            included = includes_messages(text)
        except QueryError:  # (a query the table refused never gets here)
            included = False
        if included != self.included:
            self.included = included
            self._inspector.tabs.setTabVisible(self._inspector.tabs.indexOf(self), included)
            self.reload()

    def fact_did_show(self, path: object) -> None:
        self.path = str(path) if path else None
        self.reload()

    def reload(self) -> None:
        if not self.included or not self.path:
            self.messages = []
            self.list.clear()
            self._caption(None)
            return
        self._reader.start(self.path)

    def _loaded(self, messages: list[Message], path: str) -> None:
        if path != self.path:
            return
        self.messages = messages
        self.list.clear()
        for m in messages:
            item = QListWidgetItem(theme.clip(
                f"{delivery_text(m.delivery)}  {m.sender} → {', '.join(m.to)} ({sent_text(m.sent)}): "
                f"{m.first_line or '(no text)'}", 300), self.list)
            item.setData(PATH_ROLE, m.path)
            item.setToolTip(theme.tooltip(f"{m.path}\n{m.context_explanation or ''}"))
        if not messages:
            QListWidgetItem("No message references this fact.", self.list).setFlags(
                Qt.ItemFlag.NoItemFlags)
        self._caption(len(messages))
        self.backlinks_did_load.emit(len(messages))

    def _failed(self, message: str, _path: str) -> None:
        self.caption.setText(f"Could not read the messages: {message}")

    def _caption(self, n: int | None) -> None:
        tabs = self._inspector.tabs
        tabs.setTabText(tabs.indexOf(self), self.TAB if n is None else f"{self.TAB} ({n})")
        self.caption.setText("" if n is None else
                             "Messages that reference this fact (activate one to open it "
                             "in the Messages tab):")

    def _activated(self, item: QListWidgetItem) -> None:
        path = item.data(PATH_ROLE)
        if path:
            self.message_did_activate.emit(str(path))

    def close_worker(self) -> None:
        self._reader.close()


def _referencing(indexer: Indexer, path: str) -> list[Message]:
    return messages_referencing(indexer, path)
