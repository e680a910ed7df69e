"""Layout pieces of the inspector, shared with the Agents and Proposals tabs: `FlowLayout`
(widgets left to right, wrapping) and `EnvelopeScroll` (the inspector's upper part)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QLayout, QLayoutItem, QScrollArea, QSizePolicy, QWidget


class FlowLayout(QLayout):
    """Widgets left to right, onto the next line when the width runs out (Qt's flow
    layout example); a widget wider than the line gets the line."""

    def __init__(self, parent: QWidget | None = None, *, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._place(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._place(rect, apply=True)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        return QSize(min(size.width(), 120), size.height())

    def _place(self, rect: QRect, *, apply: bool) -> int:
        x, y, line = rect.x(), rect.y(), 0
        for item in self._items:
            if item.isEmpty():  # (a hidden badge)
                continue
            widget = item.widget()
            # (the widget's own hint: an Ignored width policy makes the item's hint 0 wide)
            hint = widget.sizeHint() if widget is not None else item.sizeHint()
            width = min(hint.width(), rect.width())
            if x > rect.x() and x + width > rect.right() + 1:
                x, y, line = rect.x(), y + line + self._spacing, 0
            if apply:
                item.setGeometry(QRect(QPoint(x, y), QSize(width, hint.height())))
            x += width + self._spacing
            line = max(line, hint.height())
        return y + line - rect.y()


class EnvelopeScroll(QScrollArea):
    """The inspector's upper part: as tall as its content when there is room, scrolling
    (never under three lines) when there is not."""

    def __init__(self, content: QWidget, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("inspectorEnvelopeScroll")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(content)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # (Tab goes on to the tabs below)
        self.setAccessibleName("Envelope")

    def sizeHint(self) -> QSize:
        content = self.widget()
        width = self.viewport().width() or content.sizeHint().width()
        layout = content.layout()
        height = (layout.totalHeightForWidth(width) if layout is not None and layout.hasHeightForWidth()
                  else content.sizeHint().height())
        return QSize(content.sizeHint().width(), height + 2)

    def minimumSizeHint(self) -> QSize:
        return QSize(0, 3 * self.fontMetrics().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.updateGeometry()  # (its height for the new width)
