"""The Proposals tab's queue as a Qt model: one row per `review.rows.Row` (a proposal, one
fact of a branch, or a fact awaiting attestation), its cells made when drawn.

The rows, their grouping and their findings come from `review.rows` (pure, shared with
`factdesk proposals`); the model only words them (`gui/proposal_views.py`'s badges) and
colours them from the theme when Qt asks, so a change of scheme is a repaint
(`restyle`), never a stale colour kept in an item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from factdesk.gui import theme
from factdesk.gui.proposal_views import STATUS_COLORS, Badge, badge_of, changes_text, clean_badge
from factdesk.review import clean
from factdesk.review.rows import Findings, Row, findings, row_facts, verdict_of

if TYPE_CHECKING:
    from factdesk.review.model import Proposal
    from factdesk.review.proposals import Awaiting

KEY_ROLE = Qt.ItemDataRole.UserRole
HEADERS = {"commit": ("Proposal", "Op", "Changes", "Checks", "Status"),
           "fact": ("Fact", "Change", "Proposals", "Checks", "Status"),
           "awaiting": ("Fact", "Origin", "Type", "Written by", "Status")}
CHECKS = 3


class QueueModel(QAbstractTableModel):
    """The queue (module doc). `set_rows` replaces every row (after a read on the worker,
    or a filter); `refresh` redraws the rows of some proposals (their checks came)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[Row] = []
        self.mode = "commit"
        self.by_sha: Mapping[str, Proposal] = {}
        self.verdicts: Mapping[str, clean.Verdict] = {}
        self.awaiting: dict[str, Awaiting] = {}
        #: rows whose decision is on its way (key → what it does), rows skipped
        self.pending: Mapping[tuple[str, ...], str] = {}
        self.skipped: set[tuple[str, ...]] = set()
        self._at: dict[tuple[str, ...], int] = {}
        self._badges: dict[tuple[str, ...], Badge] = {}
        self._italic = QFont()
        self._italic.setItalic(True)

    # -- filling --------------------------------------------------------------------------

    def set_rows(self, rows: Sequence[Row], *, mode: str, by_sha: Mapping[str, Proposal],
                 verdicts: Mapping[str, clean.Verdict],
                 awaiting: Sequence[Awaiting] = ()) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.mode = mode
        self.by_sha = by_sha
        self.verdicts = verdicts
        self.awaiting = {a.path: a for a in awaiting}
        self._at = {r.key: i for i, r in enumerate(self.rows)}
        self._badges = {}
        self.endResetModel()

    def refresh(self, shas: Sequence[str] = (), keys: Sequence[tuple[str, ...]] = ()) -> None:
        """Redraw the rows of the proposals `shas` and the rows `keys`."""
        wanted = set(shas)
        at = [i for i, r in enumerate(self.rows) if wanted & set(r.shas)] if wanted else []
        at += [self._at[k] for k in keys if k in self._at]
        for i in at:
            self._badges.pop(self.rows[i].key, None)
        if at:  # (one signal for the span: a signal a row made the view measure each row anew,
            # 3 s for the 400 rows a queue re-read redraws)
            self.dataChanged.emit(self.index(min(at), 0), self.index(max(at), self.columnCount() - 1))

    def restyle(self) -> None:
        """The scheme changed: every colour is asked again."""
        self._badges = {}
        if self.rows:
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(len(self.rows) - 1, self.columnCount() - 1))

    # -- reading --------------------------------------------------------------------------

    def row_at(self, key: tuple[str, ...] | None) -> int:
        return self._at.get(key, -1) if key is not None else -1

    def row(self, index: int) -> Row | None:
        return self.rows[index] if 0 <= index < len(self.rows) else None

    def findings(self, row: Row) -> Findings:
        """What the row's checks found (`review.rows.findings`)."""
        return findings(row_facts(row, self.by_sha), verdict_of(self.verdicts, row.shas))

    def badge(self, row: Row) -> Badge:
        """The row's checks in a word (cached until its proposals are checked again)."""
        cached = self._badges.get(row.key)
        if cached is None:
            cached = self._badges[row.key] = self._make_badge(row)
        return cached

    def _make_badge(self, row: Row) -> Badge:
        facts = row_facts(row, self.by_sha)
        if row.path is None and not facts:
            p = self.by_sha.get(row.shas[0]) if row.shas else None
            base = Badge("agent state", theme.DERIVED.color, "files outside kb/") if p is not None \
                else Badge("", theme.DERIVED.color, "")
            return clean_badge(base, verdict_of(self.verdicts, row.shas))
        return clean_badge(badge_of(facts), verdict_of(self.verdicts, row.shas))

    def text(self, index: int, column: int) -> str:
        """A cell's text, as shown."""
        row = self.row(index)
        return "" if row is None else self._text(row, column)

    def _status(self, row: Row) -> str:
        return self.pending.get(row.key) or ("skipped" if row.key in self.skipped else row.status)

    def _text(self, row: Row, column: int) -> str:
        if column == 4:
            return self._status(row)
        if row.key[0] == "a":
            a = self.awaiting.get(row.path or "")
            if a is None:
                return ""
            return [theme.clip(a.title, 200), a.origin, a.type, theme.clip(a.creator, 80)][column]
        if column == CHECKS:
            return self.badge(row).text
        if row.path is None:
            p = self.by_sha.get(row.shas[0])
            if p is None:
                return ""
            return [theme.clip(p.subject, 200), p.op or "",
                    changes_text(p.facts, p.other_files, p.files)][column]
        members = [p for s in row.shas if (p := self.by_sha.get(s)) is not None
                   and any(f.path == row.path for f in p.facts)]
        return [theme.clip(row.path, 200), row.change, str(len(members))][column]

    def _tooltip(self, row: Row, column: int) -> str:
        if column == CHECKS and row.key[0] != "a":
            return self.badge(row).detail
        if column != 0:
            return ""
        if row.key[0] == "a":
            a = self.awaiting.get(row.path or "")
            return f"{a.title}\n{a.path}" if a is not None else ""
        if row.path is None:
            p = self.by_sha.get(row.shas[0])
            return "" if p is None else (f"{p.subject}\n{p.sha}\n{p.branch} · {p.author_name} "
                                         f"<{p.author_email}>")
        return f"{row.path}\n{row.branch}\n" + "\n".join(
            f"{s[:10]} {p.subject}" for s in row.shas if (p := self.by_sha.get(s)) is not None)

    def _color(self, row: Row, column: int) -> str | None:
        if row.key in self.pending:
            return theme.DERIVED.color
        if column == CHECKS and row.key[0] != "a":
            return self.badge(row).color
        if column == 4:
            return STATUS_COLORS.get(row.status, theme.DERIVED).color
        return None

    # -- QAbstractTableModel --------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else 5

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < 5:
            return HEADERS.get(self.mode, HEADERS["commit"])[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> object:
        row = self.row(index.row()) if index.isValid() else None
        if row is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(row, column)
        if role == KEY_ROLE:
            return row.key
        if role == Qt.ItemDataRole.ForegroundRole:
            color = self._color(row, column)
            return QBrush(QColor(color)) if color else None
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = self._tooltip(row, column)
            return theme.tooltip(tip) if tip else None
        if role == Qt.ItemDataRole.FontRole and (row.key in self.pending or row.key in self.skipped):
            return self._italic
        return None
