"""`factdesk show FACT --include-agent-comm`: the messages that reference the fact
(issue 17's backlinks, as the inspector shows them with `include:messages`)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Corpus
from tests.messages.test_messages import A, B, message, run


def test_show_lists_backlinks_only_when_asked(corpus: Corpus,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    first = message(corpus)  # references A
    second = message(corpus, sender="codex", to="[claude-code, ana]", sent="2026-11-02T10:00:00Z",
                     body="Rerun done.", refs=f"[{A}, {B}]", reply=first, delivery="read")
    corpus.commit("msg: two")
    kb = str(corpus.root)
    # memory only by default: neither the text nor the JSON names a message
    code, out, _ = run(capsys, "show", A, "--kb", kb)
    assert code == 0 and "msg/" not in out and "messages that reference" not in out
    code, out, _ = run(capsys, "show", A, "--kb", kb, "--format", "json")
    assert "messages" not in json.loads(out)
    # with the flag: oldest first, in the shape of `factdesk messages`
    code, out, _ = run(capsys, "show", A, "--kb", kb, "--format", "json", "--include-agent-comm")
    assert code == 0
    data = json.loads(out)
    assert [m["path"] for m in data["messages"]] == [first, second]
    assert data["messages"][1] == {
        "path": second, "from": "codex", "to": ["claude-code", "ana"],
        "sent": "2026-11-02T10:00:00Z", "delivery": "read",
        "context_explanation": "the migration failed twice tonight",
        "referenced_memory_ids": [A, B], "in_reply_to": first}
    code, out, _ = run(capsys, "show", A, "--kb", kb, "--include-agent-comm")
    assert "messages that reference this fact (2):" in out
    assert f"read         codex → claude-code, ana  {second}" in out
    # B is referenced by the second only
    code, out, _ = run(capsys, "show", B, "--kb", kb, "--include-agent-comm", "--format", "json")
    assert [m["path"] for m in json.loads(out)["messages"]] == [second]
