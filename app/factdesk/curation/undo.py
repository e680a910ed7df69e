"""The undo family: the undo and redo stacks read back from the branch's history, and the
revert plans. Undo reverts factdesk's own last action as a new commit
(`Factdesk-Reverts:`); redo reverts that revert. Both refuse when later commits touched
the same files."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from factdesk.corpus import githistory, gitrepo
from factdesk.corpus.gitrepo import ZERO
from factdesk.curation.base import CurationBase, read_file
from factdesk.curation.changes import ChangeSet, FieldChange, Plan, run_plan
from factdesk.curation.gitwrite import FileChange, Refused, current_branch
from factdesk.curation.trust import Decision, trusted_decisions

#: the rule of an undo or redo with nothing to revert (a window says it quietly)
EMPTY_STACK = "empty-stack"


@dataclass
class ActionRecord:
    """One curator action as the stacks hold it."""

    action_id: str
    action: str
    subject: str
    commit: str
    undone_by: str | None = None

    @property
    def label(self) -> str:
        """'relabel of 3 facts' / 'relabel of <title>' for menus."""
        head = self.subject.split(": ", 1)
        what = head[1] if len(head) > 1 else self.subject
        what = re.sub(r" \(.*\)$", "", what)
        return f"{self.action} of {what}"


class UndoOps(CurationBase):
    """stacks, undo, redo."""

    def stacks(self) -> tuple[list[ActionRecord], list[ActionRecord]]:
        """(undo stack, redo stack), top last, read from the branch's history."""
        return read_stacks(self.repo)

    def undo(self, reason: str = "", *, preview: bool = False) -> ChangeSet:
        undo, _ = self.stacks()
        if not undo:
            raise Refused("nothing to undo: no factdesk action on this branch", rule=EMPTY_STACK)
        target = undo[-1]
        plan = self._revert_plan(target, "undo")
        return self._run_revert(plan, reason or f"undo {target.subject}", preview)

    def redo(self, reason: str = "", *, preview: bool = False) -> ChangeSet:
        _, redo = self.stacks()
        if not redo:
            raise Refused("nothing to redo", rule=EMPTY_STACK)
        target = redo[-1]
        plan = self._revert_plan(target, "redo")
        return self._run_revert(plan, reason or f"redo {target.subject}", preview)

    def _run_revert(self, plan: Plan, reason: str, preview: bool) -> ChangeSet:
        """An undo or redo is committed like every action; one of a decision that changed
        no file (a rejected proposal: review/decide.py) is an empty commit too, so that
        the proposal reopens (or is rejected again) by the record alone."""
        if plan.changes:
            return self._run(plan, reason, None, preview)
        return run_plan(plan, reason, repo=self.repo, curator=None if preview else self.curator,
                        indexer=self.indexer if self.update_index else None,
                        expected_head=None, preview=preview,
                        defer_sync=self.defer_index_sync, allow_empty=True)

    def _revert_plan(self, target: ActionRecord, action: str) -> Plan:
        """Undo: put back the state before `target`'s commit. Redo: put back the state
        `target`'s commit made (reverting the undo)."""
        commit = target.commit if action == "undo" else target.undone_by
        assert commit is not None
        changes: list[FileChange] = []
        fields: list[FieldChange] = []
        later = []
        with gitrepo.BlobReader(self.repo) as reader:
            for path, old_blob, new_blob in _commit_changes(self.repo, commit):
                disk = read_file(self.repo, path)
                disk_blob = gitrepo.blob_id(disk) if disk is not None else None
                if disk_blob != new_blob:
                    later.append(path)
                    continue
                back = reader.read(old_blob) if old_blob else None
                changes.append(FileChange(path, disk, back))
                fields.append(FieldChange(path, "content", new_blob, old_blob))
        if later:
            log = githistory.one_line_log(self.repo, f"{commit}..HEAD", later)
            raise Refused(f"cannot {action} '{target.subject}': later changes touched "
                          f"{', '.join(later)}" + (f"\n{log}" if log else " (uncommitted edits)"),
                          rule=action)
        return Plan(action, f"{action}: {target.subject}", tuple(changes), tuple(fields),
                    extra_trailers=(("Reverts", target.action_id),))


def read_stacks(repo: Path) -> tuple[list[ActionRecord], list[ActionRecord]]:
    """(undo stack, redo stack), top last, from the curators' decisions on the branch
    (`trust.trusted_decisions`: never an agent's commit, never a trailer outside a
    message's final block)."""
    try:
        _, tip = current_branch(repo)
    except Refused:
        return [], []
    if tip == ZERO:
        return [], []
    return replay(trusted_decisions(repo, tip))


def replay(decisions: Sequence[Decision]) -> tuple[list[ActionRecord], list[ActionRecord]]:
    """Rebuild both stacks from the decisions, newest first: an action pushes onto undo and
    clears redo; an undo moves its target to redo; a redo moves it back."""
    undo: list[ActionRecord] = []
    redo: list[ActionRecord] = []
    by_id: dict[str, ActionRecord] = {}
    for d in reversed(decisions):
        if d.action == "undo":
            target = by_id.get(d.reverts or "")
            if target and target in undo:
                undo.remove(target)
                target.undone_by = d.commit
                redo.append(target)
        elif d.action == "redo":
            target = by_id.get(d.reverts or "")
            if target and target in redo:
                redo.remove(target)
                target.commit = d.commit
                target.undone_by = None
                undo.append(target)
        else:
            rec = ActionRecord(d.action_id, d.action, d.subject, d.commit)
            by_id[rec.action_id] = rec
            undo.append(rec)
            redo.clear()
    return undo, redo


def _commit_changes(repo: Path, commit: str) -> list[tuple[str, str | None, str | None]]:
    """(path, blob before, blob after) for each file `commit` changed against its first parent."""
    return [(c.path, c.old_blob, c.new_blob) for c in githistory.commit_changes(repo, commit)]
