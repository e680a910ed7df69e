"""A registry change is re-checked in place (index/authority_recheck.py), and the index
then equals a rebuild (I1): derived claimants and types, A1 and E1 findings, the rows'
counts and checksums, the registry's own findings."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from factdesk.corpus.registry_io import REGISTRY_PATH
from factdesk.curation import Curation
from factdesk.curation.gitwrite import Identity
from factdesk.index.indexer import Indexer
from factdesk.index.rows import HEAD_SUMS, damaged_ids, failing, named_rows, sum_sql
from tests.conftest import MAKE_CORPUS, Corpus, git
from tests.index.test_indexer import dump

ANA = Identity("ana", "ana@example.org")
DAY = date(2026, 11, 30)

REGISTRY = """# the registry
agent_types:
  tool: {description: may observe and report}
  persona: {description: must cite}
  view: {description: writes nothing}
  peer: {description: canonical about itself}
  user: {description: the user}
agents:
  claude-code: {type: tool, email: claude-code@agents.knomit.io}
  ana: {type: user, email: ana@example.org}
"""

ENVELOPED = """---
type: observation
confidence: 0.7
sources: 1
refs: [{refs}]
claim_type: {claim}
claimant_agent_id: {who}
{typeline}subject_kind: {subject}
---
# {title}

Body.
"""


def _fact(c: Corpus, rel: str, *, who: str = "codex", typeline: str = "",
          subject: str = "user", claim: str = "assertion", refs: str = "",
          title: str = "A claim") -> None:
    c.write(rel, ENVELOPED.format(who=who, typeline=typeline, subject=subject, claim=claim,
                                  refs=refs, title=title))


def _prepare(c: Corpus) -> None:
    c.write(REGISTRY_PATH, REGISTRY)
    git(c.root, "add", "-A")
    git(c.root, "commit", "-qm", "registry", author="ana", email="ana@example.org")
    # claimed in the file, typed by the registry (codex is not registered yet)
    _fact(c, "kb/gotchas/db/e1e1e1e1.md", who="codex", subject="user", claim="assertion")
    # claimed and typed in the file: persona without refs, tool about the user
    _fact(c, "kb/gotchas/db/e2e2e2e2.md", who="claude-code", typeline="claimant_type: persona\n",
          subject="codebase", claim="observation", title="A persona's claim")
    # an added type the registry does not know yet
    _fact(c, "kb/gotchas/db/e3e3e3e3.md", who="claude-code",
          typeline="claimant_type: auditor\n", subject="user", claim="report",
          title="An auditor's report")
    # an empty claimant: the claimant shown is git's
    c.write("kb/gotchas/db/e4e4e4e4.md", ENVELOPED.format(
        who='""', typeline='claimant_type: ""\n', subject="world", claim="observation",
        refs="", title="An empty claimant"))
    c.commit("learn: enveloped facts", author="codex")
    # a retracted fact of codex's (its derived claimant is the registry's too)
    c.fact("kb/gotchas/db/e5e5e5e5.md", title="Soon gone")
    c.commit("learn: soon gone", author="codex")
    (c.root / "kb/gotchas/db/e5e5e5e5.md").unlink()
    c.commit("retract: soon gone", author="codex", op="retract")


def assert_equals_rebuild(repo: Path) -> None:
    inc = Indexer(repo, today=DAY)
    stats = inc.update()
    assert stats.mode in ("unchanged", "registry", "incremental")
    fresh_repo = repo.parent / (repo.name + "-fresh")
    shutil.rmtree(fresh_repo, ignore_errors=True)
    shutil.copytree(repo, fresh_repo, symlinks=True)
    fresh = Indexer(fresh_repo, today=DAY)
    fresh.update(rebuild=True)
    assert dump(fresh) == dump(inc)
    with inc.connect(readonly=True) as conn:
        assert damaged_ids(conn) == []  # every checksum written again holds


def test_each_registry_action_is_rechecked_in_place_and_equals_a_rebuild(corpus: Corpus) -> None:
    _prepare(corpus)
    ix = Indexer(corpus.root, today=DAY)
    ix.update()
    cur = Curation(ix, ANA, update_index=False)
    steps = [
        lambda: cur.register("codex", "tool", "its e-mail is known", email="codex@agents.knomit.io",
                             branch="agent/codex"),
        lambda: cur.set_type("codex", "persona", "earned it"),
        lambda: cur.add_type("auditor", "reviews others' work", {("user", "*"): "forbidden"},
                             "a new kind of agent"),
        lambda: cur.set_type("claude-code", "user", "a person after all"),
        lambda: cur.retire("codex", "gone"),
        lambda: cur.undo(),
        lambda: cur.undo(),
    ]
    seen_modes = set()
    narrowed = []
    for step in steps:
        step()
        stats = ix.update()
        seen_modes.add(stats.mode)
        assert stats.mode != "rebuild"
        narrowed.append(stats.rechecked is not None and stats.rechecked.narrowed)
        assert_equals_rebuild(corpus.root)
    # a type change reads only its agent's rows (the indexer knew the registry before);
    # registering an e-mail may change any derived claimant: every row is read
    assert narrowed[:4] == [False, True, True, True]
    assert "rebuild" not in seen_modes


def test_a_recheck_says_which_findings_appeared_and_disappeared(corpus: Corpus) -> None:
    _prepare(corpus)
    ix = Indexer(corpus.root, today=DAY)
    ix.update()
    with ix.connect(readonly=True) as conn:
        auditor = conn.execute("SELECT COUNT(*) FROM problems WHERE code = 'E1' AND path = ?",
                               ("kb/gotchas/db/e3e3e3e3.md",)).fetchone()[0]
    assert auditor == 1  # unknown claimant_type 'auditor'
    Curation(ix, ANA, update_index=False).add_type(
        "auditor", "reviews", {("user", "*"): "forbidden"}, "a new kind")
    stats = ix.update()
    assert stats.rechecked is not None
    # the unknown type went; the forbidden report about the user came
    assert (stats.rechecked.appeared, stats.rechecked.disappeared) == (1, 1)
    with ix.connect(readonly=True) as conn:
        codes = {r[0] for r in conn.execute(
            "SELECT code FROM problems WHERE path = 'kb/gotchas/db/e3e3e3e3.md'")}
    assert "A1" in codes and "E1" not in codes
    assert_equals_rebuild(corpus.root)


def test_a_hand_edit_of_the_registry_not_committed_is_rechecked_too(corpus: Corpus) -> None:
    _prepare(corpus)
    ix = Indexer(corpus.root, today=DAY)
    ix.update()
    text = (corpus.root / REGISTRY_PATH).read_text()
    corpus.write(REGISTRY_PATH, text + "  codex: {type: peer, email: codex@agents.knomit.io}\n")
    stats = ix.update()
    assert stats.mode == "registry" and stats.rechecked is not None
    with ix.connect(readonly=True) as conn:
        row = conn.execute("SELECT claimant, claimant_type FROM facts WHERE path = ?",
                           ("kb/gotchas/db/e1e1e1e1.md",)).fetchone()
    assert tuple(row) == ("codex", "peer")
    assert ix.update().mode == "unchanged"  # the stamp was recorded
    assert_equals_rebuild(corpus.root)
    corpus.write(REGISTRY_PATH, "agents: [not, a, mapping\n")  # a broken registry: its finding
    ix.update()
    assert_equals_rebuild(corpus.root)


def test_a_generated_corpus_rechecked_equals_a_rebuild(tmp_path: Path) -> None:
    if not MAKE_CORPUS.exists():
        pytest.skip(f"the corpus generator is absent ({MAKE_CORPUS})")
    out = tmp_path / "kb"
    subprocess.run([sys.executable, str(MAKE_CORPUS), "--facts", "400", "--commits", "80",
                    "--seed", "7", "--out", str(out), "--quiet", "--now", "2026-11-30"],
                   check=True)
    ix = Indexer(out, today=DAY)
    ix.update()
    cur = Curation(ix, ANA, update_index=False)
    cur.set_type("codex", "persona", "a promotion")
    assert ix.update().mode != "rebuild"
    assert_equals_rebuild(out)
    cur.set_type("claude-code", "user", "a person")
    assert ix.update().mode != "rebuild"
    assert_equals_rebuild(out)
    cur.add_type("auditor", "reviews", {("*", "*"): "forbidden"}, "a new type")
    cur.set_type("librarian", "auditor", "now an auditor")
    assert ix.update().mode != "rebuild"
    assert_equals_rebuild(out)


def _sums(ix: Indexer) -> dict[str, tuple]:
    with ix.connect(readonly=True) as conn:
        return {r[0]: tuple(r[1:]) for r in conn.execute(
            "SELECT path, claimant, claimant_type, errors, warnings, sum_head, sum_text, "
            "sum_rest FROM facts")}


def test_a_recheck_rewrites_only_the_changed_rows_and_their_head_checksums(
        corpus: Corpus) -> None:
    """The re-check computes each changed row's head checksum itself (`rows.checksum` over
    the head values it read, the new ones put in): it holds, equals a rebuild's, and only
    the rows whose registry-decided values changed are written."""
    _prepare(corpus)
    ix = Indexer(corpus.root, today=DAY)
    ix.update()
    before = _sums(ix)
    Curation(ix, ANA, update_index=False).set_type("claude-code", "persona", "cites now")
    stats = ix.update()
    assert stats.rechecked is not None and stats.rechecked.narrowed
    after = _sums(ix)
    changed = set(stats.rechecked.rows)
    # e2 names claude-code and its own type; e3 names claude-code with an unknown type:
    # neither's values change; claude-code's derived rows (none here) would
    assert changed == {p for p in after if after[p][:4] != before[p][:4]}
    for path, sums in after.items():
        assert sums[5:] == before[path][5:]  # the body's and the rest's checksums stay
        if path not in changed:
            assert sums == before[path]  # not written at all
    with ix.connect(readonly=True) as conn:
        rows = named_rows(conn, f"SELECT {sum_sql(HEAD_SUMS)} FROM facts")
        assert failing(rows, HEAD_SUMS) == []
    assert_equals_rebuild(corpus.root)
    # a promotion that changes rows (codex's derived types): each written row's head
    # checksum holds
    cur = Curation(ix, ANA, update_index=False)
    cur.register("codex", "tool", "known", email="codex@agents.knomit.io", branch="agent/codex")
    ix.update()
    cur.set_type("codex", "persona", "earned it")
    stats = ix.update()
    assert stats.rechecked is not None and stats.rechecked.rows
    with ix.connect(readonly=True) as conn:
        rows = named_rows(conn, f"SELECT {sum_sql(HEAD_SUMS)} FROM facts WHERE path IN "
                          f"({','.join('?' * len(stats.rechecked.rows))})",
                          stats.rechecked.rows)
        assert len(rows) == len(set(stats.rechecked.rows)) and failing(rows, HEAD_SUMS) == []
    assert_equals_rebuild(corpus.root)
