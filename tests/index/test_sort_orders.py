"""`fact_ids` through cached sort orders (`SortOrders`) gives exactly the SQL result."""

from __future__ import annotations

from pathlib import Path

import pytest

from factdesk.demo import build_demo_corpus
from factdesk.index.indexer import Indexer
from factdesk.index.search import SORTABLE, SortOrders, fact_ids
from tests.conftest import git

QUERIES = [
    "", "type:observation", "kind:epistemic", "origin:authored", "claim:assertion",
    "claimant:tool", "claimant:tool type:observation", "kind:pragmatic origin:distilled",
    "status:retracted", "status:live", "status:broken", "has:problems", "-type:observation",
    "confidence:<0.7", "path:kb/", "retry", "agent", "ag*", '"the agent"', "type:hypothesis retry",
    "confidence:<0.9 deploy", "-kind:epistemic cache", "status:retracted type:observation",
    "nomatchwhatsoever", "type:nonexistent", "-retry", "-retry deploy", "deploy -retry",
    "-retry -deploy", "type:observation -pool",
]


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory: pytest.TempPathFactory) -> Indexer:
    repo = build_demo_corpus(tmp_path_factory.mktemp("orders") / "demo")
    ix = Indexer(repo)
    ix.update()
    return ix


@pytest.mark.parametrize("sort", sorted(SORTABLE))
def test_cached_orders_equal_sql(demo_index: Indexer, sort: str) -> None:
    conn = demo_index.connect(readonly=True)
    orders = SortOrders()
    assert orders.get(conn, sort) is None  # nothing cached, nothing computed
    assert orders.get(conn, sort, compute=True) is not None
    for query in QUERIES:
        for descending in (True, False):
            expected = fact_ids(conn, query, sort=sort, descending=descending)
            got = fact_ids(conn, query, sort=sort, descending=descending, orders=orders)
            assert got == expected, (query, sort, descending)
    retracted = fact_ids(conn, "status:retracted", sort=sort, orders=orders)
    assert retracted, "the demo corpus has retracted facts: the status path is exercised"


def test_a_commit_by_another_connection_drops_the_orders(demo_index: Indexer, tmp_path: Path
                                                         ) -> None:
    repo = demo_index.repo
    conn = demo_index.connect(readonly=True)
    orders = SortOrders()
    assert orders.get(conn, "title", compute=True) is not None
    before = fact_ids(conn, "", sort="title", orders=orders)
    victim = next(iter(sorted((repo / "kb").rglob("*.md"))))
    text = victim.read_text(encoding="utf-8")
    victim.write_text(text.replace("\n# ", "\n# AAAA first ", 1), encoding="utf-8")
    git(repo, "commit", "-qam", "learn: retitle")
    demo_index.update()  # commits through the indexer's own connection
    assert orders.get(conn, "title") is None  # data_version moved: everything dropped
    assert orders.get(conn, "title", compute=True) is not None
    after = fact_ids(conn, "", sort="title", descending=False, orders=orders)
    assert after == fact_ids(conn, "", sort="title", descending=False)
    assert after != list(reversed(before))


def test_offer_from_an_older_state_is_refused(demo_index: Indexer) -> None:
    conn = demo_index.connect(readonly=True)
    orders = SortOrders()
    stale = (id(conn), -1)
    orders.get(conn, "path", compute=True)
    assert not orders.offer(stale, {"title": orders.get(conn, "path")})  # type: ignore[dict-item]
    assert orders.get(conn, "title") is None
    assert "title" in orders.missing() and "path" not in orders.missing()


def test_orders_read_in_another_thread_connection(demo_index: Indexer) -> None:
    """The GUI computes orders on a worker's connection and offers them under the GUI
    connection's version: they then serve the GUI connection."""
    from factdesk.index.search import full_order

    gui = demo_index.connect(readonly=True)
    worker = demo_index.connect(readonly=True)
    orders = SortOrders()
    version = SortOrders.version(gui)
    assert orders.offer(version, {k: full_order(worker, k) for k in SORTABLE})
    assert orders.missing() == []
    for sort in ("updated", "confidence", "problems"):
        assert (fact_ids(gui, "kind:epistemic", sort=sort, orders=orders)
                == fact_ids(gui, "kind:epistemic", sort=sort))


@pytest.mark.parametrize("small_set", [4000, 0])
def test_search_without_text_is_the_newest_matches(demo_index: Indexer, small_set: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`search` of a query without text: the `limit` newest matches, exactly as an SQL
    ORDER BY updated_at DESC, id DESC — through both of its paths (a small match set read
    row by row; a large one by walking the updated index)."""
    from factdesk.index import search as search_module
    from factdesk.index.query import compile_query

    monkeypatch.setattr(search_module, "SMALL_SET", small_set)
    conn = demo_index.connect(readonly=True)
    for query in [q for q in QUERIES if ":" in q and " " not in q] + [
            "claimant:tool type:observation", "", "kind:pragmatic origin:distilled"]:
        for limit in (1, 3, 20):
            q = compile_query(query)
            expected = [r[0] for r in conn.execute(
                f"SELECT f.id FROM facts f WHERE {q.where_sql()} "
                "ORDER BY f.updated_at DESC, f.id DESC LIMIT ?", [*q.params, limit])]
            got = [h.id for h in search_module.search(conn, query, limit=limit)]
            assert got == expected, (query, limit)


@pytest.mark.parametrize("word", ["retry", "deploy", "ledger"])
def test_a_negated_word_excludes_its_matches(demo_index: Indexer, word: str) -> None:
    """`-word` alone, or first, excludes the facts containing it (FTS5 has no leading NOT;
    the negation used to be dropped, returning exactly the facts with the word)."""
    conn = demo_index.connect(readonly=True)
    every, having = set(fact_ids(conn, "")), set(fact_ids(conn, word))
    assert having and having < every
    assert set(fact_ids(conn, f"-{word}")) == every - having
    both = set(fact_ids(conn, "agent"))
    assert set(fact_ids(conn, f"-{word} agent")) == both - having
    assert set(fact_ids(conn, f"agent -{word}")) == both - having
