"""Trust in commit messages (issue 15 #2): an agent forges each field it controls — a fact's
values, a file name, a commit message, the author and committer — and undo/redo still act
only on the curators' own decisions (`curation.trust`)."""

from __future__ import annotations

import subprocess

import pytest

from factdesk.cli import main
from factdesk.core import open_corpus
from factdesk.corpus.codec import parse_fact
from factdesk.curation import Curation, Refused
from factdesk.curation.changes import inert
from factdesk.curation.trust import decision_in, trailer_block, trusted_decisions
from tests.conftest import Corpus, git

A = "kb/gotchas/db/a1a1a1a1.md"
B = "kb/gotchas/db/b2b2b2b2.md"
H = "kb/gotchas/db/d4d4d4d4.md"
CURATOR = {"GIT_AUTHOR_NAME": "ana", "GIT_AUTHOR_EMAIL": "ana+relabel@example.org",
           "GIT_COMMITTER_NAME": "ana", "GIT_COMMITTER_EMAIL": "ana@example.org"}
#: (after the curator's own commits, which carry the real time)
LATER = {"GIT_AUTHOR_DATE": "2099-01-01T10:00:00Z", "GIT_COMMITTER_DATE": "2099-01-01T10:00:00Z"}


def fresh(corpus: Corpus) -> Curation:
    ix = open_corpus(corpus.root)
    ix.update()
    return Curation(ix)


def trailers(corpus: Corpus, rev: str = "HEAD") -> list[str]:
    """git's own reading of the commit's trailers (`interpret-trailers --parse`)."""
    msg = git(corpus.root, "log", "-1", "--format=%B", rev)
    out = subprocess.run(["git", "interpret-trailers", "--parse"], input=msg.encode(),
                         capture_output=True, check=True).stdout.decode()
    return out.splitlines()


def forged_block(action: str, action_id: str, reverts: str | None = None) -> str:
    lines = [f"Factdesk-Action: {action}", f"Factdesk-Action-Id: {action_id}"]
    if reverts:
        lines.append(f"Factdesk-Reverts: {reverts}")
    return "\n".join([*lines, "Factdesk-Reason: forged"])


def test_a_settlement_that_forges_an_undo_stays_text(corpus: Corpus) -> None:
    cur = fresh(corpus)
    relabel = cur.relabel([A], {"type": "pattern"}, "a pattern")
    corpus.write(H, "---\ntype: hypothesis\ndomain: [db]\nconfidence: 0.5\nsources: 1\n"
                    "settle_by: 2027-01-31\n"
                    f'settlement: "pool holds\\nFactdesk-Action: undo\\nFactdesk-Reverts: '
                    f'{relabel.action_id}\\n"\nrefs: []\n---\n# Pools will hold\n\nA guess.\n')
    corpus.commit("learn: a hypothesis")
    cur = fresh(corpus)
    extended = cur.extend(H, "new criterion", settlement="pool holds at 300 clients")
    assert [t for t in trailers(corpus) if t.startswith("Factdesk-Action:")] == \
        ["Factdesk-Action: extend"]
    assert "\\nFactdesk-Action: undo\\n" in git(corpus.root, "log", "-1", "--format=%B")
    undo, redo = cur.stacks()
    assert [r.action for r in undo] == ["relabel", "extend"] and redo == []
    assert undo[-1].action_id == extended.action_id
    cur.undo()  # undoes the extend, not "nothing to undo"
    after = parse_fact(H, (corpus.root / H).read_bytes()).fact
    assert after is not None and after.envelope.settlement.startswith("pool holds\n")
    cur.redo()  # brings the extend back; the relabel is untouched
    assert b"type: pattern" in (corpus.root / A).read_bytes()
    assert b"pool holds at 300 clients" in (corpus.root / H).read_bytes()


def test_a_file_name_with_newlines_stays_on_one_line(corpus: Corpus) -> None:
    cur = fresh(corpus)
    relabel = cur.relabel([A], {"type": "pattern"}, "a pattern")
    weird = f"kb/gotchas/db/x\nFactdesk-Action: undo\nFactdesk-Reverts: {relabel.action_id}\n.md"
    corpus.fact(weird, title="Odd name")
    corpus.commit("learn: an oddly named fact")
    cur = fresh(corpus)
    cur.retract([weird], "junk")
    subject = git(corpus.root, "log", "-1", "--format=%s").strip()
    assert "\\nFactdesk-Action: undo\\n" in subject
    assert [t for t in trailers(corpus) if t.startswith("Factdesk-Action:")] == \
        ["Factdesk-Action: retract"]
    assert [r.action for r in cur.stacks()[0]] == ["relabel", "retract"]
    cur.undo()
    assert (corpus.root / weird).exists() and b"type: pattern" in (corpus.root / A).read_bytes()


def test_an_agent_commit_with_factdesk_trailers_is_not_undone(corpus: Corpus) -> None:
    (corpus.root / B).write_text((corpus.root / B).read_text().replace("observation", "policy"))
    git(corpus.root, "add", "-A")
    git(corpus.root, "commit", "-qm", f"relabel: B (observation → policy)\n\nwhy\n\n"
        f"{forged_block('relabel', 'ab' * 8)}", author="claude-code",
        email="claude-code+relabel@agents.knomit.io")
    cur = fresh(corpus)
    assert cur.stacks() == ([], [])
    with pytest.raises(Refused, match="nothing to undo"):
        cur.undo()
    assert b"type: policy" in (corpus.root / B).read_bytes()


def test_a_registered_agent_with_its_own_domain_is_not_trusted(corpus: Corpus) -> None:
    corpus.write(".factdesk/agents.yaml", "agents:\n  bot: {type: tool, email: bot@corp.example}\n")
    git(corpus.root, "add", "-A")  # (a curator's commit: an agent's registry change is not applied)
    git(corpus.root, "commit", "-qm", "config: registry", author="ana", email="ana@example.org")
    (corpus.root / B).write_text((corpus.root / B).read_text().replace("observation", "policy"))
    git(corpus.root, "add", "-A")
    git(corpus.root, "commit", "-qm", f"relabel: B\n\nwhy\n\n{forged_block('relabel', 'cd' * 8)}",
        author="bot", email="bot+relabel@corp.example")
    assert fresh(corpus).stacks() == ([], [])


def test_a_forged_curator_commit_reached_through_a_merge_is_not_trusted(corpus: Corpus) -> None:
    cur = fresh(corpus)
    relabel = cur.relabel([A], {"type": "pattern"}, "a pattern")
    git(corpus.root, "checkout", "-qb", "agent/box-12345678")
    corpus.fact("kb/gotchas/db/e5e5e5e5.md", title="Agent's fact")
    git(corpus.root, "add", "-A")
    git(corpus.root, "commit", "-qm", "undo: relabel\n\nforged\n\n"
        + forged_block("undo", "ef" * 8, relabel.action_id),
        env={**CURATOR, "GIT_AUTHOR_EMAIL": "ana+undo@example.org", **LATER})
    git(corpus.root, "checkout", "-q", "main")
    git(corpus.root, "merge", "-q", "--no-ff", "-m", "merge agent work", "agent/box-12345678",
        env={**CURATOR, **LATER})
    cur = fresh(corpus)
    assert [r.action_id for r in cur.stacks()[0]] == [relabel.action_id]
    assert cur.stacks()[1] == []


def test_a_reason_that_looks_like_a_trailer(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    kb = str(corpus.root)
    assert main(["relabel", A, "--type", "pattern", "--reason", "Factdesk-Action: undo",
                 "--kb", kb]) == 0
    capsys.readouterr()
    assert [t for t in trailers(corpus) if t.startswith("Factdesk-Action:")] == \
        ["Factdesk-Action: relabel"]
    cur = fresh(corpus)
    undo, redo = cur.stacks()
    assert [r.action for r in undo] == ["relabel"] and redo == []
    # and through the API, with newlines in the reason
    cur.relabel([B], {"type": "pattern"}, "x\nFactdesk-Action: undo\nFactdesk-Reverts: 0123456789abcdef")
    assert [r.action for r in cur.stacks()[0]] == ["relabel", "relabel"]


def test_escape_bytes_in_a_title_never_reach_the_subject(corpus: Corpus) -> None:
    corpus.fact("kb/gotchas/db/e5e5e5e5.md", title="Pool \x1b]0;pwned\x07\x1b[2J drains")
    corpus.commit("learn: a title with escapes")
    cur = fresh(corpus)
    result = cur.relabel(["kb/gotchas/db/e5e5e5e5.md"], {"type": "pattern"}, "why \x1b[31m")
    msg = git(corpus.root, "log", "-1", "--format=%B")
    assert "\x1b" not in msg and "\x07" not in msg
    assert "Pool \\x1b]0;pwned\\x07\\x1b[2J drains" in msg.splitlines()[0]
    assert "\x1b" not in result.subject and "\x1b" not in result.reason


def test_inert_makes_one_line_and_is_idempotent() -> None:
    for text in ("a\nb", "a\r\nb", "x\x1b[2J", "p\u2028q", "r\u202eevil", "tab\tx", "\x85"):
        once = inert(text)
        assert "\n" not in once and "\r" not in once and once == inert(once)
        assert all(ch.isprintable() for ch in once)


@pytest.mark.parametrize(("message", "expected"), [
    (f"s\n\nbody\n\n{forged_block('relabel', 'ab' * 8)}\n", ("relabel", "ab" * 8, None)),
    # a trailer in the subject or the body paragraph is text
    (f"s\nFactdesk-Action: undo\n\n{forged_block('relabel', 'ab' * 8)}\n", ("relabel", "ab" * 8, None)),
    (f"s\n\n{forged_block('undo', 'ab' * 8, 'cd' * 8)}\n\nplain last paragraph\n", None),
    # two actions in the block, or a non-trailer line in it: no decision
    (f"s\n\n{forged_block('relabel', 'ab' * 8)}\nFactdesk-Action: undo\n", None),
    (f"s\n\nFactdesk-Action: relabel\nnot a trailer\nFactdesk-Action-Id: {'ab' * 8}\n", None),
    (f"s\n\n{forged_block('undo', 'ab' * 8)}\n", None),  # an undo must name what it reverts
    # ...by a 16-hex action id (issue 22, mutant a): anything else is no decision
    (f"s\n\n{forged_block('undo', 'ab' * 8, 'HEAD~1')}\n", None),
    (f"s\n\n{forged_block('redo', 'ab' * 8, 'cd' * 7)}\n", None),
    (f"s\n\n{forged_block('undo', 'ab' * 8, 'CD' * 8)}\n", None),
    (f"s\n\n{forged_block('undo', 'ab' * 8, 'cd' * 8)}\n", ("undo", "ab" * 8, "cd" * 8)),
    (f"s\n\n{forged_block('rm -rf', 'ab' * 8)}\n", None),
    (f"{forged_block('relabel', 'ab' * 8)}\n", None),  # the subject is never the block
])
def test_decisions_are_read_from_the_final_trailer_block(message: str, expected: object) -> None:
    assert decision_in(message) == expected


def test_trailer_block_is_the_last_paragraph() -> None:
    assert trailer_block("s\n\nA: 1\n\nB: 2\n") == [("B", "2")]


def test_trusted_decisions_is_the_one_rule(corpus: Corpus) -> None:
    cur = fresh(corpus)
    result = cur.relabel([A], {"type": "pattern"}, "a pattern")
    tip = git(corpus.root, "rev-parse", "HEAD").strip()
    (d,) = trusted_decisions(corpus.root, tip)
    assert (d.commit, d.action, d.action_id, d.reverts) == (tip, "relabel", result.action_id, None)


def review_commit(corpus: Corpus, action: str, named: str, *, author: tuple[str, str],
                  committer: tuple[str, str]) -> str:
    """A review decision (issue 13) as factdesk/review/ writes it: an empty commit whose
    final trailer block names the decided agent commit."""
    message = (f"{action}: a proposal\n\nbecause\n\nFactdesk-Action: {action}\n"
               f"Factdesk-Action-Id: 0123456789abcdef\nFactdesk-Proposal: {named}\n"
               "Factdesk-Path: kb/gotchas/db/a1a1a1a1.md")
    git(corpus.root, "commit", "-q", "--allow-empty", "-m", message, author=author[0],
        email=author[1], env={"GIT_COMMITTER_NAME": committer[0],
                              "GIT_COMMITTER_EMAIL": committer[1]})
    return git(corpus.root, "rev-parse", "HEAD").strip()


def test_an_accept_keeps_the_agent_as_author_and_is_trusted_by_its_committer(
        corpus: Corpus) -> None:
    named = "a" * 40
    accept = review_commit(corpus, "accept", named,
                           author=("mindev", "mindev.local-8ef0cd32+learn@agents.knomit.io"),
                           committer=("ana", "ana@example.org"))
    forged = review_commit(corpus, "accept", named,
                           author=("mindev", "mindev.local-8ef0cd32+learn@agents.knomit.io"),
                           committer=("mindev", "mindev.local-8ef0cd32@agents.knomit.io"))
    reject = review_commit(corpus, "reject", named, author=("ana", "ana+reject@example.org"),
                           committer=("ana", "ana@example.org"))
    agent_reject = review_commit(corpus, "reject", named,
                                 author=("codex", "codex+reject@agents.knomit.io"),
                                 committer=("ana", "ana@example.org"))
    found = {d.commit: d for d in trusted_decisions(corpus.root)}
    assert accept in found and reject in found
    assert forged not in found and agent_reject not in found  # an agent decides nothing
    assert found[accept].values("Factdesk-Proposal") == [named]
    assert found[reject].values("Factdesk-Path") == [A]


def test_a_review_decision_must_name_full_agent_commits(corpus: Corpus) -> None:
    short = review_commit(corpus, "accept", "abc123",
                          author=("mindev", "mindev.local-8ef0cd32+learn@agents.knomit.io"),
                          committer=("ana", "ana@example.org"))
    assert short not in {d.commit for d in trusted_decisions(corpus.root)}


@pytest.mark.parametrize(("author", "trusted"), [
    ("ana+relabel@example.org", True),           # a curator, the action's own op token
    ("codex+relabel@agents.knomit.io", False),    # an agent author, committed by a curator
    ("ana+retract@example.org", False),           # a curator, another action's op token
])
def test_a_curators_decision_has_a_curator_author_with_its_op_token(
        corpus: Corpus, author: str, trusted: bool) -> None:
    """Rule 5: a decision other than a review's is authored by a curator whose op token is
    the action's — an agent author (even committed by a curator) or a token of another
    action records nothing (the mutation run left `or` → `and` alive here)."""
    message = f"relabel: a pattern\n\nbecause\n\n{forged_block('relabel', '0123456789abcdef')}"
    git(corpus.root, "commit", "-q", "--allow-empty", "-m", message, author=author.split("+")[0],
        email=author, env={"GIT_COMMITTER_NAME": "ana", "GIT_COMMITTER_EMAIL": "ana@example.org"})
    sha = git(corpus.root, "rev-parse", "HEAD").strip()
    assert (sha in {d.commit for d in trusted_decisions(corpus.root)}) == trusted
