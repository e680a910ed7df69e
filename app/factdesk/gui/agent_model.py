"""The Agents tab's data: what its worker loads (`load_agents`, off the GUI thread) and the
table model over the records (`AgentsModel`). The words of each cell and of the evidence
shown before a type change are pure functions here (no Qt), tested on their own.

A record is `reflect.agents.AgentRecord.as_dict()` (docs/agents.md defines each figure),
plus `proposals` (open proposals, from the review queue when it can be read)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from factdesk.corpus.registry_io import load_registry
from factdesk.curation.registry_ops import actions_in_effect
from factdesk.gui import theme
from factdesk.gui.cells_model import CellsModel
from factdesk.index.indexer import Indexer
from factdesk.reflect.agents import (
    SettingsError,
    Thresholds,
    cached_records,
    default_settings_file,
    load_thresholds,
)

Record = dict[str, Any]


@dataclass(frozen=True, slots=True)
class AgentsLoad:
    """One load of the tab: every agent's record and what the actions need."""

    agents: list[Record]
    #: the records came from the index's cache (this index version's)
    cached: bool
    seconds: float
    thresholds: Thresholds
    settings_file: Path | None
    #: the thresholds file could not be read (the defaults are used): why
    settings_error: str | None


ProposalCounter = Callable[[Path], Mapping[str, int]]


@dataclass(frozen=True, slots=True)
class Extras:
    """What the tab reads after the records (slower: git): the registry's agent types
    (for the type choosers) and the open proposals per agent."""

    types: tuple[str, ...]
    proposals: Mapping[str, int] | None
    proposals_error: str | None = None


def load_extras(repo: Path, proposals: ProposalCounter | None) -> Extras:
    """(A worker's job.) The registry's types (its trust rule reads git) and the open
    proposals (the review queue, git)."""
    types = tuple(load_registry(repo).agent_types)
    if proposals is None:
        return Extras(types, None)
    try:
        return Extras(types, proposals(repo))
    except Exception as exc:  # (the rest of the tab stands without the count)
        return Extras(types, None, f"{type(exc).__name__}: {exc}")


def load_agents(indexer: Indexer, *, today: date | None = None,
                settings_file: Path | None = None) -> AgentsLoad:
    """(A worker's job.) The records, from the index's cache when it holds this version's
    (`reflect.agents.cached_records`); the index must be up to date, which the window
    keeps it. (The open proposals are read apart, after: `ProposalCounter`.)"""
    started = time.perf_counter()
    settings_file = settings_file if settings_file is not None else default_settings_file()
    error = None
    try:
        thresholds = load_thresholds(settings_file)
    except SettingsError as exc:
        thresholds, error = Thresholds(), str(exc)
    data, hit = cached_records(indexer, today=today or date.today(), thresholds=thresholds,
                               actions=lambda: actions_in_effect(indexer.repo))
    return AgentsLoad(data, hit, time.perf_counter() - started, thresholds, settings_file,
                      error)


# -- the words of the cells (pure) ----------------------------------------------------------


def when_text(ts: object) -> str:
    if not isinstance(ts, int):
        return "—"
    return datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%d")


def brier_text(rec: Record) -> str:
    """`0.182 (n=23)`: the score with the settled predictions it averages; `— (n=0)`."""
    b = rec.get("brier")
    score = "—" if b is None else f"{b:.3f}"
    return f"{score} (n={rec.get('settled', 0)})"


def corrections_text(rec: Record) -> str:
    n = rec.get("corrections", 0)
    return f"{n} · {rec.get('correction_rate', 0.0):.1%}" if n else "0"


def open_text(rec: Record) -> str:
    h = rec["hypotheses"]
    return f"{h['open']} ({h['overdue']} overdue)" if h["overdue"] else str(h["open"])


def type_text(rec: Record) -> str:
    if not rec.get("registered"):
        return "unregistered"
    text = rec.get("type") or "(none)"
    return text + " · retired" if rec.get("retired") else text


def suggestion_text(rec: Record) -> str:
    s = rec.get("suggestion")
    if not s:
        return ""
    return f"{s['action']} → {s['to']}"


def split_text(counts: Mapping[str, int]) -> str:
    """`observation 12 · report 3` (largest first)."""
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return " · ".join(f"{k} {v}" for k, v in items) or "—"


def calibration_text(rec: Record) -> str:
    h = rec["hypotheses"]
    promoted = f" ({h['promoted']} promoted in place)" if h["promoted"] else ""
    overdue = f" ({h['overdue']} overdue)" if h["overdue"] else ""
    b = rec.get("brier")
    score = ("no Brier score: no settled prediction yet" if b is None else
             f"Brier {b:.3f} over {rec['settled']} settled prediction"
             f"{'' if rec['settled'] == 1 else 's'}")
    return (f"{h['confirmed']} confirmed{promoted}, {h['refuted']} refuted, {h['open']} open"
            f"{overdue}; {score}")


def evidence_text(rec: Record, new_type: str) -> str:
    """What a curator reads before changing an agent's type: its whole record, and for a
    promotion to persona (or any type about the user) its record on `subject_kind: user`."""
    lines = [f"{rec['id']} — {type_text(rec)} → {new_type}", ""]
    lines.append(f"Facts it claims: {rec['facts']} live, {rec.get('retracted_facts', 0)} retracted")
    lines.append(f"  by claim type: {split_text(rec.get('by_claim_type', {}))}")
    lines.append(f"  by subject kind: {split_text(rec.get('by_subject_kind', {}))}")
    lines.append(f"About the user (subject_kind: user): {rec.get('user_facts', 0)} facts, "
                 f"{rec.get('user_corrections', 0)} corrected by curators")
    lines.append(f"Corrections of its work: {corrections_text(rec)} of the facts it claimed")
    lines.append(f"Authority findings on its facts: {rec.get('authority_findings', 0)}")
    lines.append(f"Calibration: {calibration_text(rec)}")
    s = rec.get("suggestion")
    if s:
        lines.append(f"Suggested from the record: {s['action']} {s['from']} → {s['to']}")
    else:
        lines.append("The record suggests no type change.")
    return "\n".join(lines)


def suggestion_lines(rec: Record, settings_file: Path | None) -> str:
    """The suggestion with the figures and thresholds it rests on; empty without one."""
    s = rec.get("suggestion")
    if not s:
        return ""
    ev, th = s["evidence"], s["thresholds"]
    if s["action"] == "promote":
        why = (f"Brier {ev['brier']:.3f} ≤ {th['max_brier']}, correction rate "
               f"{ev['correction_rate']:.1%} ≤ {th['max_correction_rate']:.0%}, "
               f"{ev['user_facts']} facts about the user ≥ {th['min_user_facts']}")
    else:
        why = (f"Brier {ev['brier']:.3f} ≥ {th['min_brier']} or correction rate "
               f"{ev['correction_rate']:.1%} ≥ {th['min_correction_rate']:.0%}")
    where = f" (thresholds: {settings_file})" if settings_file is not None else ""
    return (f"Suggested: {s['action']} {s['from']} → {s['to']}. {why}; over "
            f"{ev['settled']} settled predictions (at least {th['min_settled']}){where}. "
            "Never applied on its own.")


# -- the table --------------------------------------------------------------------------------

#: (header, cell text, sort key, tooltip)
Column = tuple[str, Callable[[Record], str], Callable[[Record], Any], str]
COLUMNS: tuple[Column, ...] = (
    ("Agent", lambda r: r["id"], lambda r: r["id"].lower(), "the registry id, else git's"),
    ("Type", type_text, lambda r: (not r.get("registered"), r.get("type") or ""),
     "the registry's type; unregistered claimants are flagged"),
    ("Brier (n)", brier_text, lambda r: (r.get("brier") is None, r.get("brier") or 0.0),
     "mean (confidence − outcome)² over n settled predictions: 0 is perfect, 0.25 is a "
     "coin; read a small n as the small sample it is"),
    ("Conf.", lambda r: str(r["hypotheses"]["confirmed"]),
     lambda r: r["hypotheses"]["confirmed"], "hypotheses confirmed (promotions in place included)"),
    ("Ref.", lambda r: str(r["hypotheses"]["refuted"]), lambda r: r["hypotheses"]["refuted"],
     "hypotheses refuted"),
    ("Open hyp.", open_text, lambda r: (r["hypotheses"]["open"], r["hypotheses"]["overdue"]),
     "open hypotheses (overdue among them)"),
    ("Facts", lambda r: str(r["facts"]), lambda r: r["facts"], "live facts it claims"),
    ("A1", lambda r: str(r.get("authority_findings", 0)),
     lambda r: r.get("authority_findings", 0), "authority findings (A1) on its live facts"),
    ("Prop.", lambda r: "—" if r.get("proposals") is None else str(r["proposals"]),
     lambda r: r.get("proposals") or 0,
     "open proposals: its commits on agent/* branches not decided yet"),
    ("Corrected", corrections_text,
     lambda r: (r.get("corrections", 0), r.get("correction_rate", 0.0)),
     "curators' relabels and retractions of its facts: count · rate over its facts"),
    ("Active", lambda r: when_text(r.get("last_activity")),
     lambda r: r.get("last_activity") or 0, "its newest commit"),
    ("Suggests", suggestion_text, lambda r: suggestion_text(r),
     "a type change the record supports (thresholds in settings); never applied on its own"),
)

ID_ROLE = Qt.ItemDataRole.UserRole + 1
#: the columns of words (the others are figures, right-aligned)
TEXT_COLUMNS = frozenset({"Agent", "Type", "Active", "Suggests"})


class AgentsModel(CellsModel):
    """One row per agent (display text only: corpus text never becomes markup)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(len(COLUMNS), parent)

    def cells_of(self, record: Record) -> tuple[str, ...]:
        return tuple(theme.clip(c[1](record), 200) for c in COLUMNS)

    def sort_key(self, column: int) -> Callable[[Record], Any]:
        return COLUMNS[column][2]

    def set_proposals(self, counts: Mapping[str, int] | None) -> None:
        """Fill the open-proposals column (read after the records: it is slower)."""
        col = next(i for i, c in enumerate(COLUMNS) if c[0] == "Prop.")
        for i, r in enumerate(self.rows):
            r["proposals"] = None if counts is None else int(counts.get(r["id"], 0))
            self.set_cell(i, col, COLUMNS[col][1](r))
        if self.rows:
            self.dataChanged.emit(self.index(0, col), self.index(len(self.rows) - 1, col))

    def row_of(self, agent_id: str) -> int | None:
        return next((i for i, r in enumerate(self.rows) if r["id"] == agent_id), None)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][0]
        if role == Qt.ItemDataRole.ToolTipRole:
            return COLUMNS[section][3]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        rec, col = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.display(index)
        if role == ID_ROLE:
            return rec["id"]
        name = COLUMNS[col][0]
        if role == Qt.ItemDataRole.TextAlignmentRole and name not in TEXT_COLUMNS:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole:
            if name == "Type" and not rec.get("registered"):
                return QBrush(QColor(theme.UNREGISTERED.color))
            if name == "A1" and rec.get("authority_findings"):
                return QBrush(QColor(theme.ERROR_COLOR))
            if name == "Suggests" and rec.get("suggestion"):
                return QBrush(QColor(theme.SUGGESTION.color))
        if role == Qt.ItemDataRole.FontRole and name == "Type" and not rec.get("registered"):
            font = QFont()
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == 0:
                return theme.tooltip(
                    f"{rec['id']}\nlisted as: {', '.join(rec.get('roles', []))}\n"
                    f"e-mail: {', '.join(rec.get('emails', [])) or '—'}\n"
                    f"branches: {', '.join(rec.get('branches', [])) or '—'}")
            return COLUMNS[col][3]
        return None
