"""The envelope inspector: badges, trust, attribution, refs, problems, history."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidgetItem

from factdesk.corpus.codec import MAX_BYTES
from factdesk.corpus.gitrepo import blob_id
from factdesk.gui import history_panel
from factdesk.gui.history_panel import BLOB_ROLE, COMPARING, version_diff
from tests.conftest import Corpus
from tests.gui.conftest import fact_id, relabel_dialog


def ref_items(window) -> dict[str, list[QTreeWidgetItem]]:
    tree = window.inspector.refs
    out = {}
    for i in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(i)
        out[group.text(0).rsplit(" (", 1)[0]] = [group.child(j) for j in range(group.childCount())]
    return out


def test_badges_trust_and_attribution(window) -> None:
    window.show_fact(fact_id(window, "pool"))
    ins = window.inspector
    assert ins.title.text() == "Connection pool exhausts at 200 clients"
    assert ins.badges["type"].text() == "type: ● observation"
    assert ins.badges["kind"].text() == "kind: E epistemic"
    assert ins.badges["origin"].text() == "origin: ✎ authored"
    # "claimant", as the table's column, the relabel editor and the query language say
    # (it said "writer:"; issue 14, bug 7)
    assert ins.badges["claimant"].text() == "claimant: codex (tool)"
    assert ins.badges["subject"].text() == "subject: codebase repo:ledger"
    assert ins.badges["claim"].text() == "claim: observation"
    assert "0.90" in ins.trust["confidence"].text()
    assert "2" in ins.trust["sources"].text()
    assert ins.attribution.text() == (
        "codex (tool) observed: Connection pool exhausts at 200 clients")
    assert "saturates" in ins.body.toPlainText()


def test_derived_values_and_stale_weight_are_flagged(window) -> None:
    window.show_fact(fact_id(window, "syn"))
    ins = window.inspector
    assert ins.badges["claim"].text().endswith("(derived)")
    assert ins.badges["claimant"].text().endswith("(derived)")
    weight = ins.trust["weight"].text()
    assert "recorded 0.99" in weight
    assert "stale" in weight


def test_refs_grouped_by_kind_and_followed(window, qtbot) -> None:
    window.show_fact(fact_id(window, "pool"))
    groups = ref_items(window)
    assert [i.text(0) for i in groups["URLs"]] == ["https://www.postgresql.org/docs/"]
    assert [i.text(0) for i in groups["Source code"]] == ["src://ledger/api/pool.go@main"]
    assert [i.text(1) for i in groups["Facts"]] == ["Migrations will lock the ledger table"]
    assert [i.text(1) for i in groups["Retracted facts"]] == [
        "Rate limit is 100 requests per minute"]
    assert [i.text(1) for i in groups["Cited by"]] == ["Pool limits and rate limits interact"]
    tree = window.inspector.refs
    window.inspector.tabs.setCurrentWidget(tree)
    assert tree.columnWidth(0) <= max(160, tree.width() // 2)  # the titles stay in sight
    item = groups["Facts"][0]
    tree.scrollToItem(item)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton,
                     pos=tree.visualItemRect(item).center())
    assert window.inspector.fact_id == fact_id(window, "hyp")
    assert window.table.current_id() == fact_id(window, "hyp")


def test_retracted_ref_shows_last_version_and_reason(window) -> None:
    window.show_fact(fact_id(window, "pool"))
    window.inspector._ref_activated(ref_items(window)["Retracted facts"][0])
    ins = window.inspector
    assert ins.fact_id == fact_id(window, "retracted")
    assert ins.retracted.isVisible()
    assert "by codex" in ins.retracted.text()
    assert "retract: Rate limit is 100 requests per minute" in ins.retracted.text()
    assert "Superseded." in ins.body.toPlainText()


def test_problems_listed(window) -> None:
    window.show_fact(fact_id(window, "hyp"))
    tree = window.inspector.problems
    codes = [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]
    assert "H1" in codes
    assert window.inspector.tabs.tabText(2) == f"Problems ({len(codes)})"


UNKNOWN_KEYS = """---
type: observation
confidence: 0.5
sources: 1
refs: []
x-agent: codex-7
x-review:
  by: ana
  tags: [late, "a, b"]
  when: null
x-steps:
  - {n: 1}
  - two
x-bidi: "evil\u202etxt"
---
# Unknown keys are kept

Body.
"""


def test_other_fields_show_unknown_keys_as_the_file_has_them(qtbot, window, repo) -> None:
    path = "kb/gotchas/db/f6f6f6f6.md"
    (repo / path).write_text(UNKNOWN_KEYS, encoding="utf-8")
    with qtbot.waitSignal(window.index_did_update, timeout=20_000):
        window.reindex()
    conn = window.session.conn
    window.show_fact(conn.execute("SELECT id FROM facts WHERE path = ?", (path,)).fetchone()[0])
    ins, tree = window.inspector, window.inspector.other
    assert ins.tabs.tabText(ins.tabs.indexOf(tree)) == "Other fields (4)"
    top = {tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(tree.topLevelItemCount())}
    assert list(top) == ["x-agent", "x-review", "x-steps", "x-bidi"]  # the file's order

    def children(item: QTreeWidgetItem) -> list[tuple[str, str]]:
        return [(item.child(i).text(0), item.child(i).text(1)) for i in range(item.childCount())]

    assert top["x-agent"].text(1) == "codex-7"
    assert children(top["x-review"]) == [("by", "ana"), ("tags", '["late", "a, b"]'),
                                         ("when", "null")]
    assert children(top["x-steps"]) == [("[0]", "{…}"), ("[1]", "two")]
    assert children(top["x-steps"].child(0)) == [("n", "1")]
    assert top["x-bidi"].text(1) == "evil⟨U+202E⟩txt"  # a hidden control is shown, not obeyed
    window.show_fact(fact_id(window, "pool"))  # a fact with none
    assert tree.topLevelItemCount() == 0
    assert ins.tabs.tabText(ins.tabs.indexOf(tree)) == "Other fields (0)"


def _diff_after(qtbot, history, select) -> str:
    """The diff shown once the thread working it out has answered `select()`'s change."""
    with qtbot.waitSignal(history.diff_did_show, timeout=10_000):
        select()
    qtbot.waitUntil(lambda: not history.comparing)
    return history.diff.toPlainText()


def test_history_lists_commits_and_diffs_versions(window, qtbot) -> None:
    # the transitions' background load refreshes the inspector when done: not mid-test
    qtbot.waitUntil(lambda: window.transitions.loaded, timeout=20_000)
    window.show_fact(fact_id(window, "pool"))
    ins = window.inspector
    # read when its tab is first shown
    diff = _diff_after(qtbot, ins.history, lambda: ins.tabs.setCurrentWidget(ins.history))
    commits = ins.history.commits
    assert commits.topLevelItemCount() == 2
    assert commits.topLevelItem(0).text(4) == "update: Connection pool exhausts at 200 clients"
    assert commits.topLevelItem(0).text(2) == "update"
    assert "-The pool **fills up** under load." in diff
    assert "+The pool **saturates** under load." in diff
    both = _diff_after(qtbot, ins.history, lambda: commits.topLevelItem(1).setSelected(True))
    assert "+The pool **saturates** under load." in both
    commits.clearSelection()
    older = _diff_after(qtbot, ins.history, lambda: commits.topLevelItem(1).setSelected(True))
    assert "+++ " in older
    assert "+The pool **fills up** under load." in older


def test_history_diff_is_worked_out_off_the_gui_thread_and_the_newest_selection_wins(
        window, qtbot, monkeypatch) -> None:
    # the transitions' background load refreshes the inspector when done: not mid-test
    qtbot.waitUntil(lambda: window.transitions.loaded, timeout=20_000)
    window.show_fact(fact_id(window, "pool"))
    history = window.inspector.history
    _diff_after(qtbot, history, lambda: window.inspector.tabs.setCurrentWidget(history))
    worked: list[tuple[str | None, str | None]] = []  # every diff worked out, by its blobs

    def spy(repo, path, before, after, labels, **options):  # the real diff, recorded
        worked.append((before, after))
        return version_diff(repo, path, before, after, labels, **options)

    monkeypatch.setattr(history_panel, "version_diff", spy)
    shown: list[str] = []
    history.diff_did_show.connect(lambda: shown.append(history.diff.toPlainText()))
    commits = history.commits
    creation, update = commits.topLevelItem(1), commits.topLevelItem(0)
    blobs = [creation.data(0, BLOB_ROLE)[:2], update.data(0, BLOB_ROLE)[:2]]
    commits.clearSelection()
    creation.setSelected(True)
    assert history.diff.toPlainText() == COMPARING  # the GUI thread did not wait for it
    for _ in range(3):  # back and forth before the first diff came back
        commits.clearSelection()
        creation.setSelected(True)
        commits.clearSelection()
        update.setSelected(True)
    qtbot.waitUntil(lambda: not history.comparing)
    # one diff ran, the newest request waited its turn; the five between were never worked
    assert worked == blobs
    assert len(shown) == 1  # the creation's diff, answered later, was dropped
    assert "-The pool **fills up** under load." in shown[0]
    assert "+The pool **saturates** under load." in shown[0]


def test_a_diff_answered_after_close_worker_is_not_shown(window, qtbot) -> None:
    qtbot.waitUntil(lambda: window.transitions.loaded, timeout=20_000)
    window.show_fact(fact_id(window, "pool"))
    history = window.inspector.history
    shown: list[str] = []
    history.diff_did_show.connect(lambda: shown.append(history.diff.toPlainText()))
    window.inspector.tabs.setCurrentWidget(history)  # its diff starts on a thread
    assert history.comparing
    history.close_worker()  # (the window closing) stops and reaps it
    assert not history.comparing
    qtbot.wait(100)  # its answer, queued meanwhile, is delivered
    assert shown == []


def test_version_diff_shows_git_hunks_and_refuses_oversize_versions(corpus: Corpus,
                                                                     gui_thread_watch) -> None:
    gui_thread_watch.allow("version_diff is the history tab's worker job, called here directly")
    path = "kb/gotchas/db/a1a1a1a1.md"
    before = blob_id((corpus.root / path).read_bytes())
    edited = (corpus.root / path).read_bytes().replace(b"Body text", b"Edited text")
    corpus.write(path, edited)
    corpus.commit("learn: an edit")
    assert version_diff(corpus.root, path, before, blob_id(edited), ("a", "b")).startswith(
        f"--- a:{path}\n+++ b:{path}\n@@ ")  # git diff's hunks under our labels
    big = (corpus.root / path).read_bytes() + b"x" * MAX_BYTES + b"\n"
    corpus.write(path, big)
    corpus.commit("learn: a fact grows past the limit")
    assert version_diff(corpus.root, path, before, blob_id(big), ("a", "b")) == (
        f"(a version is {len(big):,} bytes, over the {MAX_BYTES:,}-byte limit: not compared)")
    assert "-Body text" in version_diff(corpus.root, path, before, None, ("a", "b"))  # a deletion


def test_an_action_applies_to_the_fact_followed_to(qtbot, window) -> None:
    # a ref followed to a fact outside the table's query: R opened on the row still selected
    window.set_query("type:synthesis")
    qtbot.waitUntil(lambda: window.table.model.rowCount() == 1, timeout=5000)
    window.show_fact(fact_id(window, "syn"))
    assert window.table.current_id() == fact_id(window, "syn")
    tree = window.inspector.refs
    window.inspector.tabs.setCurrentWidget(tree)
    item = ref_items(window)["Facts"][0]
    tree.scrollToItem(item)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=tree.visualItemRect(item).center())
    assert window.inspector.fact_id == fact_id(window, "pool")
    assert window.selected_paths() == ["kb/gotchas/db/a1a1a1a1.md"]
    window.table.view.setFocus()
    qtbot.keyClick(window.table.view, Qt.Key.Key_R)
    assert relabel_dialog(qtbot, window).paths == ["kb/gotchas/db/a1a1a1a1.md"]
    window.relabel_dialog.reject()
