"""The Messages tab (issue 17): the message store (`msg/`, FORMAT.md §14), kept apart from
memory, as threads grouped by the pair of agents they are between.

    claude-code ↔ codex   (2 threads · 1 queued)
        Deploy hold on ledger-api …      ○ queued    2026-11-20 09:14
            claude-code → codex: …       ● read      2026-11-20 09:14
            codex → claude-code: …       ○ queued    2026-11-20 10:02

The tree is read on a worker (`BackgroundRead` over `message_model.read_messages`: the
messages' own index is brought up to date by stat, then read; the tree's rows are built
there; the referenced facts' titles come from the facts' index), never on the GUI thread,
which only resets the `ThreadModel`. Below it, the selected message: from, to, sent, delivery, why it was sent
(`context_explanation`), the facts it references (activating one selects that fact) and
its body. **Mark delivery…** (M) sets the delivery state of the selected messages (a thread
or a pair: all of its messages) with a reason: one commit through the window's operation
pipeline, undone with Edit ▸ Undo like every other action.

`MessageBacklinks` (gui/message_backlinks.py), placed by this tab, is the inspector's
"Messages" tab: the messages that reference the fact shown, visible while the query
includes messages (`include:messages`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from factdesk.gui import theme
from factdesk.gui.inspector import caption_label, text_label
from factdesk.gui.keys import panel_keys
from factdesk.gui.message_backlinks import MessageBacklinks
from factdesk.gui.message_model import (
    DELIVERY_MARKS,
    PATH_ROLE,
    MessagesView,
    ThreadModel,
    delivery_text,
    read_messages,
)
from factdesk.gui.operations import Operations
from factdesk.gui.panel import IndexChange, LazyRefresh, Window
from factdesk.gui.safe_browser import SafeTextBrowser
from factdesk.gui.workers import BackgroundRead
from factdesk.index.messages import referenced_facts
from factdesk.model.messages import DELIVERY_STATES, Message

if TYPE_CHECKING:
    from factdesk.gui.inspector import InspectorPanel

#: up to this many messages every thread is shown open
EXPAND_ALL_UP_TO = 500


# -- the mark dialog ------------------------------------------------------------------------


def next_state(state: str) -> str:
    """The state a message usually goes to next (acknowledged stays)."""
    if state not in DELIVERY_STATES:
        return DELIVERY_STATES[0]
    return DELIVERY_STATES[min(DELIVERY_STATES.index(state) + 1, len(DELIVERY_STATES) - 1)]


class MarkDeliveryDialog(QDialog):
    """The new delivery state and the reason (OK only with a reason)."""

    def __init__(self, count: int, current: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("markDeliveryDialog")
        self.setWindowTitle("Mark delivery state")
        form = QFormLayout(self)
        what = "this message" if count == 1 else f"these {count} messages"
        form.addRow(caption_label(f"Set the delivery state of {what}.", self))
        self.state = QComboBox(self)
        self.state.setObjectName("markDeliveryState")
        self.state.addItems(list(DELIVERY_STATES))
        self.state.setCurrentText(next_state(current))
        form.addRow(caption_label("&Delivery:", self), self.state)
        self.reason = QLineEdit(self)
        self.reason.setObjectName("markDeliveryReason")
        self.reason.setPlaceholderText("why (kept in the commit)")
        form.addRow(caption_label("&Reason:", self), self.reason)
        for label in self.findChildren(QLabel):
            if label.text() == "&Delivery:":
                label.setBuddy(self.state)
            elif label.text() == "&Reason:":
                label.setBuddy(self.reason)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self.reason.textChanged.connect(self._check)
        self._check()
        self.reason.setFocus()

    def _check(self) -> None:
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(
            bool(self.reason.text().strip()))

    def accept(self) -> None:
        if self.reason.text().strip():
            super().accept()


# -- the tab --------------------------------------------------------------------------------


class MessagesPanel(LazyRefresh, QWidget):
    """The Messages tab (see the module docstring). Writes go through `ops`; reads through
    a `BackgroundRead`. With `inspector`, it also places the inspector's backlinks tab."""

    caption_did_change = Signal(str)
    messages_did_load = Signal(int)
    titles_did_load = Signal()
    fact_path_did_request = Signal(str)
    caption = "Messages"
    menu_text = "Messages"
    action_name = "showMessages"

    def __init__(self, ops: Operations, *, inspector: InspectorPanel | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messagesPanel")
        self._ops = ops
        self.view: MessagesView | None = None
        self.loaded = False
        self._messages: dict[str, Message] = {}
        self.mark_dialog: MarkDeliveryDialog | None = None
        self._wanted: str | None = None  # a message to select once read (a backlink)
        indexer = ops.indexer
        #: referenced fact path → (title, status), None: no such fact (read as shown)
        self._titles: dict[str, tuple[str, str] | None] = {}
        self._title_reader = BackgroundRead.of_index(
            indexer, lambda conn, refs: referenced_facts(conn, list(refs)), done=self._titles_read,
            failed=lambda *_a: None, parent=self)
        self._reader = BackgroundRead(None, lambda: read_messages(indexer), done=self._loaded,
                                      failed=self._failed, parent=self)
        self._build()
        self.backlinks: MessageBacklinks | None = None
        if inspector is not None:
            self.backlinks = MessageBacklinks(indexer, inspector, self)
            self.backlinks.message_did_activate.connect(self.select_message)

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        top = QHBoxLayout()
        self.status = text_label(self, "messagesStatus")
        top.addWidget(self.status, 1)
        self.mark_button = QPushButton("Mark delivery… (M)", self)
        self.mark_button.setObjectName("messages_mark")
        self.mark_button.clicked.connect(self.mark)
        top.addWidget(self.mark_button)
        outer.addLayout(top)
        # (one above the other: the centre is ~650 px wide on a 1366×768 screen)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.setObjectName("messagesSplitter")
        self.model = ThreadModel(self)
        self.tree = QTreeView(split)
        self.tree.setObjectName("messagesTree")
        self.tree.setAccessibleName("Message threads by pair of agents")
        self.tree.setModel(self.model)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        header.setStretchLastSection(False)  # the thread's text takes what is left
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        # fixed widths from the font (measuring every row's contents would read them all)
        metrics = QFontMetrics(self.tree.font())
        for column, sample in ((1, "✔ acknowledged__"), (2, "2026-11-20 09:14__")):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, metrics.horizontalAdvance(sample) + 12)
        selection = self.tree.selectionModel()
        selection.currentChanged.connect(lambda index, _old: self._show(index))
        selection.selectionChanged.connect(lambda *_a: self._enable())
        detail = QWidget(split)
        self.detail = detail
        grid = QGridLayout(detail)
        grid.setContentsMargins(0, 6, 0, 0)
        grid.setVerticalSpacing(2)
        self.fields: dict[str, QLabel] = {}
        # two columns of short fields (from · sent, to · delivery), then the long ones
        places = {"from": (0, 0), "sent": (0, 2), "to": (1, 0), "delivery": (1, 2),
                  "in_reply_to": (2, 0), "context": (3, 0)}
        for key, caption in (("from", "From"), ("to", "To"), ("sent", "Sent"),
                             ("delivery", "Delivery"), ("in_reply_to", "In reply to"),
                             ("context", "Why now")):
            row, col = places[key]
            grid.addWidget(caption_label(caption + ":", detail), row, col,
                           Qt.AlignmentFlag.AlignTop)
            label = text_label(detail, f"message_{key}")
            grid.addWidget(label, row, col + 1, 1, 1 if key in ("from", "sent", "to", "delivery")
                           else 3)
            self.fields[key] = label
        refs_row = 4
        grid.addWidget(caption_label("References:", detail), refs_row, 0, Qt.AlignmentFlag.AlignTop)
        self.refs = QListWidget(detail)
        theme.follow_items(self.refs)  # (its coloured items follow a theme switch)
        self.refs.setObjectName("messageRefs")
        self.refs.setAccessibleName("Facts the message references")
        self.refs.setWordWrap(True)
        self.refs.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.refs.setMaximumHeight(84)
        self.refs.itemActivated.connect(self._ref_activated)
        self.refs.itemClicked.connect(self._ref_activated)
        grid.addWidget(self.refs, refs_row, 1, 1, 3)
        self.body = SafeTextBrowser(detail)
        self.body.setObjectName("messageBody")
        self.body.setAccessibleName("Message body")
        grid.addWidget(self.body, refs_row + 1, 0, 1, 4)
        grid.setRowStretch(refs_row + 1, 1)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        split.addWidget(self.tree)
        split.addWidget(detail)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setSizes([300, 340])
        outer.addWidget(split, 1)
        panel_keys(self, (("M", self.mark),))
        self._show(QModelIndex())

    # -- loading --------------------------------------------------------------------------

    def refresh(self) -> None:
        self.load()

    def load(self) -> None:
        """Read the message store again in the background (the selection is kept)."""
        if self._reader.start() and not self.loaded:
            self.status.setText("Reading the message store…")

    def _loaded(self, view: MessagesView) -> None:
        selected = self.selected_paths(expand=False)
        current = self._current_key()
        self.view = view
        self._titles = {}  # (facts change too: read again)
        self.loaded = True
        self._fill(view)
        if self._wanted is not None:
            current, selected, self._wanted = ("message", self._wanted), [], None
        self._restore(current, selected)
        self.caption_did_change.emit(f"Messages ({view.count})")
        self.messages_did_load.emit(view.count)

    def _failed(self, message: str) -> None:
        self.status.setText(f"Could not read the message store: {message}")

    def _fill(self, view: MessagesView) -> None:
        self.tree.selectionModel().blockSignals(True)
        self.model.set_view(view)
        self._messages = view.messages if view.messages is not None else {
            m.path: m for m in (n.message for n in view.nodes) if m is not None}
        # every thread open while that is cheap; beyond, the threads are one row each (count,
        # queued) under their open pair, opened by a click, → or * (expanding walks every row)
        if view.count <= EXPAND_ALL_UP_TO:
            self.tree.expandAll()
        else:
            self.tree.expandToDepth(0)
        self.tree.selectionModel().blockSignals(False)
        threads_n = sum(len(g) for _p, g in view.groups)
        if view.count == 0:
            text = "No messages: agents write them under msg/ (docs/messages.md); none is part of memory."
        else:
            text = (f"{view.count} message{'s' if view.count != 1 else ''} in {threads_n} "
                    f"thread{'s' if threads_n != 1 else ''} between {len(view.groups)} "
                    f"pair{'s' if len(view.groups) != 1 else ''} of agents · {view.queued} queued")
        if view.unreadable:
            text += (f" · {view.unreadable} file{'s' if view.unreadable != 1 else ''} under msg/ "
                     "unreadable (factdesk check says why)")
        self.status.setText(text)

    def _current_key(self) -> tuple[str, object] | None:
        node = self.model.node(self.tree.currentIndex())
        return node.key if node is not None else None

    def _restore(self, current: tuple[str, object] | None, selected: list[str]) -> None:
        target = self._find(current) if current is not None else None
        if target is None:
            target = self._first_message()
        if target is None:
            self._show(QModelIndex())
            return
        self._go(target)
        by_path = self.model.view.by_path or {}
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for path in selected:
            if path in by_path and by_path[path] != target.internalId():
                self.tree.selectionModel().select(self.model.index_of(by_path[path]), flags)

    def _go(self, index: QModelIndex) -> None:
        """Make `index` the current row and the only one selected (what M then marks), in
        view (its thread opened when closed)."""
        self.tree.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows)
        self.tree.scrollTo(index)

    def _find(self, key: tuple[str, object]) -> QModelIndex | None:
        kind, value = key
        view = self.model.view
        if kind == "message":
            at = (view.by_path or {}).get(str(value))
            return self.model.index_of(at) if at is not None else None
        for i, node in enumerate(view.nodes):
            if node.kind == kind and node.key == key:
                return self.model.index_of(i)
        return None

    def _first_message(self) -> QModelIndex | None:
        return next((self.model.index_of(i) for i, n in enumerate(self.model.view.nodes)
                     if n.kind == "message"), None)

    # -- showing --------------------------------------------------------------------------

    def current_message(self) -> Message | None:
        path = self.tree.currentIndex().data(PATH_ROLE)
        return self._messages.get(path) if path else None

    def _enable(self) -> None:
        self.mark_button.setEnabled(bool(self.selected_paths()))

    def _show(self, index: QModelIndex) -> None:
        path = index.data(PATH_ROLE) if index.isValid() else None
        m = self._messages.get(path) if path else None
        self._enable()
        self.refs.clear()
        if m is None:
            for label in self.fields.values():
                label.setText("")
            self.fields["from"].setText("Select a message (J/K to move)." if self.loaded else "")
            self.body.show_markdown("")
            return
        f = self.fields
        f["from"].setText(theme.clip(m.sender))
        f["to"].setText(theme.clip(", ".join(m.to)))
        f["sent"].setText(theme.clip(m.sent))
        f["delivery"].setText(delivery_text(m.delivery))
        f["delivery"].setStyleSheet(
            f"color: {DELIVERY_MARKS.get(m.delivery, theme.UNKNOWN).color}; font-weight: bold;")
        replied = self._messages.get(m.in_reply_to or "")
        f["in_reply_to"].setText(theme.clip(
            f"{replied.sender}: {replied.first_line}" if replied is not None
            else (m.in_reply_to or "—"), 300))
        f["context"].setText(theme.clip(m.context_explanation or "—"))
        self._show_refs(m)
        self.body.show_markdown(m.body)

    def _show_refs(self, m: Message) -> None:
        """The facts `m` references, by title; titles not known yet are read on a worker
        (only the shown message's: 10,000 messages cite ~18,000 facts)."""
        self.refs.clear()
        missing = tuple(r for r in m.referenced_memory_ids if r not in self._titles)
        if missing:
            self._title_reader.start(missing)
        for ref in m.referenced_memory_ids:
            known = ref in self._titles
            fact = self._titles.get(ref)
            if fact is not None:
                title, status = fact
                text = f"{title or '(untitled)'} — {ref}" + (f" ({status})" if status != "live" else "")
            else:
                text = f"{ref} (reading…)" if not known else f"{ref} (no such fact)"
            entry = QListWidgetItem(theme.clip(text, 300), self.refs)
            entry.setData(PATH_ROLE, ref if fact is not None or not known else None)
            entry.setToolTip(theme.tooltip(ref))
            if known and (fact is None or fact[1] != "live"):
                theme.paint_item(entry, theme.ERROR if fact is None else theme.DERIVED)
        if not m.referenced_memory_ids:
            QListWidgetItem("(none)", self.refs).setFlags(Qt.ItemFlag.NoItemFlags)

    def _titles_read(self, titles: dict[str, tuple[str, str]], asked: tuple[str, ...]) -> None:
        for ref in asked:
            self._titles[ref] = titles.get(ref)
        m = self.current_message()
        if m is not None and set(asked) & set(m.referenced_memory_ids):
            self._show_refs(m)
            self.titles_did_load.emit()

    def _ref_activated(self, item: QListWidgetItem) -> None:
        path = item.data(PATH_ROLE)
        if path:
            self.fact_path_did_request.emit(str(path))

    def select_message(self, path: str) -> None:
        """Bring the tab's tree to the message at `path` (the inspector's backlinks)."""
        index = self._find(("message", path))
        if index is not None:
            self._go(index)
        else:
            self._wanted = path
            self.load()

    def step(self, delta: int) -> None:
        """J/K: the next/previous message (the first when none is current)."""
        ids = [i for i, n in enumerate(self.model.view.nodes) if n.kind == "message"]
        if not ids:
            return
        current = self.tree.currentIndex()
        node = self.model.node(current)
        if node is not None and node.kind == "message":
            at = ids.index(current.internalId())
        elif node is not None:  # a pair or a thread: from the first message under it
            after = [k for k, i in enumerate(ids) if i > current.internalId()]
            at = (after[0] - 1 if delta > 0 else after[0]) if after else len(ids)
        else:
            at = -1 if delta > 0 else len(ids)
        target = self.model.index_of(ids[max(0, min(len(ids) - 1, at + delta))])
        self._go(target)

    # -- marking --------------------------------------------------------------------------

    def selected_paths(self, *, expand: bool = True) -> list[str]:
        """The messages selected: a message itself, a thread or a pair all of theirs
        (`expand`), in tree order, each once."""
        out: list[str] = []
        nodes = self.model.view.nodes
        current = self.tree.currentIndex()
        rows = self.tree.selectionModel().selectedRows(0) or ([current] if current.isValid() else [])

        def walk(node_id: int) -> None:
            node = nodes[node_id]
            if node.message is not None:
                out.append(node.message.path)
            for child in node.children:
                walk(child)

        for index in sorted(rows, key=lambda i: i.internalId()):  # (ids are in tree order)
            node = nodes[index.internalId()]
            if node.message is not None:
                out.append(node.message.path)
            elif expand:
                walk(index.internalId())
        return list(dict.fromkeys(out))

    def mark(self) -> None:
        """M: ask the new state and a reason, then commit (through the writer lane)."""
        paths = self.selected_paths()
        if not paths:
            return
        current = self._messages[paths[0]].delivery if paths[0] in self._messages else ""
        dialog = MarkDeliveryDialog(len(paths), current, self)
        self.mark_dialog = dialog
        dialog.accepted.connect(lambda: self._marked(dialog, paths))
        dialog.finished.connect(lambda _r: dialog.deleteLater())
        dialog.open()

    def _marked(self, dialog: MarkDeliveryDialog, paths: Sequence[str]) -> None:
        state, reason = dialog.state.currentText(), dialog.reason.text().strip()
        self.mark_dialog = None
        self.mark_delivery(paths, state, reason)

    def mark_delivery(self, paths: Sequence[str], state: str, reason: str) -> None:
        """Set `paths`' delivery state to `state` (one commit; Edit ▸ Undo reverts it)."""
        chosen = list(paths)
        self.status.setText(f"Marking {len(chosen)} message{'s' if len(chosen) != 1 else ''} "
                            f"{state}…")
        self._ops.run(lambda cur: cur.mark_delivery(chosen, state, reason))

    # -- Panel ----------------------------------------------------------------------------

    def tab_widget(self) -> QWidget:
        return self

    def index_did_change(self, change: IndexChange) -> None:
        if self.loaded:
            self.refresh_when_seen(change)
        elif not self._reader.running:  # (the caption's count, before the tab is first shown)
            self.load()
        if self.backlinks is not None:
            self.backlinks.reload()

    def tab_did_show(self) -> None:
        if not self.loaded:
            self.load()
        else:
            self.catch_up()

    def close_worker(self) -> None:
        self._reader.close()
        self._title_reader.close()
        if self.backlinks is not None:
            self.backlinks.close_worker()

    def attach(self, window: Window) -> None:
        self.fact_path_did_request.connect(window.show_path)
        query_did_apply = getattr(window, "query_did_apply", None)
        if self.backlinks is not None and query_did_apply is not None:
            query_did_apply.connect(self.backlinks.query_did_apply)
            self.backlinks.message_did_activate.connect(
                lambda _path: _bring_to_front(window, self))


def _bring_to_front(window: object, panel: QWidget) -> None:
    center = getattr(window, "center", None)
    if center is not None:
        center.setCurrentWidget(panel)


__all__ = ["EXPAND_ALL_UP_TO", "MarkDeliveryDialog", "MessageBacklinks", "MessagesPanel",
           "MessagesView", "read_messages"]
