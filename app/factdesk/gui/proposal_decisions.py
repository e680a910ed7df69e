"""The Proposals tab's decisions: what A, R, E and S do to the selected row, "Accept all
clean…", and how a refusal or a conflict is answered.

Every decision is one commit through the window's writer lane (`ops.run`), so the index,
the undo stack and every tab follow it (`operation_did_execute`); Ctrl+Z reopens it. The
row is marked at once and the queue moves on before the commit lands (`pending`); a
refused accept names its rule and offers an override with a reason, a conflict offers
keep curated / take proposed / edit merged. The rules are `review.*`'s
(`gui/proposal_source.py` is how it asks); this controller only sequences them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QDialog

from factdesk.curation import ChangeSet, Conflict, Refused
from factdesk.errors import FactdeskError
from factdesk.gui import dialogs, proposal_source, theme
from factdesk.gui.proposal_views import (
    EditDialog,
    conflict_dialog,
    edited_note,
    preview_dialog,
    preview_lines,
    refusal_dialog,
)
from factdesk.gui.workers import BackgroundRead
from factdesk.review import clean
from factdesk.review.model import Proposal, ProposedFact

if TYPE_CHECKING:
    from factdesk.gui.proposals_panel import ProposalsPanel
    from factdesk.review.rows import Row

ACCEPT_REASON = "accepted in review"
ATTEST_REASON = "attested in review"
CLEAN_REASON = "accepted in review: no error, no conflict"
#: a decision goes to the writer lane this long after its key (ms; never lost: closing
#: the window hands over what waits)
SUBMIT_MS = 30


class DecisionController(QObject):
    """A/R/E/S and "Accept all clean…" for the panel's selected row (module doc)."""

    def __init__(self, panel: ProposalsPanel, ask_text: Callable[[str, str, str], str | None]) -> None:
        super().__init__(panel)
        self._panel = panel
        self._ops = panel.ops
        self._ask_text = ask_text
        #: rows whose decision is on its way (shown greyed; the queue moved past them)
        self.pending: dict[tuple[str, ...], str] = {}
        self.skipped: set[tuple[str, ...]] = set()
        self._to_submit: list[Callable[[], None]] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SUBMIT_MS)
        self._timer.timeout.connect(self.submit)
        self._edit_for: tuple[Row, Proposal, ProposedFact, bool] | None = None
        repo = panel.ops.indexer.repo
        self._bytes = BackgroundRead(None, lambda fact: proposal_source.proposed_bytes(repo, fact),
                                     done=self._edit_read, failed=self._edit_failed, parent=self)

    def close(self) -> None:
        self._timer.stop()
        self.submit()  # (decisions made just before closing: the lane finishes them)
        self._bytes.close()

    def _free(self) -> Row | None:
        row = self._panel.current_item()
        return None if row is None or row.key in self.pending else row

    # -- one row ------------------------------------------------------------------------------

    def _decide(self, row: Row, label: str, op: Callable[[Any], ChangeSet], *,
                on_refused: Callable[[FactdeskError], None] | None = None) -> None:
        """Run one decision on the writer lane; the row is marked and the queue moves on now."""
        panel = self._panel
        self.pending[row.key] = label
        panel.repaint_key(row.key)
        panel.next_after(row.key)
        panel.counted()

        def failed(exc: FactdeskError) -> None:
            self.pending.pop(row.key, None)
            panel.repaint_key(row.key)
            panel.select_key(row.key)
            panel.counted()
            if on_refused is not None and isinstance(exc, (Refused, Conflict)):
                on_refused(exc)
            else:
                self._ops.operation_did_fail.emit(exc)

        # (handed to the writer a moment later: the next row is painted before the write's
        # Python work competes with the GUI thread for the GIL)
        self._to_submit.append(partial(self._ops.run, op, success=partial(self._decided, row),
                                       failed=failed))
        self._timer.start()

    def submit(self) -> None:
        calls, self._to_submit = self._to_submit, []
        for call in calls:
            call()

    def _decided(self, row: Row, _changes: ChangeSet) -> None:
        # the row stays greyed until the queue read after the commit (already started by
        # the window's refresh) shows the new status; the filter then drops it
        self._panel.decision_did_finish.emit(":".join(row.key))

    def accept(self, *, override: bool = False, reason: str = ACCEPT_REASON,
               edits: dict[str, bytes] | None = None) -> None:
        """A: accept the selected proposal (per fact: that fact of the proposals touching it)."""
        row = self._free()
        if row is None:
            return
        if row.key[0] == "a":
            path = row.key[1]
            self._decide(row, "attesting…", lambda cur: cur.attest([path], ATTEST_REASON))
            return
        ids, paths = list(row.shas), ([row.path] if row.path else None)

        def op(cur: Any) -> ChangeSet:
            return proposal_source.review(cur).accept(ids, reason, paths=paths, override=override,
                                                      edits=edits)

        self._decide(row, "accepting…", op, on_refused=partial(self._refused, row, edits))

    def _refused(self, row: Row, edits: dict[str, bytes] | None, exc: FactdeskError) -> None:
        """An accept was refused: a conflict asks how to decide it; a rule is named, with an
        override for a reason (the curator's edits, if any, go along)."""
        rule = getattr(exc, "rule", None)
        if isinstance(exc, Conflict) or rule == "conflict":
            box = conflict_dialog(self._panel, str(exc))
            box.exec()
            choice = box.choice
            box.deleteLater()
            if choice == "keep":
                self._reject_row(row, "kept the curated version (conflict)")
            elif choice == "take":
                why = self._ask_text("Take the proposed version", "Why does the proposed version "
                                     "replace the curated one?", "")
                if why:
                    self._panel.select_key(row.key)
                    self.accept(override=True, reason=why, edits=edits)
            elif choice == "edit":
                self._panel.select_key(row.key)
                self.edit(merged=True)
            return
        box = refusal_dialog(self._panel, rule, str(exc))
        box.exec()
        choice = box.choice
        box.deleteLater()
        if choice == "override":
            why = self._ask_text(f"Override {rule or 'the rule'}", f"Why accept it despite "
                                 f"{rule or 'the rule'}? (recorded in the commit)", "")
            if why:
                self._panel.select_key(row.key)
                self.accept(override=True, reason=why, edits=edits)

    def reject(self) -> None:
        """R: reject with a reason (asked); recorded in git, so it never shows again."""
        row = self._free()
        if row is None:
            return
        shown = self._panel.current_proposals()
        what = theme.clip(row.path or (shown[0].subject if shown else ""), 120)
        reason = self._ask_text("Reject", f"Why reject “{what}”?", "")
        if reason:
            self._reject_row(row, reason)

    def _reject_row(self, row: Row, reason: str) -> None:
        if row.key[0] == "a":
            path = row.key[1]
            self._decide(row, "retracting…", lambda cur: cur.retract([path], reason))
            return
        ids, paths = list(row.shas), ([row.path] if row.path else None)
        self._decide(row, "rejecting…", lambda cur: proposal_source.review(cur).reject(
            ids, reason, paths=paths))

    def skip(self) -> None:
        """S: no decision; the next item is selected at once (it stays in the queue)."""
        row = self._panel.current_item()
        if row is None:
            return
        self.skipped.add(row.key)
        self._panel.repaint_key(row.key)
        self._panel.next_after(row.key)

    def edit(self, merged: bool = False) -> None:
        """E: edit the proposed version (envelope fields and body, prefilled), then accept
        it with the correction (the commit says it was edited)."""
        row = self._free()
        if row is not None and row.key[0] == "a":
            opener = getattr(self._panel.window_, "open_relabel", None)
            if callable(opener):
                opener([row.key[1]], reason=ATTEST_REASON)
            return
        chosen = self._panel.detail.chosen_fact()
        if row is None or chosen is None:
            return
        p, f = chosen
        if f.change == "deleted":
            self._panel.say("A deletion has no version to edit: accept (A) or reject (R) it.")
            return
        self._edit_for = (row, p, f, merged)
        self._bytes.start(f)

    def _edit_read(self, data: bytes, fact: ProposedFact) -> None:
        target = self._edit_for
        if target is None or target[2] != fact:
            return
        row, p, f, merged = target
        self._edit_for = None
        note = edited_note(p, f) + ("\nThe curated branch changed this fact too: merge both "
                                    "versions here." if merged else "")
        dialog = EditDialog(self._panel, f.path, data, note=note)
        ok = dialog.exec() == QDialog.DialogCode.Accepted
        edited = dialog.result_bytes()
        dialog.deleteLater()
        if not ok or edited is None:
            return
        self._panel.select_key(row.key)
        why = "edited, then accepted" + (" (a merged version)" if merged else "")
        # (a merged version settles the conflict by itself: no override, so a rule it
        # still breaks is refused and named like any other)
        self.accept(reason=why, edits={f.path: edited})

    def _edit_failed(self, message: str, *_args: object) -> None:
        self._edit_for = None
        dialogs.show_error(self._panel, "Could not read the proposed version", message)

    # -- every clean proposal of a branch -------------------------------------------------------

    def accept_all_clean(self) -> None:
        """Every open proposal of the branch with no error and no conflict, in one commit:
        previewed first (what the commit would take), committed on OK."""
        panel = self._panel
        row = panel.current_item()
        branch = panel.branch_filter or (row.branch if row is not None and row.branch else None)
        if branch is None and panel.queue is not None and panel.queue.branches:
            branch = panel.queue.branches[0].name
        if branch is None:
            return
        panel.say(f"Working out what accepting every clean proposal of {branch} takes…")
        self._ops.read(lambda cur: proposal_source.review(cur).accept_all_clean(
            branch, CLEAN_REASON, preview=True), done=partial(self._preview_ready, branch),
            failed=self._preview_failed)

    def _preview_failed(self, exc: FactdeskError) -> None:
        self._panel.say()
        dialogs.show_error(self._panel, "Accept all clean", str(exc))

    def _preview_ready(self, branch: str, preview: ChangeSet) -> None:
        panel = self._panel
        panel.say()
        shas = list(getattr(preview, "proposals", ()))  # (what the change set takes, named)
        found = getattr(preview, "left", ())
        lines, left = preview_lines(shas, found, {p.sha: p for p in panel.unique()})
        dialog = preview_dialog(panel, branch, lines, left, clean.tally(found))
        ok = dialog.exec() == QDialog.DialogCode.Accepted
        dialog.deleteLater()
        if not ok:
            return
        keys = [("c", sha) for sha in shas]
        for key in keys:
            self.pending[key] = "accepting…"
        panel.refill()
        panel.counted()

        def failed(exc: FactdeskError) -> None:
            for key in keys:
                self.pending.pop(key, None)
            panel.refill()
            self._ops.operation_did_fail.emit(exc)

        self._ops.run(lambda cur: proposal_source.review(cur).accept_all_clean(branch, CLEAN_REASON),
                      success=lambda _c: panel.decision_did_finish.emit(f"clean:{branch}"),
                      failed=failed)
