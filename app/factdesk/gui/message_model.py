"""The Messages tab's rows (issue 17): what its worker reads and the model that draws it.

`read_messages` runs on the tab's worker: the message store's own index brought up to date
and read, the messages grouped by pair of agents and into threads (`model.messages.threads`),
the tree's rows built flat (`Node`s). The GUI
thread only resets `ThreadModel` with that view; a row's text, colour and tooltip are made
when the row is drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QBrush, QColor, QFont

from factdesk.gui import theme
from factdesk.index import messages as msg_index
from factdesk.index.indexer import Indexer
from factdesk.model.messages import Message, Thread, threads

ROLE = Qt.ItemDataRole.UserRole + 1
PATH_ROLE = Qt.ItemDataRole.UserRole + 2

#: how each delivery state is drawn (a glyph, so colour is never the only cue)
DELIVERY_MARKS: dict[str, theme.Mark] = theme.DELIVERY_MARKS


def delivery_text(state: str) -> str:
    mark = DELIVERY_MARKS.get(state, theme.UNKNOWN)
    return f"{mark.glyph} {theme.clip(state or '(none)', 40)}"


def sent_text(text: str) -> str:
    """`2026-11-20 09:14` for an RFC 3339 time (the text as written otherwise)."""
    return text[:16].replace("T", " ") if len(text) >= 16 else text


def pair_text(pair: frozenset[str]) -> str:
    return " ↔ ".join(sorted(pair)) if len(pair) > 1 else f"{next(iter(pair), '?')} (to self)"


# -- the read (on a worker) ----------------------------------------------------------------


@dataclass(slots=True)
class Node:
    """One row of the tree: a pair of agents, a thread or a message."""

    kind: str  # "pair" · "thread" · "message"
    parent: int  # the parent's node id, -1 at the top
    row: int  # its row under its parent
    children: list[int]
    pair: frozenset[str]
    thread: Thread | None = None
    message: Message | None = None
    #: messages still queued under it (a pair's, a thread's)
    queued: int = 0

    @property
    def key(self) -> tuple[str, object]:
        """What stays the same across reads (the selection is kept by it)."""
        if self.message is not None:
            return ("message", self.message.path)
        if self.thread is not None:
            return ("thread", self.thread.root)
        return ("pair", self.pair)


@dataclass(frozen=True, slots=True)
class MessagesView:
    """What the tab shows: the pairs, most recently active first, each with its threads
    (newest first; a thread's messages oldest first).
    `nodes` is the tree, flat (ids are indexes; the tops in `tops`), built on the worker so
    that the GUI thread only swaps the model: a reset, its rows drawn as they are seen."""

    groups: tuple[tuple[frozenset[str], tuple[Thread, ...]], ...]
    count: int
    queued: int
    #: files under msg/ that cannot be read as messages (`factdesk check` says why: M6)
    unreadable: int = 0
    nodes: tuple[Node, ...] = ()
    tops: tuple[int, ...] = ()
    #: a message's path → its node id
    by_path: dict[str, int] | None = None
    #: a message's path → the message
    messages: dict[str, Message] | None = None


def build_nodes(groups: Sequence[tuple[frozenset[str], Sequence[Thread]]]
                ) -> tuple[tuple[Node, ...], tuple[int, ...], dict[str, int]]:
    """The tree's rows, flat, in tree order."""
    nodes: list[Node] = []
    tops: list[int] = []
    by_path: dict[str, int] = {}
    for pair, group in groups:
        pid = len(nodes)
        head = Node("pair", -1, len(tops), [], pair)
        nodes.append(head)
        tops.append(pid)
        for thread in group:
            tid = len(nodes)
            pending = sum(m.delivery == "queued" for m in thread.messages)
            nodes.append(Node("thread", pid, len(head.children), [], pair, thread, queued=pending))
            head.children.append(tid)
            head.queued += pending
            for m in thread.messages:
                mid = len(nodes)
                nodes.append(Node("message", tid, len(nodes[tid].children), [], pair, thread, m))
                nodes[tid].children.append(mid)
                by_path[m.path] = mid
    return tuple(nodes), tuple(tops), by_path


def read_messages(indexer: Indexer) -> MessagesView:
    """(Worker.) The message store's threads. The titles of the facts they reference are
    read as each message is shown (the tab's `_show_refs`): all of them, ~18,000 at 10,000
    messages, took seconds on a loaded machine."""
    found, files = msg_index.read(indexer.repo, indexer.path,
                                  lambda mconn: (msg_index.all_messages(mconn), msg_index.count(mconn)))
    grouped = threads(found)
    groups = sorted(((pair, tuple(reversed(ts))) for pair, ts in grouped.items()),
                    key=lambda g: max(t.messages[-1].sent for t in g[1]), reverse=True)
    nodes, tops, by_path = build_nodes(groups)
    return MessagesView(tuple(groups), len(found), sum(m.delivery == "queued" for m in found),
                        files - len(found), nodes, tops,
                        by_path, {m.path: m for m in found})


class ThreadModel(QAbstractItemModel):
    """The tree over a `MessagesView`'s nodes. Nothing is drawn until seen: a row's text
    (clipped, its invisible characters shown), colour and tooltip are made in `data`, so
    10,000 messages cost the GUI thread a model reset, not 10,000 widgets."""

    HEADERS = ("Thread", "Delivery", "Sent")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.view: MessagesView = MessagesView((), 0, 0)
        self._bold = QFont()
        self._bold.setBold(True)

    def set_view(self, view: MessagesView) -> None:
        self.beginResetModel()
        self.view = view
        self.endResetModel()

    def node(self, index: QModelIndex | QPersistentModelIndex) -> Node | None:
        return self.view.nodes[index.internalId()] if index.isValid() else None

    def index_of(self, node_id: int, column: int = 0) -> QModelIndex:
        return self.createIndex(self.view.nodes[node_id].row, column, node_id)

    def index(self, row: int, column: int,
              parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:  # noqa: B008
        ids = self.view.nodes[parent.internalId()].children if parent.isValid() else self.view.tops
        if 0 <= row < len(ids) and 0 <= column < len(self.HEADERS):
            return self.createIndex(row, column, ids[row])
        return QModelIndex()

    def parent(self, index: QModelIndex | QPersistentModelIndex = QModelIndex()  # type: ignore[override]  # noqa: B008
               ) -> QModelIndex:
        if not index.isValid():
            return QModelIndex()
        up = self.view.nodes[index.internalId()].parent
        return QModelIndex() if up < 0 else self.createIndex(self.view.nodes[up].row, 0, up)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return len(self.view.tops)
        if parent.column() > 0:
            return 0
        return len(self.view.nodes[parent.internalId()].children)

    def columnCount(self, _parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> object:
        node = self.node(index)
        if node is None:
            return None
        column = index.column()
        if role == ROLE:
            return node.key
        if role == PATH_ROLE:
            if node.message is not None:
                return node.message.path
            return node.thread.messages[-1].path if node.thread is not None else None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(node, column)
        if role == Qt.ItemDataRole.ForegroundRole and column == 1:
            state = "queued" if node.queued else self._state(node)
            return QBrush(QColor(DELIVERY_MARKS.get(state, theme.UNKNOWN).color)) if state else None
        if role == Qt.ItemDataRole.FontRole and node.kind == "pair" and column == 0:
            return self._bold
        if role == Qt.ItemDataRole.ToolTipRole and column == 0:
            return theme.tooltip(self._tooltip(node))
        return None

    @staticmethod
    def _state(node: Node) -> str:
        if node.message is not None:
            return node.message.delivery
        return node.thread.messages[-1].delivery if node.thread is not None else ""

    def _text(self, node: Node, column: int) -> str:
        if column == 2:
            if node.message is not None:
                return sent_text(node.message.sent)
            if node.thread is not None:
                return sent_text(node.thread.messages[-1].sent)
            last = max((self.view.nodes[c].thread.messages[-1].sent
                        for c in node.children), default="")
            return sent_text(last)
        if column == 1:
            if node.kind != "message" and node.queued:
                return f"{node.queued} queued"
            return "" if node.kind == "pair" else delivery_text(self._state(node))
        if node.message is not None:
            m = node.message
            return theme.clip(f"{m.sender} → {', '.join(m.to)}: {m.first_line or '(no text)'}", 300)
        if node.thread is not None:
            root = node.thread.messages[0]
            return f"{theme.clip(root.first_line or root.path, 200)}  ({len(node.thread.messages)})"
        return pair_text(node.pair)

    def _tooltip(self, node: Node) -> str:
        if node.message is not None:
            return f"{node.message.path}\n{node.message.first_line}"
        if node.thread is not None:
            return node.thread.messages[0].first_line or node.thread.root
        return f"{len(node.children)} thread(s) between {pair_text(node.pair)}"
