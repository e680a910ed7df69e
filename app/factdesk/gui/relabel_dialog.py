"""The relabel editor: change a fact's envelope, only to legal combinations.

Each closed-vocabulary field is a combo box whose illegal values (given the other fields)
are disabled, with the rule that excludes them as the item's tooltip (`model.legality`).
Below: the attribution sentence the result implies, the exact diff of every file, how
many facts change, and the required reason. Apply (Ctrl+Return) commits through
`Curation.relabel` on the window's writer lane (`operations.Operations`) with the blobs and
branch tip the user saw (a changed file is a conflict, never overwritten); Esc cancels.
The files are read, and each diff preview is worked out, off the GUI thread (the newest
request wins; keystrokes are debounced). The dialog holds no rules of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QKeySequence,
    QShortcut,
    QStandardItem,
    QStandardItemModel,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from factdesk.curation import ChangeSet, Conflict, Curation, CurationError, Relabelable
from factdesk.errors import FactdeskError
from factdesk.gui import dialogs, theme
from factdesk.gui.inspector import caption_label
from factdesk.gui.operations import Operations, reading_curation
from factdesk.gui.workers import BackgroundRead
from factdesk.index import reads
from factdesk.index.indexer import Indexer
from factdesk.index.search import seen_state
from factdesk.model import legality
from factdesk.model.authority import attribution
from factdesk.model.fact import Fact
from factdesk.model.words import count

if TYPE_CHECKING:
    import sqlite3

KEEP = "(keep each)"
NONE = "(none)"
CLOSED = ("type", "kind", "origin", "claim_type", "claimant_type", "subject_kind")
OPEN = ("claimant_agent_id", "subject_ref", "settle_by", "settlement")
LABELS = {
    "type": "Type", "kind": "Kind", "origin": "Origin", "claim_type": "Claim type",
    "claimant_agent_id": "Claimant", "claimant_type": "Claimant type",
    "subject_kind": "Subject kind", "subject_ref": "Subject ref", "settle_by": "Settle by",
    "settlement": "Settlement",
}
MAX_CHECKED = 50  # facts whose legality decides which values are offered in bulk mode


def _shown(key: str, values: Mapping[str, str | None]) -> str:
    """How a combo shows `values[key]`: "(none)" for a key the file leaves out, the claim
    type derived from the type when none is written."""
    if key == "claim_type":
        return legality.claim_of(values)
    value = values.get(key)
    if value is not None:
        return value
    return NONE if key in legality.MAY_BE_ABSENT else ""


class DiffHighlighter(QSyntaxHighlighter):
    """Added lines green, removed lines red, file headers grey (plain text only)."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.formats: dict[str, QTextCharFormat] = {}
        for key, tone in (("+", theme.DIFF_ADDED), ("-", theme.DIFF_REMOVED),
                          ("@", theme.DIFF_HUNK), ("h", theme.DIFF_HEADER)):  # (light or dark)
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(tone.color))
            if tone.on is not None and key in "+-":
                fmt.setBackground(QColor(tone.on.color))
            self.formats[key] = fmt

    def highlightBlock(self, text: str) -> None:
        if text.startswith(("+++", "---", "rename ")):
            self.setFormat(0, len(text), self.formats["h"])
        elif text[:1] in ("+", "-", "@"):
            self.setFormat(0, len(text), self.formats[text[0]])


@dataclass(frozen=True, slots=True)
class Prepared:
    """What the editor starts from, read off the GUI thread (`prepare`)."""

    curation: Curation  #: a reading one (previews; its legality context is warmed)
    labels: list[Relabelable]


def prepare(indexer: Indexer, paths: Sequence[str]) -> Prepared | CurationError:
    """(On a worker.) Read the facts to relabel; a refusal is answered, not raised."""
    try:
        curation = reading_curation(indexer)
        curation.repo_ids  # noqa: B018 - read here, not on the GUI thread at the first check
        return Prepared(curation, [curation.read_labels(p) for p in list(paths)[:MAX_CHECKED]])
    except CurationError as exc:
        return exc


@dataclass(frozen=True, slots=True)
class Seen:
    """The index's view of the facts when the editor opened: blobs and branch tip (a file
    changed since is a conflict), and the first fact's claimant as the inspector names it
    (derived from git when the file writes none)."""

    blobs: dict[str, str]
    head: str | None
    claimant: str | None = None
    claimant_type: str | None = None

    @classmethod
    def of(cls, conn: sqlite3.Connection, paths: Sequence[str]) -> Seen:
        blobs, head = seen_state(conn, paths)
        row = reads.live_fact(conn, paths[0]) if paths else None
        return cls(blobs, head, row["claimant"] if row else None, row["claimant_type"] if row else None)


class RelabelOpener(QObject):
    """Opens the editor once its facts are read in the background; `dialog` is the open one."""

    dialog_did_open = Signal(object)  # RelabelDialog (its Reload: gui/curation_front.py)

    def __init__(self, ops: Operations, parent: QWidget) -> None:
        super().__init__(parent)
        self._ops = ops
        self._parent = parent
        self.dialog: RelabelDialog | None = None
        self._read = BackgroundRead(None, lambda paths, *_: prepare(ops.indexer, paths),
                                    done=self._prepared, failed=self._failed, parent=self)

    def open(self, conn: sqlite3.Connection, paths: list[str], *,
             initial: Mapping[str, str | None] | None = None, reason: str = "",
             applied: Callable[[ChangeSet], None] | None = None) -> None:
        self._read.start(paths, Seen.of(conn, paths), initial, reason, applied)

    def _prepared(self, prepared: Prepared | CurationError, paths: list[str], seen: Seen,
                  initial: Mapping[str, str | None] | None, reason: str,
                  applied: Callable[[ChangeSet], None] | None) -> None:
        if isinstance(prepared, CurationError):
            dialogs.show_error(self._parent, "Cannot relabel", str(prepared))
            return
        dialog = RelabelDialog(self._ops, prepared, paths, seen=seen, parent=self._parent,
                               initial=initial, reason=reason, applied=applied)
        self.dialog = dialog
        dialog.open()
        self.dialog_did_open.emit(dialog)

    def _failed(self, message: str, *_args: object) -> None:
        dialogs.show_error(self._parent, "Cannot relabel", message)

    def close_worker(self) -> None:
        self._read.close()
        if self.dialog is not None:
            self.dialog.close_worker()


class RelabelDialog(QDialog):
    """Relabel one or many facts; `change` holds the ChangeSet after Apply."""

    reload_did_request = Signal()  # (its Reload button, after a conflict)

    def __init__(self, ops: Operations, prepared: Prepared, paths: Sequence[str], *, seen: Seen,
                 parent: QWidget | None = None, initial: Mapping[str, str | None] | None = None,
                 reason: str = "", applied: Callable[[ChangeSet], None] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("relabelDialog")
        self._ops = ops
        self.curation = prepared.curation
        self.paths = list(paths)
        self.seen = seen
        self._applied = applied
        self.change: ChangeSet | None = None
        self.preview: ChangeSet | None = None
        self.error: str | None = None
        #: the changes the shown preview (or error) is for; None while one is worked out
        self._previewed_for: dict[str, str | None] | None = None
        self._preview_read = BackgroundRead(None, self._work_preview, done=self._previewed,
                                            failed=self._preview_failed, parent=self)
        self.finished.connect(lambda _result: self.close_worker())
        #: what each checked fact starts from; a fact unreadable only for its kind or type
        #: (`type: factoid`) is offered too: the relabel repairs it (RELIABILITY B01)
        labels = prepared.labels
        self.facts: list[Fact] = [item.fact for item in labels]
        self.values = [item.values for item in labels]
        self.faults = [item.fault for item in labels if item.fault]
        self.bulk = len(self.paths) > 1
        self.setWindowTitle(f"Relabel {len(self.paths)} facts" if self.bulk
                            else f"Relabel — {self.facts[0].title[:60]}")
        self.combos: dict[str, QComboBox] = {}
        self.edits: dict[str, QLineEdit] = {}
        self._building = True
        self._syncing = False
        #: the combos the user set; the others follow (`_sync_combos`)
        self._chosen: set[str] = set()
        self._build()
        self._sync_combos({})
        if initial:
            for key, value in initial.items():
                self.set_field(key, value)
        self.reason_edit.setText(reason)
        self._building = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(120)
        self._timer.timeout.connect(self.update_preview)
        self.update_preview()
        self.resize(880, 720)

    # -- construction ---------------------------------------------------------------------

    def _common(self, key: str) -> str | object | None:
        values = {v.get(key) for v in self.values}
        return values.pop() if len(values) == 1 else KEEP

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        self.count_label = QLabel(self)
        self.count_label.setObjectName("relabelCount")
        self.count_label.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.count_label)
        form = QFormLayout()
        for key in legality.RELABEL_FIELDS:
            common = self._common(key)
            if key in CLOSED:
                combo = QComboBox(self)
                combo.setObjectName(f"relabel_{key}")
                model = QStandardItemModel(combo)
                if self.bulk:
                    model.appendRow(QStandardItem(KEEP))
                if key in legality.MAY_BE_ABSENT:
                    model.appendRow(QStandardItem(NONE))
                vocab = list(legality.VOCABULARY[key])
                if key == "claimant_type":
                    vocab += [t for t in self.curation.registry.agent_types if t not in vocab]
                for value in vocab:
                    model.appendRow(QStandardItem(value))
                if isinstance(common, str) and common not in vocab:  # as written: `factoid`
                    written = QStandardItem(common)
                    written.setToolTip(theme.tooltip(f"{common!r} is not a knomit {key}: choose one"))
                    model.appendRow(written)
                combo.setModel(model)
                combo.currentIndexChanged.connect(lambda _i, k=key: self._combo_changed(k))
                self.combos[key] = combo
                form.addRow(caption_label(LABELS[key], self), combo)
            else:
                edit = QLineEdit(self)
                edit.setObjectName(f"relabel_{key}")
                if common is KEEP:
                    edit.setPlaceholderText(KEEP)
                elif common is not None:
                    edit.setText(str(common))
                if key == "claimant_agent_id":
                    agents = sorted(self.curation.registry.agents)
                    edit.setToolTip(theme.tooltip("registered agents: " + ", ".join(agents))
                                    if agents else "no agent registry in this corpus")
                if key == "settle_by":
                    edit.setPlaceholderText("YYYY-MM-DD" if common is not KEEP else KEEP)
                edit.textChanged.connect(self._changed)
                self.edits[key] = edit
                form.addRow(caption_label(LABELS[key], self), edit)
        layout.addLayout(form)
        self.attribution_label = QLabel(self)
        self.attribution_label.setObjectName("relabelAttribution")
        self.attribution_label.setTextFormat(Qt.TextFormat.PlainText)
        self.attribution_label.setWordWrap(True)
        layout.addWidget(self.attribution_label)
        self.error_label = QLabel(self)
        self.error_label.setObjectName("relabelError")
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {theme.ERROR_COLOR};")
        layout.addWidget(self.error_label)
        # shown after a conflict: reopens the editor on the files as they now are, with the
        # fields and reason kept (CurationFront.reload_editor; issue 18)
        self.reload_button = QPushButton("Reload", self)
        self.reload_button.setObjectName("relabelReload")
        self.reload_button.hide()
        self.reload_button.clicked.connect(lambda: self.reload_did_request.emit())
        layout.addWidget(self.reload_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.diff_view = QPlainTextEdit(self)
        self.diff_view.setObjectName("relabelDiff")
        self.diff_view.setReadOnly(True)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.diff_view.setFont(mono)
        self._highlighter = DiffHighlighter(self.diff_view.document())
        layout.addWidget(self.diff_view, 1)
        row = QHBoxLayout()
        row.addWidget(caption_label("Reason (required):", self))
        self.reason_edit = QLineEdit(self)
        self.reason_edit.setObjectName("relabelReason")
        self.reason_edit.setPlaceholderText("why: recorded in the commit for the next reader")
        self.reason_edit.textChanged.connect(self._update_buttons)
        row.addWidget(self.reason_edit, 1)
        layout.addLayout(row)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Apply
                                        | QDialogButtonBox.StandardButton.Cancel, self)
        self.apply_button = self.buttons.button(QDialogButtonBox.StandardButton.Apply)
        self.apply_button.setText("Apply (Ctrl+Return)")
        self.apply_button.clicked.connect(self.apply)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.activated.connect(self.apply)

    def _sync_combos(self, changes: Mapping[str, str | None]) -> None:
        """Show in every combo the user has not chosen what the fact will have once
        `changes` are applied (`legality.follow`: the kind follows a new type, a claim type
        is derived from it); "(keep each)" where the selected facts differ."""
        self._syncing = True
        try:
            for key, combo in self.combos.items():
                if key in self._chosen:
                    continue
                shown = {_shown(key, legality.follow(values, changes)) for values in self.values}
                index = combo.findText(shown.pop() if len(shown) == 1 else KEEP)
                combo.setCurrentIndex(max(index, 0))
        finally:
            self._syncing = False

    # -- state ----------------------------------------------------------------------------

    def set_field(self, key: str, value: str | None) -> None:
        """Set a control as a user would (used by the mislabel queue and tests)."""
        if key in self.combos:
            combo = self.combos[key]
            index = combo.findText(NONE if value is None else str(value))
            if index >= 0:
                combo.setCurrentIndex(index)
        elif key in self.edits:
            self.edits[key].setText(value or "")

    def changes(self) -> dict[str, str | None]:
        """The fields the user set (bulk: every one not left on keep). Only a combo the user
        chose counts: the others show what follows from the choices (`_sync_combos`)."""
        chosen: dict[str, str | None] = {
            key: None if text == NONE else text for key in self.combos
            if key in self._chosen and (text := self.combos[key].currentText()) not in (KEEP, "")}
        out = chosen if self.bulk else legality.changes_from_choices(self.values[0], chosen)
        for key, edit in self.edits.items():
            text = edit.text().strip()
            original = self._common(key)
            if self.bulk and not text:
                continue
            value = text or None
            if value != original:
                out[key] = value
        return out

    def _combo_changed(self, key: str) -> None:
        if not self._syncing:
            self._chosen.add(key)
        self._changed()

    def _changed(self) -> None:
        if not self._building:
            self._timer.start()

    def _context(self, fact: Fact, values: Mapping[str, str | None]) -> legality.Context:
        return self.curation.context_for(fact, values=values)

    def _mark_options(self, changes: Mapping[str, str | None]) -> None:
        """Disable the values that break a rule for any checked fact; the rule is the tooltip."""
        for key, combo in self.combos.items():
            model = combo.model()
            assert isinstance(model, QStandardItemModel)
            reasons: dict[str, str] = {}
            for fact, values in zip(self.facts, self.values, strict=True):
                after = legality.follow(values, {k: v for k, v in changes.items() if k != key})
                for value, reason in legality.options(key, after, self._context(fact, values)).items():
                    if reason and value not in reasons:
                        reasons[value] = (reason if not self.bulk else f"{fact.path}: {reason}")
            for row in range(model.rowCount()):
                item = model.item(row)
                value = item.text()
                reason = reasons.get(value)
                current = row == combo.currentIndex()
                item.setEnabled(reason is None or current)
                item.setToolTip(theme.tooltip(reason) if reason else "")

    def update_preview(self) -> None:
        """Legality and attribution now (pure); the diff on a worker (`_previewed`)."""
        changes = self.changes()
        self._sync_combos(changes)
        self._mark_options(changes)
        self.count_label.setText(
            count(len(self.paths), "fact") + " selected" + (f" (legality checked on the first {MAX_CHECKED})"
                                                   if len(self.paths) > MAX_CHECKED else ""))
        fact, values = self.facts[0], self.values[0]
        after = legality.follow(values, changes)
        written = values.get("claimant_agent_id") == after.get("claimant_agent_id")
        self.attribution_label.setText(
            ("Agents will be shown (the first of these facts): " if self.bulk
             else "Agents will be shown: ") + attribution(
            fact.title,  # the claimant as the inspector names it, unless the user changes it
            claimant=after.get("claimant_agent_id") or (self.seen.claimant if written else None),
            claimant_type=after.get("claimant_type") or (self.seen.claimant_type if written else None),
            subject_kind=after.get("subject_kind"), claim_type=legality.claim_of(after)))
        self.error = None
        self.preview = None
        if not changes:
            self._previewed_for = changes
            self.diff_view.setPlainText("")
            self.error_label.setText(
                "Unreadable until relabelled — " + "; ".join(self.faults[:3])
                + ". Choose a known kind and type to repair it." if self.faults
                else "Change a field to see the diff.")
        else:
            self._previewed_for = None
            self._preview_read.start(dict(changes))
        self._update_buttons()

    def _work_preview(self, changes: dict[str, str | None]) -> ChangeSet | CurationError:
        """(On a worker.) The diff `changes` would make, or the refusal."""
        try:
            return self.curation.relabel(self.paths, changes, "preview", expected=self.seen.blobs,
                                         preview=True)
        except CurationError as exc:
            return exc

    def _previewed(self, result: ChangeSet | CurationError, changes: dict[str, str | None]) -> None:
        if changes != self.changes():
            return  # the user changed a field meanwhile: that preview is on its way
        self._previewed_for = changes
        if isinstance(result, CurationError):
            self.error = str(result)
            rule = getattr(result, "rule", None)
            self.error_label.setText(f"Refused{f' [{rule}]' if rule else ''}: {result}")
            self.diff_view.setPlainText("")
        else:
            self.preview = result
            self.error_label.setText("")
            n = len(result.files)
            self.count_label.setText(f"{n} of {count(len(self.paths), 'fact')} "
                                     f"change{'s' if n == 1 else ''}")
            self.diff_view.setPlainText("".join(f.diff for f in result.files)[:400_000])
        self._update_buttons()

    def _preview_failed(self, message: str, *_args: object) -> None:
        self.error = message
        self.error_label.setText(f"Could not preview: {message}")
        self._update_buttons()

    def _update_buttons(self) -> None:
        ok = self.preview is not None and self.error is None and bool(self.reason_edit.text().strip())
        self.apply_button.setEnabled(ok)

    def apply(self) -> None:
        """Commit (Ctrl+Return) on the writer lane. A conflict or refusal is shown and the
        dialog stays open."""
        if self._timer.isActive():
            self._timer.stop()
            self.update_preview()
        if not self.reason_edit.text().strip():
            self.error_label.setText("A reason is required.")
            self.reason_edit.setFocus()
            return
        changes = self.changes()
        if not changes or (self._previewed_for == changes and self.error is not None):
            return  # nothing to change, or refused: the label says why
        paths, reason, seen = self.paths, self.reason_edit.text(), self.seen
        self.apply_button.setEnabled(False)  # (once: the lane runs it)
        self._ops.run(lambda cur: cur.relabel(paths, changes, reason, expected=seen.blobs,
                                              expected_head=seen.head),
                      success=self._did_apply, failed=self._apply_failed)

    def _did_apply(self, changes: ChangeSet) -> None:
        self.change = changes
        self.accept()
        if self._applied is not None:
            self._applied(changes)

    def _apply_failed(self, exc: FactdeskError) -> None:
        self.error = str(exc)
        if isinstance(exc, Conflict):
            self.error_label.setText(f"Conflict — nothing was written: {exc}")
            self.reload_button.show()
            return
        self.error_label.setText(f"Refused: {exc}")
        self._update_buttons()

    def close_worker(self) -> None:
        self._preview_read.close()
