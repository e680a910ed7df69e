"""RELIABILITY H01–H07: corpus text is never markup, resources never load, links are vetted."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QLabel, QPushButton, QTextBrowser

from factdesk.gui import safe_browser
from factdesk.gui.safe_browser import SafeTextBrowser
from tests.gui.conftest import HOSTILE_TITLE, fact_id

#: static labels whose text is ours, not the corpus's
STATIC_LABEL_NAMES = {"qt_msgbox_label"}


@pytest.fixture
def hostile(window, qtbot):
    window.show_fact(fact_id(window, "hostile"))
    qtbot.wait(10)  # let the browser lay out (and request its images)
    return window


def test_hostile_title_is_literal_everywhere(hostile) -> None:
    assert hostile.inspector.title.text() == HOSTILE_TITLE
    assert HOSTILE_TITLE in hostile.inspector.attribution.text()
    labels = hostile.findChildren(QLabel)
    assert labels
    for label in labels:
        if label.objectName() in STATIC_LABEL_NAMES:
            continue
        assert label.textFormat() == Qt.TextFormat.PlainText, label.objectName()


def test_table_tooltip_is_escaped(hostile) -> None:
    model = hostile.table.model
    row = model.row_of(fact_id(hostile, "hostile"))
    tip = model.index(row, hostile.table.state.column_index("title")).data(
        Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("<qt>") and "&lt;img" in tip and "<img" not in tip


def test_raw_html_shown_as_text(hostile) -> None:
    text = hostile.inspector.body.toPlainText()
    assert "<script>alert(1)</script>" in text
    assert "<b>bold?</b>" in text


def test_resources_are_never_loaded(hostile, monkeypatch, qtbot) -> None:
    base_calls: list[str] = []
    monkeypatch.setattr(QTextBrowser, "loadResource",
                        lambda self, t, url: base_calls.append(url.toString()))
    body = hostile.inspector.body
    body.clear()
    body.blocked_resources.clear()
    body.show_markdown("![x](file:///etc/passwd)\n\n![y](data:image/png;base64,AAAA)"
                       "\n\n![z](http://example.invalid/a.png)\n\n![w](../../secret.png)")
    qtbot.wait(10)
    body.viewport().repaint()
    assert base_calls == []
    assert {"file:///etc/passwd", "http://example.invalid/a.png"} <= set(body.blocked_resources)
    assert type(body).loadResource is SafeTextBrowser.loadResource


@pytest.mark.parametrize("url, opened", [
    ("javascript:alert(1)", False),
    ("file:///etc/passwd", False),
    ("obsidian://open?vault=x", False),
    ("C:/Windows/evil.exe", False),
    ("https://evil.example/phish", True),
    ("http://example.org/", True),
])
def test_links_open_only_confirmed_http(hostile, monkeypatch, url, opened) -> None:
    asked: list[str] = []
    opened_urls: list[str] = []

    def confirm(_parent, link: QUrl) -> bool:
        asked.append(link.toString())
        return True

    monkeypatch.setattr("factdesk.gui.inspector.confirm_open_url", confirm)
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda u: opened_urls.append(u.toString()))
    hostile.inspector.body.anchorClicked.emit(QUrl(url))
    assert opened_urls == ([url] if opened else [])
    assert asked == ([url] if opened else [])


def test_declined_confirmation_opens_nothing(hostile, monkeypatch) -> None:
    opened: list[str] = []
    monkeypatch.setattr("factdesk.gui.inspector.confirm_open_url", lambda _p, _u: False)
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda u: opened.append(u.toString()))
    hostile.inspector.body.anchorClicked.emit(QUrl("https://evil.example/phish"))
    assert opened == []


def test_confirmation_shows_real_url_as_plain_text(qapp, monkeypatch) -> None:
    seen = {}

    def fake_exec(box) -> int:
        seen["text"], seen["format"] = box.text(), box.textFormat()
        return 0

    monkeypatch.setattr(safe_browser.QMessageBox, "exec", fake_exec)
    assert not safe_browser.confirm_open_url(None, QUrl("https://evil.example/<b>x"))
    assert "https://evil.example/" in seen["text"]
    assert seen["format"] == Qt.TextFormat.PlainText


def test_body_fact_link_navigates(hostile) -> None:
    hostile.inspector.body.anchorClicked.emit(QUrl("kb/gotchas/db/a1a1a1a1.md"))
    assert hostile.inspector.fact_id == fact_id(hostile, "pool")


def test_pathological_markdown_is_shown_raw(qtbot) -> None:
    browser = SafeTextBrowser()
    qtbot.addWidget(browser)
    assert not browser.show_markdown(">" * 500 + " deep")
    assert browser.toPlainText().startswith("[too large to render")
    assert not browser.show_markdown("x" * 300_000)
    assert len(browser.toPlainText()) < 250_000


def test_refused_image_is_not_read_by_qts_own_fallback(qtbot, tmp_path, monkeypatch) -> None:
    """H02: when loadResource returns a null variant, QTextDocument opens the URL as a local
    file itself (it read file:///etc/passwd, and file:///dev/zero until std::bad_alloc). The
    refusal must leave nothing for that fallback: the document gets an empty image."""
    from PySide6.QtGui import QImage, QTextDocument

    outside = tmp_path / "outside.png"
    image = QImage(4, 4, QImage.Format.Format_RGB32)
    image.fill(0xFF0000)
    assert image.save(str(outside))
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # the fallback resolves relative names against it
    browser = SafeTextBrowser()
    qtbot.addWidget(browser)
    absolute, relative = QUrl.fromLocalFile(str(outside)).toString(), "../outside.png"
    assert browser.show_markdown(f"![a]({absolute})\n\n![r]({relative})\n\n![d](data:image/png;base64,AAAA)")
    for name in (absolute, relative, "data:image/png;base64,AAAA"):
        got = browser.document().resource(QTextDocument.ResourceType.ImageResource, QUrl(name))
        assert isinstance(got, QImage) and got.isNull(), (name, type(got))
    assert {absolute, relative} <= set(browser.blocked_resources)


PATHOLOGICAL = {
    # name: (markdown, rendered as markdown?)
    "10,000-row table": ("| n | v |\n|---|---|\n" + "| 1 | x |\n" * 10_000, False),
    "498-row table (996 cells)": ("| n | v |\n|---|---|\n" + "| 1 | x |\n" * 498, True),
    "50 x 19 table": ("|" + "c|" * 19 + "\n|" + "---|" * 19 + "\n" + ("|" + "x|" * 19 + "\n") * 50, True),
    "5,000-deep list": ("- " * 5_000 + "x", False),
    "5,000-deep ordered list": ("1. " * 5_000 + "x", False),
    "5,000-deep blockquote": ("> " * 5_000 + "x", False),
    "40-deep nesting, 1,100 lines": ("".join("  " * (i % 40) + "- x\n" for i in range(1_100)), True),
    "1,999 list items": ("- item\n" * 1_999, True),
    "10 MB line": ("x" * 10_000_000, False),
    "190,000-char line": ("y" * 190_000, False),
    "10,000-char line": ("y" * 10_000, True),
    "unbalanced backticks": (("` " * 4_990 + "\n\n") * 5, True),
    "1,000 images": ("![a](b)\n" * 1_000, False),
    "200 images": ("![a](b)\n" * 200, True),
    "190,000 emphasis marks": ("*" * 100_000 + "x" + "*" * 90_000, False),
}
#: CPU seconds of the GUI thread (not wall time: on a loaded machine a run waits for a core
#: without costing more; the suite ran two at once beside other work and the wall clock
#: failed this test while the work was the same). Measured worst ~0.4 s (the 50 x 19 table);
#: a caps bug makes it seconds to minutes.
RENDER_BUDGET_S = 1.0


@pytest.mark.parametrize("name", list(PATHOLOGICAL))
def test_pathological_markdown_renders_within_budget(qtbot, name: str) -> None:
    """H08/H09: over the caps the body is shown as cut raw text, under them as markdown;
    either way, rendering and painting stay within the budget (CPU time of this thread)."""
    import time

    text, rendered = PATHOLOGICAL[name]
    browser = SafeTextBrowser()
    qtbot.addWidget(browser)
    browser.resize(600, 500)
    browser.show()
    start = time.thread_time()
    assert browser.show_markdown(text) is rendered
    browser.viewport().repaint()
    elapsed = time.thread_time() - start
    assert elapsed < RENDER_BUDGET_S, f"{name}: {elapsed:.2f} s"
    shown = browser.toPlainText()
    assert len(shown) <= 250_000
    assert max(len(line) for line in shown.split("\n")) <= 10_100
    if not rendered:
        assert shown.startswith("[too large to render (")


def test_raw_text_never_inherits_a_link_from_the_previous_body(qtbot) -> None:
    """With the cursor left in a link (the user clicked it), a body shown raw was inserted
    with that link's format: all of it one anchor to the previous fact's URL."""
    from PySide6.QtGui import QTextCursor

    browser = SafeTextBrowser()
    qtbot.addWidget(browser)
    assert browser.show_markdown("[phish](https://evil.example/)")
    cursor = QTextCursor(browser.document())
    cursor.setPosition(2)
    browser.setTextCursor(cursor)
    assert not browser.show_markdown("y" * 20_000)
    block = browser.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            assert not it.fragment().charFormat().isAnchor()
            it += 1
        block = block.next()


def test_no_corpus_text_in_a_question_label(qtbot, window, repo) -> None:
    """H01: QInputDialog's label renders rich text (a label `<img src="file:///dev/zero">`
    aborts with std::bad_alloc), so a question shows corpus text only in its plain answer
    field. Confirming a hypothesis with a hostile-titled candidate asks with a clean label."""
    from tests.gui.conftest import IDS, _commit, _write

    _write(repo, "kb/gotchas/db/0b5e0b5e.md", "---\ntype: observation\ndomain: [db]\nconfidence: 0.9\n"
           f"sources: 1\nrefs: ['{IDS['hyp']}']\n---\n# {HOSTILE_TITLE}\n\nSeen.\n")
    _commit(repo, "learn: a hostile observation")
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.reindex()
    with qtbot.waitSignal(window.settlement.did_load, timeout=10_000):
        window.center.setCurrentWidget(window.settlement)
    panel = window.settlement
    rows = [panel.candidate_list.topLevelItem(i) for i in range(panel.candidate_list.topLevelItemCount())]
    hostile = next(r for r in rows if r.data(0, Qt.ItemDataRole.UserRole) == "kb/gotchas/db/0b5e0b5e.md")
    panel.candidate_list.setCurrentItem(hostile)
    hostile.setCheckState(0, Qt.CheckState.Checked)  # (ticked: what C confirms with)
    asked: list[tuple[str, str, str]] = []
    window.ask_text = lambda *a: asked.append(a)  # type: ignore[method-assign]  # (cancels)
    panel.confirm()
    assert asked and HOSTILE_TITLE not in asked[0][1] and "<" not in asked[0][1]
    assert HOSTILE_TITLE in asked[0][2]  # the editable default: a plain QLineEdit


HOSTILE_NAME = "kb/gotchas/db/<img src=x>.md"


def _tip_is_safe(tip: object) -> bool:
    """A tooltip is plain text Qt will not render as markup, or theme.tooltip's escaped form."""
    from PySide6 import QtGui

    if not isinstance(tip, str) or not tip:
        return True
    if tip.startswith("<qt>") and tip.endswith("</qt>"):
        inner = tip[4:-5]
        return "<" not in inner and ">" not in inner
    return not QtGui.Qt.mightBeRichText(tip)


def test_every_tooltip_in_the_window_is_plain_or_escaped(qtbot, window, repo) -> None:
    """H01 audit: a hypothesis whose *file name* and title are markup, shown in every panel;
    then every widget tooltip and every item tooltip of every view is checked."""
    from PySide6.QtCore import QModelIndex
    from PySide6.QtWidgets import QAbstractItemView, QWidget

    from tests.gui.conftest import _commit, _write

    _write(repo, HOSTILE_NAME, "---\ntype: hypothesis\ndomain: [db]\nconfidence: 0.5\nsources: 1\n"
           f"refs: []\nsettle_by: 2020-01-02\n---\n# {HOSTILE_TITLE}\n\nA guess.\n")
    _commit(repo, "learn: a hypothesis with a hostile name")
    with qtbot.waitSignal(window.index_did_update, timeout=10_000):
        window.reindex()
    window.show_path(HOSTILE_NAME)
    window.inspector.tabs.setCurrentWidget(window.inspector.history)
    for panel in (window.problems, window.overview):
        window.center.setCurrentWidget(panel)
    with qtbot.waitSignal(window.settlement.did_load, timeout=10_000):
        window.center.setCurrentWidget(window.settlement)
    with qtbot.waitSignal(window.mislabels.queue_did_load, timeout=20_000):
        window.center.setCurrentWidget(window.mislabels)
    window.center.setCurrentWidget(window.transitions_tab)
    qtbot.waitUntil(lambda: window.transitions.loaded, timeout=20_000)
    assert HOSTILE_NAME in [item.path for item in window.settlement.items]
    # (the inspector follows a queue's current fact: shown again, with its history tab)
    window.center.setCurrentWidget(window.transitions_tab)
    window.inspect_path(HOSTILE_NAME)
    window.inspector.tabs.setCurrentWidget(window.inspector.history)
    assert window.inspector.path == HOSTILE_NAME

    bad: list[str] = []
    seen = 0

    def walk(model, parent: QModelIndex) -> None:  # type: ignore[no-untyped-def]
        nonlocal seen
        for row in range(model.rowCount(parent)):
            for col in range(model.columnCount(parent)):
                index = model.index(row, col, parent)
                tip = index.data(Qt.ItemDataRole.ToolTipRole)
                seen += bool(tip)
                if not _tip_is_safe(tip):
                    bad.append(f"{type(model).__name__} ({row},{col}): {tip!r}")
            first = model.index(row, 0, parent)
            if model.rowCount(first) > 0:
                walk(model, first)

    for view in window.findChildren(QAbstractItemView):
        walk(view.model(), QModelIndex())
    for widget in window.findChildren(QWidget):
        if not _tip_is_safe(widget.toolTip()):
            bad.append(f"{type(widget).__name__} {widget.objectName()}: {widget.toolTip()!r}")
    assert seen > 20  # the audit looked at real tooltips
    assert bad == []


def test_question_dialog_label_is_plain_text(window, qtbot) -> None:
    """`ask_text` quotes corpus text in its label: shown literally, never as markup."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QInputDialog

    seen: list[tuple[str, list[Qt.TextFormat]]] = []

    def inspect_and_cancel() -> None:
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, QInputDialog) and widget.isVisible():
                labels = widget.findChildren(QLabel)
                seen.append((widget.labelText(), [lab.textFormat() for lab in labels]))
                widget.reject()
                return
        QTimer.singleShot(20, inspect_and_cancel)

    QTimer.singleShot(20, inspect_and_cancel)
    answer = window.ask_text("Refute", f"Why refute {HOSTILE_TITLE}?", "")
    assert answer is None
    assert seen and seen[0][0] == f"Why refute {HOSTILE_TITLE}?"
    assert seen[0][1] and all(f == Qt.TextFormat.PlainText for f in seen[0][1])


def test_table_cell_cuts_a_huge_title(window) -> None:
    from factdesk.gui.table_model import _display
    from factdesk.gui.theme import MAX_LABEL_CHARS

    row = {"title": "x" * 50_000, "errors": 0, "warnings": 1}
    shown = _display("title", row)  # type: ignore[arg-type]
    assert shown.startswith("x" * MAX_LABEL_CHARS + " … [49,000 more characters]")
    assert len(shown) < MAX_LABEL_CHARS + 40


def test_invisible_controls_in_a_title_are_shown_as_code_points(qtbot, repo, data_dir) -> None:
    """RELIABILITY A23 ("Trojan source"): a right-to-left override makes `exe.pdf` read as
    `fdp.exe`; a zero-width space hides in a word. The table and the inspector's header show
    each as its code point, while search still matches the raw text."""
    from tests.gui.conftest import open_window, submit

    title = "Invoice paid \u202efdp.exe\u202c for zero\u200bwidth, \u05d0\u200f"  # (RLM kept)
    shown = "Invoice paid ⟨U+202E⟩fdp.exe⟨U+202C⟩ for zero⟨U+200B⟩width, \u05d0\u200f"
    (repo / "kb/gotchas/db/f6f6f6f6.md").write_text(
        f"---\ntype: observation\nconfidence: 0.5\nsources: 1\n---\n# {title}\n\nBody.\n")
    win = open_window(qtbot, repo)
    submit(win, qtbot, "fdp")  # the raw text is what is searched
    [fid] = win.table.model.ids
    model = win.table.model
    cell = model.index(model.row_of(fid), win.table.state.column_index("title"))
    assert cell.data(Qt.ItemDataRole.DisplayRole).startswith(shown)
    win.show_fact(fid)
    assert win.inspector.title.text() == shown
    assert win.inspector.title.textFormat() == Qt.TextFormat.PlainText
    # a name with one too: the inspector's path and the table's path cell
    name = "kb/gotchas/db/\u202egnp.md"
    (repo / name).write_text("---\ntype: observation\n---\n# A picture, or not\n")
    with qtbot.waitSignal(win.index_did_update, timeout=20_000):
        win.reindex()
    submit(win, qtbot, "picture")
    [other] = win.table.model.ids
    win.show_fact(other)
    assert win.inspector.path_label.text() == "kb/gotchas/db/⟨U+202E⟩gnp.md"
    path_cell = model.index(model.row_of(other), win.table.state.column_index("path"))
    assert path_cell.data(Qt.ItemDataRole.DisplayRole) == "kb/gotchas/db/⟨U+202E⟩gnp.md"
    # elsewhere too (they showed the raw character): a folder in the ontology tree, a chip,
    # a facet value, and the Problems tab's fact and message
    (repo / "kb/gotchas/ev\u202eil").mkdir()
    (repo / "kb/gotchas/ev\u202eil/a9a9a9a9.md").write_text(
        "---\ntype: observation\nconfidence: 0.5\nsources: 1\ndomain: [do\u202emain]\n"
        "refs: ['kb/none/\u202egone.md']\n---\n# Cites a \u202emissing fact\n")
    (repo / "kb/gotchas/db/b9b9b9b9.md").write_text("---\ntype: fact\u202eoid\n---\n# Broken\n")
    with qtbot.waitSignal(win.index_did_update, timeout=20_000):
        win.reindex()
    win.set_query("")

    def texts(tree) -> list[str]:  # type: ignore[no-untyped-def]
        out, stack = [], [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
        while stack:
            item = stack.pop()
            out += [item.text(c) for c in range(item.columnCount())]
            stack += [item.child(i) for i in range(item.childCount())]
        return out

    root = win.sidebar.ontology.topLevelItem(0)
    next(root.child(i) for i in range(root.childCount()) if root.child(i).text(0) == "gotchas"
         ).setExpanded(True)
    qtbot.waitUntil(lambda: "ev⟨U+202E⟩il" in texts(win.sidebar.ontology), timeout=5000)
    win.add_filter("domain", "do\u202emain")
    chips = [b.text() for b in win.search.chips.findChildren(QPushButton)]
    assert "domain:do⟨U+202E⟩main  ×" in chips
    win.set_query("")
    assert any("fact⟨U+202E⟩oid" in t for t in texts(win.sidebar.facets))  # a raw type
    win.problems.refresh()
    shown_problems = texts(win.problems.tree)
    assert "Cites a ⟨U+202E⟩missing fact" in shown_problems
    assert all("\u202e" not in t for t in shown_problems + texts(win.sidebar.ontology))
    win.close()
