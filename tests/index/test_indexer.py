"""The index: incremental equals rebuild (I1), damage is rebuilt, search never raises."""

from __future__ import annotations

import os
import sqlite3
import time
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factdesk.cli import main
from factdesk.index import schema
from factdesk.index.indexer import Indexer
from factdesk.index.search import fact_ids, search
from tests.conftest import Corpus, git

TABLES = {
    "facts": "SELECT * FROM facts ORDER BY path",
    "problems": "SELECT path, line, code, severity, message FROM problems "
                "ORDER BY path, line, code, message",
    "refs": "SELECT * FROM refs ORDER BY src, target",
    "commits": "SELECT sha, first_parent, parents, author, email, op, time, subject FROM commits "
               "ORDER BY sha",
    "counts": "SELECT key, n FROM counts ORDER BY key",
}


def dump(ix: Indexer) -> dict[str, list[tuple]]:
    conn = ix.connect(readonly=True)
    out = {}
    for name, sql in TABLES.items():
        rows = [tuple(r) for r in conn.execute(sql)]
        if name == "facts":  # ids and file stamps differ between runs by design
            cols = [d[0] for d in conn.execute(sql).description]
            keep = [i for i, c in enumerate(cols) if c not in ("id", "mtime_ns")]
            rows = [tuple(r[i] for i in keep) for r in rows]
        out[name] = rows
    conn.close()
    return out


def assert_incremental_equals_rebuild(repo: Path, tmp_path: Path) -> None:
    inc = Indexer(repo, today=date(2026, 11, 30))
    inc.update()
    incremental = dump(inc)
    fresh = Indexer(repo, today=date(2026, 11, 30))
    fresh.update(rebuild=True)
    assert dump(fresh) == incremental


def test_incremental_update_equals_rebuild(corpus: Corpus, tmp_path: Path) -> None:
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    assert ix.update().mode == "rebuild"
    assert ix.update().mode == "unchanged"
    # an agent commits a synthesis citing a fact, edits another, retracts a third
    corpus.fact("kb/gotchas/db/d4d4d4d4.md", title="Pool size bounds throughput",
                type="synthesis", refs="kb/gotchas/db/a1a1a1a1.md, kb/gotchas/db/b2b2b2b2.md")
    corpus.commit("synthesize-review: distill kb/gotchas/db/d4d4d4d4.md", op="subsume")
    stats = ix.update()
    assert stats.mode == "incremental" and "kb/gotchas/db/d4d4d4d4.md" in stats.changed
    assert_incremental_equals_rebuild(corpus.root, tmp_path)
    path = corpus.root / "kb/gotchas/db/a1a1a1a1.md"
    path.write_bytes(path.read_bytes().replace(b"confidence: 0.8", b"confidence: 0.4"))
    (corpus.root / "kb/gotchas/db/b2b2b2b2.md").unlink()
    corpus.commit("retract(cleanup): kb/gotchas/db/b2b2b2b2.md", op="retract")
    corpus.write("kb/gotchas/db/e5e5e5e5.md", "---\ntype: [broken\n---\n# Broken\n")
    ix.update()
    conn = ix.connect(readonly=True)
    row = conn.execute("SELECT status, retracted_reason FROM facts WHERE path = ?",
                       ("kb/gotchas/db/b2b2b2b2.md",)).fetchone()
    assert tuple(row) == ("retracted", "retract(cleanup): kb/gotchas/db/b2b2b2b2.md")
    weight = conn.execute("SELECT evidence_weight_computed FROM facts WHERE path = ?",
                          ("kb/gotchas/db/d4d4d4d4.md",)).fetchone()[0]
    assert weight == pytest.approx(0.4 / 1.4)  # the retracted source no longer counts
    assert_incremental_equals_rebuild(corpus.root, tmp_path)


def test_working_tree_edit_with_restored_mtime_is_seen(corpus: Corpus, tmp_path: Path) -> None:
    ix = Indexer(corpus.root)
    ix.update()
    path = corpus.root / "kb/gotchas/db/a1a1a1a1.md"
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(b"0.8", b"0.9"))  # same size
    import os

    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    ix.update()
    conn = ix.connect(readonly=True)
    assert conn.execute("SELECT confidence FROM facts WHERE path = ?",
                        ("kb/gotchas/db/a1a1a1a1.md",)).fetchone()[0] == 0.9


@pytest.mark.parametrize("damage", ["truncate0", "truncate1k", "zero_header", "flip",
                                    "old_version"])
def test_damaged_index_is_moved_aside_and_rebuilt(corpus: Corpus, damage: str) -> None:
    ix = Indexer(corpus.root)
    ix.update()
    data = ix.path.read_bytes()
    if damage == "truncate0":
        ix.path.write_bytes(b"")
    elif damage == "truncate1k":
        ix.path.write_bytes(data[:1024])
    elif damage == "zero_header":
        ix.path.write_bytes(b"\0" * 100 + data[100:])
    elif damage == "flip":
        ix.path.write_bytes(data[:5000] + bytes(b ^ 0xFF for b in data[5000:5064]) + data[5064:])
    else:
        with sqlite3.connect(ix.path) as c:
            c.execute("PRAGMA user_version = 1")
    stats = ix.update()
    assert stats.facts == 3
    if damage != "flip":  # a flip in a free page is harmless and may go unnoticed
        assert stats.mode == "rebuild"
        assert list(ix.path.parent.glob("*.corrupt-*")) or damage == "old_version"


def test_a_foreign_database_at_the_index_path_is_left_alone(corpus: Corpus) -> None:
    """RELIABILITY F05: another program's SQLite file (its application_id not ours) keeps
    its name and bytes; the index goes to a name of its own beside it."""
    standard = Indexer(corpus.root).path
    standard.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(standard) as c:
        c.execute("PRAGMA application_id = 1234")
        c.execute("CREATE TABLE theirs (x)")
        c.execute("INSERT INTO theirs VALUES ('keep me')")
    before = standard.read_bytes()
    ix = Indexer(corpus.root)
    assert ix.path == standard.with_name(f"index.v{schema.SCHEMA_VERSION}.factdesk.db")
    assert ix.update().facts == 3
    assert standard.read_bytes() == before and not list(standard.parent.glob("*.corrupt-*"))
    assert main(["search", "pool", "--kb", str(corpus.root), "--format", "json"]) == 0


def test_an_index_of_another_version_is_never_touched(corpus: Corpus) -> None:
    """RELIABILITY F04: each schema version has a file of its own (`index.v{N}.db`), so an
    older app never destroys a newer app's index, nor this one an older app's: both keep
    their bytes while this version builds and updates its own."""
    folder = Indexer(corpus.root).path.parent
    folder.mkdir(parents=True, exist_ok=True)
    others = {}
    for version in (schema.SCHEMA_VERSION - 1, schema.SCHEMA_VERSION + 1):
        other = folder / f"index.v{version}.db"
        with sqlite3.connect(other) as c:
            c.execute(f"PRAGMA user_version = {version}")
            c.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
            c.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        others[other] = other.read_bytes()
    ix = Indexer(corpus.root)
    assert ix.path.name == f"index.v{schema.SCHEMA_VERSION}.db"
    assert ix.update(rebuild=True).facts == 3 and ix.update().mode == "unchanged"
    assert {p: p.read_bytes() for p in others} == others
    assert not list(folder.glob("*.corrupt-*"))


@pytest.mark.parametrize("app_id", [0, 0x46444B30])
def test_our_index_with_another_id_in_its_header_is_not_foreign(corpus: Corpus,
                                                                app_id: int) -> None:
    """A flipped byte in the id, or id 0 (a WAL-mode index before its first checkpoint):
    the file holds our tables, so it is ours, moved aside and rebuilt; never stranded."""
    ix = Indexer(corpus.root)
    ix.update()
    data = bytearray(ix.path.read_bytes())
    data[68:72] = app_id.to_bytes(4, "big")
    ix.path.write_bytes(bytes(data))
    again = Indexer(corpus.root)
    assert again.path == ix.path and not schema.is_foreign(ix.path)
    assert again.update().facts == 3


def test_index_lives_in_the_git_dir(corpus: Corpus) -> None:
    ix = Indexer(corpus.root)
    ix.update()
    assert ix.path.is_relative_to(corpus.root / ".git")
    assert "factdesk" not in git(corpus.root, "status", "--porcelain")


@pytest.fixture
def indexed(corpus: Corpus) -> sqlite3.Connection:
    ix = Indexer(corpus.root)
    ix.update()
    return ix.connect(readonly=True)


def test_search_filters_and_text(indexed: sqlite3.Connection) -> None:
    assert search(indexed, "migrations")[0].path == "kb/gotchas/db/b2b2b2b2.md"
    assert [h.path for h in search(indexed, "type:reference")] == ["kb/decisions/api/c3c3c3c3.md"]
    assert len(fact_ids(indexed, "confidence:<0.9 path:kb/gotchas")) == 2
    assert len(fact_ids(indexed, "-type:reference")) == 2
    assert search(indexed, "migr*")[0].path == "kb/gotchas/db/b2b2b2b2.md"
    # the frontmatter's names for the envelope fields filter as the short ones do (they
    # were read as plain text, and matched nothing)
    for alias, field in (("claim_type", "claim"), ("claimant_type", "claimant"),
                         ("claimant_agent_id", "claimant"), ("subject_kind", "subject")):
        for value in ("observation", "tool", "claude-code", "codebase", "reference"):
            assert fact_ids(indexed, f"{alias}:{value}") == fact_ids(indexed, f"{field}:{value}")
    assert fact_ids(indexed, "claim_type:observation")  # (not an empty match of empties)
    assert fact_ids(indexed, "entities:postgres") == fact_ids(indexed, "entity:postgres") != []
    assert fact_ids(indexed, "subject_ref:repo:x") == fact_ids(indexed, "subject:repo:x")
    assert fact_ids(indexed, "claimant_agent_id:claude-code")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80))
def test_search_never_raises_on_any_text(indexed: sqlite3.Connection, text: str) -> None:
    from factdesk.errors import QueryError

    try:
        search(indexed, text)
        fact_ids(indexed, text)
    except QueryError:
        pass  # a clear, user-facing message about a field filter


def test_deleting_a_cited_file_from_the_working_tree(corpus: Corpus, tmp_path: Path) -> None:
    corpus.fact("kb/gotchas/db/d4d4d4d4.md", title="Pool size bounds throughput",
                type="synthesis", refs="kb/gotchas/db/a1a1a1a1.md")
    corpus.commit("synthesize-review: distill", op="subsume")
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    (corpus.root / "kb/gotchas/db/a1a1a1a1.md").unlink()  # not committed
    assert ix.update().mode == "incremental"
    assert_incremental_equals_rebuild(corpus.root, tmp_path)


def test_working_tree_states_seen_through_git_status(corpus: Corpus, tmp_path: Path) -> None:
    """Untracked, modified-then-reverted and symlinked files, without any commit."""
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    corpus.fact("kb/gotchas/db/f6f6f6f6.md", title="Untracked draft from an agent")
    target = corpus.root / "kb/gotchas/db/a1a1a1a1.md"
    original = target.read_bytes()
    target.write_bytes(original.replace(b"0.8", b"0.3"))
    (corpus.root / "kb/gotchas/db/link.md").symlink_to("/etc/hostname")
    assert ix.update().mode == "incremental"
    assert_incremental_equals_rebuild(corpus.root, tmp_path)
    git(corpus.root, "checkout", "--", "kb/gotchas/db/a1a1a1a1.md")  # revert the edit
    (corpus.root / "kb/gotchas/db/link.md").unlink()
    ix.update()
    conn = ix.connect(readonly=True)
    assert conn.execute("SELECT confidence FROM facts WHERE path = ?",
                        ("kb/gotchas/db/a1a1a1a1.md",)).fetchone()[0] == 0.8
    assert not conn.execute("SELECT 1 FROM problems WHERE code = 'symlink'").fetchall()
    conn.close()
    assert_incremental_equals_rebuild(corpus.root, tmp_path)


def test_hinted_update_equals_rebuild(corpus: Corpus, tmp_path: Path) -> None:
    """After factdesk's own commit, `update(hint=paths)` skips git status but must still
    equal a rebuild (I1), dependents included."""
    from factdesk.curation import Curation

    corpus.fact("kb/decisions/api/d4d4d4d4.md", title="Synthesis of both", type="synthesis",
                refs="kb/gotchas/db/a1a1a1a1.md, kb/gotchas/db/b2b2b2b2.md")
    corpus.commit("learn: synthesis")
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    cur = Curation(ix, update_index=False)
    result = cur.relabel(["kb/gotchas/db/a1a1a1a1.md"], {"type": "hypothesis", "settle_by": "2027-01-01"},
                         "a guess")
    stats = ix.update(hint=result.paths_after)
    assert stats.mode == "incremental"
    hinted = dump(ix)
    fresh = Indexer(corpus.root, today=date(2026, 11, 30))
    fresh.update(rebuild=True)
    assert dump(fresh) == hinted
    # the synthesis now cites a hypothesis: its R1 finding came with the hinted update
    assert any(p[2] == "R1" for p in hinted["problems"] if p[0].endswith("d4d4d4d4.md"))
    result = cur.move({"kb/gotchas/db/b2b2b2b2.md": "kb/decisions/db/b2b2b2b2.md"}, "a decision")
    ix.update(hint=result.paths_touched)
    hinted = dump(ix)
    fresh.update(rebuild=True)
    assert dump(fresh) == hinted


def test_reset_and_rebase_are_incremental_and_equal_a_rebuild(corpus: Corpus, tmp_path: Path) -> None:
    """A branch moved back (git reset) or sideways (an amended commit) is updated in place,
    not rebuilt, and still equals a rebuild (I1)."""
    from factdesk.curation import Curation

    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    start = git(corpus.root, "rev-parse", "HEAD").strip()
    cur = Curation(ix)
    cur.relabel(["kb/gotchas/db/a1a1a1a1.md"], {"type": "pattern"}, "p")
    cur.retract(["kb/gotchas/db/b2b2b2b2.md"], "gone")
    git(corpus.root, "reset", "-q", "--hard", start)
    assert ix.update().mode == "incremental"
    assert_incremental_equals_rebuild(corpus.root, tmp_path)
    corpus.fact("kb/gotchas/db/e5e5e5e5.md", title="New")
    corpus.commit("learn: new")
    ix.update()
    (corpus.root / "kb/gotchas/db/e5e5e5e5.md").write_text(
        (corpus.root / "kb/gotchas/db/e5e5e5e5.md").read_text().replace("New", "Renamed"))
    git(corpus.root, "commit", "-q", "--amend", "-am", "learn: amended")
    assert ix.update().mode == "incremental"
    assert_incremental_equals_rebuild(corpus.root, tmp_path)


def test_concurrent_updaters_never_move_a_rebuild_aside(generated_corpus, copy_tree, tmp_path: Path) -> None:
    """A second process arriving while the first rebuilds waits for it; it must not take the
    half-built index (not yet marked complete) for damage and move it aside."""
    import subprocess
    import sys

    repo = copy_tree(generated_corpus[0], tmp_path / "kb")
    code = ("import sys; from pathlib import Path; from factdesk.index.indexer import Indexer; "
            "print(Indexer(Path(sys.argv[1])).update(rebuild=sys.argv[2] == 'rebuild').mode)")
    first = subprocess.Popen([sys.executable, "-c", code, str(repo), "rebuild"], stdout=subprocess.PIPE,
                             text=True)
    ix = Indexer(repo)
    deadline = time.monotonic() + 30
    while not ix.path.exists() and time.monotonic() < deadline:  # the rebuild has begun
        time.sleep(0.01)
    second = subprocess.run([sys.executable, "-c", code, str(repo), "update"], capture_output=True,
                            text=True, timeout=300)
    first.communicate(timeout=300)
    assert first.returncode == 0 and second.returncode == 0, second.stderr
    assert second.stdout.strip() in ("unchanged", "incremental")
    assert not list(ix.path.parent.glob("*.corrupt-*"))


def test_a_read_waits_for_another_updater_only_so_long(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Another factdesk process is updating (its update lock held): a search waited for it
    without a word, however long; now it answers from the index as it was after the busy
    timeout, saying so, and a check does not pass."""
    import fcntl

    monkeypatch.setattr(schema, "BUSY_TIMEOUT_MS", 300)  # (10 s in the product)
    ix = Indexer(corpus.root)
    ix.update()
    fd = os.open(ix.path.with_name(ix.path.name + ".lock"), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert main(["search", "Connection pool", "--kb", str(corpus.root)]) == 0
        out, err = capsys.readouterr()
        assert "a1a1a1a1.md" in out
        assert "another factdesk process has been updating the index for 0.3 s" in err
        assert main(["check", "--kb", str(corpus.root)]) == 1
        assert "were not checked" in capsys.readouterr().err
    finally:
        os.close(fd)
    assert main(["check", "--kb", str(corpus.root)]) == 0


def test_a_write_lock_held_by_another_program_is_waited_for_then_worded(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """RELIABILITY F08: another program holds the index's write lock past the busy
    timeout. An update says so and changes nothing (it raised sqlite3's bare "database is
    locked"); a search answers from the index as it was, saying that on stderr; nothing is
    taken for damage; once the lock goes, the next update catches up."""
    from factdesk.errors import IndexBusy

    monkeypatch.setattr(schema, "BUSY_TIMEOUT_MS", 300)  # (10 s in the product)
    ix = Indexer(corpus.root)
    ix.update()
    corpus.fact("kb/gotchas/db/d4d4d4d4.md", title="Quokkas arrived after the lock")
    holder = sqlite3.connect(ix.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(IndexBusy, match=r"held the index's write lock for 0\.3 s; nothing was"):
            ix.update()
        assert main(["index", "--kb", str(corpus.root)]) == 1
        assert "Error: " in capsys.readouterr().err
        assert main(["search", "Connection pool", "--kb", str(corpus.root)]) == 0
        out, err = capsys.readouterr()
        assert "kb/gotchas/db/a1a1a1a1.md" in out and "this is the index as it was" in err
        assert main(["search", "Quokkas", "--kb", str(corpus.root)]) == 0
        assert "0 results" in capsys.readouterr().out  # (the index as it was)
        # a check that could not bring the index up to date has not passed, even with
        # nothing wrong found in the index as it was (the pre-commit hook must stop)
        git(corpus.root, "add", "kb/gotchas/db/d4d4d4d4.md")
        assert main(["check", "--staged", "--kb", str(corpus.root)]) == 1
        assert "were not checked" in capsys.readouterr().err
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert ix.update().mode == "incremental"
    conn = ix.connect(readonly=True)
    try:
        assert [h.path for h in search(conn, "Quokkas")] == ["kb/gotchas/db/d4d4d4d4.md"]
    finally:
        conn.close()
    assert not list(ix.path.parent.glob("*.corrupt-*"))


def test_indexers_on_two_threads_share_one_rule_engine(corpus: Corpus, copy_tree, tmp_path: Path) -> None:
    """py_mini_racer crashes the process (SIGSEGV) when a second V8 context is made while one
    lives on another thread; indexers on the GUI's worker thread and the main thread must
    share one. Run in a child process so a crash is a failed test, not a dead session."""
    import subprocess
    import sys

    other = copy_tree(corpus.root, tmp_path / "other")
    code = (
        "import sys, threading; from pathlib import Path; from datetime import date\n"
        "from factdesk.index.indexer import Indexer\n"
        "a, b = Indexer(Path(sys.argv[1])), Indexer(Path(sys.argv[2]))\n"
        "for _ in range(3):\n"
        "    a.update(rebuild=True)\n"
        "    t = threading.Thread(target=lambda: b.update(rebuild=True)); t.start(); t.join()\n"
        "assert a._rule_engine() is b._rule_engine()\n"
        "print('ok')\n")
    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code, str(corpus.root), str(other)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def _fts_blocks(ix: Indexer) -> list[tuple[object, ...]]:
    conn = ix.connect(readonly=True)
    try:
        return [tuple(r) for r in conn.execute("SELECT id, block FROM facts_fts_data ORDER BY id")]
    finally:
        conn.close()


def test_a_change_that_keeps_the_words_leaves_the_full_text_index_alone(corpus: Corpus,
                                                                       tmp_path: Path) -> None:
    """A new confidence, a relabel, a settlement rewrite a fact's row, not its words: the
    full-text index is left as it is (its 'delete' and insert re-tokenized the body and
    FTS5 merged segments at the commit, 0.2 s of a 10-file commit at 100,000 facts); new
    words reach it and search finds them."""
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    before = _fts_blocks(ix)
    path = corpus.root / "kb/gotchas/db/a1a1a1a1.md"
    path.write_bytes(path.read_bytes().replace(b"confidence: 0.8", b"confidence: 0.4"))
    corpus.commit("update: Connection pool exhausts at 200 clients", op="update")
    assert ix.update().mode == "incremental"
    assert _fts_blocks(ix) == before
    path.write_bytes(path.read_bytes().replace(b"Body text", b"Zanzibar text"))
    corpus.commit("update: Connection pool exhausts at 200 clients", op="update")
    ix.update()
    assert _fts_blocks(ix) != before
    conn = ix.connect(readonly=True)
    assert [h.path for h in search(conn, "zanzibar")] == ["kb/gotchas/db/a1a1a1a1.md"]
    assert search(conn, "body") and "kb/gotchas/db/a1a1a1a1.md" not in [
        h.path for h in search(conn, "body")]
    conn.close()
    conn = ix.connect()
    conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('integrity-check')")
    conn.close()
    assert_incremental_equals_rebuild(corpus.root, tmp_path)


def test_an_index_with_the_earlier_update_trigger_gets_todays_in_place(corpus: Corpus) -> None:
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    old = ("CREATE TRIGGER facts_au AFTER UPDATE ON facts BEGIN\n"
           "  INSERT INTO facts_fts(facts_fts, rowid, title, body, domain, entities)\n"
           "  VALUES ('delete', old.id, old.title, old.body, old.domain, old.entities);\n"
           "  INSERT INTO facts_fts(rowid, title, body, domain, entities)\n"
           "  VALUES (new.id, new.title, new.body, new.domain, new.entities);\nEND")
    conn = ix.connect()
    conn.execute("DROP TRIGGER facts_au")
    conn.execute(old)
    conn.commit()
    conn.close()
    assert ix.update().mode == "unchanged"  # (not taken for damage: no rebuild)
    conn = ix.connect(readonly=True)
    now = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'facts_au'").fetchone()[0]
    conn.close()
    assert "WHEN old.id IS NOT new.id" in now


def test_a_look_that_finds_nothing_changed_reads_the_counts_kept_at_the_last_change(
        corpus: Corpus) -> None:
    """Counting the rows by status scans every row (27 ms at 100,000 facts): counted when
    rows change, kept in `meta`, read back by a look that found nothing; a kept value that
    is not ours is counted again."""
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    assert ix.update().facts == 3
    corpus.fact("kb/gotchas/db/d4d4d4d4.md", title="Pool size bounds throughput")
    corpus.commit("learn: Pool size bounds throughput")
    assert ix.update().facts == 4
    assert ix.update().facts == 4
    conn = ix.connect()
    conn.execute("UPDATE meta SET value = ? WHERE key = 'counts'", ('[{"live": 999}, 0]',))
    conn.commit()
    assert ix.update().facts == 999  # (kept: no scan)
    for junk in ("[1, 2]", "not json", '[{"live": 5}, "x"]'):
        conn.execute("UPDATE meta SET value = ? WHERE key = 'counts'", (junk,))
        conn.commit()
        assert ix.update().facts == 4
    conn.close()
    (corpus.root / "kb/gotchas/db/d4d4d4d4.md").unlink()
    corpus.commit("retract: kb/gotchas/db/d4d4d4d4.md", op="retract")
    stats = ix.update()
    assert (stats.facts, stats.retracted) == (3, 1)
    assert ix.update().retracted == 1
