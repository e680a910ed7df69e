"""The hypothesis settlement queue: open hypotheses, overdue first, each with the facts that
could settle it, worked with one key per decision (Prodigy-style).

Left: every open hypothesis in work order (overdue, due, undated, no criterion — rule H1).
Middle: its candidates — facts citing it and near-duplicate observations written after it
(R4, with the cosine similarity when embeddings exist); one derived from the hypothesis (its
refs reach it: `model.derivation`) is listed, marked, with why, and cannot be ticked. Under
them: the hypothesis and the highlighted candidate side by side. One selection for every
decision: what is ticked (Space). C confirms with the ticked candidate (none: a new
observation), F refutes citing the ticked ones, E extends, P promotes in place; each is
one typed commit through the curation layer and Ctrl+Z undoes it. The panel holds no
rules: `reflect.queue` orders, finds and judges, `curation` validates and writes.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QHeaderView,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from factdesk.gui import dialogs, theme
from factdesk.gui.inspector import text_label
from factdesk.gui.keys import panel_keys
from factdesk.gui.observation_dialog import ask_observation
from factdesk.gui.operations import Operations
from factdesk.gui.panel import IndexChange, Window
from factdesk.gui.safe_browser import SafeTextBrowser
from factdesk.gui.workers import BackgroundRead
from factdesk.index import reads
from factdesk.model.rules import read_settle_answer
from factdesk.reflect.queue import Candidate, QueueItem, Similar, candidates, open_hypotheses

if TYPE_CHECKING:
    import sqlite3

GROUP_TITLES = {"overdue": "Overdue", "due": "Due", "undated": "No date",
                "no-criterion": "No criterion (H1)"}


def _md_escape(text: str) -> str:
    """A title as literal markdown text (it is corpus text: no markup of its own)."""
    return "".join("\\" + ch if ch in "\\`*_{}[]()#+-.!<>|" else ch for ch in text)


class SettlementPanel(QWidget):
    """The Hypotheses tab."""

    did_load = Signal(int)
    caption_did_change = Signal(str)
    path_did_select = Signal(str)
    caption = "Hypotheses"
    menu_text = "Hypothesis settlement queue"
    action_name = "showHypotheses"

    def __init__(self, ops: Operations, connection: Callable[[], sqlite3.Connection | None], *,
                 ask_text: Callable[[str, str, str], str | None],
                 similar: Callable[[], Similar | None],
                 today: date | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("settlementPanel")
        self._ops = ops
        self._connection = connection
        self._ask_text = ask_text
        self._similar = similar
        self.today = today or date.today()
        self.items: list[QueueItem] = []
        self.current_candidates: list[Candidate] = []
        self.loaded = False
        self._reader = BackgroundRead.of_index(
            ops.indexer, lambda conn: open_hypotheses(conn, self.today),
            done=self._loaded, failed=self._failed, parent=self)
        self._build()

    # -- construction ---------------------------------------------------------------------

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        self.status = text_label(self, "settleStatus")
        outer.addWidget(self.status)
        # the queue and the candidates side by side, the two facts' texts under them: three
        # columns abreast crushed the titles to "Raising pg…" at 1366×768 (issue 18)
        self.split = QSplitter(Qt.Orientation.Vertical, self)
        self.split.setObjectName("settleSplit")
        split = QSplitter(Qt.Orientation.Horizontal, self.split)
        self.list = QTreeWidget(split)
        theme.follow_items(self.list)  # (its coloured items follow a theme switch)
        self.list.setAccessibleName("Open hypotheses, overdue first")
        self.list.setObjectName("settleList")
        self.list.setHeaderLabels(["Hypothesis", "Settle by", "Days"])
        self.list.setRootIsDecorated(True)
        self.list.header().setStretchLastSection(False)
        self.list.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2):
            self.list.header().setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.list.currentItemChanged.connect(lambda *_: self._show_current())
        middle = QWidget(split)
        mid = QVBoxLayout(middle)
        self.criterion = text_label(middle, "settleCriterion")
        mid.addWidget(self.criterion)
        self.candidate_list = QTreeWidget(middle)
        theme.follow_items(self.candidate_list)  # (its coloured items follow a theme switch)
        self.candidate_list.setObjectName("settleCandidates")
        self.candidate_list.setAccessibleName("Candidate settling facts (Space ticks evidence)")
        self.candidate_list.setHeaderLabels(["Candidate", "Evidence", "Type", "Sim."])
        self.candidate_list.setRootIsDecorated(False)
        self.candidate_list.header().setStretchLastSection(False)
        self.candidate_list.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2, 3):
            self.candidate_list.header().setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.candidate_list.currentItemChanged.connect(lambda *_: self._show_candidate())
        mid.addWidget(self.candidate_list, 1)
        self.selection_hint = text_label(middle, "settleSelectionHint")
        self.selection_hint.setText("Space ticks evidence. C confirms with the ticked fact (none "
                                    "ticked: a new observation); F refutes citing what is ticked.")
        mid.addWidget(self.selection_hint)
        grid = QGridLayout()
        self.buttons: dict[str, QPushButton] = {}
        for key, text, slot in (("confirm", "Confirm (C)", self.confirm),
                                ("refute", "Refute (F)", self.refute),
                                ("extend", "Extend (E)", self.extend),
                                ("promote", "Promote (P)", self.promote)):
            button = QPushButton(text, middle)
            button.setObjectName(f"settle_{key}")
            button.setAccessibleName(text.split(" (")[0])
            button.clicked.connect(slot)
            grid.addWidget(button, len(self.buttons) // 2, len(self.buttons) % 2)
            self.buttons[key] = button
        mid.addLayout(grid)
        right = QSplitter(Qt.Orientation.Horizontal, self.split)
        self.hyp_view = SafeTextBrowser(right)
        self.hyp_view.setObjectName("settleHypothesis")
        self.hyp_view.setAccessibleName("The hypothesis")
        self.cand_view = SafeTextBrowser(right)
        self.cand_view.setObjectName("settleEvidence")
        self.cand_view.setAccessibleName("The chosen candidate")
        split.setStretchFactor(0, 1)  # (the candidates' titles need the room as much)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        self.split.setChildrenCollapsible(False)
        outer.addWidget(self.split, 1)
        panel_keys(self, (("C", self.confirm), ("F", self.refute), ("E", self.extend),
                          ("P", self.promote)))
        self._show_current()

    # -- loading --------------------------------------------------------------------------

    def load(self) -> None:
        if self._reader.start():
            self.status.setText("Reading open hypotheses…")

    def close_worker(self) -> None:
        self._reader.close()

    def attach(self, window: Window) -> None:
        # the inspector shows the queue's fact while the tab is in front
        self.path_did_select.connect(lambda path: window.inspect_from(self, path))
        window.semantic.did_become_ready.connect(  # (the candidates gain near-duplicates)
            lambda: self.refresh_candidates() if self.loaded else None)

    def _failed(self, message: str) -> None:
        self.status.setText(f"Could not read the hypotheses: {message}")

    def _loaded(self, items: list[QueueItem]) -> None:
        keep = self.current_item()
        self.items = items
        self.loaded = True
        self.list.clear()
        groups: dict[str, QTreeWidgetItem] = {}
        first: QTreeWidgetItem | None = None
        chosen: QTreeWidgetItem | None = None
        for item in items:
            group = groups.get(item.group)
            if group is None:
                group = QTreeWidgetItem(self.list, [GROUP_TITLES.get(item.group, item.group)])
                group.setFlags(Qt.ItemFlag.ItemIsEnabled)
                if item.group == "overdue":
                    theme.paint_item(group, theme.ERROR)
                groups[item.group] = group
            days = "" if item.days_left is None else str(item.days_left)
            row = QTreeWidgetItem(group, [theme.clip(item.title), item.settle_by or "", days])
            row.setData(0, Qt.ItemDataRole.UserRole, item.path)
            # the whole title (a narrow window cuts it) and the path; never markup (H01)
            row.setToolTip(0, theme.tooltip(f"{item.title}\n{item.path}"))
            first = first or row
            if keep is not None and item.path == keep.path:
                chosen = row
        self.list.expandAll()
        target = chosen or first
        if target is not None:
            self.list.setCurrentItem(target)
        self._update_status()
        self._show_current()
        self.did_load.emit(len(items))
        self._counted()

    def _counted(self) -> None:
        self.caption_did_change.emit(f"Hypotheses ({len(self.items)})")

    def _update_status(self) -> None:
        overdue = sum(1 for i in self.items if i.group == "overdue")
        missing = sum(1 for i in self.items if i.group == "no-criterion")
        self.status.setText(f"{len(self.items)} open hypotheses: {overdue} overdue, {missing} without a "
                            f"settlement criterion" if self.items else "No open hypotheses.")

    # -- navigation -----------------------------------------------------------------------

    def selected_path(self) -> str | None:
        item = self.current_item()
        return item.path if item is not None else None

    def current_item(self) -> QueueItem | None:
        row = self.list.currentItem()
        path = row.data(0, Qt.ItemDataRole.UserRole) if row is not None else None
        return next((i for i in self.items if i.path == path), None)

    def _rows(self) -> list[QTreeWidgetItem]:
        out: list[QTreeWidgetItem] = []
        for g in range(self.list.topLevelItemCount()):
            group = self.list.topLevelItem(g)
            if group is not None:
                out += [c for c in (group.child(i) for i in range(group.childCount())) if c is not None]
        return out

    def step(self, delta: int) -> None:
        rows = self._rows()
        if not rows:
            return
        current = self.list.currentItem()
        index = rows.index(current) if current in rows else -1
        self.list.setCurrentItem(rows[max(0, min(len(rows) - 1, index + delta))])

    def select_path(self, path: str) -> bool:
        for row in self._rows():
            if row.data(0, Qt.ItemDataRole.UserRole) == path:
                self.list.setCurrentItem(row)
                return True
        return False

    def _show_current(self) -> None:
        item = self.current_item()
        for button in self.buttons.values():
            button.setEnabled(item is not None)
        self.candidate_list.clear()
        self.current_candidates = []
        if item is None:
            self.criterion.setText("")
            self.hyp_view.show_markdown("")
            self.cand_view.show_markdown("")
            return
        crit = item.settlement or ("(criterion in the body)" if item.criterion_in in ("body", "text")
                                   else "none: add one (E)")
        self.criterion.setText(f"{item.path}\nSettle by {item.settle_by or '—'} · criterion: {crit}\n"
                               f"claimed by {item.claimant or '?'} ({item.claimant_type or '?'})")
        self.path_did_select.emit(item.path)
        self._show_indexed(self.hyp_view, item.path)
        conn = self._connection()
        self.current_candidates = candidates(conn, item.path, self._similar()) if conn else []
        for cand in self.current_candidates:
            score = "" if cand.score is None else f"{cand.score:.3f}"
            standing = (("cites it" if cand.cites else "similar") if cand.eligible
                        else "derived" if cand.derived else "not evidence")
            cells = [theme.clip(cand.title), standing, cand.type or "", score]
            row = QTreeWidgetItem(self.candidate_list, cells)
            row.setData(0, Qt.ItemDataRole.UserRole, cand.path)
            # evidence is only what the curator ticks (Space): none is recorded by default,
            # and what cannot settle it (a derivative, a guess, a rule) cannot be ticked
            if cand.eligible:
                row.setFlags(row.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                row.setCheckState(0, Qt.CheckState.Unchecked)
            else:
                row.setFlags(row.flags() & ~Qt.ItemFlag.ItemIsUserCheckable)
                theme.paint_item(row, theme.PLACEHOLDER, tuple(range(len(cells))))
            tip = theme.tooltip(f"{cand.title}\n{cand.path}\n{cand.why}")
            for col in range(len(cells)):
                row.setToolTip(col, tip)
        first = self.candidate_list.topLevelItem(0)
        if first is not None:
            self.candidate_list.setCurrentItem(first)
        else:
            self.cand_view.show_markdown("No candidate settling facts yet. Confirm (C) writes a new "
                                         "observation; Extend (E) moves the date.")

    def refresh_candidates(self) -> None:
        """Recompute the current hypothesis's candidates (e.g. once embeddings are ready)."""
        self._show_current()

    def chosen_candidate(self) -> Candidate | None:
        row = self.candidate_list.currentItem()
        path = row.data(0, Qt.ItemDataRole.UserRole) if row is not None else None
        return next((c for c in self.current_candidates if c.path == path), None)

    def checked_evidence(self) -> list[str]:
        """The candidates the curator ticked (never a default): the one selection that both
        a confirmation and a refutation take."""
        rows = (self.candidate_list.topLevelItem(i) for i in range(self.candidate_list.topLevelItemCount()))
        return [str(r.data(0, Qt.ItemDataRole.UserRole)) for r in rows
                if r is not None and r.checkState(0) == Qt.CheckState.Checked]

    def _show_indexed(self, view: SafeTextBrowser, path: str, note: str = "") -> None:
        """A fact as the index has it (as the inspector shows it), under a plain `note`."""
        conn = self._connection()
        row = reads.live_fact(conn, path) if conn is not None else None
        head = f"*{_md_escape(note)}*\n\n" if note else ""
        view.show_markdown(head + (f"**{_md_escape(row['title'])}**\n\n{row['body']}"
                                   if row is not None else f"{path}: not in the index"))

    def _show_candidate(self) -> None:
        cand = self.chosen_candidate()
        if cand is not None:  # (why it cannot settle it, above what it says)
            self._show_indexed(self.cand_view, cand.path,
                               "" if cand.eligible else f"Cannot settle it: {cand.why}")

    # -- decisions ------------------------------------------------------------------------

    def _did(self, item: QueueItem, _changes: object) -> None:
        if any(i.path == item.path for i in self.items):
            self._done(item)

    def _done(self, item: QueueItem) -> None:
        """`item` was settled: its row goes; the current row is kept (the next one when it
        was the current one)."""
        rows = self._rows()
        gone = next((r for r in rows if r.data(0, Qt.ItemDataRole.UserRole) == item.path), None)
        current = self.list.currentItem()
        index = rows.index(gone) if gone in rows else 0
        self.items = [i for i in self.items if i.path != item.path]
        if gone is not None and gone.parent() is not None:
            gone.parent().removeChild(gone)
        rows = self._rows()
        if rows and (current is gone or current not in rows):
            self.list.setCurrentItem(rows[min(index, len(rows) - 1)])
        self._update_status()
        self._show_current()
        self._counted()

    def confirm(self) -> None:
        """C: the ticked candidate settles it (none ticked: a new observation, asked for)."""
        item = self.current_item()
        if item is None:
            return
        ticked = self.checked_evidence()
        if len(ticked) > 1:
            dialogs.show_error(self, "Confirm", f"{len(ticked)} candidates are ticked: a "
                               "confirmation records one. Untick all but the one that settles it.")
            return
        cand = next((c for c in self.current_candidates if ticked and c.path == ticked[0]), None)
        if cand is not None:
            # corpus text in the answer field, to edit; `ask_text` shows any label as plain
            # text (RELIABILITY H01: a title `<img src="file:///dev/zero">` aborted Qt)
            reason = self._ask_text("Confirm", "Confirmed by the ticked fact. Reason:",
                                    f"observed: {cand.title}")
            if not reason:
                return
            self._ops.run(lambda cur: cur.confirm(item.path, cand.path, reason),
                          success=partial(self._did, item))
            return
        answer = ask_observation(self, item.title)  # (one dialog: title, body, confidence)
        if answer is None:
            return
        title, body, confidence = answer
        self._ops.run(lambda cur: cur.confirm(  # (which checks the confidence)
            item.path, None, f"observed: {title}", new_title=title, new_body=body,
            confidence=confidence), success=partial(self._did, item))

    def refute(self) -> None:
        """F: it did not hold; retracted with the reason (and the chosen evidence)."""
        item = self.current_item()
        if item is None:
            return
        reason = self._ask_text("Refute", "What showed it did not hold?", "")
        if not reason:
            return
        evidence = self.checked_evidence()
        self._ops.run(lambda cur: cur.refute(item.path, reason, evidence=evidence),
                      success=partial(self._did, item))

    def extend(self) -> None:
        """E: a new date (YYYY-MM-DD) or criterion, with the reason."""
        item = self.current_item()
        if item is None:
            return
        now = (f"now: settle by {item.settle_by or '(no date)'}; "
               f"criterion {theme.clip(item.settlement or '(none written)', 200)}")
        answer = self._ask_text("Extend", f"New settle-by date (YYYY-MM-DD) or criterion\n({now}):",
                                "")
        if not answer:
            return
        try:
            settle_by, settlement = read_settle_answer(answer)
        except ValueError as exc:
            dialogs.show_error(self, "Not a date", str(exc))
            return
        reason = self._ask_text("Extend", "Why is more time (or a new criterion) right?", "")
        if not reason:
            return
        # (its due date, and so its place, changed: the queue is read again after the update)
        self._ops.run(lambda cur: cur.extend(item.path, reason, settle_by=settle_by,
                                             settlement=settlement))

    def promote(self) -> None:
        """P: promote in place — it becomes an observation."""
        item = self.current_item()
        if item is None:
            return
        reason = self._ask_text("Promote", "What shows it now holds as an observation?", "")
        if not reason:
            return
        self._ops.run(lambda cur: cur.promote(item.path, reason), success=partial(self._did, item))


    # -- Panel ------------------------------------------------------------------------------

    def tab_widget(self) -> QWidget:
        return self

    def key_widgets(self) -> list[QWidget]:
        """What must stay readable at 1366×768 (tests/gui/test_layout.py)."""
        return [self.list, self.candidate_list, *self.buttons.values()]

    def index_did_change(self, change: IndexChange) -> None:
        if self.loaded:
            self.load()

    def tab_did_show(self) -> None:
        if not self.loaded:
            self.load()
