"""The Proposals tab's lower half: the selected row in detail.

Who proposed it with which operation, its checks in a word, the decision buttons, the facts
it changes, the findings of the chosen fact (one a line, wrapped, with room: the pane a
curator reads before deciding), and its diff against the curated version (wrapped), the
proposed text and near-duplicates on the curated branch (read on workers).

Every colour comes from the palette or `gui/theme.py` when it is drawn or restyled (no
style sheet holds a colour: a style sheet freezes the palette of its scheme, and the title
stayed black on dark); `restyle()` runs after each change of scheme. Everything shown
from the corpus is plain text (RELIABILITY H01).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontDatabase, QPalette, QTextCharFormat
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from factdesk.gui import proposal_source, theme
from factdesk.gui.flow_layout import FlowLayout
from factdesk.gui.inspector import text_label
from factdesk.gui.proposal_views import Badge, badge_of, heading, problem_line
from factdesk.gui.relabel_dialog import DiffHighlighter
from factdesk.gui.safe_browser import SafeTextBrowser
from factdesk.gui.workers import BackgroundRead
from factdesk.model.words import count
from factdesk.review.model import Proposal, ProposedFact, Queue

if TYPE_CHECKING:
    from pathlib import Path

    from factdesk.review.proposals import Awaiting

FACT_ROLE = Qt.ItemDataRole.UserRole
#: the decision buttons: (key, label); the labels are never elided (a FlowLayout wraps them)
BUTTONS = (("accept", "Accept (A)"), ("reject", "Reject… (R)"), ("edit", "Edit, accept… (E)"),
           ("skip", "Skip (S)"))
#: the chosen fact's diff and the inspector follow the queue after this long (ms)
DETAIL_MS = 60


class ThemedDiffHighlighter(DiffHighlighter):
    """The diff's colours of the scheme in use, again after each change of scheme."""

    def restyle(self) -> None:
        for key, tone in (("+", theme.DIFF_ADDED), ("-", theme.DIFF_REMOVED),
                          ("@", theme.DIFF_HUNK), ("h", theme.DIFF_HEADER)):
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(tone.color))
            if tone.on is not None and key in "+-":
                fmt.setBackground(QColor(tone.on.color))
            self.formats[key] = fmt
        self.rehighlight()


def _tinted(label: QLabel, color: str | None) -> None:
    """The label's text colour: `color`, or the palette's own (None). (An empty QPalette
    sets only the roles given: the rest follows the application's palette.)"""
    palette = QPalette()
    if color:
        palette.setColor(QPalette.ColorRole.WindowText, QColor(color))
    label.setPalette(palette)


class ProposalDetail(QWidget):
    """The selected row in detail (module doc). The panel says what to show; the detail
    reads the diff and the near-duplicates itself, on workers."""

    #: the chosen fact (its path): the inspector shows the curated version
    path_did_select = Signal(str)
    #: a near-duplicate activated (its path)
    near_did_open = Signal(str)
    #: the chosen fact changed (its findings and diff are being shown)
    fact_did_change = Signal()

    def __init__(self, repo: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("proposalDetail")
        self.queue: Queue | None = None
        self.proposals: list[Proposal] = []
        self.near_of: Callable[[str], list[tuple[str, float]]] | None = None
        self._badge_color: str | None = None
        self._wanted: tuple[str, str] | None = None
        self._proposed_text = ""
        self._shower = BackgroundRead(None, lambda queue, fact, label: proposal_source.show(
            repo, queue, fact, label), done=self._shown, failed=self._show_failed, parent=self)
        self._near_read = BackgroundRead(None, lambda text: self.near_of(text) if self.near_of else [],
                                         done=self._near_done, failed=lambda *_a: None, parent=self)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DETAIL_MS)
        self._timer.timeout.connect(self._show_fact_later)
        self._build()
        self.restyle()

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 4, 0, 0)
        self.title = text_label(self, "proposalTitle")
        self.meta = text_label(self, "proposalMeta")
        self.badge = text_label(self, "proposalBadge")
        for w in (self.title, self.meta, self.badge):
            outer.addWidget(w)
        # (a button per line when the pane is narrow or the font big: nothing elided)
        buttons = FlowLayout(spacing=6)
        self.buttons: dict[str, QPushButton] = {}
        for key, text in BUTTONS:
            button = QPushButton(text, self)
            button.setObjectName(f"proposal_{key}")
            buttons.addWidget(button)
            self.buttons[key] = button
        outer.addLayout(buttons)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.setObjectName("proposalDetailSplit")
        left = QSplitter(Qt.Orientation.Vertical, split)
        left.setObjectName("proposalFindingsSplit")
        self.facts = QTreeWidget(left)
        self.facts.setObjectName("proposalFacts")
        self.facts.setAccessibleName("Facts the proposal changes")
        self.facts.setHeaderLabels(["Fact", "Change", "Checks"])
        self.facts.setRootIsDecorated(False)
        self.facts.header().setStretchLastSection(False)
        self.facts.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2):
            self.facts.header().setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.facts.currentItemChanged.connect(lambda *_: self._fact_chosen())
        # one finding a line, wrapped (a rule's message is a sentence): the room goes here
        self.problems = QListWidget(left)
        self.problems.setObjectName("proposalProblems")
        self.problems.setAccessibleName("Findings as if accepted")
        self.problems.setWordWrap(True)
        self.problems.setUniformItemSizes(False)
        self.problems.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.problems.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        left.setStretchFactor(0, 1)
        left.setStretchFactor(1, 3)
        self.tabs = QTabWidget(split)
        self.tabs.setObjectName("proposalViews")
        self.tabs.setUsesScrollButtons(False)
        self.tabs.setElideMode(Qt.TextElideMode.ElideRight)
        self.diff = QPlainTextEdit(self.tabs)
        self.diff.setObjectName("proposalDiff")
        self.diff.setAccessibleName("Diff against the curated version")
        self.diff.setReadOnly(True)
        # (wrapped: a fact's body is one long line, and a diff scrolled sideways hides it)
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self._highlighter = ThemedDiffHighlighter(self.diff.document())
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
        # (short names: at 1.5× the font three long ones were elided to "Pro…")
        for page, name, tip in ((self.diff, "Diff", "The proposed version against the curated one"),
                                (self.proposed, "Proposed", "The proposed text, rendered"),
                                (self.near, "Similar", "Near-duplicates already on the curated branch")):
            self.tabs.setTabToolTip(self.tabs.addTab(page, name), tip)
        for part in (left, self.tabs):  # (a narrow window squeezes them, never the reverse)
            part.setMinimumWidth(140)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        self.split = split
        outer.addWidget(split, 1)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and hasattr(self, "title"):  # (1.5× the font)
            self.restyle()

    def restyle(self) -> None:
        """Fonts and colours of the scheme and the font in use (after each change)."""
        font = QFont(self.font())
        font.setBold(True)
        font.setPointSizeF(max(font.pointSizeF(), 1.0) * 1.15)
        self.title.setFont(font)
        _tinted(self.title, None)
        _tinted(self.meta, theme.DERIVED.color)
        bold = QFont(self.font())
        bold.setBold(True)
        self.badge.setFont(bold)
        _tinted(self.badge, self._badge_color)
        fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        fixed.setPointSizeF(max(self.font().pointSizeF(), 1.0) * 0.95)
        self.diff.setFont(fixed)
        self._highlighter.restyle()
        # (three rows and the header at any font size)
        self.facts.setMinimumHeight(5 * self.facts.fontMetrics().height() + 8)

    def close_readers(self) -> None:
        self._timer.stop()
        for reader in (self._shower, self._near_read):
            reader.close()

    # -- what the panel shows ---------------------------------------------------------------

    def show_nothing(self, loading: bool) -> None:
        self.proposals = []
        self.facts.clear()
        self.title.setText("Reading the agents' branches…" if loading else "")
        for w in (self.meta, self.badge):
            w.setText("")
        self.problems.clear()
        self.diff.clear()
        self.proposed.show_markdown("")
        self.near.clear()

    def show_commit(self, p: Proposal) -> None:
        """A proposal (per commit): its facts, files and agent state; the first fact chosen."""
        self.proposals = [p]
        self.facts.clear()
        self.title.setText(theme.clip(p.subject, 300))
        self.meta.setText(heading(p))
        for f in p.facts:
            row = QTreeWidgetItem(self.facts, [theme.clip(f.path, 200),
                                               f.change + (" ⇄ conflict" if f.conflict else ""), ""])
            row.setData(0, FACT_ROLE, (p.sha, f.path))
        for pf in p.files:  # (outside kb/: decided like a fact, never carried undecided)
            row = QTreeWidgetItem(self.facts, [theme.clip(pf.path, 200), f"{pf.kind} {pf.change}",
                                               "needs a decision"])
            row.setToolTip(0, "\n".join(pf.summary))
            row.setToolTip(2, "\n".join(pf.summary))
        for other in p.other_files:
            row = QTreeWidgetItem(self.facts, [theme.clip(other, 200), "agent state", "not checked"])
            row.setForeground(0, QBrush(QColor(theme.DERIVED.color)))
        self._choose_first(last=False)

    def show_fact_row(self, path: str, branch: str, status: str, net: str | None,
                      proposals: Sequence[Proposal]) -> None:
        """One fact of a branch (per fact): the proposals touching it; the last one chosen
        (the branch's net version of it)."""
        self.proposals = list(proposals)
        self.facts.clear()
        self.title.setText(theme.clip(path, 300))
        self.meta.setText(f"{branch} · {count(len(proposals), 'proposal')} touch it"
                          + (f" · net: {net}" if net else "") + f" · {status}")
        for p in proposals:
            f = next(x for x in p.facts if x.path == path)
            row = QTreeWidgetItem(self.facts, [theme.clip(f"{p.sha[:10]} {p.subject}", 200),
                                               f.change + (" ⇄ conflict" if f.conflict else ""), ""])
            row.setData(0, FACT_ROLE, (p.sha, f.path))
            row.setToolTip(0, theme.tooltip(heading(p)))
        self._choose_first(last=True)

    def _choose_first(self, *, last: bool) -> None:
        target = self.facts.topLevelItem(self.facts.topLevelItemCount() - 1 if last else 0)
        if target is not None and target.data(0, FACT_ROLE) is not None:
            self.facts.setCurrentItem(target)
            return
        self.problems.clear()
        self.diff.setPlainText("(this commit changes no fact: its files are the agent's own "
                               "state, brought over as written by the review merge)")
        self.proposed.show_markdown("")
        self.near.clear()

    def show_awaiting(self, a: Awaiting) -> None:
        """A fact already on the curated branch that no curator attested."""
        self.proposals = []
        self.facts.clear()
        self.title.setText(theme.clip(a.title, 300))
        self.meta.setText(theme.clip(f"{a.path} · {a.type} · {a.origin} · written by "
                                     f"{a.creator or 'unknown'} · on the curated branch, "
                                     "not attested", 600))
        self.set_badge("Already on the curated branch: A attests it as it stands, R retracts "
                       "it (with a reason), E opens the relabel editor; the inspector shows it.",
                       theme.DERIVED.color, "")
        self.problems.clear()
        self.diff.setPlainText("(a fact already on the curated branch: no proposed change)")
        self.proposed.show_markdown("")
        self.near.clear()

    def set_badge(self, text: str, color: str | None, tip: str) -> None:
        self._badge_color = color
        self.badge.setText(text)
        self.badge.setToolTip(theme.tooltip(tip) if tip else "")
        _tinted(self.badge, color)

    def show_checks(self, b: Badge) -> None:
        """The row's checks (`b`) and each fact's, and the chosen fact's findings."""
        tally = ", ".join(t for t, n in ((count(b.errors, "error"), b.errors),
                                         (count(b.warnings, "warning"), b.warnings)) if n)
        self.set_badge(f"As if accepted: {b.text}" + (f" ({tally})" if tally else ""), b.color,
                       b.detail)
        for i in range(self.facts.topLevelItemCount()):
            row = self.facts.topLevelItem(i)
            data = row.data(0, FACT_ROLE) if row is not None else None
            if row is None or not data:
                continue
            f = next((x for p in self.proposals if p.sha == data[0] for x in p.facts
                      if x.path == data[1]), None)
            if f is not None:
                fb = badge_of([f])
                row.setText(2, fb.text)
                row.setForeground(2, QBrush(QColor(fb.color)))
        self.show_problems()

    def chosen_fact(self) -> tuple[Proposal, ProposedFact] | None:
        row = self.facts.currentItem()
        data = row.data(0, FACT_ROLE) if row is not None else None
        if not data:
            return None
        sha, path = data
        return next(((p, f) for p in self.proposals if p.sha == sha for f in p.facts
                     if f.path == path), None)

    def _problem(self, text: str, color: str, tip: str = "") -> None:
        row = QListWidgetItem(text, self.problems)
        row.setForeground(QBrush(QColor(color)))
        if tip:
            row.setToolTip(theme.tooltip(tip))

    def show_problems(self) -> None:
        """The chosen fact's findings, one a line: a conflict, each problem (the ones the
        curated version has already greyed), or that there is none."""
        self.problems.clear()
        chosen = self.chosen_fact()
        if chosen is None:
            return
        _p, f = chosen
        if f.conflict:
            self._problem("⇄ conflict: the curated branch changed this fact since the agent "
                          "branched (accepting asks how to decide)", theme.ERROR.color)
        if f.depends_on:
            self._problem(f"↳ needs the branch's earlier open proposals: "
                          f"{', '.join(s[:10] for s in f.depends_on)}", theme.WARNING.color)
        if f.problems is None:
            self._problem("… checking as if accepted", theme.DERIVED.color)
            return
        if not f.problems and not f.conflict:
            self._problem("✓ no problem as if accepted", theme.TYPE_MARKS["observation"].color)
        for problem in f.problems:
            color = theme.SEVERITY[problem.severity].color if problem.severity in theme.SEVERITY \
                else theme.DERIVED.color
            self._problem(theme.clip(problem_line(problem), 600),
                          color if problem.new else theme.DERIVED.color, problem_line(problem))

    # -- the chosen fact: findings now, diff and inspector a moment later ---------------------

    def _fact_chosen(self) -> None:
        """The chosen fact's findings now; its diff, text and the inspector a moment later
        (`DETAIL_MS`): a run of S or j presses does not start a diff and redraw the
        inspector for every row it passes."""
        self.show_problems()
        self.fact_did_change.emit()
        if self.chosen_fact() is None or self.queue is None:
            return
        self.diff.setPlainText("Comparing with the curated version…")
        self._timer.start()

    def _show_fact_later(self) -> None:
        chosen = self.chosen_fact()
        if chosen is None or self.queue is None:
            return
        p, f = chosen
        self._wanted = (p.sha, f.path)
        self._shower.start(self.queue, f, p.sha[:10])
        self.path_did_select.emit(f.path)
        self.near.clear()

    def _shown(self, shown: proposal_source.Shown, _queue: Queue, fact: ProposedFact,
               label: str) -> None:
        if self._wanted is None or self._wanted[1] != fact.path or \
                not self._wanted[0].startswith(label):
            return
        head = "(new: the curated branch has no version of this fact)\n" if shown.new else ""
        if fact.change == "deleted":
            head = "(the proposal deletes this fact)\n"
        self.diff.setPlainText(head + (shown.diff or "(no difference from the curated version)"))
        self.proposed.show_markdown(shown.proposed if fact.change != "deleted" else "(deleted)")
        self._proposed_text = shown.proposed
        self.show_near()

    def _show_failed(self, message: str, *_args: object) -> None:
        self.diff.setPlainText(f"(could not compare the versions: {message})")

    def show_near(self) -> None:
        self.near.clear()
        chosen = self.chosen_fact()
        if chosen is None:
            return
        if self.near_of is None:
            QTreeWidgetItem(self.near, ["Semantic search is off or not ready yet.", ""])
            return
        self._near_read.start(self._proposed_text[:4000] or chosen[0].subject)

    def _near_done(self, hits: list[tuple[str, float]], _text: str) -> None:
        self.near.clear()
        chosen = self.chosen_fact()
        own = chosen[1].path if chosen else None
        shown = [(path, score) for path, score in hits if path != own][:10]
        for path, score in shown:
            row = QTreeWidgetItem(self.near, [theme.clip(path, 200), f"{score:.3f}"])
            row.setData(0, FACT_ROLE, path)
        if not shown:
            QTreeWidgetItem(self.near, ["No near-duplicate on the curated branch.", ""])

    def _open_near(self, row: QTreeWidgetItem, _col: int) -> None:
        path = row.data(0, FACT_ROLE)
        if path:
            self.near_did_open.emit(str(path))
