"""The query language's grammar (docs/query.md): `OR` and parentheses as Anki and
Obsidian users expect, FTS5 syntax never passed through (RELIABILITY F10), and any text a
user types compiles or gives a clear error, never an SQLite error (issue 15)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factdesk.errors import QueryError
from factdesk.index.indexer import Indexer
from factdesk.index.query import MAX_DEPTH, compile_query
from factdesk.index.search import search
from tests.conftest import Corpus, git


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    root = tmp_path_factory.mktemp("grammar") / "kb"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    c = Corpus(root)
    c.fact("kb/a/r1r1r1r1.md", title="Retry storms double the load")
    c.fact("kb/a/b2b2b2b2.md", title="Backoff with jitter spreads retries", type="hypothesis",
           body="Settles by 2027-01-01: fewer than 3 bursts.")
    c.fact("kb/a/n3n3n3n3.md", title="NEAR misses in the scheduler")
    c.fact("kb/a/p4p4p4p4.md", title="Pool sizing policy", type="reference")
    c.commit("learn: facts")
    ix = Indexer(root)
    ix.update()
    connection = ix.connect(readonly=True)
    yield connection
    connection.close()


def _titles(conn: sqlite3.Connection, query: str) -> set[str]:
    return {r.title for r in search(conn, query, limit=50)}


@pytest.mark.parametrize(("query", "want"), [
    ("retry OR backoff", {"Retry storms double the load", "Backoff with jitter spreads retries"}),
    ("retry backoff", set()),  # (AND: no fact has both words)
    ("(storms OR pool) -sizing", {"Retry storms double the load"}),
    ("type:hypothesis OR type:reference",
     {"Backoff with jitter spreads retries", "Pool sizing policy"}),
    ("(type:reference OR storms) -double", {"Pool sizing policy"}),
    ("-(retry OR backoff OR pool)", {"NEAR misses in the scheduler"}),
    ("NEAR(misses scheduler)", {"NEAR misses in the scheduler"}),  # literal words, not NEAR
    ('"storms double"', {"Retry storms double the load"}),
    ("retry AND load", {"Retry storms double the load"}),
    ("retry or load", set()),  # (lower-case `or` is a word, as FTS5 reads it too)
    ('"OR" retry', set()),  # (quoted: the word)
])
def test_or_and_parentheses(conn: sqlite3.Connection, query: str, want: set[str]) -> None:
    assert _titles(conn, query) == want


@pytest.mark.parametrize(("query", "message"), [
    ("OR", "OR needs words or filters on both sides"),
    ("retry OR", "OR needs words or filters on both sides"),
    ("(retry", "is not closed"),
    ("retry)", "closes no"),
    ("(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1), "nest deeper"),
])
def test_a_malformed_query_is_a_clear_error(query: str, message: str) -> None:
    with pytest.raises(QueryError, match=message):
        compile_query(query)


def test_a_query_without_or_compiles_as_before() -> None:
    """The common case keeps its plan: filters ANDed, one FTS5 expression of quoted words."""
    q = compile_query('type:hypothesis "retry limit" back* -pool NEAR(x)')
    assert q.fts == '"retry limit" "back"* "NEAR" "x" NOT "pool"'
    assert q.where == ["f.type = ?"] and q.filters[0].indexed


_ALPHABET = st.sampled_from([*'abc xyz()"*-:^+{}[]~\'\\;,.', "OR", "AND", "NOT", "NEAR",
                             "type:", "status:retracted", "confidence:<", "since:"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_ALPHABET, max_size=30).map("".join) | st.text(max_size=60))
def test_any_text_compiles_or_is_a_clear_error(conn: sqlite3.Connection, text: str) -> None:
    try:
        q = compile_query(text)
    except QueryError as exc:
        assert str(exc)
        return
    search(conn, q, limit=5)  # (an sqlite3.Error here fails the test)


def test_since_a_commit_is_strictly_after_it_and_takes_any_revision(tmp_path: Path) -> None:
    """Issue 14 bug 6: `since:<commit>` included that commit's own changes, and a branch
    name was refused."""
    root = tmp_path / "kb"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    c = Corpus(root)
    c.fact("kb/a/x1x1x1x1.md", title="First fact")
    c.fact("kb/a/y2y2y2y2.md", title="Second fact")
    c.commit("learn: two")
    c.fact("kb/a/x1x1x1x1.md", title="First fact, edited")
    middle = c.commit("update: first")
    git(root, "branch", "reviewed")
    git(root, "tag", "v1")
    c.fact("kb/a/y2y2y2y2.md", title="Second fact, edited")
    c.commit("update: second")
    ix = Indexer(root)
    ix.update()
    conn = ix.connect(readonly=True)
    try:
        for rev in (middle, middle[:7], "reviewed", "v1", "main~1", "HEAD^"):
            assert _titles(conn, f"since:{rev}") == {"Second fact, edited"}, rev
        assert _titles(conn, "since:main") == set()  # (nothing after the tip)
        with pytest.raises(QueryError, match=r"not a date .*, a commit or branch git knows"):
            search(conn, "since:no-such-branch")
        with pytest.raises(QueryError):
            search(conn, "since:--output=/tmp/x")  # (never an option to git)
    finally:
        conn.close()
