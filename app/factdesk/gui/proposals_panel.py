"""The Proposals tab: what agents propose on their `agent/*` branches, as a review queue
worked with one key per decision (Prodigy-style; DESIGN.md §1 "Review synthesis
proposals", issue 13).

Top: the branches with their open counts, the queue's shape (per commit, or per fact: the
branch's net change to each fact) and the status shown (open, accepted, rejected, all).
Left: the queue, each row with its rule badge "as if accepted" (`…` until `check_all`
has checked it: the badges stream in from a worker after the list is shown). Right: the
selected proposal — who proposed it with which operation, the facts it changes, each
one's problems (new, or already on the curated version), its diff against the curated
version, the proposed text, near-duplicates already on the curated branch.

A accepts, R rejects (asks why), E edits the proposed version then accepts it, S skips
(the next item is selected at once; nothing is recorded). A refusal names its rule and
offers an override with a reason; a conflict offers keep curated / take proposed / edit
merged. "Accept all clean…" previews what one commit would take before it commits. Every
decision is one commit through the window's writer lane (`ops.run`), so the index, the
undo stack and every tab follow it (`operation_did_execute`); Ctrl+Z reopens it. The
queue, its checks and the diffs are read on workers, never on the GUI thread; the panel
holds no rules (`review.*` decides, `gui/proposal_source.py` is how it asks).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from factdesk.curation import ChangeSet, Conflict, Refused
from factdesk.errors import FactdeskError
from factdesk.gui import dialogs, proposal_source, theme
from factdesk.gui.flow_layout import FlowLayout
from factdesk.gui.inspector import text_label
from factdesk.gui.operations import Operations
from factdesk.gui.panel import IndexChange, Window
from factdesk.gui.proposal_views import (
    STATUS_COLORS,
    Badge,
    EditDialog,
    badge_of,
    changes_text,
    clean_badge,
    conflict_dialog,
    edited_note,
    fact_status,
    heading,
    preview_dialog,
    preview_lines,
    problem_line,
    refusal_dialog,
    verdict_of,
)
from factdesk.gui.proposal_workers import CheckWorker, KeyRouter
from factdesk.gui.relabel_dialog import DiffHighlighter
from factdesk.gui.safe_browser import SafeTextBrowser
from factdesk.gui.workers import BackgroundRead, let_finish
from factdesk.model.words import count
from factdesk.review import clean
from factdesk.review.model import Proposal, ProposedFact, Queue

if TYPE_CHECKING:
    from factdesk.review.proposals import Awaiting

STATUSES = (("open", "Open"), ("accepted", "Accepted"), ("rejected", "Rejected"), ("all", "All"))
MODES = (("commit", "Per commit"), ("fact", "Per fact"))
ACCEPT_REASON = "accepted in review"
ATTEST_REASON = "attested in review"
#: the branch box's second source: derived facts already on the curated branch
AWAITING = "@awaiting"
CLEAN_REASON = "accepted in review: no error, no conflict"
KEY_ROLE = Qt.ItemDataRole.UserRole
@dataclass(frozen=True, slots=True)
class Item:
    """One row of the queue: a proposal (per commit) or one fact of a branch (per fact)."""

    key: tuple[str, ...]
    branch: str
    #: the proposals a decision on this row takes (per fact: the open ones touching it)
    shas: tuple[str, ...]
    #: per fact: the fact; per commit: None (the decision takes the whole commit)
    path: str | None
    status: str


#: after a key or a selection in the tab, the checks wait this long (seconds)
QUIET_S = 0.4
#: the selected fact's diff and the inspector follow the queue after this long (ms)
DETAIL_MS = 60
#: a decision goes to the writer lane this long after its key (ms; never lost: closing
#: the window hands over what waits)
SUBMIT_MS = 30


class ProposalsPanel(QWidget):
    """The Proposals tab (see the module docstring)."""

    caption_did_change = Signal(str)
    path_did_select = Signal(str)
    queue_did_load = Signal(int)  # rows shown
    queue_did_count = Signal(str, int)  # the curated branch, proposals waiting
    checks_did_finish = Signal(int)  # proposals checked
    item_did_change = Signal()
    decision_did_finish = Signal(str)  # the row's key, as text
    sync_did_progress = Signal(str, float)
    sync_did_finish = Signal(object)
    #: the review merges File ▸ Record the review merge made (a list), or the error
    merge_did_finish = Signal(object)
    caption = "Proposals"
    menu_text = "Agent proposals"
    action_name = "showProposals"

    def __init__(self, ops: Operations, *, ask_text: Callable[[str, str, str], str | None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("proposalsPanel")
        self._ops = ops
        self._repo = ops.indexer.repo
        self._ask_text = ask_text
        self._window: Window | None = None
        self.queue: Queue | None = None
        #: checked proposals by sha (kept across reloads: a decision rarely changes them)
        self.checked: dict[str, Proposal] = {}
        #: sha → its standing for "Accept all clean" (`review.clean`: the badges' ✓)
        self.verdicts: dict[str, clean.Verdict] = {}
        self.items: list[Item] = []
        self.mode = "commit"
        self.status_filter = "open"
        self.branch_filter: str | None = None
        self.skipped: set[tuple[str, ...]] = set()
        #: rows whose decision is on its way (shown greyed; the queue moved past them)
        self.pending: dict[tuple[str, ...], str] = {}
        self.loaded = False
        self.checks_done = False
        self._shown_once = False
        self._stale = False
        self._checker: CheckWorker | None = None
        self._checking_queue: Queue | None = None
        self._wanted_fact: tuple[str, str] | None = None
        self._view: list[Proposal] | None = None
        self._by_sha: dict[str, Proposal] = {}
        self._pos: dict[str, int] = {}
        self._row_of: dict[tuple[str, ...], QTreeWidgetItem] = {}
        self._items_of: dict[str, list[Item]] = {}
        self._proposed_text = ""
        self._syncing = False
        self._quiet_until = 0.0
        self._to_submit: list[Callable[[], None]] = []
        self._submit_timer = QTimer(self)
        self._submit_timer.setSingleShot(True)
        self._submit_timer.setInterval(SUBMIT_MS)
        self._submit_timer.timeout.connect(self._submit)
        self._detail_timer = QTimer(self)
        self._detail_timer.setSingleShot(True)
        self._detail_timer.setInterval(DETAIL_MS)
        self._detail_timer.timeout.connect(self._show_fact_later)
        self._again = False
        self._edit_for: tuple[Item, Proposal, ProposedFact, bool] | None = None
        repo, indexer = self._repo, ops.indexer
        self._loader = BackgroundRead(None, lambda: proposal_source.load(repo), done=self._loaded,
                                      failed=self._load_failed, parent=self)
        self._one = BackgroundRead(None, lambda queue, sha: proposal_source.check_one(indexer, queue, sha),
                                   done=self._checked_one, failed=lambda *_a: None, parent=self)
        self._shower = BackgroundRead(None, lambda queue, fact, label: proposal_source.show(
            repo, queue, fact, label), done=self._shown, failed=self._show_failed, parent=self)
        self._bytes = BackgroundRead(None, lambda fact: proposal_source.proposed_bytes(repo, fact),
                                     done=self._edit_read, failed=self._edit_failed, parent=self)
        #: the second source (DESIGN §5): `distilled`/`discovered` facts on the curated
        #: branch no curator attested; read when chosen
        self.awaiting: list[Awaiting] | None = None
        self._awaiting_read = BackgroundRead(None, lambda: proposal_source.awaiting(indexer),
                                             done=self._awaiting_loaded,
                                             failed=lambda m: self.status.setText(
                                                 f"Could not read the facts awaiting attestation: {m}"),
                                             parent=self)
        self._near: Callable[[str], list[tuple[str, float]]] | None = None
        self._near_read = BackgroundRead(None, lambda text: self._near(text) if self._near else [],
                                         done=self._near_done, failed=lambda *_a: None, parent=self)
        self._build()

    # -- construction ---------------------------------------------------------------------

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        bar = QHBoxLayout()
        self.branch_box = QComboBox(self)
        self.branch_box.setObjectName("proposalBranches")
        # (never sized by its longest entry: the tab must not widen the window's minimum)
        self.branch_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.branch_box.setMinimumContentsLength(10)
        self.branch_box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.branch_box.activated.connect(lambda _i: self._filters_changed())
        self.mode_box = QComboBox(self)
        self.mode_box.setObjectName("proposalMode")
        for key, text in MODES:
            self.mode_box.addItem(text, key)
        self.mode_box.activated.connect(lambda _i: self.set_mode(self.mode_box.currentData()))
        self.status_box = QComboBox(self)
        self.status_box.setObjectName("proposalStatusFilter")
        for key, text in STATUSES:
            self.status_box.addItem(text, key)
        self.status_box.activated.connect(lambda _i: self.set_status_filter(self.status_box.currentData()))
        self.clean_button = QPushButton("Accept all clean…", self)
        self.clean_button.setObjectName("proposal_acceptClean")
        self.clean_button.clicked.connect(self.accept_all_clean)
        # (a narrow window squeezes it: the tab never sets the window's minimum width)
        self.clean_button.setMinimumWidth(48)
        bar.addWidget(self.branch_box, 1)  # (the branch names take what room there is)
        bar.addWidget(self.mode_box)
        bar.addWidget(self.status_box)
        bar.addWidget(self.clean_button)  # (a branch-wide action: beside the branch it acts on)
        outer.addLayout(bar)
        self.status = text_label(self, "proposalStatus")
        outer.addWidget(self.status)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.setObjectName("proposalSplitter")
        self.list = QTreeWidget(split)
        self.list.setObjectName("proposalList")
        self.list.setAccessibleName("Proposals queue")
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.header().setStretchLastSection(False)
        self.list.currentItemChanged.connect(lambda *_: self._show_current())
        self._set_columns()
        lower = QSplitter(Qt.Orientation.Horizontal, split)
        left = QWidget(lower)
        detail = QVBoxLayout(left)
        detail.setContentsMargins(0, 4, 4, 0)
        self.title = text_label(left, "proposalTitle")
        self.title.setStyleSheet("font-size: 14px; font-weight: bold;")
        self.meta = text_label(left, "proposalMeta")
        self.meta.setStyleSheet(f"color: {theme.DERIVED_COLOR};")
        self.badge = text_label(left, "proposalBadge")
        for w in (self.title, self.meta, self.badge):
            detail.addWidget(w)
        self.facts = QTreeWidget(left)
        self.facts.setObjectName("proposalFacts")
        self.facts.setAccessibleName("Facts the proposal changes")
        self.facts.setHeaderLabels(["Fact", "Change", "Checks"])
        self.facts.setRootIsDecorated(False)
        self.facts.header().setStretchLastSection(False)
        self.facts.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2):
            self.facts.header().setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.facts.currentItemChanged.connect(lambda *_: self._show_fact())
        # (three rows and the header at any font size)
        self.facts.setMinimumHeight(5 * self.facts.fontMetrics().height() + 8)
        # one finding a line, wrapped (a rule's message is a sentence)
        self.problems = QListWidget(left)
        self.problems.setObjectName("proposalProblems")
        self.problems.setAccessibleName("Problems as if accepted")
        self.problems.setWordWrap(True)
        self.problems.setUniformItemSizes(False)
        self.problems.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.problems.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        facts_split = QSplitter(Qt.Orientation.Vertical, left)
        facts_split.addWidget(self.facts)
        facts_split.addWidget(self.problems)
        detail.addWidget(facts_split, 1)
        # (a button per line when the pane is narrow or the font big: issue 18's 1.5×)
        buttons = FlowLayout(spacing=6)
        self.buttons: dict[str, QPushButton] = {}
        for key, text, slot in (("accept", "Accept (A)", self.accept),
                                ("reject", "Reject… (R)", self.reject),
                                ("edit", "Edit, accept… (E)", self.edit),
                                ("skip", "Skip (S)", self.skip)):
            button = QPushButton(text, left)
            button.setObjectName(f"proposal_{key}")
            button.clicked.connect(slot)
            buttons.addWidget(button)
            self.buttons[key] = button
        detail.addLayout(buttons)
        self.tabs = QTabWidget(lower)
        self.tabs.setObjectName("proposalViews")
        # (tab names elided, never scroll arrows too narrow for their glyphs: issue 18's 1.5×)
        self.tabs.setUsesScrollButtons(False)
        self.tabs.setElideMode(Qt.TextElideMode.ElideRight)
        self.diff = QPlainTextEdit(self.tabs)
        self.diff.setObjectName("proposalDiff")
        self.diff.setAccessibleName("Diff against the curated version")
        self.diff.setReadOnly(True)
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self._highlighter = DiffHighlighter(self.diff.document())
        self.proposed = SafeTextBrowser(self.tabs)
        self.proposed.setObjectName("proposalText")
        self.proposed.setAccessibleName("Proposed text")
        self.near = QTreeWidget(self.tabs)
        self.near.setObjectName("proposalNear")
        self.near.setAccessibleName("Near-duplicates on the curated branch")
        self.near.setHeaderLabels(["Near-duplicate on the curated branch", "Sim."])
        self.near.setRootIsDecorated(False)
        self.near.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.near.itemActivated.connect(self._open_near)
        self.tabs.addTab(self.diff, "Diff vs curated")
        self.tabs.addTab(self.proposed, "Proposed")
        self.tabs.addTab(self.near, "Near-duplicates")
        for part in (left, self.tabs):  # (a narrow window squeezes them, never the reverse)
            part.setMinimumWidth(140)
        lower.addWidget(left)
        lower.addWidget(self.tabs)
        lower.setStretchFactor(0, 4)
        lower.setStretchFactor(1, 5)
        split.addWidget(self.list)
        split.addWidget(lower)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setSizes([240, 400])  # (the detail needs the room at 1366×768 and 1.5× the font)
        self.splitter = split
        outer.addWidget(split, 1)
        router = KeyRouter(self)
        for widget in (self, *self.findChildren(QWidget)):
            widget.installEventFilter(router)
        self._fill_branches()
        self._show_current()

    def _set_columns(self) -> None:
        labels = (["Proposal", "Op", "Changes", "Checks", "Status"] if self.mode == "commit"
                  else ["Fact", "Change", "Proposals", "Checks", "Status"])
        self.list.setHeaderLabels(labels)
        header = self.list.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, len(labels)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)

    # -- Panel ------------------------------------------------------------------------------

    def tab_widget(self) -> QWidget:
        return self

    def attach(self, window: Window) -> None:
        self._window = window
        self.path_did_select.connect(self._inspect)
        status = getattr(window, "status", None)
        if status is not None and hasattr(status, "proposals_counted"):
            self.queue_did_count.connect(status.proposals_counted)
            self.sync_did_progress.connect(status.sync_progress)
        semantic = window.semantic
        self._near = semantic_near(semantic)
        semantic.did_become_ready.connect(lambda: self._semantic_ready(semantic))
        self.load()  # (light: git only) the status bar's count, before the tab is seen

    def _inspect(self, path: str) -> None:
        """The inspector shows the curated version of the fact; a fact the curated branch
        does not have (a proposal adds it) empties it, never leaving another fact there."""
        if self._window is not None:
            self._window.inspect_from(self, path)

    def selected_path(self) -> str | None:
        chosen, item = self._chosen_fact(), self.current_item()
        return chosen[1].path if chosen else item.path if item is not None else None

    def _semantic_ready(self, semantic: Any) -> None:
        self._near = semantic_near(semantic)
        self._show_near()

    def step(self, delta: int) -> None:
        rows = self._rows()
        if not rows:
            return
        current = self.list.currentItem()
        at = rows.index(current) if current in rows else -1
        self.list.setCurrentItem(rows[max(0, min(len(rows) - 1, at + delta))])

    def index_did_change(self, change: IndexChange) -> None:
        """A commit (ours, an undo, an agent's, a sync): read the queue again (git only,
        quick); its checks are redone when the tab is in front."""
        self._stale = not change.in_front
        self.load()
        if self.branch_filter == AWAITING:
            self._awaiting_read.start()

    def tab_did_show(self) -> None:
        self._shown_once = True
        if not self.loaded:
            self.load()
        elif self._stale or self._checking_queue is not self.queue:
            self._stale = False
            self._start_checks()
        self.list.setFocus()

    def close_worker(self) -> None:
        self._submit_timer.stop()
        self._submit()  # (decisions made just before closing: the lane finishes them)
        for reader in (self._loader, self._one, self._shower, self._bytes, self._near_read,
                       self._awaiting_read):
            reader.close()
        self._stop_checks()

    # -- loading --------------------------------------------------------------------------

    def load(self) -> None:
        """Read the queue on the worker. A read already running is never dropped for a
        newer one (at start the window's first refresh and its index update came on top of
        the tab's own read, and each threw the last one's answer away): its answer is shown,
        then the queue is read once more."""
        if self._loader.running:
            self._again = True
            return
        if self._loader.start() and not self.loaded:
            self.status.setText("Reading the agents' branches…")

    def _load_failed(self, message: str) -> None:
        self.status.setText(f"Could not read the proposals: {message}")
        if self._again:
            self._again = False
            self._loader.start()

    def _loaded(self, queue: Queue) -> None:
        if self._again:
            self._again = False
            self._loader.start()
        self.queue = queue
        self._view = None
        self.loaded = True
        live = {p.sha for p in queue.proposals}
        self.checked = {sha: p for sha, p in self.checked.items() if sha in live}
        self.verdicts = {sha: v for b in queue.branches
                         for sha, v in clean.clean_set(queue, b.name, self.checked).verdicts.items()}
        # a decision's row is done once the queue read after it says so
        self.pending = {k: s for k, s in self.pending.items() if k[0] == "a" or self._still_open(k)}
        self._fill_branches()
        self._fill(keep=self.current_key())
        waiting = sum(p.status in ("open", "partial") for p in self.unique())
        self.queue_did_count.emit(queue.curated, waiting)
        self._counted()
        self.queue_did_load.emit(len(self.items))
        if self._shown_once and self.isVisible():
            self._start_checks()

    def _still_open(self, key: tuple[str, ...]) -> bool:
        assert self.queue is not None
        shas = set(key[1:2]) if key[0] == "c" else None
        for p in self.queue.proposals:
            if shas is not None and p.sha in shas:
                return p.status in ("open", "partial")
            if shas is None and p.branch == key[1]:
                for f in p.facts:
                    if f.path == key[2] and fact_status(p, f) == "open":
                        return True
        return False

    def _counted(self) -> None:
        waiting = 0 if self.queue is None else sum(
            p.status in ("open", "partial") and ("c", p.sha) not in self.pending
            for p in self.unique())
        self.caption_did_change.emit(f"Proposals ({waiting})")

    def _fill_branches(self) -> None:
        box = self.branch_box
        box.clear()
        if self.queue is None:
            box.addItem("(no agent branches read yet)", None)
            return
        total = sum(p.status in ("open", "partial") for p in self.unique())
        box.addItem(f"All agent branches ({total} open)", None)
        for b in self.queue.branches:
            box.addItem(f"{b.name} — {b.agent}: {b.open} open of {b.ahead} ahead", b.name)
            box.setItemData(box.count() - 1, theme.tooltip(
                f"{b.name}\nagent {b.agent}\nmerge base {b.base[:12]} · tip {b.tip[:12]}"),
                Qt.ItemDataRole.ToolTipRole)
        waiting = "" if self.awaiting is None else f" ({len(self.awaiting)})"
        box.addItem(f"On {self.queue.curated}: distilled/discovered awaiting attestation{waiting}",
                    AWAITING)
        at = box.findData(self.branch_filter) if self.branch_filter else 0
        box.setCurrentIndex(max(at, 0))

    def _filters_changed(self) -> None:
        self.branch_filter = self.branch_box.currentData()
        self._view = None
        if self.branch_filter == AWAITING:
            self._awaiting_read.start()
        self._fill(keep=self.current_key())

    def set_mode(self, mode: str) -> None:
        """Per commit or per fact (the switch above the queue)."""
        if mode == self.mode:
            return
        self.mode = mode
        self.mode_box.setCurrentIndex(max(self.mode_box.findData(mode), 0))
        self._set_columns()
        self._fill(keep=None)

    def set_status_filter(self, status: str) -> None:
        self.status_filter = status
        self.status_box.setCurrentIndex(max(self.status_box.findData(status), 0))
        self._fill(keep=self.current_key())

    def set_branch(self, branch: str | None) -> None:
        self.branch_box.setCurrentIndex(max(self.branch_box.findData(branch), 0) if branch else 0)
        self._filters_changed()

    # -- the queue's rows -------------------------------------------------------------------

    def unique(self) -> list[Proposal]:
        """The queue's proposals, each agent commit once: a local branch and its
        remote-tracking twin hold the same commits (the first branch read, the local one,
        keeps it)."""
        if self.queue is None:
            return []
        seen: set[str] = set()
        out = []
        for p in self.queue.proposals:
            if p.sha not in seen:
                seen.add(p.sha)
                out.append(p)
        return out

    def _proposals(self) -> list[Proposal]:
        """The proposals shown (the branch chosen), with their checks once known."""
        if self._view is None:
            source = self.unique() if self.branch_filter is None else [
                p for p in (self.queue.proposals if self.queue else ()) if p.branch == self.branch_filter]
            self._view = [_with_checks(self.checked.get(p.sha), p) for p in source]
            self._by_sha = {p.sha: p for p in self._view}
            self._pos = {p.sha: i for i, p in enumerate(self._view)}
        return self._view

    def _wanted(self, status: str) -> bool:
        if self.status_filter == "all":
            return True
        if self.status_filter == "open":
            return status in ("open", "partial")
        return status == self.status_filter

    def _awaiting_loaded(self, facts: list[Awaiting]) -> None:
        self.awaiting = facts
        self.pending = {k: v for k, v in self.pending.items()
                        if k[0] != "a" or any(a.path == k[1] for a in facts)}
        self._fill_branches()
        if self.branch_filter == AWAITING:
            self._fill(keep=self.current_key())
            self.queue_did_load.emit(len(self.items))

    def _make_items(self) -> list[Item]:
        if self.branch_filter == AWAITING:
            return [Item(("a", a.path), "", (), a.path, "awaiting")
                    for a in self.awaiting or ()] if self.status_filter in ("open", "all") else []
        proposals = self._proposals()
        if self.mode == "commit":
            return [Item(("c", p.sha), p.branch, (p.sha,), None, p.status)
                    for p in proposals if self._wanted(p.status)]
        groups: dict[tuple[str, str], list[tuple[Proposal, ProposedFact]]] = {}
        for p in proposals:
            for f in p.facts:
                groups.setdefault((p.branch, f.path), []).append((p, f))
        out = []
        assert self.queue is not None
        net = {b: {n.path for n in facts} for b, facts in self.queue.net.items()}
        for (branch, path), members in groups.items():
            if branch in net and path not in net[branch]:
                continue  # the branch leaves it as it was (added, then deleted again)
            statuses = [fact_status(p, f) for p, f in members]
            status = "open" if "open" in statuses else statuses[-1]
            if self._wanted(status):
                shas = tuple(p.sha for p, f in members if fact_status(p, f) == "open") or \
                    tuple(p.sha for p, _f in members)
                out.append(Item(("f", branch, path), branch, shas, path, status))
        return out

    def _fill(self, keep: tuple[str, ...] | None) -> None:
        self.items = self._make_items()
        self.list.setUpdatesEnabled(False)
        self.list.blockSignals(True)
        self.list.clear()
        chosen: QTreeWidgetItem | None = None
        self._row_of = {}
        self._items_of = {}
        for item in self.items:
            row = QTreeWidgetItem(self.list)
            row.setData(0, KEY_ROLE, item.key)
            self._paint(row, item)
            self._row_of[item.key] = row
            for sha in item.shas:
                self._items_of.setdefault(sha, []).append(item)
            if item.key == keep:
                chosen = row
        self.list.blockSignals(False)
        self.list.setUpdatesEnabled(True)
        target = chosen or self._first_free()
        if target is not None:
            self.list.setCurrentItem(target)
        self._say()
        self._show_current()

    def _first_free(self) -> QTreeWidgetItem | None:
        rows = self._rows()
        busy = self.pending.keys() | self.skipped
        return next((r for r in rows if self._key(r) not in busy), rows[0] if rows else None)

    def _say(self) -> None:
        if self.queue is None:
            return
        if not self.queue.branches:
            self.status.setText(f"No agent branches: nothing proposed to {self.queue.curated}.")
            return
        what = "fact" if self.mode == "fact" else "proposal"
        where = self.branch_filter or "all agent branches"
        shown = (count(len(self.items), f"open {what}") + f" to review on {self.queue.curated}"
                 if self.status_filter == "open" else
                 count(len(self.items), what) + ("" if self.status_filter == "all"
                                                 else f" {self.status_filter}"))
        total = len(self._proposals())
        checked = sum(p.sha in self.checked for p in self._proposals())  # (one pass each: cheap)
        progress = f" · checking {checked}/{total}…" if checked < total and not self.checks_done else ""
        self.status.setText(f"{shown} ({where}){progress}")

    def _paint(self, row: QTreeWidgetItem, item: Item) -> None:
        if item.key[0] == "a":
            self._paint_awaiting(row, item)
            return
        self._proposals()
        by_sha = self._by_sha
        if item.path is None:
            p = by_sha[item.shas[0]]
            b = clean_badge(badge_of(p.facts) if p.facts else Badge(
                "agent state", theme.DERIVED_COLOR, "files outside kb/"), self.verdicts.get(p.sha))
            cells = [theme.clip(p.subject, 200), p.op or "", changes_text(p.facts, p.other_files, p.files)]
            tip = f"{p.subject}\n{p.sha}\n{p.branch} · {p.author_name} <{p.author_email}>"
        else:
            members = [(by_sha[s], f) for s in item.shas if s in by_sha
                       for f in by_sha[s].facts if f.path == item.path]
            facts = [f for _p, f in members]
            b = clean_badge(badge_of(facts), verdict_of(self.verdicts, item.shas))
            change = self._net_change(item) or (facts[-1].change if facts else "")
            cells = [theme.clip(item.path, 200), change, str(len(members))]
            tip = f"{item.path}\n{item.branch}\n" + "\n".join(
                f"{p.sha[:10]} {p.subject}" for p, _f in members)
        status = self.pending.get(item.key) or ("skipped" if item.key in self.skipped else item.status)
        for col, text in enumerate([*cells, b.text, status]):
            row.setText(col, text)
        row.setToolTip(0, theme.tooltip(tip))
        row.setToolTip(3, theme.tooltip(b.detail))
        row.setForeground(3, QBrush(QColor(b.color)))
        row.setForeground(4, QBrush(QColor(STATUS_COLORS.get(item.status, theme.DERIVED).color)))
        grey = item.key in self.pending
        font = QFont(row.font(0))
        font.setItalic(grey or item.key in self.skipped)
        for col in range(5):
            row.setFont(col, font)
            if grey:
                row.setForeground(col, QBrush(QColor(theme.DERIVED_COLOR)))

    def _awaited(self, path: str | None) -> Awaiting | None:
        return next((a for a in self.awaiting or () if a.path == path), None)

    def _paint_awaiting(self, row: QTreeWidgetItem, item: Item) -> None:
        a = self._awaited(item.path)
        if a is None:
            return
        status = self.pending.get(item.key) or ("skipped" if item.key in self.skipped else "awaiting")
        for col, text in enumerate([theme.clip(a.title, 200), a.origin, a.type,
                                    theme.clip(a.creator, 80), status]):
            row.setText(col, text)
        row.setToolTip(0, theme.tooltip(f"{a.title}\n{a.path}"))
        grey = item.key in self.pending
        for col in range(5):
            if grey:
                row.setForeground(col, QBrush(QColor(theme.DERIVED_COLOR)))

    def _net_change(self, item: Item) -> str | None:
        if self.queue is None or item.path is None:
            return None
        for net in self.queue.net.get(item.branch, ()):
            if net.path == item.path:
                return net.change
        return None

    def _rows(self) -> list[QTreeWidgetItem]:
        return [r for r in (self.list.topLevelItem(i) for i in range(self.list.topLevelItemCount()))
                if r is not None]

    @staticmethod
    def _key(row: QTreeWidgetItem | None) -> tuple[str, ...] | None:
        key = row.data(0, KEY_ROLE) if row is not None else None
        return tuple(key) if key is not None else None

    def current_key(self) -> tuple[str, ...] | None:
        return self._key(self.list.currentItem())

    def current_item(self) -> Item | None:
        key = self.current_key()
        if key is None or key not in self._row_of:
            return None
        return next((i for i in self._items_of.get(key[1] if key[0] == "c" else "", ())
                     if i.key == key), None) or next((i for i in self.items if i.key == key), None)

    def select_sha(self, sha: str) -> bool:
        """Select the row of a proposal (per commit) by its full or abbreviated sha."""
        for row in self._rows():
            key = self._key(row)
            if key is not None and key[0] == "c" and key[1].startswith(sha):
                self.list.setCurrentItem(row)
                return True
        return False

    def _repaint_sha(self, sha: str) -> None:
        for item in self._items_of.get(sha, ()):
            row = self._row_of.get(item.key)
            if row is not None:
                self._paint(row, item)

    # -- checks (a worker streams the badges) -------------------------------------------------

    def _start_checks(self) -> None:
        if self.queue is None:
            return
        self._stop_checks()
        self.checks_done = False
        self._checking_queue = self.queue
        lane = self._ops.lane
        worker = CheckWorker(self._ops, replace(self.queue, proposals=tuple(self.unique())),
                             lambda: lane.busy or time.monotonic() < self._quiet_until)
        worker.did_check.connect(self._checked)
        worker.did_fail.connect(lambda m: self.status.setText(f"Checking failed: {m}"))
        worker.finished.connect(partial(self._checks_ended, worker))
        self._checker = worker
        worker.start()

    def _stop_checks(self) -> None:
        worker, self._checker = self._checker, None
        if worker is not None:
            worker.stopped = True
            worker.did_check.disconnect(self._checked)
            let_finish(worker)

    def _checks_ended(self, worker: CheckWorker) -> None:
        if worker is self._checker:
            self._checker = None
            self.checks_done = True
            self._say()
            self.checks_did_finish.emit(len(self.checked))
        worker.deleteLater()

    def _checked(self, proposal: Proposal) -> None:
        if self.sender() is not self._checker:
            return
        self._take_checked(proposal)

    def _take_checked(self, proposal: Proposal) -> None:
        self.checked[proposal.sha] = proposal
        shown = self._by_sha.get(proposal.sha) if self._view is not None else None
        if shown is not None and self._view is not None:
            merged = _with_checks(proposal, shown)
            self._view[self._pos[proposal.sha]] = merged
            self._by_sha[proposal.sha] = merged
        self._repaint_sha(proposal.sha)
        if self.queue is not None:  # (its verdict, and those of the ones after it, may change)
            now = clean.clean_set(self.queue, proposal.branch, self.checked).verdicts
            for sha in [sha for sha, v in now.items() if self.verdicts.get(sha) != v]:
                self.verdicts[sha] = now[sha]
                self._repaint_sha(sha)
        item = self.current_item()
        if item is not None and proposal.sha in item.shas:
            self._show_badge_and_problems()
        if len(self.checked) % 25 == 0:
            self._say()

    def _checked_one(self, proposal: Proposal, *_args: object) -> None:
        self._take_checked(proposal)

    # -- the selected item --------------------------------------------------------------------

    def current_proposals(self) -> list[Proposal]:
        item = self.current_item()
        if item is None:
            return []
        self._proposals()
        return [self._by_sha[s] for s in item.shas if s in self._by_sha]

    def hush(self) -> None:
        """The curator acts: the background checks pause a moment (`CheckWorker`)."""
        self._quiet_until = time.monotonic() + QUIET_S

    def _show_current(self) -> None:
        self.hush()
        item = self.current_item()
        for button in self.buttons.values():
            button.setEnabled(item is not None and item.key not in self.pending)
        self.clean_button.setEnabled(self.queue is not None and any(
            p.status == "open" for p in self._proposals()))
        self.facts.clear()
        if item is not None and item.key[0] == "a":
            self._show_awaiting(item)
            return
        if item is None:
            self.title.setText("" if self.loaded else "Reading the agents' branches…")
            for w in (self.meta, self.badge):
                w.setText("")
            self.problems.clear()
            self.diff.clear()
            self.proposed.show_markdown("")
            self.near.clear()
            self.item_did_change.emit()
            return
        proposals = self.current_proposals()
        if item.path is None and proposals:
            p = proposals[0]
            self.title.setText(theme.clip(p.subject, 300))
            self.meta.setText(heading(p))
            for f in p.facts:
                row = QTreeWidgetItem(self.facts, [theme.clip(f.path, 200),
                                                   f.change + (" ⇄ conflict" if f.conflict else ""), ""])
                row.setData(0, KEY_ROLE, (p.sha, f.path))
            for pf in p.files:  # (outside kb/: decided like a fact, never carried undecided)
                row = QTreeWidgetItem(self.facts, [theme.clip(pf.path, 200),
                                                   f"{pf.kind} {pf.change}", "needs a decision"])
                row.setToolTip(0, "\n".join(pf.summary))
                row.setToolTip(2, "\n".join(pf.summary))
            for other in p.other_files:
                row = QTreeWidgetItem(self.facts, [theme.clip(other, 200), "agent state",
                                                   "not checked"])
                row.setForeground(0, QBrush(QColor(theme.DERIVED_COLOR)))
            if p.sha not in self.checked and self.queue is not None and p.facts:
                self._one.start(self.queue, p.sha)  # on demand, before its badge streams in
        elif item.path is not None:
            self.title.setText(theme.clip(item.path, 300))
            net = self._net_change(item)
            self.meta.setText(f"{item.branch} · {count(len(proposals), 'proposal')} touch it"
                              + (f" · net: {net}" if net else "") + f" · {item.status}")
            for p in proposals:
                f = next(x for x in p.facts if x.path == item.path)
                row = QTreeWidgetItem(self.facts, [theme.clip(f"{p.sha[:10]} {p.subject}", 200),
                                                   f.change + (" ⇄ conflict" if f.conflict else ""), ""])
                row.setData(0, KEY_ROLE, (p.sha, f.path))
                row.setToolTip(0, theme.tooltip(heading(p)))
            missing = [p.sha for p in proposals if p.sha not in self.checked]
            if missing and self.queue is not None:
                self._one.start(self.queue, missing[-1])
        self._show_badge_and_problems()
        # per fact: the branch's last version of it (the net change); per commit: the first fact
        target = self.facts.topLevelItem(self.facts.topLevelItemCount() - 1 if item.path else 0)
        if target is not None and target.data(0, KEY_ROLE) is not None:
            self.facts.setCurrentItem(target)
        else:
            self.diff.setPlainText("(this commit changes no fact: its files are the agent's own "
                                   "state, brought over as written by the review merge)")
            self.proposed.show_markdown("")
        self.item_did_change.emit()

    def _show_awaiting(self, item: Item) -> None:
        a = self._awaited(item.path)
        if a is None:
            return
        self.title.setText(theme.clip(a.title, 300))
        self.meta.setText(theme.clip(f"{a.path} · {a.type} · {a.origin} · written by "
                                     f"{a.creator or 'unknown'} · on the curated branch, "
                                     "not attested", 600))
        self.badge.setText("Already on the curated branch: A attests it as it stands, R retracts "
                           "it (with a reason), E opens the relabel editor; the inspector shows it.")
        self.badge.setStyleSheet(f"color: {theme.DERIVED_COLOR};")
        self.problems.clear()
        self.diff.setPlainText("(a fact already on the curated branch: no proposed change)")
        self.proposed.show_markdown("")
        self.near.clear()
        if item.path:
            self.path_did_select.emit(item.path)
        self.item_did_change.emit()

    def _chosen_fact(self) -> tuple[Proposal, ProposedFact] | None:
        row = self.facts.currentItem()
        data = row.data(0, KEY_ROLE) if row is not None else None
        if not data:
            return None
        sha, path = data
        for p in self.current_proposals():
            if p.sha == sha:
                for f in p.facts:
                    if f.path == path:
                        return p, f
        return None

    def _show_badge_and_problems(self) -> None:
        item = self.current_item()
        proposals = self.current_proposals()
        if item is None or not proposals:
            return
        facts = [f for p in proposals for f in p.facts if item.path is None or f.path == item.path]
        b = clean_badge(badge_of(facts), verdict_of(self.verdicts, item.shas)) if facts else Badge(
            "agent state only: nothing to check", theme.DERIVED_COLOR, "")
        tally = ", ".join(t for t, n in ((count(b.errors, "error"), b.errors),
                                         (count(b.warnings, "warning"), b.warnings)) if n)
        self.badge.setText(f"As if accepted: {b.text}" + (f" ({tally})" if tally else ""))
        self.badge.setToolTip(theme.tooltip(b.detail))
        self.badge.setStyleSheet(f"color: {b.color}; font-weight: bold;")
        for i in range(self.facts.topLevelItemCount()):
            row = self.facts.topLevelItem(i)
            data = row.data(0, KEY_ROLE) if row is not None else None
            if row is None or not data:
                continue
            f = next((x for p in proposals if p.sha == data[0] for x in p.facts if x.path == data[1]), None)
            if f is not None:
                fb = badge_of([f])
                row.setText(2, fb.text)
                row.setForeground(2, QBrush(QColor(fb.color)))
        self._show_problems()

    def _problem(self, text: str, color: str, tip: str = "") -> None:
        row = QListWidgetItem(text, self.problems)
        row.setForeground(QBrush(QColor(color)))
        if tip:
            row.setToolTip(theme.tooltip(tip))

    def _show_problems(self) -> None:
        self.problems.clear()
        chosen = self._chosen_fact()
        if chosen is None:
            return
        _p, f = chosen
        if f.conflict:
            self._problem("⇄ conflict: the curated branch changed this fact since the agent "
                          "branched (accepting asks how to decide)", theme.ERROR_COLOR)
        if f.problems is None:
            self._problem("… checking as if accepted", theme.DERIVED_COLOR)
            return
        if not f.problems and not f.conflict:
            self._problem("✓ no problem as if accepted", theme.TYPE_MARKS["observation"].color)
        for problem in f.problems:
            color = theme.SEVERITY_COLORS.get(problem.severity, theme.DERIVED_COLOR)
            self._problem(theme.clip(problem_line(problem), 600),
                          color if problem.new else theme.DERIVED_COLOR, problem_line(problem))

    def _show_fact(self) -> None:
        """The chosen fact's findings now; its diff, text and the inspector a moment later
        (`DETAIL_MS`): the queue's next row is painted first, and a run of S or j presses
        does not start a diff and redraw the inspector for every row it passes."""
        self._show_problems()
        if self._chosen_fact() is None or self.queue is None:
            return
        self.diff.setPlainText("Comparing with the curated version…")
        self._detail_timer.start()

    def _show_fact_later(self) -> None:
        chosen = self._chosen_fact()
        if chosen is None or self.queue is None:
            return
        p, f = chosen
        self._wanted_fact = (p.sha, f.path)
        self.diff.setPlainText("Comparing with the curated version…")
        self._shower.start(self.queue, f, p.sha[:10])
        self.path_did_select.emit(f.path)
        self.near.clear()

    def _shown(self, shown: proposal_source.Shown, _queue: Queue, fact: ProposedFact,
               label: str) -> None:
        if self._wanted_fact is None or self._wanted_fact[1] != fact.path or \
                not self._wanted_fact[0].startswith(label):
            return
        head = "(new: the curated branch has no version of this fact)\n" if shown.new else ""
        if fact.change == "deleted":
            head = "(the proposal deletes this fact)\n"
        self.diff.setPlainText(head + (shown.diff or "(no difference from the curated version)"))
        self.proposed.show_markdown(shown.proposed if fact.change != "deleted" else "(deleted)")
        self._proposed_text = shown.proposed
        self._show_near()

    def _show_failed(self, message: str, *_args: object) -> None:
        self.diff.setPlainText(f"(could not compare the versions: {message})")

    def _show_near(self) -> None:
        self.near.clear()
        chosen = self._chosen_fact()
        if chosen is None:
            return
        if self._near is None:
            QTreeWidgetItem(self.near, ["Semantic search is off or not ready yet.", ""])
            return
        self._near_read.start(self._proposed_text[:4000] or chosen[0].subject)

    def _near_done(self, hits: list[tuple[str, float]], _text: str) -> None:
        self.near.clear()
        chosen = self._chosen_fact()
        own = chosen[1].path if chosen else None
        shown = [(path, score) for path, score in hits if path != own][:10]
        for path, score in shown:
            row = QTreeWidgetItem(self.near, [theme.clip(path, 200), f"{score:.3f}"])
            row.setData(0, KEY_ROLE, path)
        if not shown:
            QTreeWidgetItem(self.near, ["No near-duplicate on the curated branch.", ""])

    def _open_near(self, row: QTreeWidgetItem, _col: int) -> None:
        path = row.data(0, KEY_ROLE)
        if path and self._window is not None:
            self._window.inspect_path(str(path))

    # -- decisions ------------------------------------------------------------------------------

    def _next_after(self, key: tuple[str, ...]) -> None:
        """The queue moves on at once: the next free row below `key` (else above)."""
        rows = self._rows()
        keys = [self._key(r) for r in rows]
        at = keys.index(key) if key in keys else -1
        free = [i for i, k in enumerate(keys) if k not in self.pending and k != key]
        after = [i for i in free if i > at and keys[i] not in self.skipped] or \
            [i for i in free if i > at] or [i for i in free if i < at][-1:]
        if after:
            self.list.setCurrentItem(rows[after[0]])
        else:
            self._show_current()

    def _decide(self, item: Item, label: str, op: Callable[[Any], ChangeSet], *,
                on_refused: Callable[[FactdeskError], None] | None = None) -> None:
        """Run one decision on the writer lane; the row is marked and the queue moves on now."""
        self.pending[item.key] = label
        for row in self._rows():
            if self._key(row) == item.key:
                self._paint(row, item)
        self._next_after(item.key)
        self._counted()

        def failed(exc: FactdeskError) -> None:
            self.pending.pop(item.key, None)
            self._refill_back(item)
            if on_refused is not None and isinstance(exc, (Refused, Conflict)):
                on_refused(exc)
            else:
                self._ops.operation_did_fail.emit(exc)

        # (handed to the writer a moment later: the next row is painted before the write's
        # Python work competes with the GUI thread for the GIL)
        self._to_submit.append(partial(self._ops.run, op, success=partial(self._decided, item),
                                       failed=failed))
        self._submit_timer.start()

    def _submit(self) -> None:
        calls, self._to_submit = self._to_submit, []
        for call in calls:
            call()

    def _refill_back(self, item: Item) -> None:
        for row in self._rows():
            if self._key(row) == item.key:
                self._paint(row, item)
                self.list.setCurrentItem(row)
        self._counted()

    def _decided(self, item: Item, _changes: ChangeSet) -> None:
        # the row stays greyed until the queue read after the commit (already started by
        # the window's refresh) shows the new status; the filter then drops it
        self.decision_did_finish.emit(":".join(item.key))

    def accept(self, *, override: bool = False, reason: str = ACCEPT_REASON,
               edits: dict[str, bytes] | None = None) -> None:
        """A: accept the selected proposal (per fact: that fact of the proposals touching it)."""
        item = self.current_item()
        if item is None or item.key in self.pending:
            return
        if item.key[0] == "a":
            path = item.key[1]
            self._decide(item, "attesting…", lambda cur: cur.attest([path], ATTEST_REASON))
            return
        ids, paths = list(item.shas), ([item.path] if item.path else None)

        def op(cur: Any) -> ChangeSet:
            return proposal_source.review(cur).accept(ids, reason, paths=paths, override=override,
                                                      edits=edits)

        self._decide(item, "accepting…", op, on_refused=partial(self._refused, item, edits))

    def _refused(self, item: Item, edits: dict[str, bytes] | None, exc: FactdeskError) -> None:
        """An accept was refused: a conflict asks how to decide it; a rule is named, with an
        override for a reason (the curator's edits, if any, go along)."""
        rule = getattr(exc, "rule", None)
        conflict = isinstance(exc, Conflict) or rule == "conflict"
        if conflict:
            box = conflict_dialog(self, str(exc))
            box.exec()
            choice = box.choice
            box.deleteLater()
            if choice == "keep":
                self._reject_item(item, "kept the curated version (conflict)")
            elif choice == "take":
                why = self._ask_text("Take the proposed version", "Why does the proposed version "
                                     "replace the curated one?", "")
                if why:
                    self._select(item)
                    self.accept(override=True, reason=why, edits=edits)
            elif choice == "edit":
                self._select(item)
                self.edit(merged=True)
            return
        box = refusal_dialog(self, rule, str(exc))
        box.exec()
        choice = box.choice
        box.deleteLater()
        if choice == "override":
            why = self._ask_text(f"Override {rule or 'the rule'}", f"Why accept it despite "
                                 f"{rule or 'the rule'}? (recorded in the commit)", "")
            if why:
                self._select(item)
                self.accept(override=True, reason=why, edits=edits)

    def _select(self, item: Item) -> None:
        for row in self._rows():
            if self._key(row) == item.key:
                self.list.setCurrentItem(row)
                return

    def reject(self) -> None:
        """R: reject with a reason (asked); recorded in git, so it never shows again."""
        item = self.current_item()
        if item is None or item.key in self.pending:
            return
        what = theme.clip(item.path or (self.current_proposals()[0].subject
                                        if self.current_proposals() else ""), 120)
        reason = self._ask_text("Reject", f"Why reject “{what}”?", "")
        if reason:
            self._reject_item(item, reason)

    def _reject_item(self, item: Item, reason: str) -> None:
        if item.key[0] == "a":
            path = item.key[1]
            self._decide(item, "retracting…", lambda cur: cur.retract([path], reason))
            return
        ids, paths = list(item.shas), ([item.path] if item.path else None)
        self._decide(item, "rejecting…", lambda cur: proposal_source.review(cur).reject(
            ids, reason, paths=paths))

    def skip(self) -> None:
        """S: no decision; the next item is selected at once (it stays in the queue)."""
        key = self.current_key()
        if key is None:
            return
        self.skipped.add(key)
        item = self.current_item()
        for row in self._rows():
            if self._key(row) == key and item is not None:
                self._paint(row, item)
        self._next_after(key)

    def edit(self, merged: bool = False) -> None:
        """E: edit the proposed version (envelope fields and body, prefilled), then accept
        it with the correction (the commit says it was edited)."""
        item = self.current_item()
        if item is not None and item.key[0] == "a" and item.key not in self.pending:
            opener = getattr(self._window, "open_relabel", None)
            if callable(opener):
                opener([item.key[1]], reason=ATTEST_REASON)
            return
        chosen = self._chosen_fact()
        if item is None or item.key in self.pending or chosen is None:
            return
        p, f = chosen
        if f.change == "deleted":
            self.status.setText("A deletion has no version to edit: accept (A) or reject (R) it.")
            return
        self._edit_for = (item, p, f, merged)
        self._bytes.start(f)

    def _edit_read(self, data: bytes, fact: ProposedFact) -> None:
        target = getattr(self, "_edit_for", None)
        if target is None or target[2] != fact:
            return
        item, p, f, merged = target
        self._edit_for = None
        note = edited_note(p, f) + ("\nThe curated branch changed this fact too: merge both "
                                    "versions here." if merged else "")
        dialog = EditDialog(self, f.path, data, note=note)
        ok = dialog.exec() == QDialog.DialogCode.Accepted
        edited = dialog.result_bytes()
        dialog.deleteLater()
        if not ok or edited is None:
            return
        self._select(item)
        why = "edited, then accepted" + (" (a merged version)" if merged else "")
        # (a merged version settles the conflict by itself: no override, so a rule it
        # still breaks is refused and named like any other)
        self.accept(reason=why, edits={f.path: edited})

    def _edit_failed(self, message: str, *_args: object) -> None:
        self._edit_for = None
        dialogs.show_error(self, "Could not read the proposed version", message)

    def accept_all_clean(self) -> None:
        """Every open proposal of the branch with no error and no conflict, in one commit:
        previewed first (what the commit would take), committed on OK."""
        branch = self.branch_filter or (self.current_item().branch if self.current_item() else None)
        if branch is None and self.queue is not None and self.queue.branches:
            branch = self.queue.branches[0].name
        if branch is None:
            return
        self.status.setText(f"Working out what accepting every clean proposal of {branch} takes…")
        self._ops.read(lambda cur: proposal_source.review(cur).accept_all_clean(
            branch, CLEAN_REASON, preview=True), done=partial(self._preview_ready, branch),
            failed=self._preview_failed)

    def _preview_failed(self, exc: FactdeskError) -> None:
        self._say()
        dialogs.show_error(self, "Accept all clean", str(exc))

    def _preview_ready(self, branch: str, preview: ChangeSet) -> None:
        self._say()
        shas = list(getattr(preview, "proposals", ()))  # (what the change set takes, named)
        found = getattr(preview, "left", ())
        lines, left = preview_lines(shas, found, {p.sha: p for p in self.unique()})
        dialog = preview_dialog(self, branch, lines, left, clean.tally(found))
        ok = dialog.exec() == QDialog.DialogCode.Accepted
        dialog.deleteLater()
        if not ok:
            return
        keys = [("c", sha) for sha in shas]
        for key in keys:
            self.pending[key] = "accepting…"
        self._fill(keep=self.current_key())
        self._counted()

        def failed(exc: FactdeskError) -> None:
            for key in keys:
                self.pending.pop(key, None)
            self._fill(keep=self.current_key())
            self._ops.operation_did_fail.emit(exc)

        self._ops.run(lambda cur: proposal_source.review(cur).accept_all_clean(branch, CLEAN_REASON),
                      success=lambda _c: self.decision_did_finish.emit(f"clean:{branch}"),
                      failed=failed)

    # -- the review merge on demand -----------------------------------------------------------------

    def merge_reviewed(self) -> None:
        """Record the review merge of the chosen row's branch (every agent branch when no row
        is chosen) up to its decided prefix — after a crash lost one, or to bring an agent's
        own messages over (docs/review.md): `Review.merge_reviewed`, on the writer lane."""
        item = self.current_item()
        branches = ([item.branch] if item is not None and item.branch else
                    [b.name for b in self.queue.branches] if self.queue is not None else [])
        if not branches:
            self.status.setText("No agent branch: no review merge to record.")
            self.merge_did_finish.emit([])
            return
        ops = self._ops
        self._ops.lane.submit(lambda: proposal_source.merge_reviewed(ops.curation(), branches),
                              done=self._merged, failed=self._merge_failed)

    def _merged(self, made: object) -> None:
        merges = list(made) if isinstance(made, list) else []
        self.status.setText(f"Recorded {count(len(merges), 'review merge')}." if merges else
                            "No review merge to record: no decided prefix the curated branch "
                            "does not reach yet.")
        self.merge_did_finish.emit(merges)
        reindex = getattr(self._window, "reindex", None)
        if merges and callable(reindex):
            reindex()  # (the queue and the index follow the new merge)

    def _merge_failed(self, exc: BaseException) -> None:
        self.merge_did_finish.emit(exc)
        dialogs.show_error(self, "The review merge was not recorded",
                           str(exc) if isinstance(exc, FactdeskError)
                           else f"{type(exc).__name__}: {exc}")

    # -- sync -------------------------------------------------------------------------------------

    def sync(self, *, as_proposals: bool = False) -> None:
        """Fetch every remote (new agent branches come in as proposals), join the lines with
        a true merge, push the curated branch: on the writer lane (it moves the branch the
        decisions commit to), a progress bar meanwhile; the window never waits for it.
        `as_proposals`: agent commits on the remote's curated branch become proposals."""
        if self._syncing:
            return
        self._syncing = True
        emit = self.sync_did_progress.emit
        repo, ops = self._repo, self._ops
        self.sync_did_progress.emit("sync: waiting for the writer", 0.0)

        def job() -> object:
            curator = ops.curation().curator  # (resolving the curator runs git: here, not there)
            return proposal_source.run_sync(repo, lambda what, f: emit(what, f), curator,
                                            as_proposals=as_proposals)

        self._ops.lane.submit(job, done=self._synced, failed=self._sync_failed)

    def _synced(self, result: object) -> None:
        self._syncing = False
        self.sync_did_progress.emit("", 1.0)
        self.sync_did_finish.emit(result)
        joined = getattr(result, "joined", "")
        incoming = getattr(result, "incoming", 0)
        queued = getattr(result, "proposal_branch", None)
        self.status.setText(f"Synced: {joined}" + (f", {count(incoming, 'commit')} came in"
                                                  if incoming else "")
                            + (f"; agent commits taken in as proposals on {queued}"
                               if queued else "") + ".")
        warnings = getattr(result, "warnings", ())
        if warnings:  # (a skipped branch, a forced rewrite, nothing pushed: said, not hidden)
            dialogs.show_error(self, "Synced, with warnings", "\n\n".join(warnings))
        reindex = getattr(self._window, "reindex", None)
        if callable(reindex):
            reindex()  # (the join and the new agent branches: the index and the queue follow)

    def _sync_failed(self, exc: BaseException) -> None:
        self._syncing = False
        self.sync_did_progress.emit("", 1.0)
        self.sync_did_finish.emit(exc)
        if proposal_source.stopped_by_agent_commits(exc):
            dialogs.offer(self, "Sync stopped: agent commits on the curated branch", str(exc),
                          "Take in as proposals", lambda: self.sync(as_proposals=True))
            return
        conflicts = getattr(exc, "conflicts", None)
        if conflicts:
            listing = "\n".join(f"• {c.path}\n    yours: {c.ours_said}\n    theirs: {c.theirs_said}"
                                for c in conflicts)
            dialogs.show_error(self, "Sync stopped: the same facts changed on both sides",
                               f"{exc}\n\n{listing}\n\nNothing was merged or pushed. Decide "
                               "these facts (keep one version, or edit them alike), then sync "
                               "again.")
            return
        dialogs.show_error(self, "Sync failed", str(exc) if isinstance(exc, FactdeskError)
                           else f"{type(exc).__name__}: {exc}")


def _with_checks(checked: Proposal | None, current: Proposal) -> Proposal:
    """`current` (its branch and status as the newest queue read gave them) with the
    problems a check found for the same commit."""
    if checked is None:
        return current
    statuses = {f.path: f.status for f in current.facts}
    return replace(current, facts=tuple(replace(f, status=statuses.get(f.path, f.status))
                                        for f in checked.facts))


def semantic_near(semantic: Any) -> Callable[[str], list[tuple[str, float]]] | None:
    """(Worker.) Near-duplicates of a text among the indexed facts, when embeddings are
    ready; None otherwise."""
    session = getattr(semantic, "session", None)
    if session is None:
        return None

    def near(text: str) -> list[tuple[str, float]]:
        try:
            return [(h.path, float(h.score)) for h in session.similar_to_text(text, 12)]
        except Exception:  # not ready, or the model went away: no neighbours
            return []

    return near
