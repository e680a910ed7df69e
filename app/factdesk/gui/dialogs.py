"""Small dialogs: the type/kind/origin legend, query-language help, error messages (one
with an offer of what to do instead), a one-line question, the curator's identity; and the
window geometry kept in settings.

All text is plain (corpus text never reaches a rich-text widget).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QByteArray, QEvent, QObject, QRect, QSettings, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QInputDialog, QLabel, QMessageBox, QSplitter, QWidget

from factdesk.gui import theme
from factdesk.index.query import FIELDS


def legend_summary() -> str:
    """One status-bar line: the glyph of each type."""
    return "  ".join(f"{m.glyph} {t}" for t, m in theme.TYPE_MARKS.items())


def legend_text() -> str:
    return "\n".join(f"{mark.glyph}  {caption}" for caption, mark in theme.legend_lines())


def _box(parent: QWidget | None, title: str, text: str,
         icon: QMessageBox.Icon = QMessageBox.Icon.Information) -> QMessageBox:
    box = QMessageBox(parent)
    box.setIcon(icon)
    box.setWindowTitle(title)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(text)
    return box


def show_legend(parent: QWidget | None) -> None:
    _box(parent, "Legend", "Colours and glyphs in the table and inspector:\n\n"
         + legend_text()).exec()


def show_query_help(parent: QWidget | None) -> None:
    lines = [f"{name}:  {help_}" for name, help_ in FIELDS.items()]
    text = ('Words search titles and bodies; "quoted phrases" match exactly; a leading - '
            "negates a term.\n\n" + "\n".join(lines))
    _box(parent, "Query language", text).exec()


def show_error(parent: QWidget | None, title: str, message: str) -> QMessageBox:
    """A window-modal warning that does not block the caller (background failures)."""
    box = _box(parent, title, message, QMessageBox.Icon.Warning)
    box.setObjectName("errorBox")
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


def offer(parent: QWidget | None, title: str, message: str, label: str,
          chosen: Callable[[], None]) -> QMessageBox:
    """A window-modal warning that does not block the caller, with one button (`label`)
    that runs `chosen` besides Close."""
    box = _box(parent, title, message, QMessageBox.Icon.Warning)
    box.setObjectName("offerBox")
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    button = box.addButton(label, QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Close)
    button.clicked.connect(chosen)
    box.open()
    return box


def ask_identity(parent: QWidget | None) -> tuple[str, str] | None:
    """Name and e-mail for the commits (asked once when neither git nor factdesk's
    settings have them; kept in factdesk's settings, never in git's config)."""
    from PySide6.QtWidgets import QDialogButtonBox, QFormLayout, QLineEdit

    dialog = QDialog(parent)
    dialog.setObjectName("identityDialog")
    dialog.setWindowTitle("Who is curating?")
    form = QFormLayout(dialog)
    note = QLabel("Your commits need a name and an e-mail. git has none configured; factdesk "
                  "keeps these in its own settings.", dialog)
    note.setWordWrap(True)
    form.addRow(note)
    name, email = QLineEdit(dialog), QLineEdit(dialog)
    name.setObjectName("identityName")
    email.setObjectName("identityEmail")
    form.addRow("Name", name)
    form.addRow("E-mail", email)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                               | QDialogButtonBox.StandardButton.Cancel, dialog)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    form.addRow(buttons)
    ok = dialog.exec() == QDialog.DialogCode.Accepted
    answer = (name.text().strip(), email.text().strip())
    dialog.deleteLater()
    return answer if ok and all(answer) and "@" in answer[1] else None


def ask_text(parent: QWidget | None, title: str, label: str, default: str) -> str | None:
    """A one-line question; None when cancelled or blank. The label may quote corpus text:
    it is plain text, never markup (RELIABILITY H01)."""
    dialog = QInputDialog(parent)
    dialog.setWindowTitle(title)
    dialog.setLabelText(label)
    dialog.setTextValue(default)
    for child in dialog.findChildren(QLabel):
        child.setTextFormat(Qt.TextFormat.PlainText)
    ok = dialog.exec() == QDialog.DialogCode.Accepted
    text = dialog.textValue()
    dialog.deleteLater()
    return text if ok and text.strip() else None


#: the window's size on a first start, when the screen has room for it
DEFAULT_SIZE = (1400, 850)


def restore_geometry(settings: QSettings, window: QWidget, splitters: dict[str, QSplitter]) -> None:
    """The window's size and place, and its splitters, as last saved (a default size first),
    always inside the available area of a screen (`fit_to_screen`)."""
    geometry = settings.value("window/geometry")
    first = not (isinstance(geometry, QByteArray) and window.restoreGeometry(geometry))
    if first:
        window.resize(*DEFAULT_SIZE)
    fit_to_screen(window, centre=first)
    # (the frame — title bar, borders — is known once the window is shown: fit again then)
    window.installEventFilter(_FitWhenShown(window, centre=first))
    for key, splitter in splitters.items():
        state = settings.value(key)
        if isinstance(state, QByteArray):
            splitter.restoreState(state)


class _FitWhenShown(QObject):
    """Fits the window again at its first show, when its frame is known (and once more a
    moment later: a window manager may add the frame after the show) — unless it was
    resized meanwhile by the code that made it."""

    def __init__(self, window: QWidget, *, centre: bool) -> None:
        super().__init__(window)
        self._window = window
        self._centre = centre
        #: the size given; a window resized since (by its caller: a test, a benchmark) is
        #: left as it was made
        self._size = window.size()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self._window and event.type() == QEvent.Type.Show:
            self._window.removeEventFilter(self)
            QTimer.singleShot(0, self._fit)
            QTimer.singleShot(300, self._fit)
        return False

    def _fit(self) -> None:
        window = self._window
        if window.size() != self._size or window.isMaximized() or window.isFullScreen():
            return
        self._size = fit_to_screen(window, centre=self._centre).size()


def fit_to_screen(window: QWidget, *, centre: bool = False) -> QRect:
    """Shrink and move `window` so that it lies inside the available geometry of the screen
    it is on (the primary screen when it is on none: a monitor saved with it is gone): never
    larger than the screen, its title bar never off it. Returns the rectangle it got."""
    screen = QGuiApplication.screenAt(window.geometry().center()) or window.screen() \
        or QGuiApplication.primaryScreen()
    if screen is None:  # (no screen at all: nothing to fit to)
        return window.geometry()
    area = screen.availableGeometry()
    # the frame's decoration (title bar, borders) also has to fit; before the first show
    # the frame is not known and counts as none
    frame = window.frameGeometry()
    extra_w = max(0, frame.width() - window.width())
    extra_h = max(0, frame.height() - window.height())
    width = max(1, min(window.width(), area.width() - extra_w))
    height = max(1, min(window.height(), area.height() - extra_h))
    if (width, height) != (window.width(), window.height()):
        window.resize(width, height)
    if centre:
        x = area.x() + (area.width() - width - extra_w) // 2
        y = area.y() + (area.height() - height - extra_h) // 2
    else:
        x = min(max(frame.x(), area.x()), area.right() + 1 - width - extra_w)
        y = min(max(frame.y(), area.y()), area.bottom() + 1 - height - extra_h)
    if (x, y) != (frame.x(), frame.y()):
        window.move(x, y)
    return window.geometry()


def save_geometry(settings: QSettings, window: QWidget, splitters: dict[str, QSplitter]) -> None:
    settings.setValue("window/geometry", window.saveGeometry())
    for key, splitter in splitters.items():
        settings.setValue(key, splitter.saveState())
