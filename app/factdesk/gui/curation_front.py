"""The window's curation commands on the user's selection: which facts an action applies
to, the relabel editor (R) and Retract (Ctrl+Delete). Every write goes through `ops` (the
writer lane, gui/operations.py); what an action changed comes back to the window through
`ops.operation_did_execute`."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from factdesk.curation import ChangeSet, Conflict
from factdesk.errors import FactdeskError
from factdesk.gui.inspector import InspectorPanel
from factdesk.gui.operations import Operations
from factdesk.gui.relabel_dialog import RelabelDialog, RelabelOpener
from factdesk.gui.session import IndexSession
from factdesk.gui.status_area import StatusArea
from factdesk.gui.table import FactTableController
from factdesk.index.search import live_paths_of_ids, seen_state


class CurationFront:
    """The selection's actions; `ask_text(title, label, default)` asks the reason."""

    def __init__(self, session: IndexSession, ops: Operations, table: FactTableController,
                 inspector: InspectorPanel, relabel: RelabelOpener, status: StatusArea,
                 ask_text: Callable[[str, str, str], str | None],
                 reindex: Callable[[], None] | None = None, parent: QWidget | None = None,
                 facts_in_front: Callable[[], bool] = lambda: True) -> None:
        self._session = session
        #: brings the index up to date in the background (the window's F5)
        self._reindex = reindex or session.update
        self._parent = parent
        self._ops = ops
        self._table = table
        self._inspector = inspector
        self._relabel = relabel
        self._status = status
        self._ask_text = ask_text
        self._facts_in_front = facts_in_front
        relabel.dialog_did_open.connect(self._editor_opened)

    def selected_paths(self) -> list[str]:
        """The facts an action applies to: in the Facts tab, the table's selection when the
        fact shown is in it, else the fact shown (followed through a ref, it is not in the
        table); in another tab, the fact shown — what that tab has selected (issue 24 #1)."""
        conn = self._session.conn
        shown = self._inspector.fact_id
        ids = self._table.selected_ids() if self._facts_in_front() else []
        if shown is not None and shown not in ids:
            ids = [shown]
        return live_paths_of_ids(conn, ids) if conn is not None and ids else []

    def open_relabel(self, paths: list[str] | None = None, *, initial: dict[str, str | None] | None = None,
                     reason: str = "", applied: Callable[[ChangeSet], None] | None = None) -> None:
        """Open the relabel editor on the selection (R), once its files are read in the
        background (`RelabelOpener.dialog`)."""
        paths = paths if paths is not None else self.selected_paths()
        conn = self._session.conn
        if not paths or conn is None:
            self._status.say("Select one or more facts to relabel", 4000)
            return
        self._relabel.open(conn, paths, initial=initial, reason=reason, applied=applied)

    def retract_selected(self, reason: str | None = None) -> None:
        paths = self.selected_paths()
        if not paths:
            return
        if reason is None:
            inspector = self._inspector
            what = (f"“{inspector.title.text()[:120]}” ({paths[0]})"  # (shown clipped)
                    if len(paths) == 1 and inspector.path == paths[0] else
                    paths[0] if len(paths) == 1 else f"{len(paths)} facts")
            reason = self._ask_text("Retract", f"Retract {what}? Reason:", "")
            if reason is None:
                return
        conn = self._session.conn
        blobs, head = seen_state(conn, paths) if conn is not None else ({}, None)
        self._ops.run(lambda cur: cur.retract(paths, reason or "", expected=blobs, expected_head=head))

    # -- a refusal because the files changed meanwhile --------------------------------------

    def offer_reload(self, exc: FactdeskError) -> bool:
        """A `Conflict` ("… changed on disk since you looked"): the refusal's dialog offers
        Reload, which reads the files again (an index update, off the GUI thread) and shows
        the fact as it now is, so the curator reviews the change before acting again. True
        when it was such a refusal (the dialog is shown, not waited for)."""
        if not isinstance(exc, Conflict):
            return False
        box = QMessageBox(QMessageBox.Icon.Warning, "Changed since you looked", "", parent=self._parent)
        box.setObjectName("reloadBox")
        box.setTextFormat(Qt.TextFormat.PlainText)  # (a path is corpus text)
        box.setText(f"{exc}\n\nReload shows the fact as it is now; nothing was written.")
        reload = box.addButton("Reload", QMessageBox.ButtonRole.AcceptRole)
        reload.setObjectName("reloadButton")
        box.addButton(QMessageBox.StandardButton.Close)
        box.setDefaultButton(reload)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.buttonClicked.connect(lambda button: self.reload() if button is reload else None)
        box.open()
        self.reload_box = box
        return True

    def reload(self) -> None:
        """Read the corpus again in the background; the window's refresh then shows the
        inspected fact (and every list) as the files now are."""
        self._status.say("Reloading what changed on disk…", 4000)
        self._reindex()

    def _editor_opened(self, dialog: RelabelDialog) -> None:
        dialog.reload_did_request.connect(lambda: self.reload_editor(dialog))

    def reload_editor(self, dialog: RelabelDialog) -> None:
        """The relabel editor's Reload after a conflict: close it, read the corpus again in
        the background, then open it again on the files as they now are, with the curator's
        fields and reason kept (its preview shows the change against the new version)."""
        paths, initial, reason = list(dialog.paths), dialog.changes(), dialog.reason_edit.text()
        dialog.reject()

        def reopen(_stats: object) -> None:
            self._session.index_did_update.disconnect(reopen)
            self.open_relabel(paths, initial=initial, reason=reason)

        self._session.index_did_update.connect(reopen)
        self.reload()
