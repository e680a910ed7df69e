"""The centre's tabs and what the window asks of each (`Panel`).

A tab is one class following `Panel`. To add one (the Proposals tab, say): write its file,
then add one line to `MainWindow._make_panels` — the window's menus (View ▸ Ctrl+n), j/k,
refreshes after an index update or an action, tab captions and shutdown all loop over
that list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

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


class Panel(Protocol):
    """One tab of the centre."""

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
        """Stop background work (the window is closing)."""
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
