"""A word that stays until the curator dismisses it, above the tabs: a sync's summary
("Synced: fast-forward, 1 commit came in."). The status bar's message passes in seconds and
a tab's own label is rewritten by its next read (issue 24 item 11); this is neither."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from factdesk.gui import theme
from factdesk.model.words import count


def sync_summary(result: object) -> str:
    """What a finished sync did, in one sentence (`review.sync`'s result)."""
    joined = getattr(result, "joined", "") or "nothing to join"
    incoming = int(getattr(result, "incoming", 0) or 0)
    queued = getattr(result, "proposal_branch", None)
    warnings = tuple(getattr(result, "warnings", ()) or ())
    return (f"Synced: {joined}" + (f", {count(incoming, 'commit')} came in" if incoming else "")
            + (f"; agent commits taken in as proposals on {queued}" if queued else "")
            + "." + (f" {count(len(warnings), 'warning')} (shown in a dialog)." if warnings else ""))


class NoticeBanner(QFrame):
    """One line (wrapped when long) and a Dismiss button; hidden until `say`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("noticeBanner")
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 4, 4, 4)
        self.label = QLabel("", self)
        self.label.setObjectName("noticeText")
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # (a branch name is corpus text)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.dismiss_button = QPushButton("Dismiss", self)
        self.dismiss_button.setObjectName("noticeDismiss")
        self.dismiss_button.setAccessibleName("Dismiss the notice")
        self.dismiss_button.clicked.connect(self.hide)
        row.addWidget(self.label, 1)
        row.addWidget(self.dismiss_button, 0, Qt.AlignmentFlag.AlignTop)
        theme.styled(self, lambda: (
            f"QFrame#noticeBanner {{ background: {theme.NOTICE_BG.color}; "
            f"border-left: 3px solid {theme.SUGGEST_EDGE.color}; }} "
            f"QLabel#noticeText {{ color: {theme.NOTICE_TEXT.color}; }}"))
        self.hide()

    def say(self, text: str) -> None:
        """Show `text` until dismissed (a later word replaces it)."""
        self.label.setText(theme.clip(text, 2_000))
        self.setAccessibleDescription(self.label.text())
        self.show()

    def sync_did_finish(self, result: object) -> None:
        """A sync ended: its summary stays (a failure is a dialog of its own: nothing here)."""
        if isinstance(result, BaseException):
            return
        self.say(sync_summary(result))
