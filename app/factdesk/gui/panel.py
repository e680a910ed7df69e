"""The centre's tabs and what the window asks of each (`Panel`).

A new tab (the Proposals tab, say) is one new file plus one registration line:

1. its file, `gui/<name>_panel.py`: one class following `Panel` — caption, step (j/k),
   `index_did_change` (after a reindex, an outside commit or the window's own action; its
   `IndexChange.changes` is the frozen ChangeSet), `tab_did_show`, `close_worker` (never
   waits: `workers.BackgroundRead` / `workers.let_finish`), and `attach(window)`, where it
   connects its own signals to the window's services (`Window`: show a fact, set the query,
   inspect a path, the semantic controller). Writes go through the `Operations` handed to
   its constructor (`ops.run(lambda cur: ...)`); reads of the index through a
   `BackgroundRead`.
2. its registration, in tab order: one entry in `later_tabs` (gui/later_panel.py: its
   window attribute, caption, action, and how it is made — its module is imported when
   it is, after the window's first paint) and one `Made` line naming it on `MainWindow`.
   The window's menus (View ▸ Ctrl+n), j/k, refreshes, tab captions, `attach` and
   shutdown all loop over `MainWindow.panels`; nothing else changes.
3. optionally, `selected_path()`: the fact the tab has selected (None: none). The
   inspector shows it whenever the tab is in front — on a switch, after every action —
   and R and the window's other fact actions act on it (issue 24 #1); a tab hands its
   selection to the inspector with `window.inspect_from(self, path)`, which only the
   tab in front may do.
4. optionally, `key_widgets()`: the widgets that must stay readable at 1366×768 and at
   1.5× the application font (tests/gui/test_layout.py checks them for every tab); without
   it, `key_widgets(panel)` takes the tab's lists and buttons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from factdesk.curation import ChangeSet
from factdesk.index.indexer import IndexStats


@dataclass(frozen=True, slots=True)
class IndexChange:
    """What a panel hears after the index moved on."""

    stats: IndexStats | None
    #: the change set of the window's own action, None for a reindex or an outside commit
    changes: ChangeSet | None
    #: the panel is the tab in front (else it may wait until shown)
    in_front: bool

    @property
    def light(self) -> bool:
        """Our own action, which added or removed no file (the folders keep their shape)."""
        return self.changes is not None and \
            set(self.changes.paths_after) == set(self.changes.paths_touched)


class Window(Protocol):
    """What a panel may use of the window in `attach` (gui/main_window.py, gui/navigation.py)."""

    semantic: Any  # SemanticController

    def show_fact(self, fact_id: int, /) -> None: ...

    def show_path(self, path: str, /) -> None: ...

    def inspect_path(self, path: str, /) -> None: ...

    def inspect_from(self, panel: object, path: str | None, /) -> None: ...

    def set_query(self, text: str, /) -> None: ...

    def focus_inspector(self) -> None: ...

    def apply_query(self, text: str) -> bool: ...

    def refresh_inspector(self) -> None: ...


class Panel(Protocol):
    """One tab of the centre. A panel that reads the agents' branches says so with a class
    attribute `reads_agent_branches = True`: it alone is told of an update that moved only
    git's refs (an agent's new tip), which changes nothing the other tabs show."""

    #: the tab's caption, and the View menu's entry and action name
    caption: str
    menu_text: str
    action_name: str

    def tab_widget(self) -> QWidget:
        """What the tab shows (the panel, or a frame around it)."""
        ...

    def step(self, delta: int) -> None:
        """J/K: the next/previous item of the panel's list (nothing when it has none)."""
        ...

    def index_did_change(self, change: IndexChange) -> None:
        """React to an index update (now, or when next shown)."""
        ...

    def tab_did_show(self) -> None:
        """The tab came to the front: load, or catch up on what was missed."""
        ...

    def close_worker(self) -> None:
        """Stop background work (the window is closing; nothing waits for it)."""
        ...

    def attach(self, window: Window) -> None:
        """Connect the panel's signals to the window's services (once, at construction)."""
        ...


class LazyRefresh:
    """A panel that refreshes when in front and otherwise when next shown; it counts too
    (`caption_text`)."""

    _stale = False

    def refresh(self) -> None:  # pragma: no cover - each panel has its own
        raise NotImplementedError

    def refresh_when_seen(self, change: IndexChange) -> None:
        if change.in_front:
            self._stale = False
            self.refresh()
        else:
            self._stale = True

    def catch_up(self) -> None:
        if self._stale:
            self._stale = False
            self.refresh()


def key_widgets(panel: object) -> list[QWidget]:
    """The widgets of a tab that must never be cut (tests/gui/test_layout.py): the panel's
    own `key_widgets()` when it has one, else every list and button of its tab."""
    own = getattr(panel, "key_widgets", None)
    if callable(own):
        return list(own())
    from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QHeaderView

    tab = panel.tab_widget()  # type: ignore[attr-defined]
    found: list[QWidget] = [*tab.findChildren(QAbstractItemView), *tab.findChildren(QAbstractButton)]
    return [w for w in found if w.isVisibleTo(tab) and not isinstance(w, QHeaderView)
            and not isinstance(w.parentWidget(), QHeaderView)]


def focus_into(tab: QWidget, *, keep: tuple[QWidget, ...] = ()) -> None:
    """A tab came to the front: the keyboard goes to its first list, so its keys (C, F,
    A, j …) act at once — unless the focus is already inside it or in one of `keep` (the
    search field: a query typed, then Ctrl+n, stays in the field). Without this the
    focus left on the hidden tab falls to whatever Qt finds next (the sidebar)."""
    from PySide6.QtWidgets import QAbstractItemView, QApplication, QHeaderView

    focus = QApplication.focusWidget()
    if focus is not None and (focus is tab or tab.isAncestorOf(focus)
                              or any(k is focus or k.isAncestorOf(focus) for k in keep)):
        return
    for view in tab.findChildren(QAbstractItemView):
        if (view.isVisibleTo(tab) and view.isEnabled() and not isinstance(view, QHeaderView)
                and view.focusPolicy() & Qt.FocusPolicy.TabFocus):
            view.setFocus(Qt.FocusReason.OtherFocusReason)
            return


def follow_screen(window: QWidget, parts: list[QWidget]) -> None:
    """Tab order as the screen reads: every focusable control of `parts[0]`, then of
    `parts[1]`, …, each part's controls in the order of its widget tree (a parent before
    its children, a tab widget's tab bar before its pages, children as laid out). The
    inspector is made before the centre's tabs, so Tab used to reach it before them
    (issue 18)."""
    from itertools import pairwise

    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTabWidget

    def tree(widget: QWidget) -> list[QWidget]:
        kids = [c for c in widget.children() if isinstance(c, QWidget) and not c.isWindow()]
        if isinstance(widget, QTabWidget):  # (its tab bar first: then the page)
            kids.sort(key=lambda c: c is not widget.tabBar())
        out = [widget]
        for kid in kids:
            out += tree(kid)
        return out

    ordered: list[QWidget] = []
    for part in parts:
        ordered += [w for w in tree(part) if w.focusPolicy() & Qt.FocusPolicy.TabFocus
                    and w.focusProxy() is None and w not in ordered]
    for first, second in pairwise(ordered):
        QWidget.setTabOrder(first, second)
