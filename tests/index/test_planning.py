"""The change planner (index.planning): pure decisions, tested without files, git or SQLite;
and the indexer that follows it, on a synthesis citing a synthesis."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from factdesk.index import planning
from factdesk.index.indexer import Indexer
from tests.conftest import Corpus
from tests.index.test_indexer import assert_incremental_equals_rebuild


def test_files_new_changed_gone_and_to_verify() -> None:
    known = {"kb/a.md": (10, 1, "ba"), "kb/b.md": (20, 2, "bb"), "kb/c.md": (30, 3, "bc"),
             "kb/d.md": (40, 4, "bd")}
    on_disk = {"kb/a.md": (10, 1), "kb/b.md": (21, 2), "kb/e.md": (5, 5)}
    plan = planning.plan_files(known=known, on_disk=on_disk,
                               looked_at={"kb/a.md", "kb/b.md", "kb/c.md", "kb/e.md"},
                               touched=set(), partial=True)
    assert plan.read == ("kb/b.md", "kb/e.md")
    assert plan.verify == ("kb/a.md",)  # git named it, its stamp matches: hash it
    assert plan.removed == {"kb/c.md"}  # looked at, gone; d was not looked at: it stands
    assert plan.present == {"kb/a.md", "kb/b.md", "kb/d.md", "kb/e.md"}


def test_a_full_look_verifies_nothing_and_touched_paths_are_not_hashed() -> None:
    known = {"kb/a.md": (10, 1, "ba")}
    full = planning.plan_files(known=known, on_disk={"kb/a.md": (10, 1)},
                               looked_at={"kb/a.md"}, touched=set(), partial=False)
    assert full.read == () and full.verify == ()
    touched = planning.plan_files(known=known, on_disk={"kb/a.md": (10, 1)},
                                  looked_at={"kb/a.md"}, touched={"kb/a.md"}, partial=True)
    assert touched.verify == ()  # re-read for its history anyway
    assert planning.rereads(touched={"kb/a.md", "kb/gone.md"}, recount={"kb/b.md"},
                            read=set(), removed={"kb/gone.md"},
                            present={"kb/a.md", "kb/b.md"}) == ["kb/a.md", "kb/b.md"]


def test_settings_and_nothing_to_do() -> None:
    meta = {"root": "kb", "registry": "r1", "ontology": "o1"}
    assert not planning.settings_changed(meta, root="kb", registry="r1", ontology="o1")
    assert planning.settings_changed(meta, root="kb", registry="r2", ontology="o1")
    assert planning.is_unchanged(changed=set(), day_changed=False, same_head=True,
                                 same_dirty=True)
    assert not planning.is_unchanged(changed=set(), day_changed=True, same_head=True,
                                     same_dirty=True)


def test_stamp_differences_name_new_gone_and_changed_files() -> None:
    assert planning.stamp_differences(
        {"kb/a.md": (1, 1), "kb/b.md": (2, 2), "kb/c.md": (3, 3)},
        {"kb/a.md": (1, 1), "kb/b.md": (2, 9), "kb/d.md": (4, 4)}
    ) == {"kb/b.md", "kb/c.md", "kb/d.md"}


def test_dependents_follow_citations_to_any_depth() -> None:
    """o <- s1 <- s2 <- s3 (each cites the one before), and a cycle that must end."""
    cites = {"s1": ["o"], "s2": ["s1"], "s3": ["s2"], "x": ["y"], "y": ["x"]}

    def citers(paths: list[str]) -> list[str]:
        return [src for src, targets in cites.items() if set(targets) & set(paths)]

    assert planning.dependents({"o"}, citers) == {"s1", "s2", "s3"}
    assert planning.dependents({"x"}, citers) == {"x", "y"}
    assert planning.rechecks(dependents={"s1", "s2", "gone"}, read={"s1"}, removed={"gone"},
                             present={"s1", "s2"}) == ["s2"]


@pytest.mark.parametrize("committed", [True, False])
def test_a_synthesis_citing_a_synthesis_is_rechecked(corpus: Corpus, tmp_path: Path,
                                                     committed: bool) -> None:
    """Issue 14's mutant: following one level of citations leaves the second synthesis's
    computed evidence weight (which walks through the first, a distilled fact) stale."""
    corpus.fact("kb/decisions/api/s1s1s1s1.md", title="First synthesis", type="synthesis",
                refs="kb/gotchas/db/a1a1a1a1.md")
    corpus.fact("kb/decisions/api/s2s2s2s2.md", title="Synthesis of a synthesis",
                type="synthesis", refs="kb/decisions/api/s1s1s1s1.md")
    corpus.commit("synthesize-review: two levels", op="subsume")
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()

    def weight(path: str) -> float:
        conn = ix.connect(readonly=True)
        try:
            return conn.execute("SELECT evidence_weight_computed FROM facts WHERE path = ?",
                                (path,)).fetchone()[0]
        finally:
            conn.close()

    assert weight("kb/decisions/api/s2s2s2s2.md") == pytest.approx(0.8 / 1.8)
    source = corpus.root / "kb/gotchas/db/a1a1a1a1.md"
    source.write_bytes(source.read_bytes().replace(b"confidence: 0.8", b"confidence: 0.4"))
    if committed:
        corpus.commit("learn: less sure")
    stats = ix.update()
    assert stats.mode == "incremental"
    assert weight("kb/decisions/api/s1s1s1s1.md") == pytest.approx(0.4 / 1.4)
    assert weight("kb/decisions/api/s2s2s2s2.md") == pytest.approx(0.4 / 1.4)
    assert_incremental_equals_rebuild(corpus.root, tmp_path)


def test_one_column_registry() -> None:
    """The index defines the table's columns and sort orders once; the GUI's state adds
    labels and widths to exactly those columns."""
    from factdesk.index import columns, search

    assert search.SORTABLE is columns.SORTABLE
    assert [c.key for c in columns.FACT_COLUMNS] == list(columns.SORTABLE)[:len(columns.FACT_COLUMNS)]
