"""`message-in-memory` (issues 17, 22): scored on the held-out set (messages_heldout.yaml,
written and committed before the issue-22 tuning and never run during it) and on the
issue-17 labelled set; tuned on the dev set (messages_dev.yaml) only."""

from __future__ import annotations

from pathlib import Path

import yaml

from factdesk.model.fact import Fact
from factdesk.model.message_heuristic import Addressed, addressed
from factdesk.model.mislabels import CODES, MislabelContext, suggest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def items_of(name: str) -> list[dict[str, str]]:
    return yaml.safe_load((FIXTURES / name).read_text("utf-8"))["items"]


def score(name: str) -> tuple[int, int, int, int]:
    items = items_of(name)
    tp = fp = fn = tn = 0
    for it in items:
        got = addressed(it["title"], it.get("body", "")) is not None
        want = it["label"] == "message"
        tp += got and want
        fp += got and not want
        fn += want and not got
        tn += not got and not want
    return tp, fp, fn, tn


def test_held_out_set_precision_and_recall() -> None:
    """The numbers docs/messages.md reports (issue 22): recall at least 0.8 at precision at
    least 0.9 on the held-out set — 14 of 17 addressed messages found, none of the 15
    decoys flagged (the heuristic before issue 22: 3 of 17)."""
    tp, fp, fn, tn = score("messages_heldout.yaml")
    assert tp + fn >= 15 and fp + tn >= 15
    assert tp / (tp + fp) >= 0.9 and tp / (tp + fn) >= 0.8
    assert (tp, fp, fn, tn) == (14, 0, 3, 15)


def test_the_held_out_set_is_a_third_of_the_new_items_and_shares_none() -> None:
    """Issue 22 widened the sets by at least 60 new items, a third of them held out."""
    held = items_of("messages_heldout.yaml")
    dev = items_of("messages_dev.yaml")
    new_dev = dev[20:]  # (the first 20 are issue 17's)
    assert len(held) + len(new_dev) >= 60 and len(held) * 3 >= len(held) + len(new_dev)
    titles = {i["title"] for i in dev} | {i["title"] for i in items_of("messages_labelled.yaml")}
    assert not {i["title"] for i in held} & titles


def test_labelled_set_precision_and_recall() -> None:
    """Issue 17's labelled set: 45 of 45 messages found, no claim flagged. (Its three misses
    were known when issue 22 tuned the heuristic, so this is no longer a held-out figure.)"""
    tp, fp, fn, tn = score("messages_labelled.yaml")
    assert tp + fn >= 40 and fp + tn >= 40  # both kinds, at least 40 each
    assert (tp, fp, fn, tn) == (45, 0, 0, 45)


def test_dev_set() -> None:
    assert score("messages_dev.yaml") == (40, 0, 0, 40)


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


def test_the_new_cues_name_whom_they_address() -> None:
    assert addressed("Over to you, codex: the plan is ready") == Addressed(
        "handover", "Over to you, codex", "codex")
    assert addressed("Pinging codex again about the stale lock").to == "codex"
    hold = addressed("Do not deploy the ledger until the audit is done, build-02")
    assert hold is not None and (hold.cue, hold.to) == ("hold", "build-02")
    signed = addressed("Done", "It works now.\nThanks, codex!")
    assert signed is not None and (signed.cue, signed.to) == ("sign-off", "codex")
    assert addressed("Done", "It works now.\n— codex") == Addressed("sign-off", "— codex")
    for claim in ("Do not deploy the ledger on Fridays", "@codex is the bot account",
                  "Pinging an agent twice triggers its rate limiter",
                  "Handing off work between sessions loses context"):
        assert addressed(claim) is None, claim
