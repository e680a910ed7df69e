"""The message store (issue 17): parsing, check findings with path:line, the separate
index, `include:messages`, the CLI contract, and the two curator actions (undoable)."""

from __future__ import annotations

import json

import pytest

from factdesk.cli import main
from factdesk.core import open_corpus
from factdesk.corpus.messages import parse_message, serialize_message
from factdesk.curation import Curation, Refused
from factdesk.index import messages as msg_index
from factdesk.model.messages import message_path, threads
from tests.conftest import Corpus, git

A = "kb/gotchas/db/a1a1a1a1.md"
B = "kb/gotchas/db/b2b2b2b2.md"
SENT = "2026-11-02T09:14:00Z"


def message(corpus: Corpus, *, sender: str = "claude-code", to: str = "[codex]", sent: str = SENT,
            delivery: str = "delivered", refs: str = f"[{A}]", reply: str | None = None,
            body: str = "Please rerun the ledger migration with lock_timeout set.",
            extra: str = "") -> str:
    path = message_path(sender, sent, body)
    text = (f"---\nfrom: {sender}\nto: {to}\nsent: {sent}\ndelivery: {delivery}\n"
            f"context_explanation: the migration failed twice tonight\n"
            f"referenced_memory_ids: {refs}\n" + (f"in_reply_to: {reply}\n" if reply else "")
            + extra + f"---\n{body}\n")
    corpus.write(path, text)
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_parse_keeps_unknown_keys_and_lines() -> None:
    body = "hello"
    path = message_path("claude-code", SENT, body)
    data = serialize_message({"from": "claude-code", "to": ["codex"], "sent": SENT,
                              "delivery": "queued", "priority": "high"}, body)
    out = parse_message(path, data)
    assert out.problems == ()
    assert out.message is not None
    assert out.message.extra == {"priority": "high"}
    assert out.message.line_of("delivery") == 5
    assert out.message.as_dict() == {
        "path": path, "from": "claude-code", "to": ["codex"], "sent": SENT, "delivery": "queued",
        "context_explanation": None, "referenced_memory_ids": [], "in_reply_to": None}


@pytest.mark.parametrize(("text", "code", "line"), [
    ("---\nto: [codex]\nsent: 2026-11-02T09:14:00Z\ndelivery: read\n---\nx\n", "M1", 1),
    ("---\nfrom: a\nto: [codex]\nsent: 2026-11-02T09:14:00Z\ndelivery: lost\n---\nx\n", "M2", 5),
    ("---\nfrom: a\nto: [codex]\nsent: last tuesday\ndelivery: read\n---\nx\n", "M7", 4),
    ("---\nfrom: a\nto: {x: 1}\nsent: 2026-11-02T09:14:00Z\ndelivery: read\n---\nx\n", "M6", 3),
    ("---\nfrom: [a\n---\nx\n", "M6", 3),  # (where YAML meets the end, as for facts)
    ("no frontmatter\n", "M6", 1),
])
def test_malformed_messages_are_findings_with_lines(text: str, code: str, line: int) -> None:
    out = parse_message("msg/2026/11/0a0b0c0d.md", text.encode())
    found = [(p.code, p.line) for p in out.problems if p.code != "M8"]
    assert (code, line) in found


def test_bad_file_name_and_hash_mismatch() -> None:
    data = b"---\nfrom: a\nto: [b]\nsent: 2026-11-02T09:14:00Z\ndelivery: read\n---\nx\n"
    assert [p.code for p in parse_message("msg/notes.md", data).problems] == ["M5"]
    mismatch = parse_message("msg/2026/11/00000000.md", data).problems
    assert [(p.code, str(p.severity)) for p in mismatch] == [("M8", "warning")]


def test_check_reports_messages_like_facts(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    good = message(corpus)
    message(corpus, body="see the earlier note", refs="[kb/gotchas/db/ffffffff.md]",
            reply="msg/2026/10/deadbeef.md", delivery="lost")
    corpus.commit("msg: two messages")
    code, out, _ = run(capsys, "check", "--kb", str(corpus.root), "--format", "json")
    data = json.loads(out)
    found = {(e["code"], e["line"]) for e in data["errors"] if e["path"].startswith("msg/")}
    assert found == {("M2", 5), ("M3", 7), ("M4", 8)}
    assert not [e for e in data["errors"] if e["path"] == good]
    assert data["facts"] == 3  # messages are no facts
    assert code == 1
    code, out, _ = run(capsys, "check", "--kb", str(corpus.root))
    assert "msg/2026/11/" in out and ":5: error [M2] delivery 'lost'" in out


def test_index_refreshes_by_stat_and_keeps_apart(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    p = message(corpus)
    corpus.commit("msg: one")
    indexer = open_corpus(corpus.root)
    db = msg_index.db_path(indexer.path)
    first = msg_index.refresh(corpus.root, db)
    assert (first.messages, first.changed) == (1, 1)
    again = msg_index.refresh(corpus.root, db)
    assert (again.changed, again.removed) == (0, 0)
    (corpus.root / p).unlink()
    assert msg_index.refresh(corpus.root, db).removed == 1
    # the facts' index never holds a message
    message(corpus)
    _, out, _ = run(capsys, "search", "lock_timeout", "--kb", str(corpus.root), "--format", "json")
    assert json.loads(out)["results"] == []
    _, out, _ = run(capsys, "search", "lock_timeout include:messages", "--kb", str(corpus.root),
                       "--format", "json")
    results = json.loads(out)["results"]
    assert [r["path"] for r in results] == [p] and results[0]["type"] == "message"
    _, out, _ = run(capsys, "search", "include:messages", "--kb", str(corpus.root), "--format", "json")
    assert p in [r["path"] for r in json.loads(out)["results"]]
    # field filters are about facts: a filtered query finds no message
    _code, out, _ = run(capsys, "search", "type:observation include:messages", "--kb",
                       str(corpus.root), "--format", "json")
    assert all(r["path"].startswith("kb/") for r in json.loads(out)["results"])


def test_messages_cli_contract(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    p1 = message(corpus)
    p2 = message(corpus, sender="codex", to="[claude-code]", sent="2026-11-02T10:00:00Z",
                 body="Done; lock_timeout is 5s now.", reply=p1, delivery="read")
    corpus.commit("msg: a thread")
    code, out, _ = run(capsys, "messages", "--kb", str(corpus.root), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert list(data) == ["messages"]
    assert [m["path"] for m in data["messages"]] == [p1, p2]
    assert set(data["messages"][0]) == {"path", "from", "to", "sent", "delivery", "context_explanation",
                                        "referenced_memory_ids", "in_reply_to"}
    assert data["messages"][1]["in_reply_to"] == p1
    groups = threads(msg_index.all_messages(msg_index.connect(
        msg_index.db_path(open_corpus(corpus.root).path), readonly=True)))
    (pair, chains), = groups.items()
    assert pair == frozenset({"claude-code", "codex"}) and len(chains) == 1
    assert [m.path for m in chains[0].messages] == [p1, p2]


def test_mark_delivery_is_one_undoable_commit(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    p = message(corpus, extra="# a comment kept\npriority: high\n")
    corpus.commit("msg: one")
    before = (corpus.root / p).read_bytes()
    code, _out, err = run(capsys, "messages", "mark", p, "--delivery", "acknowledged", "--reason",
                         "answered", "--kb", str(corpus.root), "--format", "json")
    assert code == 0, err
    after = (corpus.root / p).read_bytes()
    assert after == before.replace(b"delivery: delivered", b"delivery: acknowledged")
    assert "Factdesk-Action: mark" in git(corpus.root, "log", "-1", "--format=%B")
    assert run(capsys, "undo", "--kb", str(corpus.root))[0] == 0
    assert (corpus.root / p).read_bytes() == before
    cur = Curation(open_corpus(corpus.root))
    with pytest.raises(Refused, match="not one of"):
        cur.mark_delivery([p], "lost", "x")
    with pytest.raises(Refused, match="not a message path"):
        cur.mark_delivery([A], "read", "x")


def test_move_to_messages(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    path = "kb/gotchas/db/d4d4d4d4.md"
    corpus.fact(path, title="@codex please rerun the ledger migration with lock_timeout",
                refs=A, body="Note to codex: it failed twice.")
    corpus.commit("learn: a request")
    head = git(corpus.root, "rev-parse", "HEAD").strip()
    code, out, err = run(capsys, "move-to-messages", "d4d4d4d4", "--to", "codex", "--reason",
                         "an addressed request, not a claim", "--kb", str(corpus.root),
                         "--format", "json")
    assert code == 0, err
    assert git(corpus.root, "rev-parse", "HEAD~1").strip() == head  # one commit
    assert not (corpus.root / path).exists()
    code, out, _ = run(capsys, "messages", "--kb", str(corpus.root), "--format", "json")
    (m,) = json.loads(out)["messages"]
    assert m["from"] == "claude-code" and m["to"] == ["codex"]
    assert m["referenced_memory_ids"] == [A]
    assert path in m["context_explanation"]
    assert m["path"].startswith("msg/2026/11/")
    code, out, _ = run(capsys, "check", "--kb", str(corpus.root), "--format", "json")
    assert not [e for e in json.loads(out)["errors"] + json.loads(out)["warnings"]
                if e["path"].startswith("msg/")]
    assert run(capsys, "undo", "--kb", str(corpus.root))[0] == 0
    assert (corpus.root / path).exists() and not (corpus.root / m["path"]).exists()


def test_check_staged_checks_staged_messages(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    """The pre-commit hook (`check --staged`) refuses a malformed message as staged."""
    good = message(corpus)
    git(corpus.root, "add", good)
    assert run(capsys, "check", "--staged", "--kb", str(corpus.root))[0] == 0
    bad = message(corpus, body="another", delivery="lost", reply="msg/2026/10/deadbeef.md")
    git(corpus.root, "add", bad)
    (corpus.root / bad).write_text("fixed on disk, not staged")  # the staged blob is checked
    code, out, _ = run(capsys, "check", "--staged", "--kb", str(corpus.root), "--format", "json")
    assert code == 1
    assert {(e["path"], e["code"]) for e in json.loads(out)["errors"]} == {(bad, "M2"), (bad, "M4")}


def test_a_link_or_a_fifo_in_msg_is_a_finding_never_followed(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    folder = corpus.root / "msg/2026/11"
    folder.mkdir(parents=True)
    (folder / "1a1a1a1a.md").symlink_to("/etc/passwd")
    os.mkfifo(folder / "2b2b2b2b.md")
    code, out, _ = run(capsys, "check", "--kb", str(corpus.root), "--format", "json")
    found = {(e["path"], e["code"]) for e in json.loads(out)["errors"]}
    assert {("msg/2026/11/1a1a1a1a.md", "M6"), ("msg/2026/11/2b2b2b2b.md", "M6")} <= found
    assert code == 1
