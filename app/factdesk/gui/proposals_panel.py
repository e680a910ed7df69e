"""The Proposals tab: what agents propose on their `agent/*` branches, as a review queue
worked with one key per decision (Prodigy-style; DESIGN.md §1 "Review synthesis
proposals", issues 13 and 24).

Top: the branches with their open counts, the queue's shape (per commit, or per fact: the
branch's net change to each fact), the status shown, which findings (✗ errors, ⚠
warnings, ⇄ conflicts, ↳ building on an open one) and in what order (the queue's, or
the worst first). Then the queue: a `QueueModel` over `review.rows` (its rows, grouping,
net changes and findings are pure functions `factdesk proposals` shares), read on a
worker (`BackgroundRead` over git), its badges streaming in from `CheckWorker` after the
list is shown. Below it, the selected row (`gui/proposal_detail.py`).

A accepts, R rejects (asks why), E edits then accepts, S skips (`gui/proposal_decisions.py`);
N and Shift+N jump to the next and the previous row with a finding. Sync and the review
merge are `gui/proposal_remote.py`'s. The panel holds no rules and never touches git on
the GUI thread (`gui/proposal_source.py` is how it asks `review.*`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from factdesk.gui import proposal_source, theme
from factdesk.gui.inspector import text_label
from factdesk.gui.keys import panel_keys
from factdesk.gui.operations import Operations
from factdesk.gui.panel import IndexChange, Window
from factdesk.gui.proposal_bar import AWAITING, FINDINGS, FilterBar, choose
from factdesk.gui.proposal_decisions import DecisionController
from factdesk.gui.proposal_detail import ProposalDetail
from factdesk.gui.proposal_model import QueueModel
from factdesk.gui.proposal_remote import RemoteActions
from factdesk.gui.proposal_views import Badge, badge_of, clean_badge
from factdesk.gui.proposal_workers import CheckSoon, CheckStream, KeyRouter
from factdesk.gui.workers import BackgroundRead
from factdesk.model.words import count
from factdesk.review import clean, rows
from factdesk.review.model import Proposal, Queue

if TYPE_CHECKING:
    from factdesk.review.proposals import Awaiting

#: after a key or a selection in the tab, the checks wait this long (seconds)
QUIET_S = 0.4
#: checks that came in are sorted and filtered in again after this long (ms)
REFILTER_MS = 250


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
    caption, menu_text, action_name = "Proposals", "Agent proposals", "showProposals"
    reads_agent_branches = True  # (`Panel`: told when only git's refs moved)

    def __init__(self, ops: Operations, *, ask_text: Callable[[str, str, str], str | None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("proposalsPanel")
        self.ops = ops
        self.window_: Window | None = None
        self.queue: Queue | None = None
        #: checked proposals by sha (kept across reloads: a decision rarely changes them)
        self.checked: dict[str, Proposal] = {}
        #: sha → its standing for "Accept all clean" (`review.clean`: the badges' ✓)
        self.verdicts: dict[str, clean.Verdict] = {}
        self.items: list[rows.Row] = []
        self.mode = "commit"
        self.status_filter = "open"
        self.branch_filter: str | None = None
        self.findings_filter = "any"
        self.order = "queue"
        self.loaded = False
        self.checks_done = False
        self.awaiting: list[Awaiting] | None = None
        self._by_sha: dict[str, Proposal] = {}
        self._shown_once = False
        self._stale = False
        self._again = False
        self._checking_queue: Queue | None = None
        self._quiet_until = 0.0
        repo, indexer = ops.indexer.repo, ops.indexer
        self._loader = BackgroundRead(None, lambda: proposal_source.load(repo), done=self._loaded,
                                      failed=self._load_failed, parent=self)
        self._one = CheckSoon(indexer, self._take_checked, parent=self)
        #: the second source (DESIGN §5): `distilled`/`discovered` facts on the curated
        #: branch no curator attested; read when chosen
        self._awaiting_read = BackgroundRead(None, lambda: proposal_source.awaiting(indexer),
                                             done=self._awaiting_loaded,
                                             failed=lambda m: self.say(
                                                 f"Could not read the facts awaiting attestation: {m}"),
                                             parent=self)
        self._refilter = QTimer(self)
        self._refilter.setSingleShot(True)
        self._refilter.setInterval(REFILTER_MS)
        self._refilter.timeout.connect(self.refill)
        self._stream = CheckStream(self.ops, lambda: self.ops.lane.busy
                                   or time.monotonic() < self._quiet_until, parent=self)
        self._stream.did_check.connect(self._take_checked)
        self._stream.did_fail.connect(lambda m: self.say(f"Checking failed: {m}"))
        self._stream.did_end.connect(self._checks_ended)
        self.decisions = DecisionController(self, ask_text)
        self.remote = RemoteActions(self)
        self._build()
        theme.on_change(self._restyle)

    # -- construction ---------------------------------------------------------------------

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        self.bar = FilterBar(self, branch=self._filters_changed, mode=self.set_mode,
                             status=self.set_status_filter, findings=self.set_findings_filter,
                             order=self.set_order, accept_clean=self.accept_all_clean)
        self.branch_box, self.mode_box = self.bar.branch_box, self.bar.mode_box
        self.status_box, self.clean_button = self.bar.status_box, self.bar.clean_button
        outer.addWidget(self.bar)
        self.status = text_label(self, "proposalStatus")
        outer.addWidget(self.status)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.setObjectName("proposalSplitter")
        self.model = QueueModel(self)
        self.list = QTreeView(split)
        self.list.setObjectName("proposalList")
        self.list.setAccessibleName("Proposals queue")
        self.list.setModel(self.model)
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setAllColumnsShowFocus(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.list.header()
        header.setStretchLastSection(False)
        header.setResizeContentsPrecision(0)  # (the rows in sight: 1000 took 0.7 s a repaint)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, 5):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.list.selectionModel().currentChanged.connect(lambda *_: self._show_current())
        self.detail = ProposalDetail(self.ops.indexer.repo, split)
        self.detail.path_did_select.connect(self.path_did_select)
        self.detail.near_did_open.connect(self._open_near)
        self.detail.fact_did_change.connect(self.hush)
        for key, button in self.detail.buttons.items():
            button.clicked.connect(getattr(self, key))
        self.title, self.meta, self.badge = self.detail.title, self.detail.meta, self.detail.badge
        self.buttons = self.detail.buttons
        split.addWidget(self.list)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        # (the findings and the diff need the room at 1366×768; the queue needs fewer rows)
        split.setSizes([200, 420])
        self.splitter = split
        outer.addWidget(split, 1)
        router = KeyRouter(self)
        for widget in (self, *self.findChildren(QWidget)):
            widget.installEventFilter(router)
        panel_keys(self, [("N", self.next_problem), ("Shift+N", self.previous_problem)])
        self._fill_branches()
        self._show_current()

    def key_widgets(self) -> list[QWidget]:
        """What must stay readable at 1366×768 and 1.5× the font (tests/gui/test_layout.py)."""
        return [*self.bar.widgets(), self.list, *self.buttons.values(),
                self.detail.facts, self.detail.problems, self.detail.tabs.tabBar()]

    def _restyle(self) -> bool:
        from shiboken6 import isValid

        if not isValid(self):
            return False
        self.detail.restyle()
        self.model.restyle()
        self._show_current()
        return True

    # -- Panel ------------------------------------------------------------------------------

    def tab_widget(self) -> QWidget:
        return self

    def attach(self, window: Window) -> None:
        self.window_ = window
        self.path_did_select.connect(self._inspect)
        status = getattr(window, "status", None)
        if status is not None and hasattr(status, "proposals_counted"):
            self.queue_did_count.connect(status.proposals_counted)
            self.sync_did_progress.connect(status.sync_progress)
        semantic = window.semantic
        self.detail.near_of = proposal_source.semantic_near(semantic)
        semantic.did_become_ready.connect(lambda: self._semantic_ready(semantic))
        self.load()  # (light: git only) the status bar's count, before the tab is seen

    def _inspect(self, path: str) -> None:
        """The inspector shows the curated version of the fact; a fact the curated branch
        does not have (a proposal adds it) empties it, never leaving another fact there."""
        if self.window_ is not None:
            self.window_.inspect_from(self, path)

    def _open_near(self, path: str) -> None:
        if self.window_ is not None:
            self.window_.inspect_path(path)

    def selected_path(self) -> str | None:
        chosen, item = self.detail.chosen_fact(), self.current_item()
        return chosen[1].path if chosen else item.path if item is not None else None

    def _semantic_ready(self, semantic: Any) -> None:
        self.detail.near_of = proposal_source.semantic_near(semantic)
        self.detail.show_near()

    def step(self, delta: int) -> None:
        if self.model.rowCount():
            at = self.list.currentIndex().row()
            self.select_row(max(0, min(self.model.rowCount() - 1, at + delta)))

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
        self.decisions.close()
        self.detail.close_readers()
        for reader in (self._loader, self._one, self._awaiting_read):
            reader.close()
        self._stream.stop()

    # -- decisions, sync (their own files) -----------------------------------------------------

    @property
    def pending(self) -> dict[tuple[str, ...], str]:
        return self.decisions.pending

    @property
    def skipped(self) -> set[tuple[str, ...]]:
        return self.decisions.skipped

    def accept(self) -> None:
        """A: accept the selected row (per fact: that fact of the proposals touching it)."""
        self.decisions.accept()

    def reject(self) -> None:
        """R: reject with a reason (asked); recorded in git, so it never shows again."""
        self.decisions.reject()

    def edit(self) -> None:
        """E: edit the proposed version, then accept it with the correction."""
        self.decisions.edit()

    def skip(self) -> None:
        """S: no decision; the next row is selected at once (it stays in the queue)."""
        self.decisions.skip()

    def accept_all_clean(self) -> None:
        self.decisions.accept_all_clean()

    def sync(self, *, as_proposals: bool = False) -> None:
        self.remote.sync(as_proposals=as_proposals)

    def merge_reviewed(self) -> None:
        self.remote.merge_reviewed()

    # -- loading --------------------------------------------------------------------------

    def load(self) -> None:
        """Read the queue on the worker. A read already running is never dropped for a
        newer one: its answer is shown, then the queue is read once more."""
        if self._loader.running:
            self._again = True
            return
        if self._loader.start() and not self.loaded:
            self.say("Reading the agents' branches…")

    def _load_failed(self, message: str) -> None:
        self.say(f"Could not read the proposals: {message}")
        if self._again:
            self._again = False
            self._loader.start()

    def _loaded(self, queue: Queue) -> None:
        if self._again:
            self._again = False
            self._loader.start()
        self.queue = queue
        self.loaded = True
        live = {p.sha for p in queue.proposals}
        self.checked = {sha: p for sha, p in self.checked.items() if sha in live}
        self.verdicts = {sha: v for b in queue.branches
                         for sha, v in clean.clean_set(queue, b.name, self.checked).verdicts.items()}
        # a decision's row is done once the queue read after it says so
        pending = self.decisions.pending
        for key in [k for k in pending if k[0] != "a" and not rows.still_open(queue, k)]:
            del pending[key]
        self._fill_branches()
        self.refill()
        self.queue_did_count.emit(queue.curated, rows.waiting(queue))
        self.counted()
        self.queue_did_load.emit(len(self.items))
        if self._shown_once and self.isVisible():
            self._start_checks()

    def counted(self) -> None:
        waiting = rows.waiting(self.queue, (k[1] for k in self.pending if k[0] == "c"))
        self.caption_did_change.emit(f"Proposals ({waiting})")

    def _fill_branches(self) -> None:
        self.bar.fill_branches(self.queue, None if self.awaiting is None else len(self.awaiting),
                               self.branch_filter)

    def _filters_changed(self) -> None:
        self.branch_filter = self.branch_box.currentData()
        if self.branch_filter == AWAITING:
            self._awaiting_read.start()
        self.refill()

    def set_mode(self, mode: str) -> None:
        """Per commit or per fact (the switch above the queue)."""
        if mode == self.mode:
            return
        self.mode = mode
        choose(self.mode_box, mode)
        self._fill(keep=None)

    def set_status_filter(self, status: str) -> None:
        self.status_filter = status
        choose(self.status_box, status)
        self.refill()

    def set_branch(self, branch: str | None) -> None:
        choose(self.branch_box, branch)
        self._filters_changed()

    def set_findings_filter(self, choice: str) -> None:
        """Only the rows whose checks found `choice` (`review.rows.FINDING_FILTERS`)."""
        self.findings_filter = choice
        choose(self.bar.findings_box, choice)
        self.refill()

    def set_order(self, order: str) -> None:
        """The queue's order, or the worst findings first."""
        self.order = order
        choose(self.bar.order_box, order)
        self.refill()

    def _awaiting_loaded(self, facts: list[Awaiting]) -> None:
        self.awaiting = facts
        pending = self.decisions.pending
        for key in [k for k in pending if k[0] == "a" and not any(a.path == k[1] for a in facts)]:
            del pending[key]
        self._fill_branches()
        if self.branch_filter == AWAITING:
            self.refill()
            self.queue_did_load.emit(len(self.items))

    # -- the queue's rows -------------------------------------------------------------------

    def unique(self) -> list[Proposal]:
        """The queue's proposals, each agent commit once (`review.rows.unique`)."""
        return rows.unique(self.queue)

    def _make_rows(self) -> list[rows.Row]:
        if self.branch_filter == AWAITING:
            self._by_sha = {}
            if self.status_filter not in ("open", "all"):
                return []
            return [rows.Row(("a", a.path), "", (), a.path, "awaiting") for a in self.awaiting or ()]
        shown = rows.shown(self.queue, self.branch_filter, self.checked)
        self._by_sha = {p.sha: p for p in shown}
        made = rows.rows(self.queue, shown, mode=self.mode, status=self.status_filter)
        if self.findings_filter == "any" and self.order == "queue":
            return made
        found = {r.key: rows.findings(rows.row_facts(r, self._by_sha),
                                      rows.verdict_of(self.verdicts, r.shas)) for r in made}
        made = [r for r in made if rows.matches(found[r.key], self.findings_filter)]
        return rows.worst_first(made, found) if self.order == "worst" else made

    def refill(self) -> None:
        """The rows again (filters, order, statuses), the selection kept."""
        self._fill(keep=self.current_key())

    def _fill(self, keep: tuple[str, ...] | None) -> None:
        self.items = self._make_rows()
        model = self.model
        model.pending, model.skipped = self.decisions.pending, self.decisions.skipped
        selection = self.list.selectionModel()
        selection.blockSignals(True)
        model.set_rows(self.items, mode="awaiting" if self.branch_filter == AWAITING else self.mode,
                       by_sha=self._by_sha, verdicts=self.verdicts, awaiting=self.awaiting or ())
        at = model.row_at(keep)
        if at < 0:
            busy = self.pending.keys() | self.skipped
            at = next((i for i, r in enumerate(self.items) if r.key not in busy),
                      0 if self.items else -1)
        if at >= 0:
            self.list.setCurrentIndex(model.index(at, 0))
        selection.blockSignals(False)
        self.say()
        self._show_current()

    def say(self, text: str | None = None) -> None:
        """The line above the queue: `text`, or what the queue shows."""
        if text is not None:
            self.status.setText(text)
            return
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
        label = dict(FINDINGS)[self.findings_filter]
        found = "" if self.findings_filter == "any" else f", {label.lower()}"
        total = len(self._by_sha)
        checked = sum(sha in self.checked for sha in self._by_sha)
        progress = f" · checking {checked}/{total}…" if checked < total and not self.checks_done else ""
        self.status.setText(f"{shown} ({where}{found}){progress}")

    def current_key(self) -> tuple[str, ...] | None:
        row = self.model.row(self.list.currentIndex().row())
        return row.key if row is not None else None

    def current_item(self) -> rows.Row | None:
        return self.model.row(self.list.currentIndex().row())

    def current_row(self) -> int:
        return self.list.currentIndex().row()

    def select_row(self, at: int) -> None:
        if 0 <= at < self.model.rowCount():
            self.list.setCurrentIndex(self.model.index(at, 0))

    def select_key(self, key: tuple[str, ...]) -> None:
        self.select_row(self.model.row_at(key))

    def repaint_key(self, key: tuple[str, ...]) -> None:
        self.model.refresh(keys=[key])

    def select_sha(self, sha: str) -> bool:
        """Select the row of a proposal (per commit) by its full or abbreviated sha."""
        at = next((i for i, r in enumerate(self.items) if r.key[0] == "c" and r.key[1].startswith(sha)), -1)
        self.select_row(at)
        return at >= 0

    def next_after(self, key: tuple[str, ...]) -> None:
        """The queue moves on at once: the next free row below `key` (else above)."""
        keys = [r.key for r in self.items]
        at = keys.index(key) if key in keys else -1
        free = [i for i, k in enumerate(keys) if k not in self.pending and k != key]
        after = [i for i in free if i > at and keys[i] not in self.skipped] or \
            [i for i in free if i > at] or [i for i in free if i < at][-1:]
        if after:
            self.select_row(after[0])
        else:
            self._show_current()

    def _jump(self, delta: int) -> None:
        n = len(self.items)
        start = self.current_row()
        for step in range(1, n + 1):
            at = (start + delta * step) % n
            if self.items[at].key[0] != "a" and self.model.findings(self.items[at]).problem:
                self.select_row(at)
                return
        self.say("No row shown has a finding (✗ error, ⚠ warning, ⇄ conflict, ↳ after an "
                 "open one)" + ("" if self.checks_done else ": the checks are still running"))

    def next_problem(self) -> None:
        """The next row with a finding (✗ ⚠ ⇄ ↳), from the selected one on, around the end."""
        self._jump(1)

    def previous_problem(self) -> None:
        """The previous row with a finding."""
        self._jump(-1)

    # -- checks (a worker streams the badges) -------------------------------------------------

    def _start_checks(self) -> None:
        if self.queue is not None:
            self.checks_done = False
            self._checking_queue = self.queue
            self._stream.start(replace(self.queue, proposals=tuple(self.unique())))

    def _checks_ended(self) -> None:
        self.checks_done = True
        if self._refilter.isActive():
            self._refilter.stop()
            self.refill()
        self.say()
        self.checks_did_finish.emit(len(self.checked))

    def _take_checked(self, came: list[Proposal]) -> None:
        if not (came := [p for p in came if self.checked.get(p.sha) != p]):
            return  # (a re-read streams every check again: only what changed is redrawn)
        changed = [p.sha for p in came]
        for proposal in came:
            self.checked[proposal.sha] = proposal
            if (shown := self._by_sha.get(proposal.sha)) is not None:
                self._by_sha[proposal.sha] = rows.with_checks(proposal, shown)
        if self.queue is not None:  # (their verdicts, and those of the ones after, may change)
            for branch in dict.fromkeys(p.branch for p in came):
                now = clean.clean_set(self.queue, branch, self.checked).verdicts
                for sha in [sha for sha, v in now.items() if self.verdicts.get(sha) != v]:
                    self.verdicts[sha] = now[sha]
                    changed.append(sha)
        self.model.refresh(changed)
        if self.findings_filter != "any" or self.order != "queue":
            self._refilter.start()  # (in again once the checks pause: rows never jump per check)
        if (item := self.current_item()) is not None and set(changed) & set(item.shas):
            self.detail.proposals = self.current_proposals()
            self._show_checks()
        self.say()

    # -- the selected row -----------------------------------------------------------------------

    def current_proposals(self) -> list[Proposal]:
        item = self.current_item()
        return [] if item is None else [self._by_sha[s] for s in item.shas if s in self._by_sha]

    def hush(self) -> None:
        """The curator acts: the background checks pause a moment (`CheckWorker`)."""
        self._quiet_until = time.monotonic() + QUIET_S

    def _show_current(self) -> None:
        self.hush()
        item = self.current_item()
        for button in self.buttons.values():
            button.setEnabled(item is not None and item.key not in self.pending)
        self.clean_button.setEnabled(any(p.status == "open" for p in self._by_sha.values()))
        detail = self.detail
        detail.queue = self.queue
        if item is None:
            detail.show_nothing(loading=not self.loaded)
        elif item.key[0] == "a":
            a = next((a for a in self.awaiting or () if a.path == item.path), None)
            if a is not None:
                detail.show_awaiting(a)
                self.path_did_select.emit(a.path)
        else:
            proposals = self.current_proposals()
            if item.path is None and proposals:
                detail.show_commit(proposals[0])
            elif item.path is not None:
                detail.show_fact_row(item.path, item.branch, item.status,
                                     rows.net_change(self.queue, item.branch, item.path), proposals)
            missing = [p.sha for p in proposals if p.sha not in self.checked and p.facts]
            if missing and self.queue is not None:
                self._one.ask(self.queue, missing[-1])  # on demand, before its badge streams in
            else:
                self._one.forget()
            self._show_checks()
        self.item_did_change.emit()

    def _show_checks(self) -> None:
        item = self.current_item()
        if item is None or item.key[0] == "a" or not self.current_proposals():
            return
        facts = rows.row_facts(item, self._by_sha)
        b = clean_badge(badge_of(facts), rows.verdict_of(self.verdicts, item.shas)) if facts else Badge(
            "agent state only: nothing to check", theme.DERIVED.color, "")
        self.detail.show_checks(b)
