"""Suggestions need at least one settled prediction whatever the thresholds say."""

from __future__ import annotations

from factdesk.reflect.agents import AgentRecord, Thresholds, suggest


def test_min_settled_zero_never_suggests_without_a_settled_prediction() -> None:
    r = AgentRecord("codex", type="tool", registered=True, user_facts=9)
    assert suggest(r, Thresholds(min_settled=0)) is None  # (it raised AssertionError)
