"""Message wording: articles and counts."""

from __future__ import annotations

import pytest

from factdesk.model.words import an, count


@pytest.mark.parametrize(("word", "want"), [
    ("observation", "an observation"), ("assertion", "an assertion"), ("inference", "an inference"),
    ("report", "a report"), ("user", "a user"), ("tool", "a tool"), ("persona", "a persona"),
    ("other_agent", "an other_agent"),
])
def test_an(word: str, want: str) -> None:
    assert an(word) == want


def test_count() -> None:
    assert [count(n, "error") for n in (0, 1, 2)] == ["0 errors", "1 error", "2 errors"]
