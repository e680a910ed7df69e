"""The Agents tab (issue 16): one row per agent — its type (unregistered ones flagged), facts
by claim type and subject kind, authority findings, open proposals, the curators'
corrections, last activity and its track record as calibration — and, for the selected
agent, its record in words, the reliability chart and the type change its record
suggests (never applied on its own).

Reads: `agent_model.load_agents` on a worker (`BackgroundRead`): the records come from the
index's cache per index version (`reflect.agents.cached_records`), so a shown tab is
filled from one small read; after every index change the panel computes them again in
the background, in front or not, so that opening it later finds them ready.

Selecting an agent filters the fact table to its claims (`agent:<id>` in the search bar;
the tab stays in front); Enter or "Show its facts" brings the Facts tab forward. Actions
(register, change type, retire, add a type) each ask for a reason in `AgentActionDialog`
and run through the window's `Operations` (the writer lane), one commit each, undone
with Ctrl+Z like every other; after a registry change the panel says how many authority
findings appeared and disappeared (`IndexStats.rechecked`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelection, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from factdesk.curation import ChangeSet
from factdesk.errors import FactdeskError
from factdesk.gui import theme
from factdesk.gui.agent_chart import ReliabilityChart
from factdesk.gui.agent_dialogs import AgentActionDialog
from factdesk.gui.agent_model import (
    ID_ROLE,
    AgentsLoad,
    AgentsModel,
    Extras,
    ProposalCounter,
    Record,
    calibration_text,
    corrections_text,
    evidence_text,
    load_agents,
    load_extras,
    split_text,
    suggestion_lines,
    type_text,
    when_text,
)
from factdesk.gui.agent_proposals import open_proposals
from factdesk.gui.flow_layout import FlowLayout
from factdesk.gui.operations import Operations
from factdesk.gui.panel import IndexChange, Window
from factdesk.gui.search_bar import add_term
from factdesk.gui.workers import BackgroundRead
from factdesk.index.indexer import Indexer
from factdesk.model.registry import SEEDED_TYPES, strip_op

#: after an index change, the records are computed again this long after (in the background)
PREFETCH_MS = 1500


class AgentsTable(QTableView):
    """The list; Enter shows the selected agent's facts."""

    activate = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.activate.emit()
            return
        super().keyPressEvent(event)


class AgentsPanel(QWidget):
    """The Agents tab (see the module docstring)."""

    caption_did_change = Signal(str)
    did_load = Signal()
    proposals_did_load = Signal()
    #: the registry re-check's words after a registry change ("2 authority findings …")
    findings_did_change = Signal(str)
    caption = menu_text = "Agents"
    action_name = "showAgents"
    reads_agent_branches = True  # (`Panel`: told when only git's refs moved)

    def __init__(self, indexer: Indexer, ops: Operations, *, today: date | None = None,
                 settings_file: Path | None = None,
                 proposals: ProposalCounter | None = open_proposals,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("agentsPanel")
        self._indexer = indexer
        self._ops = ops
        self._today = today
        self._settings_file = settings_file
        self._proposals = proposals
        self._window: Any = None
        self.loaded: AgentsLoad | None = None
        self.dialog: AgentActionDialog | None = None
        self._stale = True
        self._wanted: str | None = None  # the agent to select once loaded
        self._findings = ""  # what the last registry re-check said
        self._sized = False
        self._restoring = False  # (a reload puts the selection back)
        self._read = BackgroundRead(None, self._job, done=self._loaded, failed=self._failed,
                                    parent=self)
        #: open proposals per agent, read after the records (the review queue: git, slower)
        self.proposals: Mapping[str, int] | None = None
        self.proposals_error: str | None = None
        #: the registry's agent types, read with the proposals (until then: the seeded ones)
        self.types: tuple[str, ...] = tuple(SEEDED_TYPES)
        self._props = BackgroundRead(None, self._read_extras, done=self._extras_read,
                                     failed=self._proposals_failed, parent=self)
        self._prefetch = QTimer(self)
        self._prefetch.setSingleShot(True)
        self._prefetch.setInterval(PREFETCH_MS)
        self._prefetch.timeout.connect(self.refresh)
        self._build()

    # -- construction -------------------------------------------------------------------------

    def _build(self) -> None:
        self.status = QLabel("Opening the agents' records…", self)
        self.status.setObjectName("agentsStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.banner = QLabel("", self)
        self.banner.setObjectName("agentsBanner")
        self.banner.setTextFormat(Qt.TextFormat.PlainText)
        self.banner.setWordWrap(True)
        self._banner_error = False
        self._banner_sheet = lambda: (
            f"QLabel {{ background: {(theme.ALERT_BG if self._banner_error else theme.NOTICE_BG).color}; "
            f"color: {(theme.ALERT_TEXT if self._banner_error else theme.NOTICE_TEXT).color}; "
            "padding: 4px; }")
        theme.styled(self.banner, self._banner_sheet)
        self.banner.hide()
        self.model = AgentsModel(self)
        self.table = AgentsTable(self)
        self.table.setObjectName("agentsTable")
        self.table.setTabKeyNavigation(False)  # (Tab leaves the table: issue 18)
        self.table.setAccessibleName("Agents")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setSortingEnabled(True)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)
        self.table.doubleClicked.connect(lambda _i: self.show_facts())
        self.table.activate.connect(self.show_facts)
        # (onto a second line when the tab is narrow or the font big: issue 18's 1.5×)
        buttons = FlowLayout(spacing=6)
        self.buttons: dict[str, QPushButton] = {}
        for key, text, slot in (
                ("facts", "Show its facts", self.show_facts),
                ("register", "Register…", partial(self.open_action, "register")),
                ("set-type", "Change type…", partial(self.open_action, "set-type")),
                ("retire", "Retire…", partial(self.open_action, "retire")),
                ("add-type", "Add agent type…", partial(self.open_action, "add-type"))):
            button = QPushButton(text, self)
            button.setObjectName(f"agents_{key}")
            # (a narrow window shrinks them: the tab never sets the window's minimum width)
            button.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
            button.clicked.connect(slot)
            buttons.addWidget(button)
            self.buttons[key] = button
        self.title = QLabel("", self)
        self.title.setObjectName("agentTitle")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        font = self.title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.title.setFont(font)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.suggestion = QLabel("", self)
        self.suggestion.setObjectName("agentSuggestion")
        self.suggestion.setTextFormat(Qt.TextFormat.PlainText)
        self.suggestion.setWordWrap(True)
        theme.styled(self.suggestion, lambda: (
            f"QLabel {{ background: {theme.SUGGEST_BG.color}; color: {theme.SUGGEST_TEXT.color}; "
            f"padding: 4px; border-left: 3px solid {theme.SUGGEST_EDGE.color}; }}"))
        self.apply_suggestion = QPushButton("Review this change…", self)
        self.apply_suggestion.setObjectName("agentsApplySuggestion")
        self.apply_suggestion.clicked.connect(self._review_suggestion)
        suggestion_row = QHBoxLayout()
        suggestion_row.addWidget(self.suggestion, 1)
        suggestion_row.addWidget(self.apply_suggestion)
        self.details = QPlainTextEdit(self)
        self.details.setObjectName("agentDetails")
        self.details.setAccessibleName("The agent's record")
        self.details.setReadOnly(True)
        self.details.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.chart = ReliabilityChart(self)
        lower = QSplitter(Qt.Orientation.Horizontal, self)
        lower.addWidget(self.details)
        lower.addWidget(self.chart)
        lower.setStretchFactor(0, 1)
        lower.setStretchFactor(1, 1)
        detail = QWidget(self)
        dl = QVBoxLayout(detail)
        dl.setContentsMargins(0, 4, 0, 0)
        dl.addWidget(self.title)
        dl.addLayout(suggestion_row)
        dl.addWidget(lower, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.setObjectName("agentsSplitter")
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(detail)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.status)
        layout.addWidget(self.banner)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(buttons)
        self._show_record(None)

    # -- loading ------------------------------------------------------------------------------

    def _job(self) -> AgentsLoad:
        return load_agents(self._indexer, today=self._today, settings_file=self._settings_file)

    def _read_extras(self) -> Extras:
        return load_extras(self._indexer.repo, self._proposals)

    def _extras_read(self, extras: Extras) -> None:
        self.types = extras.types
        self.proposals, self.proposals_error = extras.proposals, extras.proposals_error
        self.model.set_proposals(extras.proposals)
        if extras.proposals_error:
            self.status.setText(f"{self.status.text()} · open proposals unknown "
                                f"({extras.proposals_error})")
        self._show_record(self.current_record())
        self.proposals_did_load.emit()

    def _proposals_failed(self, message: str) -> None:
        self.proposals_error = message
        self.status.setText(f"{self.status.text()} · open proposals unknown ({message})")
        self.proposals_did_load.emit()

    def refresh(self) -> None:
        """Load the records again (in the background)."""
        self._prefetch.stop()
        self._stale = False
        if self.loaded is None:
            self.status.setText("Computing the agents' records…")
        self._read.start()

    @property
    def loading(self) -> bool:
        return self._read.running

    def _loaded(self, load: AgentsLoad) -> None:
        wanted = self._wanted  # (asked for: the inspector's link, an action's agent)
        keep = wanted or self.selected_id()
        self.loaded = load
        rows = [dict(r) for r in load.agents]
        for r in rows:  # (the last count until the new one is read)
            r["proposals"] = (None if self.proposals is None
                              else int(self.proposals.get(r["id"], 0)))
        header = self.table.horizontalHeader()
        sort = (header.sortIndicatorSection(), header.sortIndicatorOrder())
        self.model.set_rows(rows)
        if sort[0] >= 0 and header.isSortIndicatorShown():
            self.model.sort(*sort)
        if not self._sized and rows:  # (once: the user's widths are kept after)
            self._sized = True
            self.table.resizeColumnsToContents()
        unregistered = sum(1 for r in rows if not r.get("registered"))
        how = "from the cache" if load.cached else "computed"
        words = [f"{len(rows)} agents, {unregistered} unregistered",
                 f"records {how} in {load.seconds:.2f} s"]
        if load.settings_error:
            words.append(f"thresholds: defaults ({load.settings_error})")
        self.status.setText(" · ".join(words))
        self.caption_did_change.emit(f"Agents ({len(rows)})")
        self._wanted = None
        self._restoring = keep is not None and not wanted
        try:
            if keep is None or not self.select_agent(keep):
                self._show_record(self.current_record())
        finally:
            self._restoring = False
        self.did_load.emit()
        self._props.start()

    def _failed(self, message: str) -> None:
        self.status.setText(f"The agents' records could not be read: {message}")
        self.did_load.emit()

    # -- selection ----------------------------------------------------------------------------

    def selected_id(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return str(rows[0].data(ID_ROLE)) if rows else None

    def current_record(self) -> Record | None:
        agent = self.selected_id()
        row = self.model.row_of(agent) if agent else None
        return self.model.rows[row] if row is not None else None

    def select_agent(self, agent_id: str) -> bool:
        """Select an agent's row (False when it is not listed)."""
        row = self.model.row_of(agent_id)
        if row is None:
            return False
        self.table.selectRow(row)
        self.table.scrollTo(self.model.index(row, 0))
        return True

    def reveal(self, agent_id: str) -> None:
        """Bring the tab forward with `agent_id` selected (the inspector's link)."""
        if self._window is not None:
            self._window.center.setCurrentWidget(self)
        if not self.select_agent(agent_id):
            self._wanted = agent_id
            if not self.loading:
                self.refresh()
        self.table.setFocus()

    def _selection_changed(self, _new: QItemSelection, _old: QItemSelection) -> None:
        rec = self.current_record()
        self._show_record(rec)
        if rec is not None and self._window is not None and not self._restoring and \
                self._window.center.currentWidget() is self:
            # the fact table shows its claims; this tab stays in front. (Not when a reload
            # puts the selection back: the user's own query in the Facts tab stays.)
            self._window.search.set_query(self.query_for(rec["id"]))

    @staticmethod
    def query_for(agent_id: str) -> str:
        return add_term("", "agent", agent_id)

    def show_facts(self) -> None:
        """Enter: the Facts tab, filtered to the selected agent's claims."""
        rec = self.current_record()
        if rec is not None and self._window is not None:
            self._window.set_query(self.query_for(rec["id"]))

    def _show_record(self, rec: Record | None) -> None:
        registered = bool(rec and rec.get("registered"))
        self.buttons["facts"].setEnabled(rec is not None)
        self.buttons["register"].setEnabled(rec is not None and not registered)
        self.buttons["set-type"].setEnabled(registered)
        self.buttons["retire"].setEnabled(registered and not (rec or {}).get("retired"))
        self.buttons["add-type"].setEnabled(self.loaded is not None)
        if rec is None:
            self.title.setText("Select an agent (j/k) to see its record and calibration.")
            self.details.setPlainText("")
            self.suggestion.hide()
            self.apply_suggestion.hide()
            self.chart.set_bins([], agent="—", brier=None, settled=0)
            return
        self.title.setText(f"{rec['id']} — {type_text(rec)}")
        self.details.setPlainText(record_text(rec))
        words = suggestion_lines(rec, self.loaded.settings_file if self.loaded else None)
        self.suggestion.setText(words)
        self.suggestion.setVisible(bool(words))
        self.apply_suggestion.setVisible(bool(words))
        self.chart.set_bins(rec.get("reliability", []), agent=rec["id"], brier=rec.get("brier"),
                            settled=int(rec.get("settled", 0)))

    # -- actions ------------------------------------------------------------------------------

    def _review_suggestion(self) -> None:
        rec = self.current_record()
        if rec is not None and rec.get("suggestion"):
            self.open_action("set-type", to_type=str(rec["suggestion"]["to"]))

    def open_action(self, action: str, *, to_type: str | None = None) -> AgentActionDialog:
        """Open the action's dialog (non-blocking); OK runs it on the writer lane."""
        rec = self.current_record() if action != "add-type" else None
        types = self.types
        evidence = ""
        if action == "set-type" and rec is not None:
            suggested = (rec.get("suggestion") or {}).get("to")
            to_type = to_type or suggested or next((t for t in types if t != rec.get("type")),
                                                   None)
            evidence = evidence_text(rec, to_type or "?")
        if self.dialog is not None:
            self.dialog.close()
        dialog = AgentActionDialog(action, agent=rec, types=types, evidence=evidence,
                                   to_type=to_type, parent=self)
        if action == "set-type" and rec is not None:
            dialog.type_box.currentTextChanged.connect(
                lambda t: dialog.evidence.setPlainText(evidence_text(rec, t)))
        dialog.accepted.connect(lambda: self._run(dialog.values()))
        self.dialog = dialog
        dialog.open()
        return dialog

    def _run(self, v: Mapping[str, Any]) -> None:
        action, reason = v["action"], v["reason"]
        op: Callable[[Any], ChangeSet]
        if action == "register":
            op = lambda cur: cur.register(v["agent_id"], v["type"], reason,  # noqa: E731
                                          email=v["email"], branch=v["branch"])
        elif action == "set-type":
            op = lambda cur: cur.set_type(v["agent_id"], v["type"], reason)  # noqa: E731
        elif action == "retire":
            op = lambda cur: cur.retire(v["agent_id"], reason)  # noqa: E731
        else:
            op = lambda cur: cur.add_type(v["name"], v["description"], v["rows"],  # noqa: E731
                                          reason)
        self._say(f"{action}: committing…")
        self._wanted = v["agent_id"] or None
        self._ops.run(op, success=self._did, failed=self._action_failed)

    def _did(self, changes: ChangeSet) -> None:
        # (the index's re-check spoke first, in `index_did_change`: both are said)
        findings, self._findings = self._findings, ""
        self._say(f"Committed {changes.subject} — Ctrl+Z undoes it. {findings}".strip())

    def _action_failed(self, exc: FactdeskError) -> None:
        self._say(f"Not done: {exc}", error=True)

    def _say(self, text: str, *, error: bool = False) -> None:
        self.banner.setText(text)
        self._banner_error = error
        self.banner.setStyleSheet(self._banner_sheet())
        self.banner.show()

    # -- Panel --------------------------------------------------------------------------------

    def tab_widget(self) -> QWidget:
        return self

    def step(self, delta: int) -> None:
        rows = self.model.rowCount()
        if not rows:
            return
        agent = self.selected_id()
        row = self.model.row_of(agent) if agent else None
        target = 0 if row is None else max(0, min(rows - 1, row + delta))
        self.table.selectRow(target)
        self.table.setFocus()

    def index_did_change(self, change: IndexChange) -> None:
        stats = change.stats
        rechecked = getattr(stats, "rechecked", None) if stats is not None else None
        if rechecked is not None:
            words = findings_words(rechecked.appeared, rechecked.disappeared, rechecked.after)
            self._findings = words
            self._say(words)
            self.findings_did_change.emit(words)
        self._stale = True
        if change.in_front:
            self.refresh()
        elif self.loaded is None:  # (the first records, so that opening the tab finds them)
            self._prefetch.start()
        # behind another tab the records are read again when it is shown (the last ones
        # meanwhile): read at every agent's commit, they held the GIL a tenth of the time
        # ten writing agents left the curator's keys (bench/agent_write_bench.py --curator)

    def tab_did_show(self) -> None:
        if self._stale or self.loaded is None:
            self.refresh()
        self.table.setFocus()

    def close_worker(self) -> None:
        self._prefetch.stop()
        self._read.close()
        self._props.close()

    def attach(self, window: Window) -> None:
        self._window = window
        inspector = getattr(window, "inspector", None)
        signal = getattr(inspector, "agent_did_request", None)
        if signal is not None:
            signal.connect(self.reveal)
        status = getattr(window, "status", None)
        if status is not None:  # (after the refresh's own words, which come first)
            self.findings_did_change.connect(
                lambda words: QTimer.singleShot(0, lambda: status.say(words, 10000)))


def findings_words(appeared: int, disappeared: int, total: int) -> str:
    """What a registry change did to the authority findings."""
    if not appeared and not disappeared:
        return f"Registry changed: no authority finding appeared or disappeared ({total} in all)."
    return (f"Registry changed: {appeared} authority finding{'' if appeared == 1 else 's'} "
            f"appeared, {disappeared} disappeared ({total} in all).")


def record_text(rec: Record) -> str:
    """The selected agent's record in words (plain text)."""
    emails = dict.fromkeys(strip_op(e) for e in rec.get("emails", []))
    lines = [
        f"Calibration: {calibration_text(rec)}",
        "",
        f"Facts: {rec['facts']} live, {rec.get('retracted_facts', 0)} retracted",
        f"  by claim type: {split_text(rec.get('by_claim_type', {}))}",
        f"  by subject kind: {split_text(rec.get('by_subject_kind', {}))}",
        f"  about the user: {rec.get('user_facts', 0)} ({rec.get('user_corrections', 0)} "
        "corrected)",
        f"Authority findings (A1): {rec.get('authority_findings', 0)}",
        f"Open proposals: {'—' if rec.get('proposals') is None else rec['proposals']}",
        f"Corrections by curators: {corrections_text(rec)}",
        "",
        f"Listed as: {', '.join(rec.get('roles', [])) or '—'}",
        f"Git e-mail: {', '.join(emails) or '—'}",
        f"Branches: {', '.join(rec.get('branches', [])) or '—'}",
        f"Last active: {when_text(rec.get('last_activity'))} ({rec.get('commits', 0)} commits "
        "on the curated history)",
    ]
    if rec.get("withdrawn"):
        lines.append(f"  withdrawn without a verdict: {rec['withdrawn']}")
    corrected = rec.get("corrected", [])
    if corrected:
        lines += ["", "Latest corrections:"]
    for c in corrected[-5:]:
        lines.append(f"  {c['action']} {c['path']} ({c['commit'][:10]})")
    return "\n".join(lines)
