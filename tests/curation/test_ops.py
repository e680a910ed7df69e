"""The curation operations on real git repositories: one commit each, exact diffs, undo."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from factdesk.core import open_corpus
from factdesk.corpus.codec import parse_fact
from factdesk.curation import Conflict, Curation, Refused
from tests.conftest import Corpus, git

A = "kb/gotchas/db/a1a1a1a1.md"
B = "kb/gotchas/db/b2b2b2b2.md"
C = "kb/decisions/api/c3c3c3c3.md"


@pytest.fixture
def cur(corpus: Corpus) -> Curation:
    ix = open_corpus(corpus.root)
    ix.update()
    return Curation(ix)


def head(corpus: Corpus) -> str:
    return git(corpus.root, "rev-parse", "HEAD").strip()


def changed_lines(corpus: Corpus, rev: str = "HEAD") -> list[str]:
    diff = git(corpus.root, "show", "--format=", "--unified=0", rev)
    return [line for line in diff.splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_relabel_is_one_commit_touching_only_the_changed_lines(corpus: Corpus, cur: Curation) -> None:
    before = head(corpus)
    result = cur.relabel([A], {"type": "hypothesis", "settle_by": "2027-01-31"},
                         "hedged wording: a guess")
    assert git(corpus.root, "rev-parse", "HEAD~1").strip() == before
    assert git(corpus.root, "show", "--name-only", "--format=", "HEAD").split() == [A]
    assert changed_lines(corpus) == ["-type: observation", "+type: hypothesis", "+settle_by: 2027-01-31"]
    msg = git(corpus.root, "log", "-1", "--format=%s%n%ae%n%B")
    assert msg.startswith("relabel: Connection pool exhausts at 200 clients (observation → hypothesis)\n")
    assert "+relabel@" in msg.splitlines()[1]
    assert f"Factdesk-Change: {A} type: observation → hypothesis" in msg
    assert "Factdesk-Reason: hedged wording: a guess" in msg
    # knomit's parse rules read it, and the index saw it
    fact = parse_fact(A, (corpus.root / A).read_bytes()).fact
    assert fact is not None and fact.type == "hypothesis" and fact.envelope.settle_by == "2027-01-31"
    conn = cur.indexer.connect(readonly=True)
    assert conn.execute("SELECT type FROM facts WHERE path = ?", (A,)).fetchone()[0] == "hypothesis"
    assert result.commit == head(corpus)


def test_undo_restores_exact_bytes_and_redo_reapplies(corpus: Corpus, cur: Curation) -> None:
    original = (corpus.root / A).read_bytes()
    cur.relabel([A], {"type": "policy"}, "it is a rule, not an observation")
    relabeled = (corpus.root / A).read_bytes()
    assert b"kind: pragmatic" in relabeled and b"type: policy" in relabeled
    cur.undo()
    assert (corpus.root / A).read_bytes() == original
    assert git(corpus.root, "log", "-1", "--format=%s").startswith("undo: relabel: ")
    undo, redo = cur.stacks()
    assert not undo and len(redo) == 1 and redo[0].label.startswith("relabel of ")
    cur.redo()
    assert (corpus.root / A).read_bytes() == relabeled
    # stacks survive a restart: a fresh Curation reads them from git
    fresh = Curation(open_corpus(corpus.root))
    undo, redo = fresh.stacks()
    assert len(undo) == 1 and not redo
    fresh.undo()
    assert (corpus.root / A).read_bytes() == original
    assert git(corpus.root, "status", "--porcelain") == ""


def test_a_new_action_clears_the_redo_stack(corpus: Corpus, cur: Curation) -> None:
    """Issue 14's mutant: an action after an undo ends the redo branch, as in every editor —
    redo must not bring back a change made before the curator moved on."""
    cur.relabel([A], {"type": "pattern"}, "a pattern")
    cur.undo()
    assert [r.action for r in cur.stacks()[1]] == ["relabel"]
    cur.edit([B], {"confidence": 0.4}, "less sure")
    undo, redo = cur.stacks()
    assert redo == [] and [r.action for r in undo] == ["edit"]
    with pytest.raises(Refused, match="nothing to redo"):
        cur.redo()
    assert b"type: observation" in (corpus.root / A).read_bytes()


def test_undo_refused_when_a_later_commit_touched_the_file(corpus: Corpus, cur: Curation) -> None:
    cur.relabel([A], {"type": "pattern"}, "a pattern")
    path = corpus.root / A
    path.write_bytes(path.read_bytes().replace(b"confidence: 0.8", b"confidence: 0.7"))
    corpus.commit("update: agent edit", op="update")
    with pytest.raises(Refused, match="later changes touched"):
        cur.undo()


def test_illegal_combinations_are_refused_with_the_rule(corpus: Corpus, cur: Curation) -> None:
    cases = [
        ({"type": "policy", "kind": "epistemic"}, "kind×type"),
        ({"origin": "distilled"}, "origin×type"),
        ({"type": "hypothesis"}, None),  # the body has digits: a criterion, so this one is legal
        ({"claim_type": "hypothesis"}, "claim×type"),
        ({"claimant_type": "view", "claimant_agent_id": "memory-graph"}, "A1"),
        ({"claimant_type": "tool", "subject_kind": "user", "claim_type": "assertion"}, "A1"),
        ({"claimant_type": "user", "subject_kind": "self", "claim_type": "assertion"}, "A1-ground"),
        ({"claimant_type": "persona"}, "A1-persona"),
        ({"type": "synthesis"}, "sources"),
    ]
    snapshot = corpus.snapshot()
    for changes, rule in cases:
        if rule is None:
            cur.relabel([A], changes, "ok", preview=True)
            continue
        with pytest.raises(Refused) as info:
            cur.relabel([A], changes, "try")
        assert info.value.rule == rule, (changes, info.value)
    assert corpus.snapshot() == snapshot


def test_hypothesis_without_criterion_is_refused(corpus: Corpus) -> None:
    corpus.fact("kb/gotchas/db/d4d4d4d4.md", title="Pools run dry", body="Pools run dry under load.")
    corpus.commit("learn: d")
    cur = Curation(open_corpus(corpus.root))
    with pytest.raises(Refused) as info:
        cur.relabel(["kb/gotchas/db/d4d4d4d4.md"], {"type": "hypothesis"}, "guess")
    assert info.value.rule == "H1"
    cur.relabel(["kb/gotchas/db/d4d4d4d4.md"],
                {"type": "hypothesis", "settlement": "pool errors seen in prod"}, "guess with criterion")


UNTYPED = """---
{front}
domain: [db]
confidence: 0.8
sources: 1
x-agent: {{run: 7}}
claimant_agent_id: codex
claimant_type: tool
---
# Pools run dry at 200 clients

Seen twice.
"""


@pytest.mark.parametrize(("front", "changes", "trailer"), [
    ("type: factoid", {"type": "observation"}, "type: factoid → observation"),
    ("kind: pragmatic\ntype: observation", {"type": "policy"}, "type: observation → policy"),
    ("kind: pragmatic\ntype: observation", {"kind": "epistemic"}, "kind: pragmatic → epistemic"),
    ("kind: Epistemic\ntype: observation", {"kind": "epistemic"}, "kind: Epistemic → epistemic"),
    ("type: [observation]", {"type": "observation"}, "type: [observation] → observation"),
])
def test_a_fact_unreadable_only_for_its_kind_or_type_is_repaired_by_relabel(
        corpus: Corpus, front: str, changes: dict[str, str], trailer: str) -> None:
    # RELIABILITY B01: listed as broken, and relabel is offered, which makes it a fact again
    path = "kb/gotchas/db/e5e5e5e5.md"
    corpus.write(path, UNTYPED.format(front=front))
    corpus.commit("learn: an agent's typo")
    cur = Curation(open_corpus(corpus.root))
    cur.indexer.update()
    conn = cur.indexer.connect(readonly=True)
    assert conn.execute("SELECT status FROM facts WHERE path = ?", (path,)).fetchone()[0] == "broken"
    labels = cur.read_labels(path)
    assert labels.fault and labels.fact.title == "Pools run dry at 200 clients"
    assert labels.values["claimant_agent_id"] == "codex"  # the rest of the envelope as written
    snapshot = corpus.snapshot()
    # refused for what is still wrong with its kind or type: by the rules, or by the parse
    with pytest.raises(Refused, match=r"value: (type|kind) |kind×type|choose a known kind and type"):
        cur.relabel([path], {"claimant_agent_id": "gemini"}, "no")
    assert corpus.snapshot() == snapshot
    cur.relabel([path], changes, "the agent's typo")
    old, new = trailer.split(": ", 1)[1].split(" → ")
    key = trailer.split(":")[0]
    assert changed_lines(corpus) == [f"-{key}: {old}", f"+{key}: {new}"]  # every other byte kept
    message = git(corpus.root, "log", "-1", "--format=%B")
    assert message.startswith("relabel: Pools run dry at 200 clients (")
    assert f"Factdesk-Change: {path} {trailer}\n" in message
    fact = parse_fact(path, (corpus.root / path).read_bytes()).fact
    assert fact is not None and fact.extra == {"x-agent": {"run": "7"}}
    row = conn.execute("SELECT status, type FROM facts WHERE path = ?", (path,)).fetchone()
    assert tuple(row) == ("live", fact.type)


def test_a_fact_with_other_faults_than_its_type_is_still_refused(corpus: Corpus) -> None:
    path = "kb/gotchas/db/e5e5e5e5.md"
    corpus.write(path, UNTYPED.format(front="type: factoid").replace("confidence: 0.8",
                                                                     "confidence: high"))
    corpus.commit("learn: two faults")
    cur = Curation(open_corpus(corpus.root))
    with pytest.raises(Refused, match=r"e5e5e5e5.md:\d+: cannot curate an unreadable fact .*factoid"
                                      r".*fix the file first"):
        cur.read_labels(path)
    snapshot = corpus.snapshot()
    with pytest.raises(Refused, match="fix the file first"):
        cur.relabel([path], {"type": "observation"}, "try")
    assert corpus.snapshot() == snapshot


def test_reason_is_required(corpus: Corpus, cur: Curation) -> None:
    with pytest.raises(Refused, match="reason is required"):
        cur.relabel([A], {"type": "pattern"}, "   ")


def test_bulk_relabel_is_one_commit(corpus: Corpus, cur: Curation) -> None:
    before = head(corpus)
    result = cur.relabel([A, B], {"type": "pattern"}, "both are patterns")
    assert git(corpus.root, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    assert sorted(git(corpus.root, "show", "--name-only", "--format=", "HEAD").split()) == [A, B]
    assert result.subject == "relabel: 2 facts (observation → pattern)"


def test_preview_writes_nothing(corpus: Corpus, cur: Curation) -> None:
    snap = corpus.snapshot()
    result = cur.relabel([A], {"type": "pattern"}, "p", preview=True)
    assert result.preview and "-type: observation\n+type: pattern" in result.files[0].diff
    assert corpus.snapshot() == snap


def test_edit_fields_title_and_body(corpus: Corpus, cur: Curation) -> None:
    cur.edit([A], {"confidence": 0.55, "entities": ["Postgres", "PgBouncer"]}, "second source disagrees")
    assert changed_lines(corpus) == ["-confidence: 0.8", "+confidence: 0.55",
                                     "-entities: [Postgres]", "+entities: [Postgres, PgBouncer]"]
    cur.edit([A], {"title": "Connection pool exhausts at 180 clients", "body": "Measured again."},
             "re-measured")
    fact = parse_fact(A, (corpus.root / A).read_bytes()).fact
    assert fact is not None and fact.title == "Connection pool exhausts at 180 clients"
    assert fact.body.strip() == "Measured again."
    with pytest.raises(Refused, match=r"outside 0\.\.1"):
        cur.edit([A], {"confidence": 1.5}, "no")


def test_edit_refuses_refs_knomit_would_not_write(corpus: Corpus, cur: Curation) -> None:
    # FORMAT §4.3–4.4: every new ref well formed and inside the repository, every new local
    # one naming a fact that exists (or once did); all of them named at once
    snapshot = corpus.snapshot()
    old = list(cur.read_fact(A).refs)
    bad = ["kb/does/not/exist.md", "../../etc/passwd", "C:foo", "kb://abc/kb/x.md"]
    with pytest.raises(Refused) as info:
        cur.edit([A], {"refs": [*old, *bad]}, "more sources")
    message = str(info.value)
    assert info.value.rule == "refs" and "nothing was written" in message
    for raw in bad:
        assert repr(raw) in message, raw
    assert corpus.snapshot() == snapshot
    cur.retract([C], "superseded")
    foreign = "kb://fedcba987654/kb/elsewhere/12345678.md"  # another repository's: not checked
    cur.edit([A], {"refs": [*old, B, C, "https://example.org/pool", foreign]},
             "a retracted fact once existed")
    assert list(cur.read_fact(A).refs) == [*old, B, C, "https://example.org/pool", foreign]


def test_move_renames_and_updates_refs_in_the_same_commit(corpus: Corpus) -> None:
    corpus.fact("kb/decisions/api/e5e5e5e5.md", title="Synthesis", type="synthesis",
                refs=f"{A}, kb://0123456789ab/{A}, https://example.org")
    corpus.commit("learn: syn")
    cur = Curation(open_corpus(corpus.root))
    cur.indexer.update()
    new = "kb/decisions/db/a1a1a1a1.md"
    cur.move({A: new}, "it is a decision")
    names = git(corpus.root, "show", "--name-status", "--format=", "-M", "HEAD").splitlines()
    assert f"R100\t{A}\t{new}" in names and any(n.endswith("e5e5e5e5.md") for n in names)
    syn = (corpus.root / "kb/decisions/api/e5e5e5e5.md").read_text()
    assert f"refs: [{new}, kb://0123456789ab/{new}, https://example.org]" in syn
    assert not (corpus.root / A).exists()
    with pytest.raises(Refused, match="not in the ontology"):
        cur.move({new: "kb/nowhere/x/a1a1a1a1.md"}, "bad topic")


@pytest.mark.parametrize(("target", "why"), [
    ("kb/decisions/db/CON.md", "reserved name"),  # RELIABILITY C13
    ("kb/decisions/db./a1a1a1a1.md", "ends with a dot or a space"),
    ("kb/decisions/db/a:b.md", "holds ':'"),
    ("kb/decisions/db/cafe\u0301.md", "NFC-normalised"),  # C11: new names are NFC
])
def test_a_move_never_makes_a_name_other_systems_cannot_hold(
        corpus: Corpus, cur: Curation, target: str, why: str) -> None:
    before = head(corpus)
    with pytest.raises(Refused, match=why):
        cur.move({A: target}, "somewhere odd")
    assert head(corpus) == before and (corpus.root / A).exists()


def test_nothing_is_written_through_a_link(corpus: Corpus, cur: Curation, tmp_path: Path) -> None:
    """RELIABILITY C05, C06: a fact reached through a linked folder (here one swapped in for
    a fact's folder, pointing outside the repository) or itself a link is refused, named
    as a link; the file behind it keeps its bytes and no commit is made."""
    import os
    import shutil

    outside = tmp_path / "outside"
    shutil.copytree(corpus.root / "kb/gotchas/db", outside)
    kept = (outside / "a1a1a1a1.md").read_bytes()
    shutil.rmtree(corpus.root / "kb/gotchas/db")
    os.symlink(outside, corpus.root / "kb/gotchas/db")
    before = head(corpus)
    with pytest.raises(Refused, match="kb/gotchas/db is a symbolic link") as refused:
        cur.relabel([A], {"type": "pattern"}, "through the link")
    assert refused.value.rule == "symlink"
    with pytest.raises(Refused, match="is a symbolic link"):  # nor a move into it
        cur.move({C: "kb/gotchas/db/c3c3c3c3.md"}, "into the link")
    os.unlink(corpus.root / "kb/gotchas/db")
    shutil.copytree(outside, corpus.root / "kb/gotchas/db")
    os.symlink(corpus.root / B, corpus.root / "kb/gotchas/db/link.md")  # C06: a file link
    with pytest.raises(Refused, match=r"kb/gotchas/db/link\.md is a symbolic link"):
        cur.relabel(["kb/gotchas/db/link.md"], {"type": "pattern"}, "through the link")
    assert (outside / "a1a1a1a1.md").read_bytes() == kept and head(corpus) == before
    assert os.path.islink(corpus.root / "kb/gotchas/db/link.md")


def test_retract_and_restore(corpus: Corpus, cur: Curation) -> None:
    original = (corpus.root / C).read_bytes()
    cur.retract([C], "superseded by the new limits page")
    assert not (corpus.root / C).exists()
    msg = git(corpus.root, "log", "-1", "--format=%s%n%ae%n%b")
    assert msg.startswith(f"retract(curation): {C}\n") and "+retract@" in msg
    assert "superseded by the new limits page" in msg
    conn = cur.indexer.connect(readonly=True)
    assert conn.execute("SELECT status FROM facts WHERE path = ?", (C,)).fetchone()[0] == "retracted"
    cur.restore([C], "retracted by mistake")
    assert (corpus.root / C).read_bytes() == original


def test_restoring_a_moved_fact_is_refused(corpus: Corpus, cur: Curation) -> None:
    # its old path is indexed as retracted; restoring it made a second copy of a live fact
    moved = "kb/decisions/api/a1a1a1a1.md"
    cur.move({A: moved}, "it is a decision")
    snapshot = corpus.snapshot()
    with pytest.raises(Refused, match=f"lives on at {moved}"):
        cur.restore([A], "restore the old path")
    assert corpus.snapshot() == snapshot
    # a retracted fact whose name another, unrelated fact shares (names are not unique
    # across folders, FORMAT §1.4) is restored
    corpus.fact("kb/principles/ops/c3c3c3c3.md", title="A namesake in another folder")
    corpus.commit("learn: a namesake")
    cur.retract([C], "superseded")
    cur.restore([C], "retracted by mistake")
    assert (corpus.root / C).exists()


def test_attest_writes_envelope_and_records_it(corpus: Corpus, cur: Curation) -> None:
    with pytest.raises(Refused, match="cannot attest without claimant_type"):
        cur.attest([A], "no registry, so the claimant's type is unknown", {"subject_kind": "codebase"})
    cur.attest([A], "checked the commit: claude-code observed this in the codebase",
               {"subject_kind": "codebase", "claimant_type": "tool"})
    text = (corpus.root / A).read_text()
    assert ("claim_type: observation\nclaimant_agent_id: claude-code\nclaimant_type: tool\n"
            "subject_kind: codebase") in text
    log = (corpus.root / ".factdesk/attestations.yaml").read_text()
    assert f"- path: {A}" in log and "reason: " in log
    assert sorted(git(corpus.root, "show", "--name-only", "--format=", "HEAD").split()) == \
        [".factdesk/attestations.yaml", A]


def test_agent_staged_and_unstaged_work_is_left_alone(corpus: Corpus, cur: Curation) -> None:
    corpus.fact("kb/gotchas/db/f6f6f6f6.md", title="Agent's new fact")
    git(corpus.root, "add", "kb/gotchas/db/f6f6f6f6.md")
    (corpus.root / B).write_bytes((corpus.root / B).read_bytes() + b"\nmore\n")
    cur.relabel([A], {"type": "pattern"}, "p")
    assert git(corpus.root, "show", "--name-only", "--format=", "HEAD").split() == [A]
    assert git(corpus.root, "diff", "--cached", "--name-only").split() == ["kb/gotchas/db/f6f6f6f6.md"]
    assert git(corpus.root, "diff", "--name-only").split() == [B]


def test_dirty_target_is_refused(corpus: Corpus, cur: Curation) -> None:
    (corpus.root / A).write_bytes((corpus.root / A).read_bytes() + b"\nagent edit\n")
    with pytest.raises(Refused, match="uncommitted changes"):
        cur.relabel([A], {"type": "pattern"}, "p")


def test_stale_view_is_a_conflict(corpus: Corpus, cur: Curation) -> None:
    conn = cur.indexer.connect(readonly=True)
    seen = conn.execute("SELECT blob FROM facts WHERE path = ?", (A,)).fetchone()[0]
    seen_head = head(corpus)
    path = corpus.root / A
    path.write_bytes(path.read_bytes().replace(b"0.8", b"0.6"))
    corpus.commit("update: agent", op="update")
    with pytest.raises(Conflict):
        cur.relabel([A], {"type": "pattern"}, "p", expected={A: seen})
    with pytest.raises(Conflict, match="branch moved"):
        cur.relabel([A], {"type": "pattern"}, "p", expected_head=seen_head)
    # the branch moved but not over our file: allowed (rebased onto the new tip)
    cur.relabel([B], {"type": "pattern"}, "p", expected_head=seen_head)


def test_detached_head_and_index_lock(corpus: Corpus, cur: Curation) -> None:
    from factdesk.curation import recover
    from factdesk.curation.gitwrite import pending_actions

    lock = corpus.root / ".git/index.lock"
    lock.write_bytes(b"")
    cur.relabel([A], {"type": "pattern"}, "works with index.lock held")
    assert lock.exists()  # never removed by us
    assert git(corpus.root, "log", "-1", "--format=%s").startswith("relabel: ")
    assert pending_actions(corpus.root)  # git's index is still to be synced: remembered
    assert recover(corpus.root)[0].outcome == "needs attention"  # still locked: kept
    lock.unlink()
    assert [r.outcome for r in recover(corpus.root)] == ["already committed"]
    assert not pending_actions(corpus.root) and git(corpus.root, "status", "--porcelain") == ""
    git(corpus.root, "checkout", "-q", "--detach")
    with pytest.raises(Refused, match="detached"):
        cur.relabel([B], {"type": "pattern"}, "p")


def test_stale_ref_lock_is_reported_not_removed(corpus: Corpus, cur: Curation) -> None:
    lock = corpus.root / ".git/refs/heads/main.lock"
    lock.write_bytes(b"")
    snap = corpus.snapshot()
    with pytest.raises(Conflict, match=r"main\.lock"):
        cur.relabel([A], {"type": "pattern"}, "p")
    assert lock.exists() and corpus.snapshot() == snap


def test_hooks_never_run(corpus: Corpus, cur: Curation, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    hooks = corpus.root / ".git/hooks"
    for name in ("pre-commit", "post-commit", "reference-transaction", "post-index-change", "commit-msg"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        hook.chmod(0o755)
    cur.relabel([A], {"type": "pattern"}, "p")
    cur.undo()
    assert not marker.exists()


def test_mode_bits_preserved(corpus: Corpus, cur: Curation) -> None:
    path = corpus.root / A
    path.chmod(0o600)
    cur.relabel([A], {"type": "pattern"}, "p")
    assert path.stat().st_mode & 0o777 == 0o600


def test_unborn_and_fsck(corpus: Corpus, cur: Curation) -> None:
    cur.relabel([A, B], {"type": "pattern"}, "p")
    cur.move({C: "kb/gotchas/api/c3c3c3c3.md"}, "m")
    cur.undo()
    cur.undo()
    out = subprocess.run(["git", "-C", str(corpus.root), "fsck", "--no-dangling"], capture_output=True)
    assert out.returncode == 0, out.stderr


def test_tree_building_matches_a_temporary_index(corpus: Corpus) -> None:
    from factdesk.corpus.gitrepo import blob_id
    from factdesk.curation.gitwrite import _build_tree, tree_with_index

    repo = corpus.root
    data = b"---\ntype: observation\n---\n# New\n"
    subprocess.run(["git", "-C", str(repo), "hash-object", "-w", "--stdin"], input=data, check=True,
                   capture_output=True)
    blob = blob_id(data)
    head_sha = git(repo, "rev-parse", "HEAD").strip()
    cases = [
        {A: blob},                                   # replace in place
        {"kb/new/deep/dir/x.md": blob},              # new folders
        {C: None},                                   # delete: the emptied folders go too
        {A: None, B: None, "kb/gotchas/z.md": blob},  # several at once
    ]
    for entries in cases:
        assert _build_tree(repo, head_sha, entries) == tree_with_index(repo, head_sha, entries), entries


HYP = "kb/gotchas/db/h1h1h1h1.md"


def _with_hypothesis(corpus: Corpus) -> Curation:
    corpus.fact(HYP, title="The pool will run dry at 300 clients", type="hypothesis",
                body="Settles by 2026-12-31: pool errors at 300 clients.")
    corpus.commit("learn: a hypothesis")
    return Curation(open_corpus(corpus.root))


def test_confirm_links_and_retracts_in_one_commit(corpus: Corpus) -> None:
    cur = _with_hypothesis(corpus)
    corpus.fact("kb/gotchas/db/h2h2h2h2.md", title="Another guess", type="hypothesis",
                body="Settles by 2027-01-01.")
    corpus.commit("learn: guess 2")
    with pytest.raises(Refused, match="R4"):  # in a settlement the non-hypothesis wins
        cur.confirm(HYP, "kb/gotchas/db/h2h2h2h2.md", "a guess cannot settle a guess")
    cur.confirm(HYP, A, "the load test saw it")
    names = sorted(git(corpus.root, "show", "--name-status", "--format=", "HEAD").split("\n"))
    assert f"D\t{HYP}" in names and f"M\t{A}" in names
    fact = parse_fact(A, (corpus.root / A).read_bytes()).fact
    assert fact is not None and HYP in fact.refs
    assert "Factdesk-Confirmed-By: " + A in git(corpus.root, "log", "-1", "--format=%B")
    cur.undo()
    assert (corpus.root / HYP).exists()
    for bad in (1.5, "high", float("nan")):  # the new observation's confidence is checked here
        with pytest.raises(Refused, match="confidence"):
            cur.confirm(HYP, None, "observed", new_title="T", new_body="B", confidence=bad)
    with pytest.raises(Refused, match="body"):  # (issue 14 bug 5: a title alone is no fact)
        cur.confirm(HYP, None, "observed", new_title="T")
    cur.confirm(HYP, None, "observed", new_title="The pool ran dry at 300 clients",
                new_body="Seen in the 2026-11 load test.")
    added = [line.split("\t")[1] for line in git(corpus.root, "show", "--name-status", "--format=",
                                                 "HEAD").splitlines() if line.startswith("A")]
    assert len(added) == 1
    new = parse_fact(added[0], (corpus.root / added[0]).read_bytes()).fact
    assert new is not None and new.type == "observation" and new.refs == (HYP,)


def test_refute_extend_promote(corpus: Corpus) -> None:
    cur = _with_hypothesis(corpus)
    cur.extend(HYP, "the load test slipped", settle_by="2027-3-31")  # (written short)
    assert "settle_by: 2027-03-31" in (corpus.root / HYP).read_text()
    for bad in ("2027-02-30", "next spring"):
        with pytest.raises(Refused, match="not a da"):
            cur.extend(HYP, "no", settle_by=bad)
    assert git(corpus.root, "log", "-1", "--format=%s").startswith("extend: ")
    cur.promote(HYP, "it held")
    fact = parse_fact(HYP, (corpus.root / HYP).read_bytes()).fact
    assert fact is not None and fact.type == "observation"
    cur.undo()
    cur.refute(HYP, "no errors at 400 clients", evidence=[A])
    assert not (corpus.root / HYP).exists()
    msg = git(corpus.root, "log", "-1", "--format=%s%n%B")
    assert msg.startswith(f"retract(refuted): {HYP}") and f"Factdesk-Evidence: {A}" in msg
    with pytest.raises(Refused, match="not a hypothesis"):
        cur.promote(A, "no")


# -- issue 15: hostile files in the write path ----------------------------------------------------


@pytest.fixture
def immutable():
    """`chattr +i` for real (we may be root, whom a read-only mode does not stop); undone
    at teardown so that pytest can clean up. Skipped where the file system has no flag."""
    done: list[Path] = []

    def make(path: Path) -> None:
        proc = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
        if proc.returncode != 0:
            pytest.skip(f"chattr +i is not available here: {proc.stderr.decode().strip()}")
        done.append(path)

    yield make
    for path in reversed(done):
        subprocess.run(["chattr", "-i", str(path)], check=False)


def _unchanged(corpus: Corpus, head_before: str) -> None:
    from factdesk.curation.gitwrite import pending_actions

    assert head(corpus) == head_before
    assert pending_actions(corpus.root) == []
    assert git(corpus.root, "status", "--porcelain") == ""


def test_an_immutable_fact_is_refused_in_words(corpus: Corpus, cur: Curation, immutable) -> None:
    before = head(corpus)
    original = (corpus.root / A).read_bytes()
    immutable(corpus.root / A)
    with pytest.raises(Refused, match="immutable") as info:
        cur.relabel([A], {"type": "pattern"}, "a pattern")
    assert info.value.rule == "write" and "Nothing was committed" in str(info.value)
    assert (corpus.root / A).read_bytes() == original
    _unchanged(corpus, before)


def test_an_immutable_folder_is_refused_in_words(corpus: Corpus, cur: Curation, immutable) -> None:
    before = head(corpus)
    immutable(corpus.root / "kb" / "gotchas" / "db")
    with pytest.raises(Refused, match="immutable"):
        cur.retract([A], "gone")  # (a delete in it)
    with pytest.raises(Refused, match="immutable"):
        cur.move({C: "kb/gotchas/db/c3c3c3c3.md"}, "filed with its kin")  # (a new file in it)
    assert (corpus.root / A).exists() and (corpus.root / C).exists()
    _unchanged(corpus, before)


def test_restore_refuses_a_path_that_is_not_a_fact(corpus: Corpus, cur: Curation) -> None:
    (corpus.root / "README.md").unlink()
    corpus.commit("docs: drop the readme")
    for path in ("README.md", ".knomit/ontology.yaml", "kb/../README.md"):
        with pytest.raises(Refused, match="not a fact path"):
            cur.restore([path], "bring it back")


@pytest.fixture
def no_hang():
    """Fail (not hang) when an operation blocks on a FIFO: SIGALRM interrupts the open."""
    import signal

    def fail(*_: object) -> None:
        raise TimeoutError("blocked on a FIFO")

    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def test_fifos_where_files_are_read_never_hang(corpus: Corpus, cur: Curation, no_hang) -> None:
    import os

    from factdesk.curation.dismissals import DismissalsError, load_dismissals
    from factdesk.curation.ops import load_attestations

    (corpus.root / ".factdesk").mkdir()
    os.mkfifo(corpus.root / ".factdesk" / "dismissals.yaml")
    os.mkfifo(corpus.root / ".factdesk" / "attestations.yaml")
    with pytest.raises(Refused, match="not a regular file"):
        cur.dismiss(A, "observation-without-refs", "it is the measurement")
    with pytest.raises(DismissalsError, match="not a regular file"):
        load_dismissals(corpus.root)
    with pytest.raises(Refused, match="not a regular file"):
        cur.move({A: "kb/gotchas/db/a9a9a9a9.md"}, "renamed")  # (the dismissals follow a move)
    (corpus.root / ".factdesk" / "dismissals.yaml").unlink()
    with pytest.raises(Refused, match="not a regular file"):
        cur.attest([A], "I saw it", {"claimant_agent_id": "ana", "claimant_type": "tool",
                                      "subject_kind": "world"})
    assert load_attestations(corpus.root) == {}
    os.mkfifo(corpus.root / "kb" / "gotchas" / "db" / "f1f1f1f1.md")
    with pytest.raises(Refused, match="already exists"):  # a move destination
        cur.move({A: "kb/gotchas/db/f1f1f1f1.md"}, "renamed")
    with pytest.raises(Refused, match="not a regular file"):  # a fact path
        cur.relabel(["kb/gotchas/db/f1f1f1f1.md"], {"type": "pattern"}, "a pattern")


def test_the_change_set_is_frozen_and_a_deferred_sync_finishes_by_function(corpus: Corpus) -> None:
    """STYLE.md 4: an operation returns a frozen record; the GUI's deferred index sync is
    `finish_change(repo, change)`, run on a worker thread, not a mutation of the record."""
    import dataclasses

    from factdesk.curation import finish_change
    from factdesk.curation.gitwrite import pending_actions

    ix = open_corpus(corpus.root)
    ix.update()
    cur = Curation(ix, defer_index_sync=True)
    change = cur.relabel([A], {"type": "pattern"}, "a pattern")
    with pytest.raises(dataclasses.FrozenInstanceError):
        change.commit = None  # type: ignore[misc]
    assert isinstance(change.fields, tuple) and change.paths_touched == (A,)
    assert len(pending_actions(corpus.root)) == 1  # the journal waits for the sync
    assert git(corpus.root, "status", "--porcelain") != ""  # git's index still has the old blob
    finish_change(corpus.root, change)
    assert pending_actions(corpus.root) == []
    assert git(corpus.root, "status", "--porcelain") == ""
