"""The main window's menu bar: every action with its shortcut (keyboard first), each one
also a window action so that its shortcut works wherever the focus is."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from factdesk.gui import dialogs, theme
from factdesk.gui import help as helpdesk
from factdesk.gui.semantic_controller import MODELS

if TYPE_CHECKING:
    from factdesk.gui.main_window import MainWindow

Shortcut = str | QKeySequence | QKeySequence.StandardKey | None


class MenuBuilder:
    """Adds menus and actions to `window`; `actions` names them (tests drive them by name)."""

    def __init__(self, window: MainWindow) -> None:
        self._w = window
        self.actions: dict[str, QAction] = {}
        self.menus: dict[str, QMenu] = {}

    def action(self, menu: QMenu, name: str, text: str, slot: Callable[[], object],
               shortcut: Shortcut = None) -> QAction:
        action = QAction(text, self._w)
        action.setObjectName(name)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(lambda _=False: slot())
        menu.addAction(action)
        self._w.addAction(action)
        self.actions[name] = action
        return action

    def build(self) -> dict[str, QAction]:
        w, bar = self._w, self._w.menuBar()
        file = bar.addMenu("&File")
        self._corpora(file)
        self.action(file, "reindex", "Reindex", w.reindex, "F5")
        self.action(file, "rebuild", "Rebuild index", lambda: w.reindex(rebuild=True), "Shift+F5")
        self.action(file, "sync", "Sync with remotes", lambda: w.proposals.sync(), "Ctrl+Shift+Y")
        self.action(file, "mergeReviewed", "Record the review merge",
                    lambda: w.proposals.merge_reviewed())
        file.addSeparator()
        self.action(file, "quit", "Quit", w.close, "Ctrl+Q")  # (StandardKey.Quit is none on Windows)
        self._edit(bar.addMenu("&Edit"))
        go = bar.addMenu("&Go")
        self.action(go, "next", "Next fact", lambda: w.front().step(1), "J")
        self.action(go, "previous", "Previous fact", lambda: w.front().step(-1), "K")
        self.action(go, "back", "Back", lambda: w.go(-1), "Alt+Left")
        self.action(go, "forward", "Forward", lambda: w.go(1), "Alt+Right")
        # Enter is handled by the table itself (a Return shortcut would steal the search
        # bar's Enter); the menu shows it as the entry's key.
        self.action(go, "inspect", "Focus inspector\tEnter", w.focus_inspector)
        self.action(go, "focusTable", "Focus table", w.focus_table, "Ctrl+T")
        self._view(bar.addMenu("&View"))
        help_menu = bar.addMenu("&Help")
        self.action(help_menu, "legend", "Legend", lambda: dialogs.show_legend(w), "F1")
        self.action(help_menu, "queryHelp", "Query language", lambda: dialogs.show_query_help(w))
        self._help(help_menu)
        return self.actions

    def _corpora(self, file: QMenu) -> None:
        """New corpus…, Open corpus…, Open recent, Clone from URL… (gui/open_corpus.py)."""
        corpora = self._w.corpora
        self.action(file, "newCorpus", "&New corpus…", corpora.new_corpus, "Ctrl+Shift+N")
        self.action(file, "openCorpus", "&Open corpus…", corpora.choose_folder,
                    QKeySequence.StandardKey.Open)
        recent = file.addMenu("Open &recent")
        recent.setObjectName("recentMenu")
        recent.aboutToShow.connect(functools.partial(corpora.fill_recent, recent))
        self.menus["recent"] = recent
        self.action(file, "cloneCorpus", "&Clone from URL…", corpora.clone_from_url)
        file.addSeparator()

    def _help(self, help_menu: QMenu) -> None:
        """The keyboard shortcut sheet and the About box (gui/help.py)."""
        w = self._w
        help_menu.addSeparator()
        self.action(help_menu, "shortcuts", "&Keyboard shortcuts", lambda: helpdesk.show_shortcuts(w), "?")
        self.action(help_menu, "about", "&About factdesk", lambda: helpdesk.show_about(w))

    def _edit(self, edit: QMenu) -> None:
        w = self._w
        self.action(edit, "undo", "Undo", w.undo, "Ctrl+Z")
        self.action(edit, "redo", "Redo", w.redo, "Ctrl+Shift+Z")
        # greyed out only while the menu shows the stacks (UndoStack.name_actions)
        edit.aboutToShow.connect(lambda: w.undo_stack.name_actions(greyed=True))
        edit.aboutToHide.connect(lambda: w.undo_stack.name_actions(greyed=False))
        edit.addSeparator()
        self.action(edit, "relabel", "Relabel…", w.open_relabel, "R")
        self.action(edit, "retract", "Retract…", w.retract_selected, "Ctrl+Delete")
        edit.addSeparator()
        self.action(edit, "copyPath", "Copy path", w.copy_path, "Ctrl+L")
        self.action(edit, "find", "Search", w.focus_search, "/")
        self.action(edit, "moreLikeThis", "More like this", w.more_like_this, "Shift+M")
        self.action(edit, "saveSearch", "Save search…",
                    lambda: w.sidebar.ask_and_save(w.search.text()), "Ctrl+S")

    def _view(self, view: QMenu) -> None:
        w = self._w
        for n, panel in enumerate(w.panels, start=1):  # Ctrl+1 … one per tab
            self.action(view, panel.action_name, panel.menu_text,
                        functools.partial(w.center.setCurrentIndex, n - 1), f"Ctrl+{n}")
        models = view.addMenu("Semantic model")
        for key, text in MODELS:
            action = self.action(models, f"model_{key}", text, functools.partial(self._choose_model, key))
            action.setCheckable(True)
            action.setChecked(key == (w.semantic.model() or "static"))
        theme.theme_menu(view, self.action, w.settings)  # System / Light / Dark (gui/theme.py)
        columns = view.addMenu("Columns")
        columns.aboutToShow.connect(functools.partial(self._fill_columns, columns))
        watch = self.action(view, "watch", "Watch for external changes",
                            lambda: setattr(w.watcher, "enabled", self.actions["watch"].isChecked()))
        watch.setCheckable(True)
        watch.setChecked(True)

    def _fill_columns(self, menu: QMenu) -> None:
        menu.clear()
        menu.addActions(self._w.table.column_menu().actions())

    def _choose_model(self, name: str) -> None:
        for key, _text in MODELS:
            self.actions[f"model_{key}"].setChecked(key == name)
        self._w.semantic.choose(name)
