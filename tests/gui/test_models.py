"""Every Qt model in the window passes Qt's QAbstractItemModelTester (issue 3), loaded with
the GUI corpus and kept under test while the panels repopulate (reindex, re-query, other
facts, re-sort), plus the config that makes Qt warnings fail tests.

One known exception, in Qt itself: QTreeWidget's internal model (QTreeModel, private to Qt)
answers children for *every* column of an item, so the tester's "second column must not
have the first column's children" check (`childIndex != childIndex1`) fails for any
two-column QTreeWidget whose first item has children — a bare QTreeWidget fails it too
(`test_qtreewidget_quirk_is_qts_own`). That one message is allowed for QTreeWidget models
only; every other tester failure, and every other Qt warning, fails these tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QAbstractItemModel, QMessageLogContext, Qt, QtMsgType, qInstallMessageHandler
from PySide6.QtTest import QAbstractItemModelTester
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QCompleter,
    QLineEdit,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
)
from shiboken6 import getCppPointer

from factdesk.gui.main_window import MainWindow
from tests.gui.conftest import _commit, _write, fact_id, relabel_dialog

ROOT = Path(__file__).resolve().parents[2]
NEW_FACT = "kb/gotchas/db/f1f1f1f1.md"
WARN = QAbstractItemModelTester.FailureReportingMode.Warning
#: the one tester failure QTreeWidget's own model always has (see the module docstring)
TREE_QUIRK = "FAIL! childIndex != childIndex1 () returned FALSE"
#: notices of the headless platform plugin (pyproject's qt_log_ignore)
OFFSCREEN = ("This plugin does not support propagateSizeHints()", "This plugin does not support raise()",
             "This plugin does not support grabbing the keyboard")

META_TESTS = """
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, qWarning

class Broken(QAbstractTableModel):
    def rowCount(self, parent=QModelIndex()):
        return 3  # a table whose cells all have children
    def columnCount(self, parent=QModelIndex()):
        return 2
    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        return "x" if role == Qt.ItemDataRole.DisplayRole else None

def test_warning(qtbot):
    qWarning("something is wrong")

def test_broken_model(qtmodeltester):
    qtmodeltester.check(Broken())

def test_offscreen_notice_is_ignored(qtbot):
    qWarning("This plugin does not support raise()")
"""


def test_qt_warnings_and_model_tester_failures_fail_tests(tmp_path: Path) -> None:
    """Run three tiny tests under this project's pytest config in a child pytest."""
    (tmp_path / "test_meta.py").write_text(META_TESTS, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(ROOT / "pyproject.toml"),
         "--rootdir", str(tmp_path), str(tmp_path / "test_meta.py")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    summary = out.stdout.splitlines()[-1]
    assert "FAILED test_meta.py::test_warning" in out.stdout, out.stdout
    assert "FAILED test_meta.py::test_broken_model" in out.stdout, out.stdout
    assert "2 failed, 1 passed" in summary, out.stdout


Message = tuple[QtMsgType, str, str]


@pytest.fixture
def qt_messages() -> Iterator[list[Message]]:
    """Every Qt message while the test runs (pytest-qt's capture is off: `no_qt_log`)."""
    seen: list[Message] = []

    def handler(kind: QtMsgType, context: QMessageLogContext, text: str) -> None:
        seen.append((kind, context.category or "", text))

    previous = qInstallMessageHandler(handler)
    yield seen
    qInstallMessageHandler(previous)


def unexpected(messages: list[Message], *, tree_quirk: bool) -> list[str]:
    """The warnings (or worse) a test must not see; `tree_quirk`: QTreeWidget models attached."""
    bad = []
    for kind, category, text in messages:
        if kind in (QtMsgType.QtDebugMsg, QtMsgType.QtInfoMsg) or text in OFFSCREEN:
            continue
        if tree_quirk and category == "qt.modeltest" and text.startswith(TREE_QUIRK):
            continue
        bad.append(f"{category}: {text}")
    return bad


@pytest.mark.no_qt_log
def test_qtreewidget_quirk_is_qts_own(qapp, qt_messages: list[Message]) -> None:
    tree = QTreeWidget()
    tree.setHeaderLabels(["a", "b"])
    top = QTreeWidgetItem(["group", ""])
    QTreeWidgetItem(top, ["child", "x"])
    tree.addTopLevelItem(top)
    tester = QAbstractItemModelTester(tree.model(), WARN)
    fails = [t for _, c, t in qt_messages if c == "qt.modeltest"]
    assert fails and all(t.startswith(TREE_QUIRK) for t in fails), fails
    del tester, tree  # Python owns both (no parent): deleted here, tester first


def models_of(window: MainWindow) -> dict[int, tuple[str, QAbstractItemModel]]:
    """Every item model the window's views, combo boxes and completer show (id → name, model)."""
    found: dict[int, tuple[str, QAbstractItemModel]] = {}

    def add(name: str, model: QAbstractItemModel | None) -> None:
        if model is not None:
            found.setdefault(getCppPointer(model)[0], (name, model))

    for combo in window.findChildren(QComboBox):
        add(f"QComboBox:{combo.objectName()}", combo.model())
    for completer in window.findChildren(QCompleter):
        add("completer", completer.model())
        add("completer.completionModel", completer.completionModel())
    for view in window.findChildren(QAbstractItemView):
        owner = view.objectName() or (view.parent().objectName() if view.parent() else "")
        add(f"{type(view).__name__}:{owner}", view.model())
    return found


class ModelWatch:
    """One attached C++ tester per model: each keeps checking its model on every change
    (failures arrive as `qt.modeltest` warnings in `qt_messages`)."""

    def __init__(self) -> None:
        self.attached: dict[int, tuple[str, QAbstractItemModel, QAbstractItemModelTester]] = {}

    def attach(self, models: dict[int, tuple[str, QAbstractItemModel]]) -> None:
        for key, (name, model) in models.items():
            if key not in self.attached:
                tester = QAbstractItemModelTester(model, WARN)
                self.attached[key] = (name, model, tester)

    def names(self) -> set[str]:
        return {name for name, _, _ in self.attached.values()}

    def close(self) -> None:
        self.attached.clear()  # Python owns the testers: dropping them deletes them


@pytest.fixture
def testers() -> Iterator[ModelWatch]:
    watch = ModelWatch()
    yield watch
    watch.close()


def check_alone(models: dict[int, tuple[str, QAbstractItemModel]], messages: list[Message]) -> None:
    """A fresh tester per model, one at a time: only QTreeWidget models may show the quirk."""
    for name, model in models.values():
        before = len(messages)
        tester = QAbstractItemModelTester(model, WARN)
        bad = unexpected(messages[before:], tree_quirk=name.startswith("QTreeWidget:"))
        del tester  # (Python owns it: deleted here)
        assert bad == [], (name, bad)


def show_every_panel(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """Fill every panel: a fact with refs and history in the inspector, each tab loaded."""
    window.show_fact(fact_id(window, "pool"))
    inspector = window.inspector
    inspector.tabs.setCurrentWidget(inspector.history)
    qtbot.waitUntil(lambda: inspector.history.commits.topLevelItemCount() >= 2, timeout=5000)
    inspector.history.commits.selectAll()  # two versions: a diff between them
    center: QTabWidget = window.center
    center.setCurrentWidget(window.problems)
    with qtbot.waitSignal(window.mislabels.queue_did_load, timeout=20_000):
        center.setCurrentWidget(window.mislabels)
    with qtbot.waitSignal(window.settlement.did_load, timeout=20_000):
        center.setCurrentWidget(window.settlement)
    center.setCurrentWidget(window.transitions_tab)  # (the track records may have loaded it)
    qtbot.waitUntil(lambda: window.transitions.loaded, timeout=20_000)
    center.setCurrentIndex(0)


@pytest.mark.no_qt_log
def test_every_model_passes_and_keeps_passing_through_refreshes(qtbot, window: MainWindow, repo: Path,
                                                              testers: ModelWatch,
                                                              qt_messages: list[Message]) -> None:
    show_every_panel(qtbot, window)
    check_alone(models_of(window), qt_messages)
    testers.attach(models_of(window))
    names = testers.names()
    for expected in ("FactTableView:factTable", "QTreeWidget:ontologyTree", "QTreeWidget:facetTree",
                     "QListWidget:savedSearches", "QTreeWidget:problemsTree", "QTreeWidget:inspectorRefs",
                     "QTreeWidget:inspectorProblems", "QTreeWidget:historyCommits",
                     "QTreeWidget:settleList", "QTreeWidget:settleCandidates",
                     "TransitionsTable:transitionsTable", "QTableWidget:transitionsMethodologies",
                     "QComboBox:transitionsKind", "completer"):
        assert any(n.startswith(expected) for n in names), (expected, sorted(names))
    # the panels hold data (an empty model passes trivially)
    assert window.sidebar.ontology.topLevelItemCount() > 0
    assert window.sidebar.facets.topLevelItemCount() > 0
    assert window.problems.tree.topLevelItemCount() > 0
    assert window.inspector.refs.topLevelItemCount() > 0
    assert window.settlement.list.topLevelItemCount() > 0
    assert window.transitions.model.rowCount() > 0

    # repopulate everything while the testers watch: a new fact and a reindex ...
    _write(repo, NEW_FACT, "---\ntype: hypothesis\ndomain: [db]\nconfidence: 0.4\nsources: 1\n"
           "refs: ['kb/gotchas/db/a1a1a1a1.md']\nsettle_by: 2099-01-01\n---\n"
           "# Pools shrink at night\n\nA guess.\n")
    _commit(repo, "learn: a new hypothesis")
    with qtbot.waitSignal(window.index_did_update, timeout=20_000):
        window.reindex()
    # ... a query (facets recount, the table re-queries) and its removal ...
    with qtbot.waitSignal(window.sidebar.facets_did_update, timeout=10_000):
        window.set_query("type:hypothesis")
    with qtbot.waitSignal(window.sidebar.facets_did_update, timeout=10_000):
        window.set_query("")
    edit = window.search.findChild(QLineEdit)
    for text in ("ty", "pe:", "hyp"):  # the completer offers fields, then values
        qtbot.keyClicks(edit, text)
    edit.clear()
    # ... other facts in the inspector (no refs, hostile, retracted) and their history ...
    for key in ("policy", "hostile", "retracted", "syn"):
        window.show_fact(fact_id(window, key))
        window.inspector.tabs.setCurrentWidget(window.inspector.history)
    window.show_fact(fact_id(window, "pool"))
    # ... each tab shown again (stale ones refresh) and reloaded ...
    for panel in (window.problems, window.overview):
        window.center.setCurrentWidget(panel)
    with qtbot.waitSignal(window.mislabels.queue_did_load, timeout=20_000):
        window.mislabels.load()
    with qtbot.waitSignal(window.settlement.did_load, timeout=20_000):
        window.settlement.load()
    window.settlement.refresh_candidates()
    with qtbot.waitSignal(window.transitions.did_load, timeout=20_000):
        window.transitions.load()
    table = window.transitions.table
    for col in range(window.transitions.model.columnCount()):
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            table.sortByColumn(col, order)
    for i in range(window.transitions.kind_combo.count()):
        window.transitions.kind_combo.setCurrentIndex(i)
    window.transitions.group_combo.setCurrentIndex(1)
    qtbot.wait(50)
    # nothing but the QTreeWidget quirk while the testers watched every change ...
    assert unexpected(qt_messages, tree_quirk=True) == []
    # ... and each model, repopulated, passes alone (only tree widgets show the quirk)
    check_alone(models_of(window), qt_messages)


@pytest.mark.no_qt_log
def test_relabel_dialog_models(qtbot, window: MainWindow, testers: ModelWatch,
                               qt_messages: list[Message]) -> None:
    window.show_fact(fact_id(window, "pool"))
    window.open_relabel([window.inspector.path or ""])
    dialog = relabel_dialog(qtbot, window)
    combos = dialog.findChildren(QComboBox)
    assert combos
    testers.attach({getCppPointer(c.model())[0]: (c.objectName(), c.model()) for c in combos})
    for combo in combos:
        for i in range(combo.count()):
            combo.setCurrentIndex(i)
    dialog.reject()
    assert unexpected(qt_messages, tree_quirk=False) == []


def test_transitions_sort_keeps_the_selected_row(qtbot, window: MainWindow, repo: Path) -> None:
    """Sorting moves rows: the view's selection (a persistent index) must follow its row."""
    for n in range(3):
        _write(repo, f"kb/gotchas/db/0{n}0{n}0{n}0{n}.md", "---\ntype: observation\ndomain: [db]\n"
               f"confidence: 0.5\nsources: 1\nrefs: []\n---\n# Fact {n}\n\nBody.\n")
        _commit(repo, f"learn: fact {n}")
        (repo / f"kb/gotchas/db/0{n}0{n}0{n}0{n}.md").unlink()
        _commit(repo, f"retract: fact {n}", op="retract")
    with qtbot.waitSignal(window.index_did_update, timeout=20_000):
        window.reindex()
    with qtbot.waitSignal(window.transitions.did_load, timeout=20_000):
        window.center.setCurrentWidget(window.transitions_tab)
    panel = window.transitions
    model = panel.model
    assert model.rowCount() >= 3
    panel.table.selectRow(1)
    chosen = model.rows[panel.table.currentIndex().row()]
    for col in range(model.columnCount()):
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            panel.table.sortByColumn(col, order)
            assert model.rows[panel.table.currentIndex().row()] is chosen, (col, order)
            selected = panel.table.selectionModel().selectedRows()
            assert [model.rows[i.row()] for i in selected] == [chosen]

