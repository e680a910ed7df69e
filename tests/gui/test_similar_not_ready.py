"""`similar:` while the semantic model is not ready (issue 24 item 12): the window says so —
no list of every fact under it, no facet counted 0 — and so does the command line."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QTreeWidgetItemIterator

from factdesk.cli import main
from tests.gui.conftest import submit

pytestmark = pytest.mark.gui


def _facet_counts(window) -> list[str]:  # type: ignore[no-untyped-def]
    out = []
    it = QTreeWidgetItemIterator(window.sidebar.facets)
    while it.value() is not None:
        item = it.value()
        if item.parent() is not None:
            out.append(item.text(1))
        it += 1
    return out


@pytest.mark.parametrize("why", ["embedding", "off"])
def test_similar_says_it_is_not_ready(window, qtbot, why: str) -> None:  # type: ignore[no-untyped-def]
    if why == "embedding":  # (started, its model still loading: no session yet)
        window.semantic.enabled, window.semantic.notice = True, None
    assert window.semantic.session is None
    everything = window.table.model.rowCount()
    assert everything > 3
    submit(window, qtbot, "similar:connection pool")
    qtbot.wait(100)
    said = window.search.error.text()
    assert "similar:" in said and ("not ready" in said or "off" in said), said
    assert window.search.error.isVisible()
    assert window.table.model.rowCount() == 0  # (not every fact, as if it had answered)
    assert "0" not in _facet_counts(window)  # (no facet counted 0 as if it had answered)
    submit(window, qtbot, "")
    qtbot.waitUntil(lambda: window.table.model.rowCount() == everything, timeout=3000)


def test_the_command_line_says_it_is_not_ready(repo, data_dir, capsys) -> None:  # type: ignore[no-untyped-def]
    """`factdesk search 'similar:…'` with no embeddings yet: a word and exit 1, never a
    list of every fact (the text search took `similar` for a word)."""
    assert main(["index", "--kb", str(repo)]) == 0
    capsys.readouterr()
    code = main(["search", "similar:connection pool", "--kb", str(repo), "--format", "json"])
    out = capsys.readouterr()
    assert code == 1, out.out
    assert "not ready" in out.err and "factdesk embed" in out.err, out.err
    assert out.out == ""
