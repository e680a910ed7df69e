"""The relabel editor: change a fact's envelope, only to legal combinations.

Each closed-vocabulary field is a combo box whose illegal values (given the other fields)
are disabled, with the rule that excludes them as the item's tooltip (`model.legality`).
Below: the attribution sentence the result implies, the exact diff of every file, how
many facts change, and the required reason. Apply (Ctrl+Return) commits through
`Curation.relabel` with the blobs and branch tip the user saw (a changed file is a
conflict, never overwritten); Esc cancels. The dialog holds no rules of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import Qt, QTimer
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
    QVBoxLayout,
    QWidget,
)

from factdesk.curation import ChangeSet, Conflict, Curation, CurationError
from factdesk.gui import theme
from factdesk.gui.inspector import caption_label
from factdesk.model import legality
from factdesk.model.authority import attribution
from factdesk.model.fact import Fact
from factdesk.model.words import count

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
        for key, color in (("+", "#1b5e20"), ("-", "#b71c1c"), ("@", "#455a64"), ("h", "#757575")):
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(color))
            if key in "+-":
                fmt.setBackground(QColor("#e8f5e9" if key == "+" else "#ffebee"))
            self.formats[key] = fmt

    def highlightBlock(self, text: str) -> None:
        if text.startswith(("+++", "---", "rename ")):
            self.setFormat(0, len(text), self.formats["h"])
        elif text[:1] in ("+", "-", "@"):
            self.setFormat(0, len(text), self.formats[text[0]])


class RelabelDialog(QDialog):
    """Relabel one or many facts; `change` holds the ChangeSet after Apply."""

    def __init__(self, curation: Curation, paths: Sequence[str], *, seen_blobs: Mapping[str, str],
                 seen_head: str | None, parent: QWidget | None = None,
                 initial: Mapping[str, str | None] | None = None, reason: str = "") -> None:
        super().__init__(parent)
        self.setObjectName("relabelDialog")
        self.curation = curation
        self.paths = list(paths)
        self.seen_blobs = dict(seen_blobs)
        self.seen_head = seen_head
        self.change: ChangeSet | None = None
        self.preview: ChangeSet | None = None
        self.error: str | None = None
        #: what each checked fact starts from; a fact unreadable only for its kind or type
        #: (`type: factoid`) is offered too: the relabel repairs it (RELIABILITY B01)
        labels = [curation.read_labels(p) for p in self.paths[:MAX_CHECKED]]
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
        changes = self.changes()
        self._sync_combos(changes)
        self._mark_options(changes)
        self.count_label.setText(
            count(len(self.paths), "fact") + " selected" + (f" (legality checked on the first {MAX_CHECKED})"
                                                   if len(self.paths) > MAX_CHECKED else ""))
        fact, values = self.facts[0], self.values[0]
        after = legality.follow(values, changes)
        claim = legality.claim_of(after)
        self.attribution_label.setText(
            ("Agents will be shown (the first of these facts): " if self.bulk
             else "Agents will be shown: ") + attribution(
            fact.title, claimant=after.get("claimant_agent_id"), claimant_type=after.get("claimant_type"),
            subject_kind=after.get("subject_kind"), claim_type=claim))
        self.error = None
        self.preview = None
        if not changes:
            self.diff_view.setPlainText("")
            self.error_label.setText(
                "Unreadable until relabelled — " + "; ".join(self.faults[:3])
                + ". Choose a known kind and type to repair it." if self.faults
                else "Change a field to see the diff.")
        else:
            try:
                self.preview = self.curation.relabel(self.paths, changes, "preview",
                                                     expected=self.seen_blobs, preview=True)
            except CurationError as exc:
                self.error = str(exc)
                rule = getattr(exc, "rule", None)
                self.error_label.setText(f"Refused{f' [{rule}]' if rule else ''}: {exc}")
                self.diff_view.setPlainText("")
            else:
                self.error_label.setText("")
                n = len(self.preview.files)
                self.count_label.setText(f"{n} of {count(len(self.paths), 'fact')} "
                                         f"change{'s' if n == 1 else ''}")
                text = "".join(f.diff for f in self.preview.files)
                self.diff_view.setPlainText(text[:400_000])
        self._update_buttons()

    def _update_buttons(self) -> None:
        ok = self.preview is not None and self.error is None and bool(self.reason_edit.text().strip())
        self.apply_button.setEnabled(ok)

    def apply(self) -> None:
        """Commit (Ctrl+Return). A conflict or refusal is shown and the dialog stays open."""
        self._timer.stop()
        self.update_preview()
        if not self.apply_button.isEnabled():
            if not self.reason_edit.text().strip():
                self.error_label.setText("A reason is required.")
                self.reason_edit.setFocus()
            return
        try:
            self.change = self.curation.relabel(self.paths, self.changes(), self.reason_edit.text(),
                                                expected=self.seen_blobs, expected_head=self.seen_head)
        except Conflict as exc:
            self.error = str(exc)
            self.error_label.setText(f"Conflict — nothing was written: {exc}")
            self.apply_button.setEnabled(False)
            return
        except CurationError as exc:
            self.error = str(exc)
            self.error_label.setText(f"Refused: {exc}")
            return
        self.accept()

