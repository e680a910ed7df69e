"""`message-in-memory` (issue 17): scored on the labelled set, which was written before the
heuristic and kept out of its tuning (the dev set is messages_dev.yaml)."""

from __future__ import annotations

from pathlib import Path

import yaml

from factdesk.model.fact import Fact
from factdesk.model.message_heuristic import addressed
from factdesk.model.mislabels import CODES, MislabelContext, suggest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def score(name: str) -> tuple[int, int, int, int]:
    items = yaml.safe_load((FIXTURES / name).read_text("utf-8"))["items"]
    tp = fp = fn = tn = 0
    for it in items:
        got = addressed(it["title"], it.get("body", "")) is not None
        want = it["label"] == "message"
        tp += got and want
        fp += got and not want
        fn += want and not got
        tn += not got and not want
    return tp, fp, fn, tn


def test_labelled_set_precision_and_recall() -> None:
    """The numbers docs/messages.md reports: 42 of 45 messages found, no claim flagged."""
    tp, fp, fn, tn = score("messages_labelled.yaml")
    assert tp + fn >= 40 and fp + tn >= 40  # both kinds, at least 40 each
    assert (tp, fp, fn, tn) == (42, 0, 3, 45)
    assert tp / (tp + fp) == 1.0 and round(tp / (tp + fn), 3) == 0.933


def test_dev_set() -> None:
    assert score("messages_dev.yaml") == (10, 0, 0, 10)


def test_the_suggestion_proposes_move_to_messages() -> None:
    fact = Fact(path="kb/gotchas/db/a1a1a1a1.md", title="@codex please rerun the migration",
                body="It failed twice.", title_line=8)
    (s,) = [s for s in suggest(fact, MislabelContext()) if s.code == "message-in-memory"]
    assert "message-in-memory" in CODES
    assert s.line == 8 and "a message to codex" in s.explanation
    assert s.proposals[0].action == "move-to-messages" and s.proposals[0].needs_input == ("to",)
    assert s.proposals[0].label == "an addressed message: move to messages to codex"
    claim = Fact(path="kb/gotchas/db/b2b2b2b2.md", title="codex's migration PRs omit lock_timeout",
                 body="")
    assert not [s for s in suggest(claim, MislabelContext()) if s.code == "message-in-memory"]


def test_quoted_text_is_not_an_address() -> None:
    assert addressed('The bot replies "@codex please retry" to every failure') is None
    assert addressed("Heads-up", "@codex the cluster goes down at 18:00") is not None
