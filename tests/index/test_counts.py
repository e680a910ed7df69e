"""The facts by status and the problems an update reports are kept by triggers in the
index's `counts` table (issue 23 #3: no scan of every row at each change): always the
counts a scan gives, after any change; an index written before the table gets it on its
next update, counted, without a rebuild."""

from __future__ import annotations

from datetime import date

from factdesk.index import schema
from factdesk.index.indexer import Indexer
from tests.conftest import Corpus, git


def _scanned(ix: Indexer) -> tuple[dict[str, int], int]:
    conn = ix.connect(readonly=True)
    try:
        return (dict(conn.execute("SELECT status, COUNT(*) FROM facts GROUP BY status")),
                conn.execute("SELECT COUNT(*) FROM problems").fetchone()[0])
    finally:
        conn.close()


def _kept(ix: Indexer) -> tuple[dict[str, int], int] | None:
    conn = ix.connect(readonly=True)
    try:
        return schema.counted(conn)
    finally:
        conn.close()


def test_the_kept_counts_are_the_scanned_ones_after_each_change(corpus: Corpus) -> None:
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    assert _kept(ix) == _scanned(ix)
    steps = [
        lambda: corpus.fact("kb/gotchas/db/d4d4d4d4.md", title="A new fact"),
        lambda: corpus.write("kb/gotchas/db/e5e5e5e5.md", "---\ntype: nonsense\n---\n# Bad\n"),
        lambda: (corpus.root / "kb/gotchas/db/a1a1a1a1.md").unlink(),  # (retracted)
        lambda: corpus.write("kb/gotchas/db/e5e5e5e5.md", "---\ntype: observation\n---\n# Ok\n"),
    ]
    for step in steps:
        step()
        stats = ix.update()  # (uncommitted)
        assert _kept(ix) == _scanned(ix)
        counts, problems = _scanned(ix)
        assert (stats.facts, stats.broken, stats.retracted, stats.problems) == (
            counts.get("live", 0), counts.get("broken", 0), counts.get("retracted", 0), problems)
        corpus.commit("learn: step")
        ix.update()
        assert _kept(ix) == _scanned(ix)
    assert _scanned(ix)[0].get("retracted") == 1 and _scanned(ix)[0].get("live")


def test_an_index_written_before_the_counts_gets_them_without_a_rebuild(corpus: Corpus) -> None:
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    conn = ix.connect()
    with conn:  # (the file as the version before `counts` wrote it)
        for name in sorted(schema._COUNTING_NAMES - {"counts"}):
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute("DROP TABLE counts")
    conn.close()
    assert schema.is_usable(ix.path)
    assert _kept(ix) is None
    corpus.fact("kb/gotchas/db/d4d4d4d4.md", title="A new fact")
    git(corpus.root, "add", "-A")
    stats = ix.update()
    assert stats.mode != "rebuild" and _kept(ix) == _scanned(ix)
    assert stats.facts == _scanned(ix)[0]["live"] == 4
