"""The main window's status bar: how many facts (and how many selected), the writer lane's
and the index's progress, the last commit with its Undo button, which branch is curated and
how many agent proposals wait on it (the Proposals tab counts them), a sync's progress, the
type legend."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QLabel, QMainWindow, QProgressBar

from factdesk.curation import ChangeSet
from factdesk.curation.ops import EMPTY_STACK
from factdesk.errors import FactdeskError
from factdesk.gui import dialogs, theme
from factdesk.gui.commit_notice import CommitNotice
from factdesk.gui.table import FactTableController
from factdesk.index.indexer import IndexStats
from factdesk.model.words import count


class StatusArea(QObject):
    """The permanent widgets of `window`'s status bar, and what they say."""

    def __init__(self, window: QMainWindow, table: FactTableController) -> None:
        super().__init__(window)
        self._window = window
        self.recovered_actions: list[object] = []
        self._bar = window.statusBar()
        self._table = table
        self.count_label = QLabel("", window)
        self.count_label.setTextFormat(Qt.TextFormat.PlainText)
        self.progress = QProgressBar(window)
        self.progress.setObjectName("indexProgress")
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.commit_notice = CommitNotice(window)
        self.review_label = QLabel("", window)
        self.review_label.setObjectName("reviewStatus")
        self.review_label.setTextFormat(Qt.TextFormat.PlainText)
        self.review_label.hide()
        self.sync_bar = QProgressBar(window)
        self.sync_bar.setObjectName("syncProgress")
        self.sync_bar.setRange(0, 1000)
        self.sync_bar.setTextVisible(True)
        self.sync_bar.hide()
        self.legend_label = QLabel(dialogs.legend_summary(), window)
        self.legend_label.setTextFormat(Qt.TextFormat.PlainText)
        for widget in (self.commit_notice, self.review_label, self.legend_label, self.sync_bar,
                       self.progress, self.count_label):
            self._bar.addPermanentWidget(widget)
        self._message = ""
        # a temporary message gets the legend's room while it shows, and the legend shows
        # only where it fits whole: the permanent widgets once cut a message or drew over it,
        # and the legend was squeezed to half its words at 1366 pixels (issue 24 item 11)
        self._bar.messageChanged.connect(self._message_changed)
        self._others = (self.commit_notice, self.review_label, self.sync_bar, self.progress,
                        self.count_label)
        for watched in (self._bar, *self._others):
            watched.installEventFilter(self)
        table.rows_did_change.connect(lambda _n: self.show_count())
        table.view.selectionModel().selectionChanged.connect(lambda *_: self.show_count())

    def _message_changed(self, text: str) -> None:
        self._message = text
        self._fit_legend()

    def _fit_legend(self) -> None:
        """The type legend shows when no message does and its whole text fits beside the
        permanent widgets shown (Help ▸ Legend has it always)."""
        spacing = 12  # (the bar's gaps and its size grip's share, per widget)
        used = sum(w.sizeHint().width() + spacing for w in self._others if not w.isHidden())
        room = self._bar.width() - used - 24
        fits = room >= self.legend_label.sizeHint().width() + spacing
        self.legend_label.setVisible(not self._message and fits)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.Hide,
                            QEvent.Type.LayoutRequest):
            self._fit_legend()
        return False

    def say(self, message: str, ms: int = 5000) -> None:
        self._bar.showMessage(message, ms)

    def working(self, text: str) -> None:
        """A busy bar: `indexing…`, `writing…` (the window stays usable meanwhile)."""
        self.progress.setRange(0, 0)
        self.progress.setFormat(text)
        self.progress.show()

    def done(self) -> None:
        self.progress.hide()

    def stage(self, stage: str, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 0))
        self.progress.setValue(min(done, total))
        self.progress.setFormat(f"{stage} %v/%m")

    def lane_busy(self, busy: bool, indexing: bool) -> None:
        """The writer lane works: say so (the window stays usable; the table serves the
        rows it has)."""
        if busy:
            self.working("indexing…" if indexing else "writing…")
        else:
            self.done()

    def proposals_counted(self, curated: str, waiting: int) -> None:
        """`main ← 12 proposals`: the curated branch, and how many agent proposals wait."""
        self.review_label.setText(f"curated: {curated} · {count(waiting, 'proposal')} waiting"
                                  if waiting else f"curated: {curated} · no proposal waiting")
        self.review_label.setToolTip(theme.tooltip(
            f"Commits land on {curated}; {count(waiting, 'agent proposal')} await review "
            "(the Proposals tab)."))
        self.review_label.show()

    def sync_progress(self, stage: str, fraction: float) -> None:
        """A sync's progress (`fetch origin`, 0..1); a fraction of 1 with no stage: done."""
        if fraction >= 1.0 and not stage:
            self.sync_bar.hide()
            return
        self.sync_bar.setValue(int(max(0.0, min(fraction, 1.0)) * 1000))
        self.sync_bar.setFormat(f"{stage} %p%" if stage else "sync %p%")
        # (as wide as its words: a fixed 240 pixels clipped "fetch origin: resolving…")
        width = self.sync_bar.fontMetrics().horizontalAdvance(self.sync_bar.text()) + 24
        self.sync_bar.setFixedWidth(min(max(width, 120), 520))
        self.sync_bar.show()

    def action_failed(self, exc: FactdeskError) -> None:
        """An action was refused: a dialog naming its rule (an empty undo stack: a word in
        the status bar, never a dialog)."""
        rule = getattr(exc, "rule", None)
        if rule == EMPTY_STACK:
            self.say(str(exc).split(":")[0].capitalize(), 4000)
            return
        dialogs.show_error(self._window, "Not done" + (f" [{rule}]" if rule else ""), str(exc))

    def index_failed(self, message: str) -> None:
        self.done()
        self.say(f"Indexing failed: {message}", 10000)
        dialogs.show_error(self._window, "Indexing failed", message)

    def recovered(self, recovered: list[object]) -> None:
        """What the start's recovery finished or rolled back (an interrupted action)."""
        self.recovered_actions = recovered
        if recovered:
            dialogs.show_error(self._window, "An interrupted action was found",
                               "\n\n".join(f"{r.outcome}: {r.message}" for r in recovered))  # type: ignore[attr-defined]

    def recovery_failed(self, exc: BaseException) -> None:
        dialogs.show_error(self._window, "An interrupted action could not be finished", str(exc))

    def committed(self, changes: ChangeSet) -> None:
        """Our action committed: its sha with Undo; what the core warns about (the commit
        stands: a checkout switched branches during the action, git's index left behind)
        in the status bar and in a dialog."""
        self.commit_notice.show_commit(changes)
        warnings = changes.committed.warnings if changes.committed is not None else ()
        if warnings:
            self.say(f"Committed {changes.short_sha}, with a warning: {warnings[0]}", 20000)
            dialogs.show_error(self._window, f"Committed {changes.short_sha}, with a warning",
                               "\n\n".join(warnings))

    def index_updated(self, stats: IndexStats) -> None:
        self.progress.hide()
        if stats.mode == "behind":  # factdesk's own commit: another updater held the index
            self.say(stats.note or "committed; the index will catch up", 20000)
            return
        if stats.note:
            self.say(stats.note, 20000)
            return
        self.say(f"Index up to date: {stats.facts + stats.broken} facts"
                 + (f" ({stats.broken} unreadable)" if stats.broken else "")
                 + f", {stats.retracted} retracted, {stats.problems} findings ({stats.seconds:.1f}s)")

    def show_count(self) -> None:
        """`2000 facts`, and how many are selected when more than one is: an action applies
        to all of them (Ctrl+A then R relabels every one)."""
        # (the ranges, not selectedRows(): an index per row, 100,000 after Ctrl+A, each change)
        ranges = self._table.view.selectionModel().selection()
        selected = sum(ranges.at(i).height() for i in range(ranges.count()))
        self.count_label.setText(f"{count(self._table.model.rowCount(), 'fact')}"
                                 + (f" · {selected:,} selected" if selected > 1 else ""))
