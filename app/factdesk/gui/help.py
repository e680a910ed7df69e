"""Help ▸ Keyboard shortcuts and Help ▸ About factdesk.

The shortcut sheet is read from the window itself when it opens (`bindings`): every
`QAction` with a shortcut (the menus' entries, found with the menu they sit in), every key a
menu entry names as handled by a widget (`Focus inspector\tEnter`), and every `QShortcut`
of the window's panels (a tab's single keys: A/E/D in Mislabels, C/F/E/P in Hypotheses), and
the letters a tab's key router answers wherever its focus is (A/R/E/S in Proposals). So
the sheet cannot drift from the keys: a new binding appears in it, a removed one goes. A
window-wide key a tab answers itself says so (`R`: Relabel…, but Reject in Proposals), and
the tab in front comes first.

The About box names the version, the corpus and its branch, where the index lives and how
big it is (read in the background), the embedding model, the data folder and the versions
of Python and Qt; Copy puts it all on the clipboard for a bug report.
"""

from __future__ import annotations

import contextlib
import os
import platform
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from factdesk.gui.main_window import MainWindow

#: where a window-wide key works
ANYWHERE = "anywhere in the window"


@dataclass(frozen=True, slots=True)
class Binding:
    """One key of the window: the keys as the platform writes them, what they do, the
    section of the sheet (a menu, or a tab) and where they work."""

    keys: str
    what: str
    section: str
    scope: str


def _plain(text: str) -> str:
    """A menu text without its mnemonic ampersands and its `\\t<key>` tail."""
    text = text.split("\t")[0]
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def _menu_path(action: QAction) -> str | None:
    """`View ▸ Semantic model` for an entry of that submenu; None outside the menus."""
    menus = [m for m in action.associatedObjects() if isinstance(m, QMenu)]
    if not menus:
        return None
    menu = menus[0]
    names = [_plain(menu.title())]
    parent = menu.parent()
    while isinstance(parent, QMenu):
        names.insert(0, _plain(parent.title()))
        parent = parent.parent()
    return " ▸ ".join(names)


def _keys(sequence: QKeySequence) -> str:
    return sequence.toString(QKeySequence.SequenceFormat.NativeText)


def _panel_of(widget: QWidget | None, window: MainWindow) -> str | None:
    tabs = {panel.tab_widget(): panel.menu_text for panel in window.panels}
    while widget is not None:
        if widget in tabs:
            return tabs[widget]
        if widget is window.inspector:
            return "Inspector"
        widget = widget.parentWidget()
    return None


def _widget_of(obj: QObject) -> QWidget | None:
    """The widget an action or shortcut belongs to (through a controller object too)."""
    parent = obj.parent()
    while parent is not None and not isinstance(parent, QWidget):
        parent = parent.parent()
    return parent


def bindings(window: MainWindow) -> list[Binding]:
    """Every key bound in `window` (module docstring), in menu and tab order."""
    window.make_every_tab()  # (a tab not made yet has bound none of its keys)
    found: list[Binding] = []
    for action in window.findChildren(QAction):
        owner = _widget_of(action)
        if owner is None or owner.window() is not window:
            continue  # (a dialog's own keys: that dialog says them)
        section = _menu_path(action) or _panel_of(owner, window) or "Window"
        what = _plain(action.text())
        for sequence in action.shortcuts():
            if not sequence.isEmpty():
                found.append(Binding(_keys(sequence), what, section, ANYWHERE
                                     if action.shortcutContext() != Qt.ShortcutContext.WidgetShortcut
                                     else "where it shows"))
        if "\t" in action.text():  # a key the menu names, handled by a widget (Enter)
            named = QKeySequence(action.text().split("\t", 1)[1])
            found.append(Binding(_keys(named), what, section, "in the table"))
    for shortcut in window.findChildren(QShortcut):
        parent = _widget_of(shortcut)
        if parent is None or parent.window() is not window:
            continue  # (a dialog's own keys: that dialog says them)
        if shortcut.key().isEmpty():
            continue
        tab = _panel_of(parent, window) or "Window"
        scope = f"in the {tab} tab" if tab != "Window" else ANYWHERE
        found.append(Binding(_keys(shortcut.key()), shortcut.whatsThis() or
                             shortcut.objectName() or "(unnamed)", tab, scope))
    from factdesk.gui.proposal_workers import KeyRouter

    for router in window.findChildren(KeyRouter):  # a tab's letters, wherever its focus is
        tab = _panel_of(_widget_of(router), window) or "Window"
        found += [Binding(keys, what, tab, f"in the {tab} tab") for keys, what in router.bound()]
    found = [_shadowed(b, found) for b in found]
    order = {name: n for n, name in enumerate(_section_order(window))}
    return sorted(found, key=lambda b: (order.get(b.section.split(" ▸ ")[0], len(order)),
                                        b.section))  # (stable: menu order within)


def _shadowed(binding: Binding, found: list[Binding]) -> Binding:
    """A window-wide key a tab answers itself says so: `R` relabels anywhere but in the
    Proposals tab, where it rejects (issue 24 #10)."""
    if binding.scope != ANYWHERE:
        return binding
    tabs = [b for b in found if b.keys == binding.keys and b.scope.startswith("in the ")
            and b.section != binding.section]
    if not tabs:
        return binding
    return Binding(binding.keys, binding.what, binding.section, ANYWHERE + ", but " + "; ".join(
        f"{b.scope}: {b.what}" for b in tabs))


def _section_order(window: MainWindow) -> Iterable[str]:
    for action in window.menuBar().actions():
        yield _plain(action.text())
    for panel in window.panels:
        yield panel.menu_text
    yield "Inspector"
    yield "Window"


class ShortcutSheet(QDialog):
    """The sheet: a filter line over a tree of sections (menus, then tabs) and their keys."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.setObjectName("shortcutSheet")
        self.setWindowTitle("Keyboard shortcuts")
        front = window.front().menu_text  # (the tab in front: its keys first)
        self.bindings = sorted(bindings(window), key=lambda b: b.section != front)
        layout = QVBoxLayout(self)
        self.filter = QLineEdit(self)
        self.filter.setObjectName("shortcutFilter")
        self.filter.setPlaceholderText("Filter: a key or a word")
        self.filter.setClearButtonEnabled(True)
        layout.addWidget(self.filter)
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("shortcutTree")
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Keys", "Action", "Works"])
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        layout.addWidget(self.tree, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.filter.textChanged.connect(self._fill)
        self._fill("")
        self.resize(760, min(760, window.height()))

    def rows(self) -> list[tuple[str, str, str]]:
        """(keys, action, section) of each row shown (tests read the sheet through this)."""
        found = []
        for n in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(n)
            for k in range(group.childCount()):
                item = group.child(k)
                found.append((item.text(0), item.text(1), group.text(0)))
        return found

    def _fill(self, text: str) -> None:
        needle = text.strip().lower()
        self.tree.clear()
        groups: dict[str, QTreeWidgetItem] = {}
        for b in self.bindings:
            if needle and needle not in f"{b.keys} {b.what} {b.section}".lower():
                continue
            group = groups.get(b.section)
            if group is None:
                group = groups[b.section] = QTreeWidgetItem(self.tree, [b.section])
                group.setFirstColumnSpanned(True)
                font = group.font(0)
                font.setBold(True)
                group.setFont(0, font)
                group.setFlags(Qt.ItemFlag.ItemIsEnabled)
            QTreeWidgetItem(group, [b.keys, b.what, b.scope])
        self.tree.setRootIsDecorated(False)
        self.tree.expandAll()
        for column in range(3):
            self.tree.resizeColumnToContents(column)


def show_shortcuts(window: MainWindow) -> ShortcutSheet:
    sheet = ShortcutSheet(window)
    sheet.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    sheet.show()
    sheet.filter.setFocus()
    return sheet


# -- About ------------------------------------------------------------------------------------

def _size(path: Path) -> int | None:
    """(Off the GUI thread.) The index's bytes on disk, with its WAL files."""
    total, seen = 0, False
    for suffix in ("", "-wal", "-shm"):
        try:
            total += os.stat(f"{path}{suffix}").st_size
            seen = True
        except OSError:
            pass
    return total if seen else None


def human_size(size: int | None) -> str:
    if size is None:
        return "not built yet"
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"  # pragma: no cover


def embedding_model(window: MainWindow) -> str:
    from factdesk.gui.semantic_controller import MODELS

    semantic = window.semantic
    key = semantic.model() or "static"
    name = dict(MODELS).get(key, key)
    if not semantic.enabled:
        return f"{name} — off ({semantic.notice or 'FACTDESK_SEMANTIC=off'})"
    return f"{name} — {'ready' if semantic.session is not None else 'embedding in the background'}"


class AboutBox(QDialog):
    """Help ▸ About factdesk."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        from PySide6 import __version__ as pyside_version
        from PySide6.QtCore import qVersion

        from factdesk.core import Settings
        from factdesk.gui.app import make_settings
        from factdesk.version import version

        self.setObjectName("aboutBox")
        self.setWindowTitle("About factdesk")
        layout = QVBoxLayout(self)
        head = QLabel(f"factdesk {version()}", self)
        head.setObjectName("aboutVersion")
        font = head.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        head.setFont(font)
        layout.addWidget(head)
        blurb = QLabel("Audits a git repository of knomit facts: search, inspect, curate.", self)
        blurb.setWordWrap(True)
        layout.addWidget(blurb)
        form = QFormLayout()
        layout.addLayout(form)
        session = window.session
        branch = window.corpora.title.branch
        index = session.indexer.path
        self.fields: dict[str, QLabel] = {}
        rows = [("version", "Version", version()),
                ("corpus", "Corpus", str(session.repo)),
                ("branch", "Branch", branch or "(detached HEAD or not read yet)"),
                ("index", "Index", str(index)),
                ("indexSize", "Index size", "…"),
                ("model", "Embedding model", embedding_model(window)),
                ("data", "Data folder", str(Settings.resolve().data_dir)),
                ("settings", "Settings", make_settings().fileName()),
                ("runtime", "Runtime", f"Python {platform.python_version()}, Qt {qVersion()}, "
                                       f"PySide6 {pyside_version}, {platform.system()}")]
        for key, caption, value in rows:
            label = QLabel(value, self)
            label.setObjectName(f"about_{key}")
            label.setTextFormat(Qt.TextFormat.PlainText)  # (a path is data, never markup)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setWordWrap(True)
            form.addRow(caption, label)
            self.fields[key] = label
        layout.addStretch(1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        copy = buttons.addButton("&Copy", QDialogButtonBox.ButtonRole.ActionRole)
        copy.setObjectName("aboutCopy")
        copy.clicked.connect(self.copy)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.setMinimumWidth(560)
        from factdesk.gui.open_corpus import in_background

        in_background(lambda: _size(index), done=self._sized, failed=lambda _e: None,
                      name="index-size")

    def _sized(self, size: int | None) -> None:
        with contextlib.suppress(RuntimeError):  # (closed meanwhile)
            self.fields["indexSize"].setText(human_size(size))

    def text(self) -> str:
        return "\n".join(f"{key}: {label.text()}" for key, label in self.fields.items())

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text())


def show_about(window: MainWindow) -> AboutBox:
    box = AboutBox(window)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box
