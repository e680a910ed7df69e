"""The envelope inspector: badges, trust, attribution, refs, problems, history."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidgetItem

from tests.gui.conftest import fact_id


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
    assert ins.badges["writer"].text() == "writer: codex (tool)"
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
    assert ins.badges["writer"].text().endswith("(derived)")
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


def test_history_lists_commits_and_diffs_versions(window, qtbot) -> None:
    window.show_fact(fact_id(window, "pool"))
    ins = window.inspector
    ins.tabs.setCurrentWidget(ins.history)
    commits = ins.history.commits
    assert commits.topLevelItemCount() == 2
    assert commits.topLevelItem(0).text(4) == "update: Connection pool exhausts at 200 clients"
    assert commits.topLevelItem(0).text(2) == "update"
    diff = ins.history.diff.toPlainText()
    assert "-The pool **fills up** under load." in diff
    assert "+The pool **saturates** under load." in diff
    commits.topLevelItem(0).setSelected(True)
    commits.topLevelItem(1).setSelected(True)
    both = ins.history.diff.toPlainText()
    assert "+The pool **saturates** under load." in both
    commits.clearSelection()
    commits.topLevelItem(1).setSelected(True)
    assert "+++ " in ins.history.diff.toPlainText()
    assert "+The pool **fills up** under load." in ins.history.diff.toPlainText()
