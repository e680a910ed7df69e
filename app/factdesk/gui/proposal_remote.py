"""The Proposals tab's branch-wide work: Sync (fetch every remote, join the lines, push)
and File ▸ Record the review merge, both on the window's writer lane (they move the
branch the decisions commit to), the window never waiting for them. Results and progress
go out through the panel's signals (`sync_did_progress`, `sync_did_finish`,
`merge_did_finish`); the rules are `review.sync` and `review.decide`'s."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from factdesk.errors import FactdeskError
from factdesk.gui import dialogs, proposal_source
from factdesk.model.words import count

if TYPE_CHECKING:
    from factdesk.gui.proposals_panel import ProposalsPanel


class RemoteActions(QObject):
    """Sync and the review merge on demand for the panel (module doc)."""

    def __init__(self, panel: ProposalsPanel) -> None:
        super().__init__(panel)
        self._panel = panel
        self.syncing = False

    def _reindex(self) -> None:
        reindex = getattr(self._panel.window_, "reindex", None)
        if callable(reindex):
            reindex()  # (the queue and the index follow the new commits)

    def merge_reviewed(self) -> None:
        """Record the review merge of the chosen row's branch (every agent branch when no row
        is chosen) up to its decided prefix — after a crash lost one, or to bring an agent's
        own messages over (docs/review.md): `Review.merge_reviewed`, on the writer lane."""
        panel = self._panel
        row = panel.current_item()
        branches = ([row.branch] if row is not None and row.branch else
                    [b.name for b in panel.queue.branches] if panel.queue is not None else [])
        if not branches:
            panel.say("No agent branch: no review merge to record.")
            panel.merge_did_finish.emit([])
            return
        ops = panel.ops
        ops.lane.submit(lambda: proposal_source.merge_reviewed(ops.curation(), branches),
                        done=self._merged, failed=self._merge_failed)

    def _merged(self, made: object) -> None:
        merges = list(made) if isinstance(made, list) else []
        self._panel.say(f"Recorded {count(len(merges), 'review merge')}." if merges else
                        "No review merge to record: no decided prefix the curated branch "
                        "does not reach yet.")
        self._panel.merge_did_finish.emit(merges)
        if merges:
            self._reindex()

    def _merge_failed(self, exc: BaseException) -> None:
        self._panel.merge_did_finish.emit(exc)
        dialogs.show_error(self._panel, "The review merge was not recorded",
                           str(exc) if isinstance(exc, FactdeskError)
                           else f"{type(exc).__name__}: {exc}")

    def sync(self, *, as_proposals: bool = False) -> None:
        """Fetch every remote (new agent branches come in as proposals), join the lines with
        a true merge, push the curated branch: on the writer lane, a progress bar meanwhile.
        `as_proposals`: agent commits on the remote's curated branch become proposals."""
        if self.syncing:
            return
        self.syncing = True
        panel = self._panel
        emit = panel.sync_did_progress.emit
        repo, ops = panel.ops.indexer.repo, panel.ops
        emit("sync: waiting for the writer", 0.0)

        def job() -> object:
            curator = ops.curation().curator  # (resolving the curator runs git: here, not there)
            return proposal_source.run_sync(repo, lambda what, f: emit(what, f), curator,
                                            as_proposals=as_proposals)

        ops.lane.submit(job, done=self._synced, failed=self._sync_failed)

    def _synced(self, result: object) -> None:
        panel = self._panel
        self.syncing = False
        panel.sync_did_progress.emit("", 1.0)
        panel.sync_did_finish.emit(result)
        joined = getattr(result, "joined", "")
        incoming = getattr(result, "incoming", 0)
        queued = getattr(result, "proposal_branch", None)
        panel.say(f"Synced: {joined}" + (f", {count(incoming, 'commit')} came in"
                                         if incoming else "")
                  + (f"; agent commits taken in as proposals on {queued}" if queued else "") + ".")
        warnings = getattr(result, "warnings", ())
        if warnings:  # (a skipped branch, a forced rewrite, nothing pushed: said, not hidden)
            dialogs.show_error(panel, "Synced, with warnings", "\n\n".join(warnings))
        self._reindex()

    def _sync_failed(self, exc: BaseException) -> None:
        panel = self._panel
        self.syncing = False
        panel.sync_did_progress.emit("", 1.0)
        panel.sync_did_finish.emit(exc)
        if proposal_source.stopped_by_agent_commits(exc):
            dialogs.offer(panel, "Sync stopped: agent commits on the curated branch", str(exc),
                          "Take in as proposals", lambda: self.sync(as_proposals=True))
            return
        conflicts = getattr(exc, "conflicts", None)
        if conflicts:
            listing = "\n".join(f"• {c.path}\n    yours: {c.ours_said}\n    theirs: {c.theirs_said}"
                                for c in conflicts)
            dialogs.show_error(panel, "Sync stopped: the same facts changed on both sides",
                               f"{exc}\n\n{listing}\n\nNothing was merged or pushed. Decide "
                               "these facts (keep one version, or edit them alike), then sync "
                               "again.")
            return
        dialogs.show_error(panel, "Sync failed", str(exc) if isinstance(exc, FactdeskError)
                           else f"{type(exc).__name__}: {exc}")
