"""InspectorPanel: the selected fact's envelope, trust, attribution, body, refs, problems
and history (DESIGN.md §5). Every label showing corpus text is plain text (RELIABILITY H01).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date, datetime
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QBrush, QColor, QDesktopServices
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from factdesk.curation.ops import load_attestations
from factdesk.gui import theme
from factdesk.gui.flow_layout import EnvelopeScroll, FlowLayout
from factdesk.gui.history_panel import HistoryPanel
from factdesk.gui.safe_browser import SafeTextBrowser, confirm_open_url
from factdesk.gui.session import IndexSession
from factdesk.gui.theme import clip
from factdesk.gui.workers import BackgroundRead
from factdesk.gui.wrap_tabs import WrappingTabs
from factdesk.index.schema import RowDamaged
from factdesk.index.search import cited_by, get_fact_row, problems_for, resolve_local_ref
from factdesk.model.authority import attribution
from factdesk.model.refs import RefKind, classify_ref
from factdesk.model.weight import is_stale
from factdesk.model.words import count
from factdesk.reflect.queue import queue_item

if TYPE_CHECKING:
    import sqlite3

REF_ROLE = Qt.ItemDataRole.UserRole + 1
REF_GROUPS = ("Facts", "Retracted facts", "Missing facts", "Cited by", "Foreign facts",
              "Source code", "URLs", "Malformed")


def plain_label(text: str = "", parent: QWidget | None = None, *, name: str = "") -> QLabel:
    """A QLabel that never interprets its text as markup, and whose text never sets the
    window's minimum width (an unbreakable run is clipped, not honoured)."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, label.sizePolicy().verticalPolicy())
    label.setText(text)
    if name:
        label.setObjectName(name)
    return label


def caption_label(text: str, parent: QWidget | None = None) -> QLabel:
    """A plain-text label for our own captions (form field names): sized by its text, so a
    form never squeezes it to nothing, which `plain_label`'s elastic width would allow."""
    label = plain_label(text, parent)
    label.setSizePolicy(QSizePolicy.Policy.Preferred, label.sizePolicy().verticalPolicy())
    return label


def text_label(parent: QWidget, name: str) -> QLabel:
    """A plain-text label that wraps and can be selected (panels showing corpus text)."""
    label = plain_label("", parent, name=name)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def badge(parent: QWidget, name: str) -> QLabel:
    label = plain_label("", parent, name=name)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _style_badge(label: QLabel, caption: str, value: str | None, tone: theme.Tone,
                 *, derived: bool = False) -> None:
    """A badge's text, its colour in the scheme in use, and its accessible name (a screen
    reader says `type: observation`, without the glyph)."""
    text = f"{caption}: {clip(value or '—', 200)}" + ("  (derived)" if derived else "")
    label.setText(text)
    color = tone.color
    border = "dashed" if derived else "solid"
    label.setStyleSheet(f"QLabel {{ color: {color}; border: 1px {border} {color}; "
                        "border-radius: 8px; padding: 2px 8px; }")
    label.setToolTip(theme.tooltip(text))
    spoken = clip(value or "none", 200)
    label.setAccessibleName(f"{caption}: {spoken}" + (" (derived)" if derived else ""))


def settle_text(settle_by: str | None, days_left: int | None, criterion: str) -> str:
    """`Settle by 2026-10-20 — overdue by 42 days · criterion: …` (the inspector's line
    for a hypothesis)."""
    if days_left is None:
        when = f"Settle by {settle_by} (not a date)" if settle_by else "No settle-by date"
    elif days_left < 0:
        when = f"Settle by {settle_by} — overdue by {count(-days_left, 'day')}"
    elif days_left == 0:
        when = f"Settle by {settle_by} — due today"
    else:
        when = f"Settle by {settle_by} — {count(days_left, 'day')} left"
    return f"{when}\nCriterion: {criterion}"


def _when(stamp: int | None) -> str:
    return datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M") if stamp else "—"


def _num(value: float | None, places: int = 2) -> str:
    return "—" if value is None else f"{value:.{places}f}"


MAX_OTHER_ITEMS = 2000  # rows of the Other fields tab


class InspectorPanel(QWidget):
    """Shows one fact; emits `fact_link_did_activate(id)` when a fact ref or link is followed."""

    fact_link_did_activate = Signal(int)
    status_did_change = Signal(str)
    #: the claimant's record in the Agents tab was asked for (its track-record link)
    agent_did_request = Signal(str)
    fact_did_show = Signal(object)  # the path shown, or None (the Messages tab's backlinks)

    def __init__(self, session: IndexSession, parent: QWidget | None = None, *,
                 track_record: Callable[[str], str | None] | None = None,
                 today: date | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inspector")
        self.setAccessibleName("Inspector")
        #: the day a hypothesis's days left are counted from (None: today)
        self.today = today
        self._session = session
        #: path → attestation entries, read from the corpus off the GUI thread
        #: (`reload_attestations`, after each index update); agent → track-record line
        self.attestations: dict[str, list[dict[str, str]]] = {}
        repo = session.repo
        self._attestation_read = BackgroundRead(None, lambda: load_attestations(repo),
                                                done=self._attestations_read,
                                                failed=lambda _message: None, parent=self)
        self.track_record = track_record
        self.fact_id: int | None = None
        self.path: str | None = None
        self.title = plain_label("No fact selected", self, name="inspectorTitle")
        self.title.setWordWrap(True)
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.title.setFont(font)
        self.path_label = plain_label("", self, name="inspectorPath")
        self.path_label.setAccessibleName("Path")
        theme.styled(self.path_label, lambda: f"color: {theme.DERIVED.color};")
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.path_label.setWordWrap(True)
        self.retracted = plain_label("", self, name="inspectorRetracted")
        self.retracted.setWordWrap(True)
        self.retracted.setAccessibleName("Retraction")
        theme.styled(self.retracted, lambda: (
            f"QLabel {{ background: {theme.RETRACTED_BG.color}; color: {theme.RETRACTED_TEXT.color}; "
            f"padding: 4px; border-left: 3px solid {theme.RETRACTED_EDGE.color}; }}"))
        self.retracted.hide()
        self.badges = {name: badge(self, f"badge_{name}") for name in (
            "kind", "type", "origin", "claimant", "subject", "claim")}
        axes = QVBoxLayout()
        axes.setSpacing(4)
        # kind, type and origin flow onto a second line when the inspector is narrow or the
        # font big (issue 18: three fixed columns cut "origin: ✎ authored" at 1.5×)
        flow = FlowLayout(spacing=6)
        for name in ("kind", "type", "origin"):
            flow.addWidget(self.badges[name])
        axes.addLayout(flow)
        for name in ("claimant", "claim", "subject"):
            self.badges[name].setWordWrap(True)  # (corpus text: may be long)
            axes.addWidget(self.badges[name])
        self.trust = {name: plain_label("", self, name=f"trust_{name}") for name in (
            "confidence", "weight", "sources")}
        trust_row = QHBoxLayout()
        self.trust_boxes: list[QFrame] = []  # (hidden with no fact: three empty frames)
        for name in ("confidence", "weight", "sources"):
            box = QFrame(self)
            self.trust_boxes.append(box)
            box.setFrameShape(QFrame.Shape.StyledPanel)
            inner = QVBoxLayout(box)
            inner.setContentsMargins(6, 3, 6, 3)
            self.trust[name].setWordWrap(True)
            inner.addWidget(self.trust[name])
            trust_row.addWidget(box, 1)
        self.attribution = plain_label("", self, name="inspectorAttribution")
        self.attribution.setWordWrap(True)
        self.attribution.setAccessibleName("Attribution")
        theme.styled(self.attribution, lambda: (
            f"QLabel {{ font-style: italic; padding: 4px; color: {theme.ATTRIBUTION_TEXT.color}; "
            f"background: {theme.ATTRIBUTION_BG.color}; border-radius: 4px; }}"))
        self.attribution.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body = SafeTextBrowser(self)
        self.body.setObjectName("inspectorBody")
        self.body.setAccessibleName("Body")
        self.body.link_did_activate.connect(self.follow_link)
        self.body.link_did_hover.connect(self.status_did_change)
        self.refs = QTreeWidget(self)
        self.refs.setObjectName("inspectorRefs")
        self.refs.setAccessibleName("References (Enter follows one)")
        self.refs.setHeaderLabels(["Reference", "Title"])
        self.refs.itemActivated.connect(self._ref_activated)
        self.refs.itemClicked.connect(self._ref_activated)
        self.problems = QTreeWidget(self)
        self.problems.setObjectName("inspectorProblems")
        self.problems.setAccessibleName("Problems of this fact")
        self.problems.setHeaderLabels(["Code", "Severity", "Line", "Message"])
        self.problems.setRootIsDecorated(False)
        self.other = QTreeWidget(self)
        self.other.setObjectName("inspectorOther")
        self.other.setAccessibleName("Other fields")
        self.other.setHeaderLabels(["Field", "Value"])
        self.history = HistoryPanel(session.repo, self)
        self.tabs = WrappingTabs(self)  # (its captions wrap: never behind scroll arrows)
        self.tabs.setObjectName("inspectorTabs")
        self.tabs.addTab(self.body, "Body")
        self.tabs.addTab(self.refs, "Refs")
        self.tabs.addTab(self.problems, "Problems")
        self.tabs.addTab(self.other, "Other fields")
        self.tabs.addTab(self.history, "History")
        self.tabs.currentChanged.connect(self._tab_changed)
        # the envelope (title … provenance) scrolls when the inspector is short or the font
        # big, so the tabs below keep their room (issue 18: 1366×768 at 1.5× the font)
        envelope = QWidget(self)
        envelope.setObjectName("inspectorEnvelope")
        layout = QVBoxLayout(envelope)
        layout.setContentsMargins(8, 6, 8, 2)
        layout.addWidget(self.title)
        layout.addWidget(self.path_label)
        layout.addWidget(self.retracted)
        layout.addLayout(axes)
        #: a hypothesis's settle-by date (days left, or overdue by) and its criterion
        self.settlement = plain_label("", self, name="inspectorSettlement")
        self.settlement.setWordWrap(True)
        self.settlement.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.settlement.setAccessibleName("Settlement")
        self.settlement.hide()
        self._settle_tone: theme.Tone = theme.SETTLE_DUE
        theme.styled(self.settlement, lambda: (
            f"QLabel {{ color: {self._settle_tone.color}; padding: 2px 4px; "
            f"border-left: 3px solid {self._settle_tone.color}; }}"))
        layout.addLayout(trust_row)
        layout.addWidget(self.settlement)
        layout.addWidget(self.attribution)
        self.provenance = plain_label("", self, name="inspectorProvenance")
        self.provenance.setWordWrap(True)
        self.provenance.setAccessibleName("Provenance")
        theme.styled(self.provenance, lambda: f"color: {theme.DERIVED.color}; padding: 0 4px;")
        layout.addWidget(self.provenance)
        self.agent_link = QPushButton("", self)  # (the track record's link to the Agents tab)
        self.agent_link.setObjectName("inspectorAgentLink")
        self.agent_link.setFlat(True)
        self.agent_link.setAccessibleName("Open the claimant's record in the Agents tab")
        theme.styled(self.agent_link, lambda: (f"QPushButton {{ color: {theme.LINK.color}; "
                                               "text-align: left; padding: 0 4px; border: none; }"))
        self.agent_link.clicked.connect(
            lambda: self.agent_did_request.emit(self.agent_link.property("agent") or ""))
        self.agent_link.hide()
        layout.addWidget(self.agent_link)
        self.envelope = EnvelopeScroll(envelope, self)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addWidget(self.envelope)
        tabs_box = QVBoxLayout()
        tabs_box.setContentsMargins(8, 2, 8, 6)
        tabs_box.addWidget(self.tabs.bar)
        tabs_box.addWidget(self.tabs)
        outer.addLayout(tabs_box, 1)
        self._history_loaded = False
        self.show_fact(None)
        theme.on_change(self._scheme_did_change)

    def _scheme_did_change(self) -> bool:
        """Light or dark: the badges and lists are drawn again in the new scheme."""
        from shiboken6 import isValid

        if not isValid(self):
            return False
        if self.fact_id is not None:
            self.show_fact(self.fact_id)
        return True

    # -- showing a fact -----------------------------------------------------------------------

    def close_worker(self) -> None:
        """Stop the History tab's diff still running (window closing)."""
        self.history.close_worker()
        self._attestation_read.close()

    def reload_attestations(self) -> None:
        """Read the attestations again (they arrive with commits) in the background."""
        self._attestation_read.start()

    def _attestations_read(self, attestations: dict[str, list[dict[str, str]]]) -> None:
        self.attestations = attestations
        if self.fact_id is not None:
            self.show_fact(self.fact_id)

    def show_fact(self, fact_id: int | None) -> None:
        """Show the fact with this id (any status), or an empty inspector for None. A row
        that fails its checksums is never shown: the inspector empties and an update
        repairs it (issue 15 #10)."""
        try:
            self._show_fact(fact_id)
        except RowDamaged:
            self._session.update()
            self._show_fact(None)
        self.fact_did_show.emit(self.path)

    def _show_fact(self, fact_id: int | None) -> None:
        conn = self._session.conn
        row = get_fact_row(conn, str(fact_id)) if conn is not None and fact_id is not None else None
        self.fact_id = row["id"] if row else None
        self.path = row["path"] if row else None
        for widget in (self.badges.values(), self.trust.values(), self.trust_boxes):
            for w in widget:
                w.setVisible(row is not None)
        self.attribution.setVisible(row is not None)
        self.provenance.setVisible(row is not None)
        self.agent_link.setVisible(row is not None and bool(row["claimant"]))
        self.settlement.hide()
        self.tabs.setEnabled(row is not None)
        if row is None:
            self.title.setText("No fact selected")
            self.path_label.setText("Select a fact in the table (j/k to move).")
            self.retracted.hide()
            self.body.clear()
            self.refs.clear()
            self.problems.clear()
            self.other.clear()
            for tab, name in ((self.refs, "Refs"), (self.problems, "Problems"),
                              (self.other, "Other fields")):  # (no counts of the last fact)
                self._count_tab(tab, name, None)
            self.history.show_path(None, "")
            return
        self.title.setText(clip(row["title"] or "(untitled)"))
        self.path_label.setText(clip(row["path"]))
        self._show_envelope(row)
        self._show_provenance(row)
        self._show_retraction(row)
        self.body.show_markdown(row["body"])
        assert conn is not None
        self._show_refs(conn, row)
        self._show_problems(conn, row["path"])
        self._show_other(row)
        self._history_loaded = False
        if self.tabs.currentWidget() is self.history:
            self._load_history()
        self.envelope.updateGeometry()

    def _show_envelope(self, row: sqlite3.Row) -> None:
        b = self.badges
        for name in ("kind", "type", "origin"):
            mark = theme.mark_for(name, row[name]) or theme.UNKNOWN
            _style_badge(b[name], name, theme.labelled(name, row[name]), mark.tone)
            b[name].setAccessibleName(f"{name}: {clip(row[name] or 'none', 200)}")
        claimant = f"{row['claimant'] or 'unknown'} ({row['claimant_type'] or 'unverified'})"
        derived = bool(row["claimant_derived"] or row["claimant_type_derived"])
        _style_badge(b["claimant"], "claimant", claimant, theme.NEUTRAL, derived=derived)
        subject = " ".join(x for x in (row["subject_kind"], row["subject_ref"]) if x) or None
        _style_badge(b["subject"], "subject", subject, theme.NEUTRAL)
        _style_badge(b["claim"], "claim", row["claim_type"], theme.NEUTRAL,
                     derived=bool(row["claim_type_derived"]))
        self._show_settlement(row)
        self.trust["confidence"].setText(f"Confidence\n{_num(row['confidence'])}")
        recorded, computed = row["evidence_weight"], row["evidence_weight_computed"]
        # four places: a stale weight often differs only in the third (0.7872 vs 0.7917)
        weight = (f"Evidence weight\nrecorded {_num(recorded, 4)} · "
                  f"computed {_num(computed, 4)}")
        stale = is_stale(recorded, computed)
        self.trust["weight"].setText(weight + ("\n⚠ stale" if stale else ""))
        self.trust["weight"].setStyleSheet(f"color: {theme.ERROR.color};" if stale else "")
        sources = row["sources"] if row["sources"] is not None else "—"
        self.trust["sources"].setText(f"Sources\n{sources}")
        if row["claim_type"]:
            self.attribution.setText(attribution(
                clip(row["title"] or ""), claimant=clip(row["claimant"] or "", 200) or None,
                claimant_type=row["claimant_type"], subject_kind=row["subject_kind"],
                claim_type=row["claim_type"]))
        else:
            self.attribution.setText("(not parsed: see Problems; when only its kind or type is "
                                     "wrong, R relabels it)")

    def _show_settlement(self, row: sqlite3.Row) -> None:
        """A hypothesis's settle-by date with its days left (or how long overdue) and its
        settlement criterion (`reflect.queue`'s reading, the Hypotheses tab's)."""
        item = queue_item(row, self.today or date.today()) if row["type"] == "hypothesis" else None
        if item is None:
            self.settlement.hide()
            return
        if item.settlement:
            criterion = clip(item.settlement, 500)
        elif item.criterion_in in ("body", "text"):
            criterion = "in the body" + (f" (line {item.criterion_line})" if item.criterion_line else "")
        else:
            criterion = "none written (rule H1: add one)"
        overdue = item.days_left is not None and item.days_left < 0
        self._settle_tone = theme.SETTLE_OVERDUE if overdue else theme.SETTLE_DUE
        self.settlement.setStyleSheet(
            f"QLabel {{ color: {self._settle_tone.color}; padding: 2px 4px; "
            f"border-left: 3px solid {self._settle_tone.color}; }}")
        text = settle_text(clip(item.settle_by or "", 100) or None, item.days_left, criterion)
        self.settlement.setText(text)
        self.settlement.setAccessibleName("Settlement: " + text.replace("\n", "; "))
        self.settlement.setToolTip(theme.tooltip(text))
        self.settlement.show()

    def _show_provenance(self, row: sqlite3.Row) -> None:
        """A curator's attestation (the one way to ground truth) and the claimant's track
        record of predictions, when known."""
        lines = []
        for entry in self.attestations.get(row["path"], []):
            lines.append(clip(f"✔ envelope attested by {entry.get('by', '?')} at "
                              f"{entry.get('at', '?')}: {entry.get('reason', '')}"))
        if self.track_record is not None and row["claimant"]:
            record = self.track_record(row["claimant"])
            if record:
                lines.append(clip(f"Track record — {record}"))
        self.provenance.setText("\n".join(lines))
        self.provenance.setVisible(bool(lines))
        self.agent_link.setProperty("agent", row["claimant"] or "")
        self.agent_link.setText(clip(f"{row['claimant']}'s record and calibration in the "
                                     "Agents tab ›", 200) if row["claimant"] else "")
        self.agent_link.setVisible(bool(row["claimant"]))

    def _show_retraction(self, row: sqlite3.Row) -> None:
        if row["status"] != "retracted":
            self.retracted.hide()
            return
        self.retracted.setText(clip(
            f"Retracted {_when(row['retracted_at'])} by {row['retracted_by'] or 'unknown'}"
            f" — {row['retracted_reason'] or 'no reason recorded'}") + "\nShowing its last version.")
        self.retracted.show()

    def _show_refs(self, conn: sqlite3.Connection, row: sqlite3.Row) -> None:
        self.refs.clear()
        groups: dict[str, QTreeWidgetItem] = {}

        def add(group: str, raw: str, title: str, data: object) -> None:
            if group not in groups:
                groups[group] = QTreeWidgetItem([group, ""])
            item = QTreeWidgetItem(groups[group], [clip(raw, 300), clip(title or "", 300)])
            item.setData(0, REF_ROLE, data)
            item.setToolTip(0, theme.tooltip(raw))
            item.setToolTip(1, theme.tooltip(title))

        for raw in json.loads(row["refs"] or "[]"):
            ref = classify_ref(str(raw), self._session.repo_ids)
            if ref.kind is RefKind.LOCAL_FACT:
                hit = resolve_local_ref(conn, str(raw), ref.target or "")
                if hit is None:
                    add("Missing facts", str(raw), "not in the index", None)
                else:
                    group = "Retracted facts" if hit["status"] == "retracted" else "Facts"
                    add(group, str(raw), hit["title"], ("fact", hit["id"]))
            elif ref.kind is RefKind.FOREIGN_FACT:
                add("Foreign facts", str(raw), "", None)
            elif ref.kind is RefKind.SOURCE_CODE:
                add("Source code", str(raw), "", None)
            elif ref.kind is RefKind.EXTERNAL_URL:
                add("URLs", str(raw), "", ("url", str(raw)))
            else:
                add("Malformed", str(raw), ref.warning or "", None)
        for cited in cited_by(conn, row["path"]):
            add("Cited by", cited["path"], cited["title"], ("fact", cited["id"]))
        for name in REF_GROUPS:
            if name in groups:
                groups[name].setText(0, f"{name} ({groups[name].childCount()})")
                self.refs.addTopLevelItem(groups[name])
                groups[name].setExpanded(True)
        self.refs.resizeColumnToContents(0)
        self.refs.setColumnWidth(0, min(self.refs.columnWidth(0), max(160, self.refs.width() // 2)))
        # (a long URL took the whole width, and the titles beside it were out of sight)
        total = sum(g.childCount() for g in groups.values())
        self._count_tab(self.refs, "Refs", total)

    def _show_problems(self, conn: sqlite3.Connection, path: str) -> None:
        self.problems.clear()
        rows = problems_for(conn, path)
        for p in rows:
            item = QTreeWidgetItem([p["code"], p["severity"], str(p["line"]), clip(p["message"])])
            tone = theme.SEVERITY.get(p["severity"])
            if tone is not None:
                item.setForeground(1, _brush(tone.color))
            item.setToolTip(3, theme.tooltip(p["message"]))
            self.problems.addTopLevelItem(item)
        for col in range(3):
            self.problems.resizeColumnToContents(col)
        self._count_tab(self.problems, "Problems", len(rows))

    def _show_other(self, row: sqlite3.Row) -> None:
        """The frontmatter keys knomit does not know (`x-agent: …`, nested maps): kept byte
        for byte through every edit, and shown here as the file has them (RELIABILITY A21)."""
        self.other.clear()
        extra = json.loads(row["extra"] or "{}")
        lines = json.loads(row["key_lines"] or "{}")  # file order (older indexes kept them sorted)
        budget = [MAX_OTHER_ITEMS]
        for key, value in sorted(extra.items(), key=lambda kv: lines.get(kv[0], 0)):
            item = _value_item(str(key), value, budget)
            if item is None:
                break
            self.other.addTopLevelItem(item)
        self.other.expandAll()
        self.other.resizeColumnToContents(0)
        self._count_tab(self.other, "Other fields", len(extra))

    def _count_tab(self, tab: QWidget, name: str, n: int | None) -> None:
        """A tab's caption with the shown fact's count of its items (None: no fact shown)."""
        self.tabs.setTabText(self.tabs.indexOf(tab), name if n is None else f"{name} ({n})")

    def _tab_changed(self, _index: int) -> None:
        if self.tabs.currentWidget() is self.history and not self._history_loaded:
            self._load_history()

    def _load_history(self) -> None:
        self._history_loaded = True
        self.history.show_path(self._session.conn, self.path or "")

    # -- links --------------------------------------------------------------------------------

    def _ref_activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        data = item.data(0, REF_ROLE)
        if not data:
            return
        kind, value = data
        if kind == "fact":
            self.fact_link_did_activate.emit(int(value))
        elif kind == "url":
            self.follow_link(QUrl(value))

    def follow_link(self, url: QUrl) -> None:
        """A link in the body: fact links navigate, http(s) asks first, the rest is refused."""
        text = url.toString()
        scheme = url.scheme().lower()
        if scheme in ("http", "https"):
            if confirm_open_url(self, url):
                QDesktopServices.openUrl(url)
            return
        ref = classify_ref(text, self._session.repo_ids)
        conn = self._session.conn
        if ref.kind is RefKind.LOCAL_FACT and conn is not None and scheme in ("", "kb"):
            hit = resolve_local_ref(conn, text, ref.target or "")
            if hit is not None:
                self.fact_link_did_activate.emit(hit["id"])
                return
        self.status_did_change.emit(clip(f"Not opened: {text}", 300))


def _value_item(key: str, value: object, budget: list[int]) -> QTreeWidgetItem | None:
    """A tree item for one unknown key: a map or a list of maps as children, a list of
    plain values on one line (`["a", "b"]`), null as `null`; None once `budget` items are
    spent (a hostile file can hold thousands)."""
    if budget[0] <= 0:
        return None
    budget[0] -= 1
    if isinstance(value, dict) or (isinstance(value, list)
                                   and any(isinstance(v, (dict, list)) for v in value)):
        pairs = value.items() if isinstance(value, dict) else (
            (f"[{i}]", v) for i, v in enumerate(value))
        item = QTreeWidgetItem([clip(key, 300), "{…}" if isinstance(value, dict) else "[…]"])
        for child_key, child in pairs:
            child_item = _value_item(str(child_key), child, budget)
            if child_item is None:
                break
            item.addChild(child_item)
        return item
    if isinstance(value, list):
        text = json.dumps(value, ensure_ascii=False)
    else:
        text = "null" if value is None else str(value)
    item = QTreeWidgetItem([clip(key, 300), clip(text, 300)])
    item.setToolTip(1, theme.tooltip(text))
    return item


def _brush(color: str) -> QBrush:
    return QBrush(QColor(color))
