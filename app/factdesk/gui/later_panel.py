"""Tabs made after the window's first paint (issue 23 #6).

The window opens on the Facts tab; the other eight tabs are not in sight until a user
picks one. Importing their modules and building their widgets before the first paint cost
a quarter of a second of the window's start at 100,000 facts, so each of them is a
`LaterPanel` at first: an empty page in the tab widget and the tab's caption, standing in
for the real panel. The real one is made

- by the window right after its first paint, one tab per turn of the event loop (so a key
  pressed meanwhile waits for one tab at most, never for all of them);
- at once when anything asks for it before that: the tab is brought to the front, a menu
  or a key acts on it, code reads `window.proposals`.

Once made, the real panel takes the page's place in the tab widget (`MainWindow` swaps
them: `did_make`), hears the last index change it missed (as a reindex: it reads what it
shows afresh), and is attached to the window as every panel is. Everything else a panel is
asked (`gui/panel.py`) goes to the real panel once there is one, and is a no-op before:
a panel not yet made has nothing to stop, to step through or to refresh.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from factdesk.gui.panel import IndexChange

if TYPE_CHECKING:
    from factdesk.gui.panel import Panel, Window

_P = TypeVar("_P")


class LaterPanel(QObject):
    """A tab's stand-in until its panel is made (module doc). `make()` returns the real
    panel (made once); `real` is it, or None while not made."""

    caption_did_change = Signal(str)
    #: the real panel was just made (the window puts its widget in the page's place)
    did_make = Signal(object)

    def __init__(self, name: str, caption: str, action_name: str,
                 make: Callable[[], Panel], *, menu_text: str | None = None,
                 reads_agent_branches: bool = False, parent: QObject | None = None) -> None:
        super().__init__(parent)
        #: the window's attribute naming the real panel (`window.proposals`)
        self.name = name
        self.caption = caption
        self.menu_text = menu_text or caption
        self.action_name = action_name
        self.reads_agent_branches = reads_agent_branches
        self._make = make
        self.real: Panel | None = None
        #: the empty page standing in the tab widget until the panel is made
        self.page = QWidget()
        self.page.setObjectName(f"{name}Later")
        self._window: Window | None = None
        self._missed: IndexChange | None = None

    def make(self) -> Panel:
        if self.real is None:
            self.real = real = self._make()
            real.caption_did_change.connect(self.caption_did_change)  # type: ignore[attr-defined]
            self.did_make.emit(real)
            if self._window is not None:
                real.attach(self._window)
            if self._missed is not None:  # (as a reindex: read afresh, never patched)
                real.index_did_change(dataclasses.replace(self._missed, changes=None,
                                                          in_front=False))
                self._missed = None
            self.page.deleteLater()
        return self.real

    def __getattr__(self, name: str) -> Any:
        """What only the real panel has (`key_widgets`, `selected_path` …): from it, made
        now. (Python asks here only for what this class does not define.)"""
        if name.startswith("_") or name == "real":
            raise AttributeError(name)
        return getattr(self.make(), name)

    # -- Panel --------------------------------------------------------------------------

    def tab_widget(self) -> QWidget:
        return self.page if self.real is None else self.real.tab_widget()

    def step(self, delta: int) -> None:
        self.make().step(delta)

    def index_did_change(self, change: IndexChange) -> None:
        if self.real is not None:
            self.real.index_did_change(change)
        elif change.stats is not None or self._missed is None:
            self._missed = change

    def tab_did_show(self) -> None:
        self.make().tab_did_show()

    def close_worker(self) -> None:
        if self.real is not None:
            self.real.close_worker()

    def attach(self, window: Window) -> None:
        self._window = window
        if self.real is not None:
            self.real.attach(window)


class _FirstPaint(QObject):
    def __init__(self, widget: QWidget, then: Callable[[], None]) -> None:
        super().__init__(widget)
        self._then = then
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            self.deleteLater()
            QTimer.singleShot(0, self._then)  # (once this paint is on the screen)
        return False


def after_first_paint(widget: QWidget, then: Callable[[], None]) -> None:
    """`then()`, once, at the next turn of the event loop after `widget` first paints."""
    _FirstPaint(widget, then)


class Made(Generic[_P]):
    """`window.proposals` …: the tab's real panel, made now if it was not yet (a class
    attribute of the window, naming its `LaterPanel` in `window._later`)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, window: Any, owner: type | None = None) -> _P:
        return window._later[self.name].make()


def later_tabs(w: Any, conn: Callable[[], object]) -> list[LaterPanel]:
    """The window's tabs after Facts, in order: one entry each (its attribute, caption,
    action and how it is made: its module imported then). A new tab is one more entry
    here and a `Made` line in the window; tests/gui/test_later_tabs.py holds each entry's
    caption and action to its panel's own."""
    ask = lambda *a: w.ask_text(*a)  # noqa: E731 - (tests replace `ask_text`)

    def problems() -> Panel:
        from factdesk.gui.problems_panel import ProblemsPanel
        return ProblemsPanel(conn, w)  # type: ignore[arg-type]

    def overview() -> Panel:
        from factdesk.gui.overview import OverviewPanel
        return OverviewPanel(conn, w)  # type: ignore[arg-type]

    def mislabels() -> Panel:
        from factdesk.gui.mislabel_panel import MislabelPanel
        return MislabelPanel(w.ops, conn, open_editor=w.open_relabel,  # type: ignore[arg-type]
                             ask_text=ask, parent=w)

    def settlement() -> Panel:
        from factdesk.gui.settlement_panel import SettlementPanel
        return SettlementPanel(w.ops, conn, ask_text=ask,  # type: ignore[arg-type]
                               similar=w.semantic.similar_function, parent=w)

    def transitions() -> Panel:
        from factdesk.gui.transitions_panel import TransitionsPanel
        return TransitionsPanel(w.session.repo, w.session.indexer, w)

    def proposals() -> Panel:
        from factdesk.gui.proposals_panel import ProposalsPanel
        return ProposalsPanel(w.ops, ask_text=ask, parent=w)

    def agents() -> Panel:
        from factdesk.gui.agents_panel import AgentsPanel
        return AgentsPanel(w.session.indexer, w.ops, parent=w)

    def messages() -> Panel:
        from factdesk.gui.messages_panel import MessagesPanel
        return MessagesPanel(w.ops, inspector=w.inspector, parent=w)

    return [LaterPanel("problems", "Problems", "showProblems", problems, parent=w),
            LaterPanel("overview", "Overview", "showOverview", overview, parent=w),
            LaterPanel("mislabels", "Mislabels", "showMislabels", mislabels,
                       menu_text="Suspected mislabels", parent=w),
            LaterPanel("settlement", "Hypotheses", "showHypotheses", settlement,
                       menu_text="Hypothesis settlement queue", parent=w),
            LaterPanel("transitions", "Transitions", "showTransitions", transitions,
                       menu_text="Transitions and track records", parent=w),
            LaterPanel("proposals", "Proposals", "showProposals", proposals,
                       menu_text="Agent proposals", reads_agent_branches=True, parent=w),
            LaterPanel("agents", "Agents", "showAgents", agents, reads_agent_branches=True,
                       parent=w),
            LaterPanel("messages", "Messages", "showMessages", messages, parent=w)]
