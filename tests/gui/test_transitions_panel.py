"""The Transitions tab on real git corpora: the generated corpus's manifest is the ground truth
(rows, chart totals, the since filter), plus keyboard activation and hostile claimant ids."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from factdesk.core import open_corpus
from factdesk.gui.stacked_chart import StackedBarChart
from factdesk.gui.transitions_panel import HYPOTHESES_ONLY, TransitionsPanel
from factdesk.index.indexer import Indexer
from factdesk.reflect.charts import outcomes_over_time, target_path, track_record_line
from factdesk.reflect.model import Transition
from factdesk.reflect.stats import Reflection, TrackRecord
from tests.conftest import Corpus, GeneratedCorpus

Key = tuple[str, str, str, str]


def manifest_keys(manifest: dict[str, Any], after: int = -1) -> set[Key]:
    """(kind, path, sha, other path or reason) of every manifest transition after commit `after`."""
    out: set[Key] = set()
    for t in manifest["transitions"]:
        if t["commit"] <= after:
            continue
        kind = {"settle": "promoted", "retract": "retracted"}.get(t["kind"], t["kind"])
        other = t.get("to_path") or "" if kind == "move" else \
            f"{t['reason']}:{t['confirmed_by'] or ''}" if kind == "retracted" else ""
        out.add((kind, t["path"], t["sha"], other))
    for pair in manifest["near_duplicates"]:
        if pair["observation_commit"] > after:
            out.add(("confirmed-by", pair["hypothesis"], pair["observation_sha"], pair["observation"]))
    return out


def row_keys(rows: list[Transition]) -> set[Key]:
    out: set[Key] = set()
    for t in rows:
        other = t.new_path or "" if t.kind == "move" else \
            f"{t.reason}:{t.confirming or ''}" if t.kind == "retracted" else \
            t.confirming or "" if t.kind == "confirmed-by" else ""
        out.add((t.kind, t.path, t.sha, other))
    return out


@pytest.fixture(scope="module")
def gen(generated_corpus: GeneratedCorpus, tmp_path_factory: pytest.TempPathFactory
        ) -> tuple[Path, dict[str, Any], Indexer]:
    """A private copy of the generated corpus (the panel writes its index and transition
    cache under .git), indexed once."""
    src, manifest = generated_corpus
    repo = tmp_path_factory.mktemp("transitions") / "kb"
    shutil.copytree(src, repo, symlinks=True)
    indexer = open_corpus(repo)
    indexer.update()
    return repo, manifest, indexer


def make_panel(qtbot: Any, repo: Path, indexer: Indexer, today: date) -> TransitionsPanel:
    panel = TransitionsPanel(repo, indexer, today=today)
    qtbot.addWidget(panel)
    panel.resize(1200, 800)
    panel.show()
    with qtbot.waitSignal(panel.did_load, timeout=120_000):
        panel.load()
    assert panel.loaded
    return panel


@pytest.fixture
def panel(qtbot: Any, gen: tuple[Path, dict[str, Any], Indexer]) -> Iterator[TransitionsPanel]:
    repo, manifest, indexer = gen
    p = make_panel(qtbot, repo, indexer, date.fromisoformat(manifest["now"]))
    yield p
    p.close_worker()


def bar_totals(chart: StackedBarChart) -> dict[str, float]:
    return {legend: total for legend, total in chart.totals().items()}


def categories(chart: StackedBarChart) -> list[str]:
    return list(chart.categories)


def test_rows_are_the_manifest_transitions(panel: TransitionsPanel, gen: Any, qtbot: Any) -> None:
    _, manifest, _ = gen
    want = manifest_keys(manifest)
    assert panel.model.rowCount() == len(want) == len(panel.transitions)
    assert row_keys(panel.model.rows) == want
    assert str(len(want)) in panel.status.text()
    # every cell is text; the commit column shows the short sha
    first = panel.model.rows[0]
    assert panel.model.index(0, 7).data() == first.sha[:10]
    # newest first by default
    times = [t.time for t in panel.model.rows]
    assert times == sorted(times, reverse=True)
    # the kind filter narrows the rows without reloading
    panel.kind_combo.setCurrentText(HYPOTHESES_ONLY)
    hyp = [t for t in panel.transitions if t.hypothesis]
    assert 0 < panel.model.rowCount() == len(hyp) < len(want)
    panel.kind_combo.setCurrentText("move")
    moves = sum(1 for t in manifest["transitions"] if t["kind"] == "move")
    assert panel.model.rowCount() == moves > 0
    # sorting by path keeps every row
    panel.kind_combo.setCurrentIndex(0)
    panel.table.sortByColumn(2, Qt.SortOrder.AscendingOrder)
    paths = [t.path for t in panel.model.rows]
    assert paths == sorted(paths) and len(paths) == len(want)


def test_charts_add_up_to_the_track_records(panel: TransitionsPanel, gen: Any) -> None:
    _, manifest, _ = gen
    ref = panel.reflection
    assert ref is not None
    life = manifest["lifecycle"]
    # the data layer's totals against the manifest (as tests/reflect checks them) ...
    assert ref.total.promoted == life["settle_inplace"] > 0
    assert ref.total.refuted == life["refuted"] > 0
    assert ref.total.confirmed == len({p["hypothesis"] for p in manifest["near_duplicates"]}) > 0
    assert ref.total.overdue > 0
    # ... and the chart's stacked bars against the data layer
    want = {"confirmed": ref.total.confirmed, "promoted": ref.total.promoted,
            "refuted": ref.total.refuted, "retracted": ref.total.retracted,
            "overdue": ref.total.overdue, "open": ref.total.open - ref.total.overdue}
    assert bar_totals(panel.records_chart) == want
    agents = [k for k, r in ref.by_agent.items() if r.settled + r.open]
    assert sorted(categories(panel.records_chart)) == sorted(agents)
    assert set(agents) <= set(manifest["agents"]["agents"])
    panel.group_combo.setCurrentIndex(1)  # per claimant type
    assert bar_totals(panel.records_chart) == want
    assert sorted(categories(panel.records_chart)) == sorted(ref.by_type)
    # outcomes over time: every decisive outcome once, whatever the bucket
    outcomes = {k: v for k, v in want.items() if k not in ("overdue", "open")}
    for bucket in ("auto", "month", "week", "day"):
        panel.bucket_combo.setCurrentText(bucket)
        assert bar_totals(panel.months_chart) == outcomes, bucket
        line = panel.months_chart.line
        assert line is not None and len(line.values) == len(panel.months_chart.categories)
        assert all(v is None or 0 <= v <= 100 for v in line.values)
    # by month it is exactly the data layer's monthly series
    panel.bucket_combo.setCurrentText("month")
    assert panel.month_points() == [(p.month, dict(p.counts)) for p in ref.monthly if p.group == "all"]
    # one agent's outcomes over time sum to that agent's record
    agent = max(agents, key=lambda a: ref.by_agent[a].settled)
    panel.month_combo.setCurrentIndex(panel.month_combo.findData(f"agent:{agent}"))
    assert sum(bar_totals(panel.months_chart).values()) == ref.by_agent[agent].settled
    # methodology table: one row per methodology, most reinforced first
    table = panel.methodology_table
    assert table.rowCount() == len(ref.methodologies) > 0
    counts = [table.item(r, 0) for r in range(table.rowCount())]
    assert [int(c.text()) if c else None for c in counts] == [m.transitions for m in ref.methodologies]


def test_since_narrows_the_rows(panel: TransitionsPanel, gen: Any, qtbot: Any) -> None:
    repo, manifest, _ = gen
    chain = subprocess.run(["git", "-C", str(repo), "rev-list", "--first-parent", "--reverse", "HEAD"],
                           capture_output=True, text=True, check=True).stdout.split()
    cut = len(chain) * 2 // 3
    want = manifest_keys(manifest, after=cut)
    assert 0 < len(want) < len(manifest_keys(manifest))
    panel.since_edit.setText(chain[cut][:12])
    with qtbot.waitSignal(panel.did_load, timeout=120_000) as blocker:
        qtbot.keyClick(panel.since_edit, Qt.Key.Key_Return)
    assert blocker.args == [len(want)]
    assert panel.since == chain[cut][:12]
    assert row_keys(panel.model.rows) == want
    assert "since" in panel.status.text()
    # a revision that does not exist is reported, not raised; the last rows stay
    panel.since_edit.setText("no-such-revision")
    qtbot.keyClick(panel.since_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel._worker is None, timeout=60_000)
    assert panel.status.text().startswith("Could not compute transitions")
    assert "RangeError" not in panel.status.text()  # words, not the class's name
    assert panel.model.rowCount() == len(want)
    # empty: the whole history again
    panel.since_edit.clear()
    with qtbot.waitSignal(panel.did_load, timeout=120_000):
        qtbot.keyClick(panel.since_edit, Qt.Key.Key_Return)
    assert panel.since is None
    assert panel.model.rowCount() == len(manifest_keys(manifest))


def test_enter_and_double_click_open_the_fact(panel: TransitionsPanel, qtbot: Any) -> None:
    model = panel.model
    move = next(i for i, t in enumerate(model.rows) if t.kind == "move")
    panel.table.setFocus()
    panel.table.setCurrentIndex(model.index(move, 0))
    with qtbot.waitSignal(panel.fact_activated, timeout=2000) as blocker:
        qtbot.keyClick(panel.table, Qt.Key.Key_Return)
    assert blocker.args == [model.rows[move].new_path] and model.rows[move].new_path
    other = next(i for i, t in enumerate(model.rows) if t.kind == "promoted")
    panel.table.scrollTo(model.index(other, 2))
    rect = panel.table.visualRect(model.index(other, 2))
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    with qtbot.waitSignal(panel.fact_activated, timeout=2000) as blocker:
        qtbot.mouseDClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [target_path(model.rows[other])] == [model.rows[other].path]


def test_track_record_line(panel: TransitionsPanel) -> None:
    ref = Reflection()
    ref.by_agent["codex"] = TrackRecord("codex", confirmed=7, refuted=2, retracted=1, open=2, overdue=1)
    ref.by_agent["ana"] = TrackRecord("ana", open=1)
    assert track_record_line(ref, "codex") == \
        "codex: 12 predictions — 7 confirmed, 2 refuted, 1 retracted, 2 open (1 overdue); 78% held"
    assert track_record_line(ref, "ana") == "ana: 1 prediction — 1 open"
    assert track_record_line(ref, "nobody") is None
    assert track_record_line(None, "codex") is None
    loaded = panel.reflection
    assert loaded is not None
    for agent, r in loaded.by_agent.items():
        line = panel.track_record(agent)
        assert line is not None and line.startswith(f"{agent}: {r.settled + r.open} prediction")


def test_outcomes_over_time_buckets() -> None:
    def t(path: str, ts: int, kind: str = "promoted", claimant: str = "codex") -> Transition:
        return Transition(kind=kind, path=path, sha="0" * 40, seq=ts, time=ts, author="codex",
                          author_email="codex@x", from_type="hypothesis", to_type="observation",
                          claimant=claimant, claimant_type="tool")
    day = 86_400
    jan1 = 1_735_689_600  # 2025-01-01T00:00Z
    items = [t("a", jan1), t("b", jan1 + day), t("a", jan1 + 2 * day),  # a counts once
             t("c", jan1 + 40 * day, claimant="ana")]
    bucket, points = outcomes_over_time(items)
    assert bucket == "day" and [p for p, _ in points] == ["2025-01-01", "2025-01-02", "2025-02-10"]
    assert outcomes_over_time(items, "month")[1] == [
        ("2025-01", {"confirmed": 0, "refuted": 0, "retracted": 0, "promoted": 2}),
        ("2025-02", {"confirmed": 0, "refuted": 0, "retracted": 0, "promoted": 1})]
    assert [p for p, _ in outcomes_over_time(items, "week")[1]] == ["2025-W01", "2025-W07"]
    assert sum(c["promoted"] for _, c in outcomes_over_time(items, "day", "agent", "ana")[1]) == 1


HOSTILE_AGENT = "<b>evil</b>"


def test_corpus_text_is_never_markup(qtbot: Any, corpus: Corpus) -> None:
    """A claimant id from the corpus reaches the charts as itself and is drawn as plain text
    (QPainter.drawText: no markup), and every label of the panel is plain text."""
    rel = "kb/gotchas/db/e1e1e1e1.md"
    corpus.write(rel, "---\ntype: hypothesis\ndomain: [ledger-api]\nconfidence: 0.5\nsources: 1\n"
                      f"refs: []\nclaimant_agent_id: '{HOSTILE_AGENT}'\nclaimant_type: tool\n---\n"
                      "# Pool will saturate\n\nSettles by 2026-01-01: a saturation is observed.\n")
    corpus.commit("learn: a hypothesis")
    (corpus.root / rel).unlink()
    corpus.commit("retract: refuted, the pool held")
    indexer = open_corpus(corpus.root)
    indexer.update()
    panel = make_panel(qtbot, corpus.root, indexer, date(2026, 11, 30))
    assert [(t.kind, t.reason, t.claimant) for t in panel.transitions] == \
        [("retracted", "refuted", HOSTILE_AGENT)]
    assert categories(panel.records_chart) == [HOSTILE_AGENT]
    assert not panel.records_chart.grab().isNull()  # (painted with the id as text)
    assert panel.model.index(0, 6).data() == f"{HOSTILE_AGENT} (tool)"
    labels = panel.findChildren(QLabel)
    assert labels
    for label in labels:
        assert label.textFormat() == Qt.TextFormat.PlainText, label.objectName()
    panel.close_worker()


def test_screenshot_is_readable(panel: TransitionsPanel, tmp_path: Path) -> None:
    out = tmp_path / "transitions.png"
    image = panel.grab()
    assert image.save(str(out))
    assert (image.width(), image.height()) == (1200, 800)
    assert out.stat().st_size > 20_000  # charts and rows drawn, not a blank widget
