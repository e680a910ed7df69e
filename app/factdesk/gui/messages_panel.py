"""The Messages tab (issue 17): the message store (`msg/`, FORMAT.md §14), kept apart from
memory, as threads grouped by the pair of agents they are between.

    claude-code ↔ codex   (2 threads · 1 queued)
        Deploy hold on ledger-api …      ○ queued    2026-11-20 09:14
            claude-code → codex: …       ● read      2026-11-20 09:14
            codex → claude-code: …       ○ queued    2026-11-20 10:02

The tree is read on a worker (`BackgroundRead`: the messages' own index is brought up to
date by stat, then read; the referenced facts' titles come from the facts' index), never on
the GUI thread. Beside it, the selected message: from, to, sent, delivery, why it was sent
(`context_explanation`), the facts it references (activating one selects that fact) and
its body. **Mark delivery…** (M) sets the delivery state of the selected messages (a thread
or a pair: all of its messages) with a reason: one commit through the window's operation
pipeline, undone with Edit ▸ Undo like every other action.

`MessageBacklinks` is the inspector's "Messages" tab: the messages that reference the
fact shown, visible while the query includes messages (`include:messages`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
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
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from factdesk.gui import theme
from factdesk.gui.inspector import caption_label, text_label
from factdesk.gui.keys import panel_keys
from factdesk.gui.operations import Operations
from factdesk.gui.panel import IndexChange, LazyRefresh, Window
from factdesk.gui.safe_browser import SafeTextBrowser
from factdesk.gui.workers import BackgroundRead
from factdesk.index import messages as msg_index
from factdesk.index.indexer import Indexer
from factdesk.index.query import includes_messages
from factdesk.index.search import titles_of
from factdesk.model.messages import DELIVERY_STATES, Message, Thread, threads
from factdesk.recall import messages_referencing

if TYPE_CHECKING:
    import sqlite3

    from factdesk.gui.inspector import InspectorPanel

ROLE = Qt.ItemDataRole.UserRole + 1
PATH_ROLE = Qt.ItemDataRole.UserRole + 2

#: how each delivery state is drawn (a glyph, so colour is never the only cue)
DELIVERY_MARKS: dict[str, theme.Mark] = {
    "queued": theme.Mark("○", "#9a4f00"),
    "delivered": theme.Mark("◐", "#1565c0"),
    "read": theme.Mark("●", "#37474f"),
    "acknowledged": theme.Mark("✔", "#2e7d32"),
}


def delivery_text(state: str) -> str:
    mark = DELIVERY_MARKS.get(state, theme.UNKNOWN)
    return f"{mark.glyph} {theme.clip(state or '(none)', 40)}"


def _paint_delivery(item: QTreeWidgetItem, column: int, state: str) -> None:
    item.setText(column, delivery_text(state))
    item.setForeground(column, QBrush(QColor(DELIVERY_MARKS.get(state, theme.UNKNOWN).color)))


def _sent(text: str) -> str:
    """`2026-11-20 09:14` for an RFC 3339 time (the text as written otherwise)."""
    return text[:16].replace("T", " ") if len(text) >= 16 else text


def pair_text(pair: frozenset[str]) -> str:
    return " ↔ ".join(sorted(pair)) if len(pair) > 1 else f"{next(iter(pair), '?')} (to self)"


# -- the read (on a worker) ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MessagesView:
    """What the tab shows: the pairs, most recently active first, each with its threads
    (newest first; a thread's messages oldest first), and the referenced facts' titles."""

    groups: tuple[tuple[frozenset[str], tuple[Thread, ...]], ...]
    count: int
    queued: int
    #: referenced kb path → its live fact's title (absent: no such fact)
    titles: dict[str, str]
    #: files under msg/ that cannot be read as messages (`factdesk check` says why: M6)
    unreadable: int = 0


def read_messages(indexer: Indexer, conn: sqlite3.Connection) -> MessagesView:
    """(Worker.) The message store's threads, and the titles of the facts they reference."""
    found, files = msg_index.read(indexer.repo, indexer.path,
                                  lambda mconn: (msg_index.all_messages(mconn), msg_index.count(mconn)))
    grouped = threads(found)
    groups = sorted(((pair, tuple(reversed(ts))) for pair, ts in grouped.items()),
                    key=lambda g: max(t.messages[-1].sent for t in g[1]), reverse=True)
    refs = sorted({r for m in found for r in m.referenced_memory_ids})
    return MessagesView(tuple(groups), len(found), sum(m.delivery == "queued" for m in found),
                        titles_of(conn, refs) if refs else {}, files - len(found))


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
        self._reader = BackgroundRead.of_index(
            indexer, lambda conn: read_messages(indexer, conn), done=self._loaded,
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
        self.tree = QTreeWidget(split)
        self.tree.setObjectName("messagesTree")
        self.tree.setHeaderLabels(["Thread", "Delivery", "Sent"])
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        header.setStretchLastSection(False)  # the thread's text takes what is left
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.currentItemChanged.connect(lambda item, _old: self._show(item))
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
        self.refs.setObjectName("messageRefs")
        self.refs.setWordWrap(True)
        self.refs.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.refs.setMaximumHeight(84)
        self.refs.itemActivated.connect(self._ref_activated)
        self.refs.itemClicked.connect(self._ref_activated)
        grid.addWidget(self.refs, refs_row, 1, 1, 3)
        self.body = SafeTextBrowser(detail)
        self.body.setObjectName("messageBody")
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
        self._show(None)

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
        self.tree.blockSignals(True)
        self.tree.clear()
        self._messages = {}
        for pair, group in view.groups:
            queued = sum(m.delivery == "queued" for t in group for m in t.messages)
            head = QTreeWidgetItem([pair_text(pair), f"{queued} queued" if queued else "",
                                    _sent(max(t.messages[-1].sent for t in group))])
            head.setData(0, ROLE, ("pair", pair))
            head.setToolTip(0, theme.tooltip(f"{len(group)} thread(s) between {pair_text(pair)}"))
            font = head.font(0)
            font.setBold(True)
            head.setFont(0, font)
            if queued:
                head.setForeground(1, QBrush(QColor(DELIVERY_MARKS["queued"].color)))
            self.tree.addTopLevelItem(head)
            for thread in group:
                root = thread.messages[0]
                last = thread.messages[-1]
                pending = sum(m.delivery == "queued" for m in thread.messages)
                title = theme.clip(root.first_line or root.path, 200)
                item = QTreeWidgetItem(head, [f"{title}  ({len(thread.messages)})", "",
                                              _sent(last.sent)])
                if pending:
                    item.setText(1, f"{pending} queued")
                    item.setForeground(1, QBrush(QColor(DELIVERY_MARKS["queued"].color)))
                else:
                    _paint_delivery(item, 1, last.delivery)
                item.setData(0, ROLE, ("thread", thread.root))
                item.setData(0, PATH_ROLE, last.path)
                item.setToolTip(0, theme.tooltip(root.first_line or root.path))
                for m in thread.messages:
                    self._messages[m.path] = m
                    text = f"{m.sender} → {', '.join(m.to)}: {m.first_line or '(no text)'}"
                    child = QTreeWidgetItem(item, [theme.clip(text, 300), "", _sent(m.sent)])
                    _paint_delivery(child, 1, m.delivery)
                    child.setData(0, ROLE, ("message", m.path))
                    child.setData(0, PATH_ROLE, m.path)
                    child.setToolTip(0, theme.tooltip(f"{m.path}\n{text}"))
        self.tree.expandAll()
        self.tree.blockSignals(False)
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
        item = self.tree.currentItem()
        return item.data(0, ROLE) if item is not None else None

    def _restore(self, current: tuple[str, object] | None, selected: list[str]) -> None:
        target = self._find(current) if current is not None else None
        if target is None:
            target = self._first_message()
        if target is not None:
            self.tree.setCurrentItem(target)
        else:
            self._show(None)
        for item in self._items():
            if item.data(0, ROLE)[0] == "message" and item.data(0, PATH_ROLE) in selected \
                    and item is not target:
                item.setSelected(True)

    def _items(self) -> list[QTreeWidgetItem]:
        """Every row, in tree order."""
        out: list[QTreeWidgetItem] = []

        def walk(item: QTreeWidgetItem | None) -> None:
            if item is None:
                return
            out.append(item)
            for i in range(item.childCount()):
                walk(item.child(i))

        for i in range(self.tree.topLevelItemCount()):
            walk(self.tree.topLevelItem(i))
        return out

    def _find(self, key: tuple[str, object]) -> QTreeWidgetItem | None:
        return next((i for i in self._items() if i.data(0, ROLE) == key), None)

    def _first_message(self) -> QTreeWidgetItem | None:
        return next((i for i in self._items() if i.data(0, ROLE)[0] == "message"), None)

    # -- showing --------------------------------------------------------------------------

    def current_message(self) -> Message | None:
        item = self.tree.currentItem()
        path = item.data(0, PATH_ROLE) if item is not None else None
        return self._messages.get(path) if path else None

    def _show(self, item: QTreeWidgetItem | None) -> None:
        path = item.data(0, PATH_ROLE) if item is not None else None
        m = self._messages.get(path) if path else None
        self.mark_button.setEnabled(item is not None and bool(self.selected_paths() or m))
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
        titles = self.view.titles if self.view is not None else {}
        for ref in m.referenced_memory_ids:
            title = titles.get(ref)
            entry = QListWidgetItem(theme.clip(f"{title} — {ref}" if title else f"{ref} (no such fact)",
                                               300), self.refs)
            entry.setData(PATH_ROLE, ref if title else None)
            entry.setToolTip(theme.tooltip(ref))
            if not title:
                entry.setForeground(QBrush(QColor(theme.ERROR_COLOR)))
        if not m.referenced_memory_ids:
            QListWidgetItem("(none)", self.refs).setFlags(Qt.ItemFlag.NoItemFlags)
        self.body.show_markdown(m.body)

    def _ref_activated(self, item: QListWidgetItem) -> None:
        path = item.data(PATH_ROLE)
        if path:
            self.fact_path_did_request.emit(str(path))

    def select_message(self, path: str) -> None:
        """Bring the tab's tree to the message at `path` (the inspector's backlinks)."""
        item = self._find(("message", path))
        if item is not None:
            self.tree.setCurrentItem(item)
            self.tree.scrollToItem(item)
        else:
            self._wanted = path
            self.load()

    def step(self, delta: int) -> None:
        """J/K: the next/previous message (the first when none is current)."""
        items = [i for i in self._items() if i.data(0, ROLE)[0] == "message"]
        if not items:
            return
        current = self.tree.currentItem()
        at = items.index(current) if current in items else (-1 if delta > 0 else len(items))
        target = items[max(0, min(len(items) - 1, at + delta))]
        self.tree.setCurrentItem(target)
        self.tree.scrollToItem(target)

    # -- marking --------------------------------------------------------------------------

    def selected_paths(self, *, expand: bool = True) -> list[str]:
        """The messages selected: a message itself, a thread or a pair all of theirs
        (`expand`), in tree order, each once."""
        out: list[str] = []
        current = self.tree.currentItem()
        items = self.tree.selectedItems() or ([current] if current is not None else [])

        def walk(node: QTreeWidgetItem | None) -> None:
            if node is None:
                return
            if node.data(0, ROLE)[0] == "message":
                out.append(node.data(0, PATH_ROLE))
            for i in range(node.childCount()):
                walk(node.child(i))

        for item in items:
            if item.data(0, ROLE)[0] == "message":
                out.append(item.data(0, PATH_ROLE))
            elif expand:
                walk(item)
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


# -- the inspector's backlinks -----------------------------------------------------------------


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
        except Exception:  # a query the table refused never reaches here; be safe
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
                f"{delivery_text(m.delivery)}  {m.sender} → {', '.join(m.to)} ({_sent(m.sent)}): "
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


__all__ = ["DELIVERY_MARKS", "MarkDeliveryDialog", "MessageBacklinks", "MessagesPanel",
           "MessagesView", "read_messages"]
