"""The window lists what `check` lists: a `dup_id` warning (issue 22 #9, derived when read,
never stored) is in the Problems tab and in the Overview's count of findings, as in
`check --format json`."""

from __future__ import annotations

import json
from pathlib import Path

from factdesk.cli import main
from tests.gui.conftest import FACT, IDS, _commit, _write, open_window

TWIN = "kb/principles/ops/a1a1a1a1.md"


def test_the_problems_tab_and_the_overview_count_dup_id_as_check_does(
        qtbot, repo: Path, data_dir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    _write(repo, TWIN, FACT.format(
        front="type: observation\ndomain: [ops]\nconfidence: 0.6\nsources: 1\nrefs: []",
        title="Pools are sized per service", body="Seen in the ops review."))
    _commit(repo, "learn: a fact whose 8-hex name is taken")
    capsys.readouterr()
    main(["check", "--kb", str(repo), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    in_check = len(report["errors"]) + len(report["warnings"]) + len(report.get("info", []))
    assert {w["path"] for w in report["warnings"] if w["code"] == "dup_id"} == {IDS["pool"], TWIN}

    win = open_window(qtbot, repo)
    try:
        win.center.setCurrentWidget(win.problems)
        tree = win.problems.tree
        groups = {tree.topLevelItem(i).text(0): tree.topLevelItem(i)
                  for i in range(tree.topLevelItemCount())}
        assert "dup_id (2)" in groups, sorted(groups)
        group = groups["dup_id (2)"]
        shown = {group.child(i).toolTip(1) for i in range(group.childCount())}
        assert any(IDS["pool"] in s for s in shown) and any(TWIN in s for s in shown), shown
        assert win.problems.total == in_check
        win.center.setCurrentWidget(win.overview)
        win.overview.refresh()
        assert f", {in_check} findings" in win.overview.summary.text()
    finally:
        win.close()
