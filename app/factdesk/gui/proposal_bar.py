"""The bar above the Proposals queue: which branch (or the facts awaiting attestation),
per commit or per fact, which status, which findings, in what order, and "Accept all
clean…". A `FlowLayout`: one line while the room lasts, more when it does not (at 1.5×
the font nothing is cut, nothing pushed off screen; a button is never elided)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QPushButton, QSizePolicy, QWidget

from factdesk.gui import theme
from factdesk.gui.flow_layout import FlowLayout
from factdesk.review import rows
from factdesk.review.model import Queue

STATUSES = (("open", "Open"), ("accepted", "Accepted"), ("rejected", "Rejected"), ("all", "All"))
MODES = (("commit", "Per commit"), ("fact", "Per fact"))
FINDINGS = (("any", "Any findings"), ("problem", "Any problem"), ("error", "✗ Errors"),
            ("warning", "⚠ Warnings"), ("conflict", "⇄ Conflicts"),
            ("depends", "↳ After an open one"), ("clean", "✓ Clean"))
ORDERS = (("queue", "Queue order"), ("worst", "Worst first"))
#: the branch box's second source: derived facts already on the curated branch
AWAITING = "@awaiting"


def choose(box: QComboBox, key: object) -> None:
    """Show the entry `key` chosen (the first when there is none)."""
    box.setCurrentIndex(max(box.findData(key), 0))


class FilterBar(QWidget):
    """The bar (module doc). Each choice calls its slot with the chosen key."""

    def __init__(self, parent: QWidget, *, branch: Callable[[], None],
                 mode: Callable[[str], None], status: Callable[[str], None],
                 findings: Callable[[str], None], order: Callable[[str], None],
                 accept_clean: Callable[[], None]) -> None:
        super().__init__(parent)
        layout = FlowLayout(self, spacing=6)
        self.branch_box = QComboBox(self)
        self.branch_box.setObjectName("proposalBranches")
        # (never sized by its longest entry: the tab must not widen the window's minimum)
        self.branch_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.branch_box.setMinimumContentsLength(22)
        self.branch_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.branch_box.activated.connect(lambda _i: branch())
        self.mode_box = self._combo("proposalMode", MODES, mode)
        self.status_box = self._combo("proposalStatusFilter", STATUSES, status)
        self.findings_box = self._combo("proposalFindingsFilter", FINDINGS, findings)
        self.findings_box.setToolTip("Only the rows whose checks found this (N / Shift+N: the "
                                     "next / previous row with a finding)")
        self.order_box = self._combo("proposalOrder", ORDERS, order)
        self.clean_button = QPushButton("Accept all clean…", self)
        self.clean_button.setObjectName("proposal_acceptClean")
        self.clean_button.clicked.connect(accept_clean)
        for w in (self.branch_box, self.mode_box, self.status_box, self.findings_box,
                  self.order_box, self.clean_button):
            layout.addWidget(w)

    def _combo(self, name: str, choices: Sequence[tuple[str, str]],
               chosen: Callable[[str], None]) -> QComboBox:
        box = QComboBox(self)
        box.setObjectName(name)
        for key, text in choices:
            box.addItem(text, key)
        box.activated.connect(lambda _i: chosen(box.currentData()))
        return box

    def widgets(self) -> list[QWidget]:
        return [self.branch_box, self.mode_box, self.status_box, self.findings_box,
                self.order_box, self.clean_button]

    def fill_branches(self, queue: Queue | None, awaiting: int | None, chosen: str | None) -> None:
        """The branches with their open counts, then the facts awaiting attestation."""
        box = self.branch_box
        box.clear()
        if queue is None:
            box.addItem("(no agent branches read yet)", None)
            return
        box.addItem(f"All agent branches ({rows.waiting(queue)} open)", None)
        for b in queue.branches:
            box.addItem(f"{b.name} — {b.agent}: {b.open} open of {b.ahead} ahead", b.name)
            box.setItemData(box.count() - 1, theme.tooltip(
                f"{b.name}\nagent {b.agent}\nmerge base {b.base[:12]} · tip {b.tip[:12]}"),
                Qt.ItemDataRole.ToolTipRole)
        waiting = "" if awaiting is None else f" ({awaiting})"
        box.addItem(f"On {queue.curated}: distilled/discovered awaiting attestation{waiting}",
                    AWAITING)
        box.setCurrentIndex(max(box.findData(chosen), 0) if chosen else 0)
