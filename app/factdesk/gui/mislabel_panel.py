"""The suspected-mislabels queue, one item at a time (Prodigy-style).

The checker's heuristics (`model.mislabels`, via `curation.dismissals.queue_from_index`)
propose a relabel for each likely mislabel; the fact is shown beside the suggestion and
the curator accepts (A), edits in the relabel editor (E), dismisses with a reason (D,
remembered in git) or moves on (J/K). The queue is computed off the GUI thread.

A `message-in-memory` finding (an addressed message filed as memory) is fixed by **Move to
messages** (A): the recipients are asked (prefilled with the one the text addresses) and
one commit moves the fact out of kb/ into the message store (`Curation.move_to_messages`),
undone like every other action. **Show all** (the checkbox, Alt+L) is `mislabels --all`:
the full list, with the facts that have no envelope at all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QHBoxLayout,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from factdesk.curation import Curation
from factdesk.gui import theme
from factdesk.gui.inspector import text_label
from factdesk.gui.keys import panel_keys
from factdesk.gui.operations import Operations
from factdesk.gui.panel import IndexChange, LazyRefresh, Window
from factdesk.gui.safe_browser import SafeTextBrowser
from factdesk.gui.workers import BackgroundRead
from factdesk.index import reads
from factdesk.model.message_heuristic import addressed
from factdesk.model.mislabels import Suggestion

if TYPE_CHECKING:
    import sqlite3

#: fields whose value is a list: an answer adds to it, never replaces it
LISTED = ("domain", "entities", "refs")


class MislabelPanel(LazyRefresh, QWidget):
    """The queue tab. Its decisions run through the window's operation pipeline (`ops`);
    `open_editor` and `ask_text` are the window's, so the panel holds no write path of its
    own. The fact shown beside the suggestion is the index's, as in the inspector, which
    follows the queue (`path_did_select`)."""

    queue_did_load = Signal(int)
    caption_did_change = Signal(str)
    path_did_select = Signal(str)
    caption = "Mislabels"
    menu_text = "Suspected mislabels"
    action_name = "showMislabels"

    def __init__(self, ops: Operations, connection: Callable[[], sqlite3.Connection | None], *,
                 open_editor: Callable[..., object], ask_text: Callable[[str, str, str], str | None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mislabelPanel")
        self._ops = ops
        self._connection = connection
        self._open_editor = open_editor
        self._ask_text = ask_text
        self.queue: list[Suggestion] = []
        self.item_index = 0
        self.loaded = False
        from factdesk.curation.dismissals import queue_from_index

        repo = ops.indexer.repo
        self._reader = BackgroundRead.of_index(
            ops.indexer, lambda conn, full=False: queue_from_index(
                repo, conn, include_no_envelope=full),
            done=self._loaded, failed=self._failed, parent=self)
        #: the queue shown is the full list (`mislabels --all`)
        self.full = False
        self._last_pos = 0
        self._shown: sqlite3.Row | None = None
        self._build()

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        top = QHBoxLayout()
        self.status = text_label(self, "mislabelStatus")
        top.addWidget(self.status, 1)
        self.all_box = QCheckBox("Show a&ll (also facts with no envelope)", self)
        self.all_box.setObjectName("mislabel_all")
        self.all_box.setToolTip("The full list, as `factdesk mislabels --all`: also every fact "
                                "that has no claim envelope at all")
        self.all_box.toggled.connect(self._full_toggled)
        top.addWidget(self.all_box)
        outer.addLayout(top)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        card = QWidget(split)
        layout = QVBoxLayout(card)
        self.code_label = text_label(card, "mislabelCode")
        theme.styled(self.code_label, lambda: f"font-weight: bold; color: {theme.WARNING.color};")
        self.explanation = text_label(card, "mislabelExplanation")
        self.proposal = text_label(card, "mislabelProposal")
        self.proposal.setStyleSheet("font-family: monospace;")
        self.heading = heading = text_label(card, "mislabelHeading")
        heading.setText("Proposed relabel:")
        for w in (self.code_label, self.explanation, heading, self.proposal):
            layout.addWidget(w)
        layout.addStretch(1)
        buttons = QGridLayout()
        self.buttons: dict[str, QPushButton] = {}
        for key, text, slot in (("accept", "Accept (A)", self.accept), ("edit", "Edit… (E)", self.edit),
                                ("dismiss", "Dismiss… (D)", self.dismiss),
                                ("previous", "Previous (K)", lambda: self.step(-1)),
                                ("next", "Next (J)", lambda: self.step(1))):
            button = QPushButton(text, card)
            button.setObjectName(f"mislabel_{key}")
            button.clicked.connect(slot)
            buttons.addWidget(button, len(self.buttons) // 3, len(self.buttons) % 3)
            self.buttons[key] = button
        layout.addLayout(buttons)
        fact = QWidget(split)
        fact_layout = QVBoxLayout(fact)
        self.title = text_label(fact, "mislabelTitle")
        title_font = QFont(self.title.font())  # (relative: it grows with the font, issue 24 #8)
        title_font.setPointSizeF(title_font.pointSizeF() * 1.25)
        title_font.setBold(True)
        self.title.setFont(title_font)
        self.path_label = text_label(fact, "mislabelPath")
        theme.styled(self.path_label, lambda: f"color: {theme.DERIVED.color};")
        self.envelope = text_label(fact, "mislabelEnvelope")
        self.body = SafeTextBrowser(fact)
        self.body.setAccessibleName("The fact's body")
        for w in (self.title, self.path_label, self.envelope):
            fact_layout.addWidget(w)
        fact_layout.addWidget(self.body, 1)
        split.addWidget(card)
        split.addWidget(fact)
        split.setSizes([420, 560])
        outer.addWidget(split, 1)
        # J/K are the window's next/previous actions, which step this queue while it is shown
        panel_keys(self, (("A", self.accept), ("E", self.edit), ("D", self.dismiss)))
        # the alternatives: 2 … 9 accept one (one needing the curator's input opens the editor)
        panel_keys(self, [(str(n), partial(self.accept, n - 1)) for n in range(2, 10)])
        self._show()

    # -- loading --------------------------------------------------------------------------

    def refresh(self) -> None:
        """The index changed: read the queue again (the window calls this when in front)."""
        self.load()

    def load(self) -> None:
        """(Re)compute the queue in the background; the current item is kept by path."""
        if self._reader.start(self.all_box.isChecked()):
            self.status.setText("Looking for likely mislabels…")

    def _full_toggled(self, _checked: bool) -> None:
        self.load()

    def _loaded(self, queue: list[Suggestion], full: bool = False) -> None:
        current = self.current()
        self.queue = queue
        self.full = full
        self.loaded = True
        self.item_index = 0
        if current is not None:
            for i, s in enumerate(queue):
                if (s.path, s.code) == (current.path, current.code):
                    self.item_index = i
                    break
            else:
                self.item_index = min(self._last_pos, max(len(queue) - 1, 0))
        self._show()
        self.queue_did_load.emit(len(queue))
        self._counted()

    def _failed(self, message: str, *_args: object) -> None:
        self.status.setText(f"Could not compute the queue: {message}")

    def close_worker(self) -> None:
        self._reader.close()

    def attach(self, window: Window) -> None:
        # the inspector shows the queue's fact while the tab is in front
        self.path_did_select.connect(lambda path: window.inspect_from(self, path))

    def selected_path(self) -> str | None:
        s = self.current()
        return s.path if s is not None else None

    # -- navigation -----------------------------------------------------------------------

    def current(self) -> Suggestion | None:
        return self.queue[self.item_index] if 0 <= self.item_index < len(self.queue) else None

    def step(self, delta: int) -> None:
        if self.queue:
            self.item_index = max(0, min(len(self.queue) - 1, self.item_index + delta))
            self._show()

    def _show(self) -> None:
        s = self.current()
        for button in self.buttons.values():
            button.setEnabled(s is not None)
        move = s is not None and s.proposals[0].action == "move-to-messages"
        self.buttons["accept"].setText("Move to messages (A)" if move else "Accept (A)")
        self.heading.setText("Proposed fix:" if move else "Proposed relabel:")
        if s is None:
            self.status.setText(("No suspected mislabels." if self.loaded else "Not computed yet.")
                                + (" (full list)" if self.full and self.loaded else ""))
            for label in (self.code_label, self.explanation, self.proposal, self.title, self.path_label,
                          self.envelope):
                label.setText("")
            self.body.show_markdown("")
            return
        self.status.setText(f"{self.item_index + 1} of {len(self.queue)} suspected mislabels"
                            + (" (full list: facts with no envelope too)" if self.full else ""))
        self.code_label.setText(s.code)
        self.explanation.setText(s.explanation)
        lines = [f"{k}: {v if v is not None else '(remove)'}" for k, v in s.proposal.items()]
        if move:  # (no field changes: the fact leaves memory)
            lines = [s.proposals[0].label or "move to messages",
                     "one commit: the fact leaves kb/ and becomes a message under msg/,",
                     "its refs kept as referenced_memory_ids (A asks for the recipients)"]
        elif s.needs_input:
            lines.append(f"needs from you: {', '.join(s.needs_input)}")
        if len(s.proposals) > 1:
            lines.append("alternatives (press the number):")  # one a line: "2 a rule: …" ran on
            lines += [f"  {n} {p.label or ', '.join(p.changes)}"
                      for n, p in enumerate(s.proposals[1:9], start=2)]
        self.proposal.setText("\n".join(lines) or "(confirm the envelope)")
        self.path_did_select.emit(s.path)
        conn = self._connection()
        row = reads.live_fact(conn, s.path) if conn is not None else None
        self._shown = row  # (what Move to messages reads the addressee from)
        if row is None:
            self.title.setText(theme.clip(s.path))
            self.envelope.setText("not in the index")
            self.body.show_markdown("")
            return
        claim = "(derived)" if row["claim_type_derived"] else (row["claim_type"] or "(derived)")
        self.title.setText(theme.clip(row["title"]))
        self.path_label.setText(theme.clip(f"{s.path}:{s.line}"))
        self.envelope.setText(
            f"kind {row['kind']} · type {row['type']} · origin {row['origin_raw'] or '(default)'}\n"
            f"claim {claim} · claimant {row['claimant'] or '?'} "
            f"({row['claimant_type'] or '?'}) · subject {row['subject_kind'] or '?'}\n"
            f"refs: {', '.join(json.loads(row['refs'])) or '(none)'}")
        self.body.show_markdown(row["body"])

    # -- decisions ------------------------------------------------------------------------

    def _done(self) -> None:
        """The current item was handled: drop it and show the next one."""
        if 0 <= self.item_index < len(self.queue):
            del self.queue[self.item_index]
        self.item_index = min(self.item_index, max(len(self.queue) - 1, 0))
        self._last_pos = self.item_index
        self._show()
        self._counted()

    def _counted(self) -> None:
        self.caption_did_change.emit(f"Mislabels ({len(self.queue)})")

    def accept(self, choice: int = 0) -> None:
        """A: apply the preferred proposal (2 … 9: an alternative); asks only for what the
        curator must supply."""
        s = self.current()
        if s is None or choice >= len(s.proposals):
            return
        proposal = s.proposals[choice]
        reason = f"{s.code}: {s.explanation}"
        changes = dict(proposal.changes)
        if proposal.action == "relabel" and proposal.needs_input:
            self.edit(choice)
            return
        if proposal.action == "move-to-messages":
            self._move_to_messages(s, reason)
        elif proposal.action == "edit":
            self._accept_edit(s, changes, proposal.needs_input, reason)
        elif proposal.action == "attest":
            self._ops.run(lambda cur: cur.attest([s.path], reason, changes), success=partial(self._did, s))
        else:
            self._ops.run(lambda cur: cur.relabel([s.path], changes, reason), success=partial(self._did, s))

    def _accept_edit(self, s: Suggestion, changes: Mapping[str, object], needs: Sequence[str],
                     reason: str) -> None:
        """An edit that asks the curator for each field it needs; a list is added to, never
        replaced (asked for "refs", a single-source synthesis lost the one it had)."""
        conn = self._connection()
        row = reads.live_fact(conn, s.path) if conn is not None else None
        title = theme.clip(row["title"] if row is not None else s.path, 120)
        added: dict[str, list[str]] = {}
        edits: dict[str, object] = dict(changes)
        for field in needs:
            listed = field in LISTED
            text = self._ask_text(  # (the answer is plain text, the title shown)
                "Accept suggestion", f"{field} to add to “{title}” (comma-separated):" if listed
                else f"{field} of “{title}”:",
                "" if listed or row is None or field not in row.keys()  # noqa: SIM118 - a Row's `in` tests values
                else str(row[field]))
            if not text:
                return
            if listed:  # (the core strips the items and drops empty ones: `Curation.edit`)
                added[field] = text.split(",")
            else:
                edits[field] = text

        def op(cur: Curation):  # type: ignore[no-untyped-def]
            fact = cur.read_fact(s.path)  # the list as the file has it now, on the writer
            return cur.edit([s.path], {**edits, **{f: [*getattr(fact, f), *items]
                                                   for f, items in added.items()}}, reason)

        self._ops.run(op, success=partial(self._did, s))

    def _move_to_messages(self, s: Suggestion, reason: str) -> None:
        """A message filed as memory: ask who it is to (prefilled with the one the text
        addresses), then one commit moves it from kb/ to msg/ (`move_to_messages`)."""
        row = self._shown if self._shown is not None and self._shown["path"] == s.path else None
        title = row["title"] if row is not None else s.path
        found = addressed(title, row["body"] if row is not None else "")
        default = found.to if found is not None and found.to else ""
        text = self._ask_text("Move to messages",
                              f"Who is “{theme.clip(title, 120)}” to? (agent ids or curator, "
                              "comma-separated)", default or "")
        to = [t.strip().lstrip("@") for t in (text or "").split(",") if t.strip().lstrip("@")]
        if not to:
            return
        self._ops.run(lambda cur: cur.move_to_messages(s.path, to, reason),
                      success=partial(self._did, s))

    def _did(self, s: Suggestion, _changes: object = None) -> None:
        """`s` was handled (its action committed): drop it, show the next one."""
        if s not in self.queue:
            return
        at = self.queue.index(s)
        if at == self.item_index:
            self._done()
            return
        del self.queue[at]  # (the curator moved on meanwhile: stay on the item shown)
        if at < self.item_index:
            self.item_index -= 1
        self._show()
        self._counted()

    def edit(self, choice: int = 0) -> None:
        """E: open the relabel editor prefilled with the proposal (`choice`: an
        alternative's); a proposal that edits a field the editor does not hold, such as refs,
        is asked for as A asks."""
        s = self.current()
        if s is None or choice >= len(s.proposals):
            return
        if s.proposals[choice].action in ("edit", "move-to-messages"):
            self.accept(choice)
            return
        self._open_editor([s.path], initial=dict(s.proposals[choice].changes),
                          reason=f"{s.code}: {s.explanation}", applied=partial(self._did, s))

    def dismiss(self) -> None:
        """D: not a mislabel; the reason and the fact's version are committed."""
        s = self.current()
        if s is None:
            return
        reason = self._ask_text("Dismiss suggestion", f"Why is {s.code} wrong for this fact?",
                                "checked: correctly labelled")
        if not reason:
            return
        self._ops.run(lambda cur: cur.dismiss(s.path, s.code, reason), success=partial(self._did, s))

    # -- Panel ------------------------------------------------------------------------------

    def tab_widget(self) -> QWidget:
        return self

    def index_did_change(self, change: IndexChange) -> None:
        # (a fix from the Facts tab, an undo, an agent's commit) read again when in front:
        # it takes ~15 s at 100,000 facts, too long to redo for every commit unseen
        if self.loaded:
            self.refresh_when_seen(change)

    def tab_did_show(self) -> None:
        if not self.loaded:
            self.load()
        else:
            self.catch_up()
