"""The streamed rebuild: same rows, problems and histories as the per-fact path it replaces."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from factdesk.corpus.codec import ParseOutcome
from factdesk.index import parsing, writing
from factdesk.index.history import all_histories, path_history
from factdesk.index.indexer import Indexer, IndexStats
from factdesk.index.locking import transaction as _transaction
from factdesk.index.search import search
from tests.conftest import Corpus, GeneratedCorpus
from tests.index.test_indexer import dump


def _histories_match(repo: Path) -> int:
    ix = Indexer(repo, today=date(2026, 11, 30))
    ix.update(rebuild=True)
    conn = ix.connect(readonly=True)
    try:
        bulk = all_histories(conn)
        paths = [r[0] for r in conn.execute("SELECT DISTINCT path FROM changes")]
        assert sorted(bulk) == sorted(paths)
        for path in paths:
            assert bulk[path] == path_history(conn, path), path
        return sum(1 for h in bulk.values() if h.deleted)
    finally:
        conn.close()


def test_all_histories_equal_path_history_on_a_generated_corpus(
        generated_corpus: GeneratedCorpus) -> None:
    repo, _ = generated_corpus
    assert _histories_match(repo) > 0  # retractions are among them


def test_all_histories_equal_path_history_on_the_real_corpus(real_corpus: Path) -> None:
    _histories_match(real_corpus)


def test_all_histories_of_a_side_branch_only_path(corpus: Corpus) -> None:
    """A path only ever written on a merged side branch: every commit counts, in order."""
    from tests.conftest import git

    git(corpus.root, "checkout", "-q", "-b", "side")
    corpus.fact("kb/gotchas/db/c9c9c9c9.md", title="From the side branch")
    corpus.commit("learn: side")
    git(corpus.root, "checkout", "-q", "-")
    git(corpus.root, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    _histories_match(corpus.root)


def _recheck_everything(ix: Indexer) -> None:
    """Re-read and re-check every file through the incremental path (`write_incremental`, one fact at a
    time with the rest looked up in the index) on top of a streamed rebuild."""
    conn = ix.connect()
    try:
        def work() -> IndexStats:
            paths = [r[0] for r in conn.execute(
                "SELECT path FROM facts WHERE status IN ('live', 'broken') ORDER BY path")]
            outcomes: dict[str, ParseOutcome] = {}
            files: dict[str, tuple[str, int, int]] = {}
            ix._parse_into(paths, outcomes, files)
            retracted = ix._retracted_paths(conn, set(outcomes))
            writing.write_incremental(conn, ix._rule_setting(), outcomes, files, retracted, [],
                                      rescanned=set())
            return IndexStats("recheck")
        _transaction(conn, work)
    finally:
        conn.close()


def test_streamed_rebuild_equals_checking_each_fact_again(
        generated_corpus: GeneratedCorpus, copy_tree: Callable[[Path, Path], Path],
        tmp_path: Path) -> None:
    repo = copy_tree(generated_corpus[0], tmp_path / "kb")
    ix = Indexer(repo, today=date(2026, 11, 30))
    ix.update(rebuild=True)
    streamed = dump(ix)
    assert any(p[2] == "H1" for p in streamed["problems"])  # hypotheses keep their prose
    assert any(r[streamed_col("evidence_weight_computed", ix)] is not None
               for r in streamed["facts"])
    _recheck_everything(ix)
    assert dump(ix) == streamed


def streamed_col(name: str, ix: Indexer) -> int:
    conn = ix.connect(readonly=True)
    cols = [d[1] for d in conn.execute("PRAGMA table_info(facts)") if d[1] not in ("id", "mtime_ns")]
    conn.close()
    return cols.index(name)


def test_full_text_index_after_a_rebuild_is_whole_and_merges_again(corpus: Corpus) -> None:
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update(rebuild=True)
    conn = ix.connect()
    try:
        conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('integrity-check')")
        automerge = conn.execute("SELECT v FROM facts_fts_config WHERE k = 'automerge'").fetchone()
        assert automerge is not None and automerge[0] == 4
        hits = search(conn, "pool")
        assert hits
    finally:
        conn.close()
    corpus.fact("kb/gotchas/db/e5e5e5e5.md", title="Zanzibarian pool sizing")
    corpus.commit("learn: new")
    assert ix.update().mode == "incremental"
    conn = ix.connect()
    try:
        conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('integrity-check')")
        row = conn.execute("SELECT f.path FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
                           "WHERE facts_fts MATCH 'zanzibarian'").fetchall()
        assert [r[0] for r in row] == ["kb/gotchas/db/e5e5e5e5.md"]
    finally:
        conn.close()


@pytest.mark.parametrize(("broken", "word"), [(b"---\ntype: [oops\n---\n# Broken\n", "broken"),
                                             (b"\xff\xfe quixotically bad", None)])
def test_a_broken_file_keeps_its_text_searchable_after_a_streamed_rebuild(
        corpus: Corpus, broken: bytes, word: str | None) -> None:
    """A file that fails to parse is indexed as broken; its text, when it decodes, is
    searchable (undecodable bytes have no text to index)."""
    corpus.write("kb/gotchas/db/e5e5e5e5.md", broken)
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update(rebuild=True)
    conn = sqlite3.connect(ix.path)
    row = conn.execute("SELECT id, status, errors FROM facts WHERE path = ?",
                       ("kb/gotchas/db/e5e5e5e5.md",)).fetchone()
    found = [r[0] for r in conn.execute("SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?",
                                        (word or "quixotically",))]
    conn.close()
    assert row[1] == "broken" and row[2] >= 1
    assert found == ([row[0]] if word else [])


def test_parallel_rebuild_equals_the_serial_one(
        real_corpus: Path, copy_tree: Callable[[Path, Path], Path],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parse workers (ontology rules included, results in order through a short
    window of chunks) give the same index as parsing in this process."""

    repo = copy_tree(real_corpus, tmp_path / "kb")
    serial = Indexer(repo, today=date(2026, 11, 30))
    serial.update(rebuild=True)
    expected = dump(serial)
    assert any(p[2] == "ontology-rule" for p in expected["problems"])
    monkeypatch.setattr(parsing, "PARALLEL_MIN", 10)
    monkeypatch.setattr(parsing, "CHUNK", 7)
    monkeypatch.setattr(parsing, "AHEAD", 3)
    parallel = Indexer(repo, today=date(2026, 11, 30))
    parallel.update(rebuild=True)
    assert dump(parallel) == expected


def test_a_failure_in_the_middle_of_a_streamed_rebuild_leaves_the_old_index(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows are streamed into SQLite while files are parsed, but still in one transaction:
    an error after some batches are in leaves the previous index whole and usable, and the
    next rebuild succeeds."""
    from factdesk.index import rebuild as indexer_module
    from tests.index.test_indexer import dump

    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update(rebuild=True)
    before = dump(ix)
    real = indexer_module.fact_row
    calls: list[int] = []

    def failing(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 3:  # after two rows went in
            raise RuntimeError("disk on fire")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(indexer_module, "fact_row", failing)
    with pytest.raises(RuntimeError, match="disk on fire"):
        Indexer(corpus.root, today=date(2026, 11, 30)).update(rebuild=True)
    assert len(calls) == 3
    assert dump(ix) == before  # the previous index, untouched
    monkeypatch.setattr(indexer_module, "fact_row", real)
    assert Indexer(corpus.root, today=date(2026, 11, 30)).update(rebuild=True).mode == "rebuild"
    assert dump(ix) == before


def _text_index(ix: Indexer) -> list[tuple[object, ...]]:
    """Every (term, path, column, offset) the full-text index holds, after FTS5's own
    integrity check (which reads every indexed row back against `facts`)."""
    conn = ix.connect()
    try:
        conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('integrity-check')")
        conn.execute("CREATE VIRTUAL TABLE temp.terms USING fts5vocab(main, facts_fts, instance)")
        return sorted(tuple(r) for r in conn.execute(
            "SELECT t.term, f.path, t.col, t.offset FROM temp.terms t JOIN facts f ON f.id = t.doc"))
    finally:
        conn.close()


def test_the_full_text_builder_process_gives_the_inline_index(
        generated_corpus: GeneratedCorpus, copy_tree: Callable[[Path, Path], Path],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large corpus's full-text index is built in a process of its own and copied in:
    term for term what the inline build gives, retracted facts included, and it takes
    incremental updates afterwards."""
    from tests.conftest import git

    repo = copy_tree(generated_corpus[0], tmp_path / "kb")
    inline = Indexer(repo, today=date(2026, 11, 30))
    inline.update(rebuild=True)
    expected = _text_index(inline)
    built = dump(inline)
    monkeypatch.setattr(parsing, "PARALLEL_MIN", 10)
    builder = Indexer(repo, today=date(2026, 11, 30))
    stats = builder.update(rebuild=True)
    assert "full-text index: wait for its builder, copy it in" in stats.phases
    assert stats.retracted > 0
    assert _text_index(builder) == expected
    assert dump(builder) == built
    assert not list(builder.path.parent.glob("*.text-build*"))  # the scratch file is gone
    victim = next(p for p in sorted((repo / "kb").rglob("*.md"))
                  if b"zanzibarian" not in p.read_bytes())
    victim.write_bytes(victim.read_bytes() + b"\nA zanzibarian footnote.\n")
    git(repo, "commit", "-qam", "learn: footnote")
    assert builder.update().mode == "incremental"
    conn = builder.connect()
    try:
        conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('integrity-check')")
        hits = [r[0] for r in conn.execute(
            "SELECT f.path FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
            "WHERE facts_fts MATCH 'zanzibarian'")]
    finally:
        conn.close()
    assert hits == [victim.relative_to(repo).as_posix()]


def test_a_failed_full_text_builder_fails_the_rebuild_and_leaves_the_old_index(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    from factdesk.index import textbuild

    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update(rebuild=True)
    before = dump(ix)
    monkeypatch.setattr(parsing, "PARALLEL_MIN", 1)
    # a full-text definition the builder process cannot create
    monkeypatch.setattr(textbuild.schema, "FULL_TEXT", "CREATE VIRTUAL TABLE x USING nosuch()")
    with pytest.raises(textbuild.TextBuildError, match="no such module: nosuch"):
        Indexer(corpus.root, today=date(2026, 11, 30)).update(rebuild=True)
    assert dump(ix) == before
    assert not list(ix.path.parent.glob("*.text-build*"))


def test_the_history_read_beside_other_work_equals_reading_it_at_once(corpus: Corpus) -> None:
    """`PendingLog` starts git's two passes and is read later; a bad range is git's error."""
    from factdesk.corpus import gitrepo

    pending = gitrepo.PendingLog(corpus.root)
    corpus.fact("kb/gotchas/db/f6f6f6f6.md", title="Written while git was reading")
    corpus.commit("learn: later")  # not in the pending pass, which began before it
    later = gitrepo.log(corpus.root)
    early = pending.commits()
    assert [c.sha for c in early] == [c.sha for c in later[1:]]
    assert [c.changes for c in early] == [c.changes for c in later[1:]]
    assert all(c.first_parent for c in early)
    with pytest.raises(gitrepo.GitError, match="git log failed"):
        gitrepo.PendingLog(corpus.root, "no-such-branch").commits()


def _helper_processes() -> set[tuple[int, str]]:
    """This process's live descendants but multiprocessing's long-lived servers: parse
    workers, the full-text builder, git."""
    found: set[tuple[int, str]] = set()
    pending = [os.getpid()]
    while pending:
        pid = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children") as fh:
                    kids = [int(k) for k in fh.read().split()]
            except OSError:
                continue
            for kid in kids:
                pending.append(kid)
                try:
                    with open(f"/proc/{kid}/cmdline") as fh:
                        cmd = fh.read().replace("\0", " ").strip()
                except OSError:
                    continue
                if cmd and not any(f"multiprocessing.{server}" in cmd  # (empty: a zombie)
                                   for server in ("forkserver", "resource_tracker")):
                    found.add((kid, cmd))
    return found


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_a_failure_mid_way_through_a_parallel_rebuild_stops_its_helpers(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the parse workers and the full-text builder running, a failure part-way leaves
    the old index, no scratch file, and a next rebuild that succeeds."""
    from factdesk.index import rebuild as indexer_module

    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update(rebuild=True)
    before = dump(ix)
    monkeypatch.setattr(parsing, "PARALLEL_MIN", 1)
    monkeypatch.setattr(parsing, "CHUNK", 2)
    real = indexer_module.fact_row
    calls: list[int] = []

    def failing(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 3:  # two rows in, the workers and the builder running
            raise RuntimeError("disk on fire")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(indexer_module, "fact_row", failing)
    helpers_before = _helper_processes()
    with pytest.raises(RuntimeError, match="disk on fire"):
        Indexer(corpus.root, today=date(2026, 11, 30)).update(rebuild=True)
    assert _helper_processes() - helpers_before == set()  # workers, builder, git: stopped
    assert dump(ix) == before
    assert not list(ix.path.parent.glob("*.text-build*"))
    monkeypatch.setattr(indexer_module, "fact_row", real)
    stats = Indexer(corpus.root, today=date(2026, 11, 30)).update(rebuild=True)
    assert "full-text index: wait for its builder, copy it in" in stats.phases
    assert dump(ix) == before


def test_a_first_index_is_written_without_a_journal_then_kept_in_wal_mode(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first index of a corpus is built into a file nobody can be reading (no journal),
    then switched to WAL; when that build fails, the partial file is removed, not left to be
    taken for a damaged index."""
    from factdesk.index import rebuild as indexer_module
    from factdesk.index import schema

    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    real = indexer_module.fact_row
    calls: list[int] = []

    def failing(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("disk on fire")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(indexer_module, "fact_row", failing)
    with pytest.raises(RuntimeError, match="disk on fire"):
        ix.update()
    assert schema.is_absent(ix.path)
    assert not list(ix.path.parent.glob("*.corrupt-*"))
    monkeypatch.setattr(indexer_module, "fact_row", real)
    assert ix.update().mode == "rebuild"
    conn = sqlite3.connect(ix.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    assert schema.is_usable(ix.path, thorough=True)
    assert ix.update().mode in ("unchanged", "incremental")


def test_first_parent_changes_in_memory_answer_what_the_changes_table_does(
        generated_corpus: GeneratedCorpus) -> None:
    """The rules' thread reads history from memory; every 5th path at every 7th commit, and
    the commits' sequence numbers, agree with `history.blob_at` and the `commits` table."""
    _first_parent_agrees(generated_corpus[0], path_step=5, seq_step=7)


def test_first_parent_changes_agree_over_merges_and_deletions(real_corpus: Path) -> None:
    """The real corpus has merged side branches and retracted facts: every path at every
    commit."""
    _first_parent_agrees(real_corpus, path_step=1, seq_step=1)


def _first_parent_agrees(repo: Path, *, path_step: int, seq_step: int) -> None:
    from factdesk.corpus import gitrepo
    from factdesk.index.history import FirstParentChanges, blob_at

    ix = Indexer(repo, today=date(2026, 11, 30))
    ix.update(rebuild=True)
    memory = FirstParentChanges.of(gitrepo.log(repo), "kb")
    conn = ix.connect(readonly=True)
    try:
        seqs = dict(conn.execute("SELECT sha, seq FROM commits").fetchall())
        assert memory.seq == seqs
        paths = [r[0] for r in conn.execute("SELECT DISTINCT path FROM changes")]
        checked = 0
        assert conn.execute("SELECT count(*) FROM commits WHERE first_parent = 0").fetchone()[0] \
            or path_step > 1  # the real corpus has side-branch commits
        for seq in range(0, max(seqs.values()) + 1, seq_step):
            for path in paths[::path_step]:
                assert memory.blob_at(path, seq) == blob_at(conn, path, seq), (path, seq)
                checked += memory.blob_at(path, seq) is not None
        assert checked > 100
        assert memory.blob_at("kb/no/such/fact.md", 10) is None
    finally:
        conn.close()


@pytest.mark.parametrize("builder", [False, True], ids=["inline", "builder-process"])
def test_the_first_updates_after_a_rebuild_do_not_rewrite_the_full_text_index(
        generated_corpus: GeneratedCorpus, copy_tree: Callable[[Path, Path], Path],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, builder: bool) -> None:
    """The rebuild's merged full-text segment sits above level 0, so the small segments the
    next updates write are merged without it (a single segment left on level 0 was pulled
    into the first update's merge: the whole index rewritten, 1 s at 10,000 facts)."""
    from factdesk.index import rebuild as indexer_module
    from tests.conftest import git

    repo = copy_tree(generated_corpus[0], tmp_path / "kb")
    monkeypatch.setattr(indexer_module, "BATCH", 100)
    monkeypatch.setattr(parsing, "PARALLEL_MIN", 1 if builder else 10**9)
    ix = Indexer(repo, today=date(2026, 11, 30))
    ix.update(rebuild=True)

    def biggest_segment() -> tuple[int, int]:
        """(segment id, pages) of the largest segment (FTS5 rowids: segment id << 37)."""
        conn = sqlite3.connect(ix.path)
        try:
            return conn.execute("SELECT id >> 37, count(*) FROM facts_fts_data WHERE id >> 37 > 0 "
                                "GROUP BY 1 ORDER BY 2 DESC LIMIT 1").fetchone()
        finally:
            conn.close()

    merged = biggest_segment()
    assert merged[1] > 50
    files = sorted((repo / "kb").rglob("*.md"))
    for n in range(3):
        for path in files[n * 10 : n * 10 + 10]:
            path.write_bytes(path.read_bytes() + f"\nedit {n}\n".encode())
        git(repo, "commit", "-qam", f"edit {n}")
        assert ix.update().mode == "incremental"
        assert biggest_segment() == merged


def test_a_reader_during_a_first_build_finds_no_index_and_does_not_block_it(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first index is built under a name of its own: a reader looking meanwhile (the
    app starting, another command) finds no index at once instead of waiting on a file
    locked by a build without a journal, and holding a read transaction on the index path
    does not stop the build from landing."""
    from factdesk.index import rebuild as indexer_module
    from factdesk.index import schema

    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    seen: list[tuple[bool, float, bool]] = []
    real = schema.create_indexes

    def look_meanwhile(conn: sqlite3.Connection) -> None:
        started = time.perf_counter()
        usable = schema.is_usable(ix.path)
        seen.append((usable, time.perf_counter() - started, ix.path.exists()))
        real(conn)

    monkeypatch.setattr(indexer_module.schema, "create_indexes", look_meanwhile)
    assert ix.update().mode == "rebuild"
    assert seen == [(False, pytest.approx(0, abs=1.0), False)]
    assert not list(ix.path.parent.glob("*.building*"))
    conn = sqlite3.connect(ix.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()
    assert schema.is_usable(ix.path, thorough=True)


def test_leftovers_of_a_killed_rebuild_are_removed_by_the_next_update(corpus: Corpus) -> None:
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update(rebuild=True)
    for name in (".text-build", ".building", ".building-wal"):
        ix.path.with_name(ix.path.name + name).write_bytes(b"half a build")
    assert ix.update().mode in ("unchanged", "incremental")
    assert sorted(p.name for p in ix.path.parent.iterdir()
                  if ".text-build" in p.name or ".building" in p.name) == []


def test_a_database_error_that_is_not_damage_leaves_the_index_in_place(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk (or a lock, an I/O error) during a rebuild fails it and keeps the old
    index; only a damaged file is moved aside and rebuilt."""
    from factdesk.index import rebuild as indexer_module

    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update(rebuild=True)
    before = dump(ix)

    def disk_full(conn: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(indexer_module.schema, "create_indexes", disk_full)
    from factdesk.errors import IndexDiskFull

    with pytest.raises(IndexDiskFull, match="is full"):  # (in words: issue 22 #10)
        ix.update(rebuild=True)
    assert not list(ix.path.parent.glob("*.corrupt-*"))
    assert dump(ix) == before
