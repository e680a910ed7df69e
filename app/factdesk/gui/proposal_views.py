"""The Proposals tab's pieces: badges (what a proposal's checks say, in a word and a
colour), the queue's rows (per commit or per fact), the dialogs of a decision (a refusal
with its override, a conflict's three ways out, the edit-then-accept editor, the preview
of "accept all clean"). Everything shown from the corpus is plain text (RELIABILITY H01).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import yaml
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from factdesk.corpus.codec import go_trim_space
from factdesk.gui import theme
from factdesk.gui.inspector import caption_label, plain_label
from factdesk.model.words import count
from factdesk.review import clean
from factdesk.review.model import Proposal, ProposedFact, ProposedFile, ReviewProblem

PENDING = "…"
CLEAN = "✓ clean"
CONFLICT_MARK = "⇄"
#: a proposal's status colour (theme.PROPOSAL_STATUS: light and dark)
STATUS_COLORS = theme.PROPOSAL_STATUS


@dataclass(frozen=True, slots=True)
class Badge:
    """A proposal's (or one fact's) checks in a word: `✓ clean`, `✗ 2 errors`, `⚠ 1`."""

    text: str
    color: str
    #: the codes it names (the tooltip), errors first
    detail: str
    errors: int = 0
    warnings: int = 0
    conflict: bool = False

    @property
    def clean(self) -> bool:
        return not self.errors and not self.conflict


def badge_of(facts: Sequence[ProposedFact]) -> Badge:
    """The badge of a proposal's facts (or one fact): the problems the proposal brings
    (`new`), its conflicts; problems the curated version has already are only listed in
    the tooltip. Unchecked facts: the pending badge."""
    conflict = any(f.conflict for f in facts)
    if any(f.problems is None and f.change != "deleted" for f in facts) and not conflict:
        return Badge(PENDING, theme.DERIVED_COLOR, "checking…")
    problems = [p for f in facts for p in (f.problems or ())]
    new = [p for p in problems if p.new]
    errors = [p for p in new if p.severity == "error"]
    warnings = [p for p in new if p.severity == "warning"]
    codes = sorted({p.code for p in errors}) + sorted({p.code for p in warnings} - {p.code for p in errors})
    old = len(problems) - len(new)
    detail = "; ".join(codes) + (f" (and {old} the curated version has already)" if old else "")
    parts = []
    if conflict:
        parts.append(f"{CONFLICT_MARK} conflict")
    if errors:
        parts.append(f"✗ {' '.join(sorted({p.code for p in errors}))}")
    if warnings:
        parts.append(f"⚠ {len(warnings)}")
    if not parts:
        return Badge(CLEAN, theme.TYPE_MARKS["observation"].color,
                     f"no new problem{f' ({old} already on the curated version)' if old else ''}")
    color = theme.ERROR_COLOR if errors or conflict else theme.SEVERITY_COLORS["warning"]
    return Badge(" ".join(parts), color, detail or "conflict", len(errors), len(warnings), conflict)


#: a verdict of `review.clean` in a word, where the problems alone say nothing against it
CLEAN_WORDS = {clean.DEPENDS: "↳ after an open one", clean.OUTSIDE: "◇ files outside kb/",
               clean.AUTHOR: "◇ other author", clean.CONFLICT: f"{CONFLICT_MARK} conflict",
               clean.PATH: "✗ path"}


def clean_badge(badge: Badge, verdict: clean.Verdict | None) -> Badge:
    """The badge as "Accept all clean" sees it (`review.clean`, the one definition): ✓ only
    on what it takes; a proposal it leaves open says why (its tooltip in full)."""
    if verdict is None or badge.text == PENDING:
        return badge
    if verdict.kind == clean.UNCHECKED:
        return Badge(PENDING, theme.DERIVED_COLOR, verdict.why)
    if verdict.clean:
        text = CLEAN if badge.text == CLEAN else f"✓ {badge.text}"
        return Badge(text, theme.TYPE_MARKS["observation"].color,
                     f"clean: Accept all clean takes it. {badge.detail}", badge.errors,
                     badge.warnings, badge.conflict)
    if badge.errors or badge.conflict:
        return replace(badge, detail=f"{badge.detail}. Stays open: {verdict.why}")
    return Badge(CLEAN_WORDS.get(verdict.kind, verdict.kind), theme.DERIVED_COLOR,
                 f"Accept all clean leaves it open: {verdict.why}", badge.errors, badge.warnings)


def changes_text(facts: Sequence[ProposedFact], other: Sequence[str],
                 files: Sequence[ProposedFile] = ()) -> str:
    """`+2 ~1 −0` (and `⚑ ontology` for each kind of file outside kb/ to decide), or
    `agent state` for a commit that touches no fact."""
    kinds = " ".join(f"⚑ {k}" for k in dict.fromkeys(f.kind for f in files))
    if not facts:
        return kinds or (f"agent state ({len(other)})" if other else "—")
    added = sum(f.change == "added" for f in facts)
    changed = sum(f.change == "modified" for f in facts)
    deleted = sum(f.change == "deleted" for f in facts)
    return " ".join(t for t, n in ((f"+{added}", added), (f"~{changed}", changed),
                                   (f"−{deleted}", deleted), (kinds, kinds)) if n)


def heading(proposal: Proposal) -> str:
    when = datetime.fromtimestamp(proposal.time).strftime("%Y-%m-%d %H:%M") if proposal.time else "—"
    op = f"+{proposal.op}" if proposal.op else "(no op)"
    kind = f" · {proposal.kind}" if proposal.kind else ""
    status = proposal.status + (" (overridden)" if proposal.overridden else "")
    return (f"{proposal.sha[:12]} on {proposal.branch} · {proposal.author_name} {op}{kind} · "
            f"{when} · {status}")


def problem_line(problem: ReviewProblem) -> str:
    mark = "✗" if problem.severity == "error" else "⚠"
    old = "" if problem.new else ", the curated version has it too"
    return f"{mark} {problem.code} ({problem.severity}{old}): {problem.message}"


# -- dialogs ---------------------------------------------------------------------------------


def _message_dialog(parent: QWidget | None, name: str, title: str, text: str) -> QDialog:
    dialog = QDialog(parent)
    dialog.setObjectName(name)
    dialog.setWindowTitle(title)
    layout = QVBoxLayout(dialog)
    label = plain_label(theme.clip(text, 4000), dialog, name=f"{name}Text")
    label.setWordWrap(True)
    label.setMinimumWidth(420)
    layout.addWidget(label)
    return dialog


class ChoiceDialog(QDialog):
    """A question with a few named ways out (`choice`: the chosen key, None when cancelled)."""

    def __init__(self, parent: QWidget | None, name: str, title: str, text: str,
                 choices: Sequence[tuple[str, str]]) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setWindowTitle(title)
        self.choice: str | None = None
        layout = QVBoxLayout(self)
        label = plain_label(theme.clip(text, 4000), self, name=f"{name}Text")
        label.setWordWrap(True)
        label.setMinimumWidth(460)
        layout.addWidget(label)
        buttons = QDialogButtonBox(self)
        self.buttons: dict[str, QPushButton] = {}
        for key, caption in choices:
            button = buttons.addButton(caption, QDialogButtonBox.ButtonRole.AcceptRole)
            button.setObjectName(f"{name}_{key}")
            button.clicked.connect(lambda _=False, k=key: self._choose(k))
            self.buttons[key] = button
        cancel = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        cancel.setObjectName(f"{name}_cancel")
        cancel.clicked.connect(self.reject)
        layout.addWidget(buttons)

    def _choose(self, key: str) -> None:
        self.choice = key
        self.accept()


def refusal_dialog(parent: QWidget | None, rule: str | None, message: str) -> ChoiceDialog:
    """Accepting broke a rule: say which; the curator may override it with a reason."""
    return ChoiceDialog(parent, "refusalDialog", f"Refused [{rule or 'rule'}]",
                        f"Accepting this proposal is refused: {message}\n\nOverride the rule "
                        "only with a reason; the reason and the rule are recorded in the commit.",
                        [("override", "Override with reason…")])


def conflict_dialog(parent: QWidget | None, message: str) -> ChoiceDialog:
    """The curated branch changed the same fact since the agent branched: how to decide."""
    return ChoiceDialog(parent, "conflictDialog", "Conflict with the curated version",
                        f"{message}\n\nThe curated version is never overwritten silently. "
                        "Keep it (the proposal is rejected), take the proposed version over "
                        "it (recorded as an override), or edit a merged version.",
                        [("keep", "Keep curated"), ("take", "Take proposed…"),
                         ("edit", "Edit merged…")])


def preview_lines(taken: Sequence[str], left: Sequence[clean.Verdict],
                  by_sha: Mapping[str, Proposal]) -> tuple[list[str], list[str]]:
    """The preview's two listings: each proposal the change set takes (by its sha, as it
    names them), and each it leaves open with why."""
    def line(sha: str) -> str:
        p = by_sha.get(sha)
        return f"{sha[:10]}  " + (f"{p.subject}  ({changes_text(p.facts, p.other_files, p.files)})"
                                  if p is not None else "")

    return [line(sha) for sha in taken], [f"{line(v.sha)}  — {v.why}" for v in left]


def preview_dialog(parent: QWidget | None, branch: str, lines: Sequence[str],
                   left: Sequence[str], tally: str = "") -> QDialog:
    """"Accept all clean" previewed: what one commit would take (OK commits it), and each
    open proposal it leaves open with why (`review.clean`)."""
    dialog = QDialog(parent)
    dialog.setObjectName("acceptCleanPreview")
    dialog.setWindowTitle(f"Accept every clean proposal of {branch}")
    layout = QVBoxLayout(dialog)
    layout.addWidget(plain_label(f"One commit would accept {count(len(lines), 'proposal')}:",
                                 dialog))
    for name, text, empty, stretch in (("acceptCleanList", lines, "(nothing is clean)", 2),
                                       ("acceptCleanLeft", left, "", 1)):
        if name == "acceptCleanLeft":
            if not left:
                break
            said = plain_label(f"{tally or 'They stay open'}. Each, with why:", dialog)
            said.setWordWrap(True)
            layout.addWidget(said)
        listing = QPlainTextEdit(dialog)
        listing.setObjectName(name)
        listing.setReadOnly(True)
        listing.setPlainText("\n".join(theme.clip(line, 300) for line in text) or empty)
        listing.setMinimumSize(560, 120 * stretch)
        layout.addWidget(listing, stretch)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                               | QDialogButtonBox.StandardButton.Cancel, dialog)
    ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
    ok.setText("Accept these")
    ok.setObjectName("acceptCleanOk")
    ok.setEnabled(bool(lines))
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(buttons)
    return dialog


# -- the edit-then-accept editor -------------------------------------------------------------


def _split(text: str) -> tuple[str, str, str] | None:
    """(frontmatter, title, body) of a fact's text; None when it has no frontmatter."""
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 3)
    if end < 0:
        return None
    front, rest = text[4:end + 1], text[end + 5:].lstrip("\n")
    first, _, body = rest.partition("\n")
    if not first.startswith("#"):
        return front, "", rest
    return front, go_trim_space(first.lstrip("#")), body.lstrip("\n")  # (knomit's title)


def field_text(value: object) -> str:
    """A frontmatter value as the editor shows it (YAML flow: `[a, b]`, `0.8`, `text`)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("...").strip()


class EditDialog(QDialog):
    """The proposed version's envelope fields and body, prefilled; `result_bytes()` is the
    curator's corrected file (only the edited keys and text change: `corpus.writer`)."""

    def __init__(self, parent: QWidget | None, path: str, data: bytes, *,
                 title: str = "Edit, then accept", note: str = "") -> None:
        super().__init__(parent)
        self.setObjectName("proposalEditor")
        self.setWindowTitle(f"{title}: {path}")
        self.path = path
        self.original = data
        text = data.decode("utf-8", "replace")
        parts = _split(text)
        self.fields: dict[str, QLineEdit] = {}
        self.values: dict[str, object] = {}
        layout = QVBoxLayout(self)
        if note:
            hint = plain_label(note, self)
            hint.setWordWrap(True)
            layout.addWidget(hint)
        form_host = QWidget(self)
        form = QFormLayout(form_host)
        if parts is not None:
            try:
                loaded = yaml.safe_load(parts[0]) or {}
            except yaml.YAMLError:
                loaded = {}
            if isinstance(loaded, dict):
                self.values = {str(k): v for k, v in loaded.items()}
        for key, value in self.values.items():
            edit = QLineEdit(field_text(value), form_host)
            edit.setObjectName(f"edit_{key}")
            form.addRow(caption_label(key, form_host), edit)
            self.fields[key] = edit
        self.title_edit = QLineEdit(parts[1] if parts else "", form_host)
        self.title_edit.setObjectName("edit_title")
        form.addRow(caption_label("title", form_host), self.title_edit)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(form_host)
        layout.addWidget(scroll, 2)
        self.body = QPlainTextEdit(self)
        self.body.setObjectName("edit_body")
        self.body.setPlainText(parts[2] if parts else text)
        layout.addWidget(plain_label("Body", self))
        layout.addWidget(self.body, 3)
        self.error = QLabel(self)
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setStyleSheet(f"color: {theme.ERROR_COLOR};")
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel, self)
        ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText("Accept edited")
        ok.setObjectName("proposalEditorOk")
        buttons.accepted.connect(self._try_accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(720, 640)
        self._result: bytes | None = None

    def changes(self) -> dict[str, object]:
        """The edited keys with their new values (an emptied field: the key goes)."""
        out: dict[str, object] = {}
        for key, edit in self.fields.items():
            text = edit.text().strip()
            if text == field_text(self.values[key]).strip():
                continue
            if not text:
                out[key] = None
                continue
            try:
                value = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise ValueError(f"{key}: {exc}") from None
            out[key] = text if isinstance(value, (dict, bool)) or value is None else value
        return out

    def result_bytes(self) -> bytes | None:
        return self._result

    def _try_accept(self) -> None:
        from factdesk.corpus.writer import WriteRefused, edit_frontmatter, edit_text

        try:
            data = self.original
            changes = self.changes()
            if changes:
                data = edit_frontmatter(data, changes)  # type: ignore[arg-type]
            parts = _split(self.original.decode("utf-8", "replace"))
            title = self.title_edit.text().strip()
            body = self.body.toPlainText()
            if parts is None:
                data = body.encode("utf-8")
            elif title != parts[1] or body != parts[2]:
                data = edit_text(data, title=title if title != parts[1] else None,
                                 body=body if body != parts[2] else None)
        except (ValueError, TypeError, WriteRefused) as exc:
            self.error.setText(str(exc))
            return
        self._result = data
        self.accept()


def edited_note(proposal: Proposal, fact: ProposedFact) -> str:
    return (f"{fact.path} as {proposal.author_name} proposed it ({proposal.sha[:10]}). Your "
            "correction becomes part of the accepted commit, which says it was edited.")


def lines_of(values: Mapping[str, str]) -> list[str]:
    return [f"{k}: {v}" for k, v in values.items()]
