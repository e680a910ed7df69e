"""RELIABILITY F10: any text a user types is safe, and answered quickly: a query past
MAX_QUERY_CHARS is a clear error, not seconds of FTS5 work."""

from __future__ import annotations

import pytest

from factdesk.errors import QueryError
from factdesk.index.query import MAX_QUERY_CHARS, compile_query


def test_a_query_at_the_limit_compiles_and_one_past_it_is_refused() -> None:
    words = ("retry " * (MAX_QUERY_CHARS // 6 + 1))[:MAX_QUERY_CHARS]
    assert compile_query(words).fts  # at the limit: searched
    with pytest.raises(QueryError, match=r"2,001 characters long; at most 2,000"):
        compile_query(words + "x")
    with pytest.raises(QueryError, match=r"200,000 characters long"):
        compile_query("\"unbalanced NEAR( x'; DROP TABLE facts; " * 5_000)
