"""`WrappingTabs`: a QTabWidget whose tabs wrap onto a second line instead of hiding behind
scroll arrows (issue 24 item 8: at 1366×768 the inspector's History and Messages tabs were
out of sight at the default font, and more at 1.5×).

The tab widget's own bar is hidden; `bar` is a row of toggle buttons in a `FlowLayout`,
one per tab, kept in step with the tab widget: its current tab, each tab's text, tooltip
and visibility (through this class's own `addTab`, `setTabText`, `setTabToolTip`,
`setTabVisible`). The owner places `bar` above the tab widget. Tab reaches each button;
Space or Enter shows its page.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QButtonGroup,
    QSizePolicy,
    QTabWidget,
    QToolButton,
    QWidget,
)

from factdesk.gui.flow_layout import FlowLayout


class _Bar(QWidget):
    def __init__(self, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.flow = FlowLayout(self, spacing=2)
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)


class WrappingTabs(QTabWidget):
    """Tabs whose captions wrap to the width they are given."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tabBar().hide()
        self.setDocumentMode(True)  # (no pane frame under a bar it does not show)
        self.bar = _Bar(parent)
        self.bar.setAccessibleName("Inspector tabs")
        self._group = QButtonGroup(self)
        self._group.setExclusive(True)
        self._group.idClicked.connect(self.setCurrentIndex)
        self.currentChanged.connect(self._follow)

    def buttons(self) -> list[QToolButton]:
        return [b for b in self._group.buttons() if isinstance(b, QToolButton)]

    def addTab(self, page: QWidget, text: str) -> int:  # type: ignore[override]
        index = super().addTab(page, text)
        button = QToolButton(self.bar)
        button.setText(text)
        button.setCheckable(True)
        button.setAutoRaise(True)
        self._group.addButton(button, index)
        self.bar.flow.addWidget(button)
        self._follow(self.currentIndex())
        return index

    def setTabText(self, index: int, text: str) -> None:
        super().setTabText(index, text)
        button = self._group.button(index)
        if button is not None:
            button.setText(text)
            self.bar.updateGeometry()

    def setTabToolTip(self, index: int, tip: str) -> None:
        super().setTabToolTip(index, tip)
        button = self._group.button(index)
        if button is not None:
            button.setToolTip(tip)

    def setTabVisible(self, index: int, visible: bool) -> None:
        super().setTabVisible(index, visible)
        button = self._group.button(index)
        if button is not None:
            button.setVisible(visible)
            self.bar.updateGeometry()

    def setEnabled(self, enabled: bool) -> None:
        super().setEnabled(enabled)
        self.bar.setEnabled(enabled)

    def _follow(self, index: int) -> None:
        button = self._group.button(index)
        if button is not None and not button.isChecked():
            button.setChecked(True)
