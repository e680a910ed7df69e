"""The Proposals tab as a room a curator lives in (issue 24 #6–9), on a real repository
with an agent branch: the queue sorted, filtered and jumped through by its findings, a
wrapped diff, findings with room at 1366×768, the detail readable in the dark theme and
after a change of theme while running (measured on the pixels drawn), every button whole
at 1.5× the font. Screenshots go to $FACTDESK_SHOTS (default /tmp/factdesk-shots)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFont, QImage
from PySide6.QtWidgets import QAbstractButton, QApplication, QWidget

from factdesk.gui import theme
from tests.conftest import git
from tests.gui.conftest import open_window
from tests.gui.test_proposals import (
    AGENT,
    _agent_commit,
    _fact,
    add_agent_branch,
    press,
    show_tab,
    wait_checked,
)

pytestmark = pytest.mark.gui

SHOTS = Path(os.environ.get("FACTDESK_SHOTS", "/tmp/factdesk-shots"))
LONG = "kb/gotchas/db/c7c7c7c7.md"


def _shot(widget: QWidget, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    widget.grab().save(str(SHOTS / f"{name}.png"))


def drawn_contrast(widget: QWidget, rect: QRect | None = None) -> float:
    """The contrast of what is drawn in `rect` of `widget`: its most common colour (the
    background) against the pixel that stands out most from it (the text's core)."""
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    area = rect if rect is not None else QRect(0, 0, image.width(), image.height())
    ratio = image.devicePixelRatio()
    colours: Counter[str] = Counter()
    for y in range(int(area.top() * ratio), int((area.bottom() + 1) * ratio)):
        for x in range(int(area.left() * ratio), int((area.right() + 1) * ratio)):
            colours[image.pixelColor(x, y).name()] += 1
    background = colours.most_common(1)[0][0]
    return max(theme.contrast(background, c) for c in colours)


@pytest.fixture
def agent_repo(repo: Path) -> tuple[Path, dict[str, str]]:
    return repo, add_agent_branch(repo)


@pytest.fixture
def review_window(qtbot, agent_repo, data_dir):  # type: ignore[no-untyped-def]
    win = open_window(qtbot, agent_repo[0])
    yield win
    win.close()


@pytest.fixture
def light_after() -> Iterator[None]:
    yield
    theme.apply("light")


def test_findings_filter_order_and_jump_keys(qtbot, review_window, agent_repo) -> None:  # type: ignore[no-untyped-def]
    _repo, shas = agent_repo
    panel = show_tab(qtbot, review_window)
    wait_checked(qtbot, panel)
    box = panel.bar.findings_box
    box.setCurrentIndex(box.findData("error"))
    box.activated.emit(box.currentIndex())  # (as a click on the entry does)
    assert [i.shas[0] for i in panel.items] == [shas["syn"]]
    assert "errors" in panel.status.text()
    panel.set_findings_filter("clean")
    assert [i.shas[0] for i in panel.items] == [shas["obs"], shas["obs2"]]
    panel.set_findings_filter("any")
    panel.set_order("worst")
    assert panel.items[0].shas[0] == shas["syn"]
    panel.set_order("queue")
    panel.select_row(0)
    panel.list.setFocus()
    press(qtbot, panel, Qt.Key.Key_N)  # the next row with a finding: the R1 synthesis
    assert panel.current_item().shas == (shas["syn"],)
    panel.select_row(3)
    panel.list.setFocus()
    qtbot.keyClick(panel.list, Qt.Key.Key_N, Qt.KeyboardModifier.ShiftModifier)
    assert panel.current_item().shas == (shas["syn"],)


def test_jump_keys_are_on_the_shortcut_sheet(qtbot, review_window) -> None:  # type: ignore[no-untyped-def]
    from factdesk.gui.help import bindings

    panel = show_tab(qtbot, review_window)
    said = {(b.keys, b.what) for b in bindings(review_window) if panel.menu_text in b.section}
    assert ("N", "Next problem") in said and ("Shift+N", "Previous problem") in said


def test_diff_wraps_and_findings_have_room(qtbot, review_window, agent_repo) -> None:  # type: ignore[no-untyped-def]
    repo, _shas = agent_repo
    git(repo, "checkout", "-q", AGENT)
    long_line = " ".join(["The batch writer holds the ledger lock while it retries"] * 12)
    _agent_commit(repo, "learn: Retries hold the lock", {LONG: _fact(
        "type: observation\ndomain: [ledger-api]\nconfidence: 0.7\nsources: 1\nrefs: []",
        "Retries hold the lock", long_line)})
    git(repo, "checkout", "-q", "main")
    review_window.resize(1366, 768)
    panel = show_tab(qtbot, review_window)
    panel.load()
    qtbot.waitUntil(lambda: len(panel.items) == 5, timeout=10_000)
    panel.step(4)
    diff = panel.detail.diff
    qtbot.waitUntil(lambda: "ledger lock" in diff.toPlainText(), timeout=10_000)
    qtbot.wait(50)
    assert diff.horizontalScrollBar().maximum() == 0, "the diff scrolls sideways"
    problems = panel.detail.problems
    lines = problems.viewport().height() / problems.fontMetrics().height()
    _shot(review_window, "proposals-room-1366")
    assert lines >= 7, f"the findings pane shows {lines:.1f} lines"


def test_dark_detail_is_readable(qtbot, review_window, agent_repo, light_after) -> None:  # type: ignore[no-untyped-def]
    theme.apply("dark")
    review_window.resize(1366, 768)
    panel = show_tab(qtbot, review_window)
    wait_checked(qtbot, panel)
    panel.step(1)
    qtbot.wait(200)
    _shot(review_window, "proposals-dark-1366")
    for label in (panel.title, panel.meta, panel.badge):
        assert drawn_contrast(label) >= theme.AA_TEXT, label.objectName()


def test_a_theme_switch_leaves_no_old_colour(qtbot, review_window, agent_repo, light_after) -> None:  # type: ignore[no-untyped-def]
    """Light, then dark, then light again while running: the queue's "✓ clean" and "open"
    (a row not selected) and the detail's title and meta line drawn readable each time."""
    panel = show_tab(qtbot, review_window)
    wait_checked(qtbot, panel)
    view = panel.list
    for scheme in ("dark", "light"):
        theme.apply(scheme)
        qtbot.wait(100)
        _shot(review_window, f"proposals-switched-to-{scheme}")
        for column in (3, 4):  # row 2: "✓ clean", "open"
            rect = view.visualRect(view.model().index(2, column))
            assert drawn_contrast(view.viewport(), rect) >= theme.AA_TEXT, (scheme, column)
        for label in (panel.title, panel.meta):
            assert drawn_contrast(label) >= theme.AA_TEXT, (scheme, label.objectName())


@pytest.mark.parametrize("size", [(1366, 768), (911, 512)], ids=["1366x768-font1.5", "911x512"])
def test_every_button_whole_and_on_screen(qtbot, review_window, size) -> None:  # type: ignore[no-untyped-def]
    """1.5× the font at 1366×768, and what QT_SCALE_FACTOR=1.5 leaves of 1366×768
    (911×512 logical pixels) at the default font."""
    app = QApplication.instance()
    before = QFont(app.font())
    if size == (1366, 768):
        bigger = QFont(before)
        bigger.setPointSizeF(before.pointSizeF() * 1.5)
        app.setFont(bigger)
    try:
        review_window.resize(*size)
        panel = show_tab(qtbot, review_window)
        qtbot.wait(100)
        _shot(review_window, f"proposals-buttons-{size[0]}x{size[1]}")
        window = review_window.rect()
        cut = []
        for button in [*panel.buttons.values(), panel.clean_button]:
            assert isinstance(button, QAbstractButton)
            rect = QRect(button.mapTo(review_window, QPoint(0, 0)), button.size())
            if not button.isVisible() or not window.contains(rect) \
                    or button.width() < button.sizeHint().width():
                cut.append(f"{button.text()}: {rect.getRect()} (needs {button.sizeHint().width()})")
        assert not cut, cut
        # the title follows the application's font (it was set once, at its first size)
        assert panel.title.font().pointSizeF() > app.font().pointSizeF()
    finally:
        app.setFont(before)


def test_queue_model_passes_the_model_tester(qtbot, qtmodeltester, review_window) -> None:  # type: ignore[no-untyped-def]
    panel = show_tab(qtbot, review_window)
    wait_checked(qtbot, panel)
    qtmodeltester.check(panel.model)
    panel.set_mode("fact")
    panel.set_findings_filter("error")
    panel.set_order("worst")
    qtmodeltester.check(panel.model)
