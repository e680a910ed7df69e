"""RELIABILITY F03 (random byte flips anywhere in the index file: no command crashes, and each
ends with the answers of a fresh index) and F06 (the file stamp is a filter, the blob the
truth: a same-size edit with its mtime put back is seen)."""

from __future__ import annotations

import json
import os
import random
import sqlite3
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from factdesk.cli import main
from factdesk.index import schema
from factdesk.index.indexer import Indexer
from factdesk.index.search import search
from tests.conftest import Corpus, git
from tests.index.test_indexer import TABLES, assert_incremental_equals_rebuild

OPERATIONS = ("update", "rebuild", "check", "search", "show")
#: 50 seeded flip sets of each size, as RELIABILITY F03 asks, 10 for each entry point
SEEDS = 10
FLIPS = (1, 8, 64)
QUERIES = ("pool", "type:observation")
#: what reading a damaged file raises (sqlite3 reports text that is not UTF-8 either way)
DAMAGE = (sqlite3.DatabaseError, UnicodeDecodeError)


def _reads(conn: sqlite3.Connection) -> dict[str, Callable[[], list[tuple[Any, ...]]]]:
    def table(sql: str) -> list[tuple[Any, ...]]:
        cursor = conn.execute(sql)
        cols = [d[0] for d in cursor.description]
        keep = [i for i, c in enumerate(cols) if c != "mtime_ns"]
        return [tuple(r[i] for i in keep) for r in cursor]

    def found(query: str) -> list[tuple[Any, ...]]:
        return [tuple(h.as_dict().values()) for h in search(conn, query)]

    return {**{name: lambda sql=sql: table(sql) for name, sql in TABLES.items()},
            **{query: lambda query=query: found(query) for query in QUERIES}}


def tables(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """What `tests.index.test_indexer.dump` compares, plus what search answers."""
    return {name: read() for name, read in _reads(conn).items()}


def flipped(data: bytes, seed: int, count: int) -> bytes:
    """`count` random bytes anywhere in the file, each XORed with a random non-zero byte."""
    rng = random.Random(seed * 1000 + count)
    out = bytearray(data)
    for _ in range(count):
        out[rng.randrange(len(out))] ^= rng.randrange(1, 256)
    return bytes(out)


def silent(damaged: bytes, pristine: dict[str, list[tuple[Any, ...]]], scratch: Path, *,
           thorough: bool) -> bool:
    """Whether some flip changed values without a sign: a table or a search reads without
    error, yet not as from the intact file (a letter of a title, a digit of a time). For a
    command that runs `quick_check` (`thorough`), only when the file passes it. No check
    can find such a flip; for all others a command must end with a fresh index's answers."""
    scratch.write_bytes(damaged)
    conn = sqlite3.connect(f"file:{scratch}?immutable=1", uri=True)
    try:
        if thorough:
            try:
                return (conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
                        and tables(conn) != pristine)
            except DAMAGE:
                return False
        for name, read in _reads(conn).items():
            try:
                if read() != pristine[name]:
                    return True
            except DAMAGE:
                pass
        return False
    finally:
        conn.close()


def _searches(ix: Indexer) -> Any:
    return ix.read(lambda conn: [[h.as_dict() for h in search(conn, q)] for q in QUERIES])


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main([*args, "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out else captured.err


def operations(root: Path, capsys: pytest.CaptureFixture[str]
               ) -> dict[str, Callable[[], Any]]:
    """Every entry point that opens the index, each with what it answers."""
    kb = ("--kb", str(root))

    def update() -> Any:
        ix = Indexer(root)
        stats = ix.update()
        return stats.facts, stats.problems, _searches(ix)

    def rebuild() -> Any:
        ix = Indexer(root)
        stats = ix.update(rebuild=True)
        return stats.facts, stats.problems, _searches(ix)

    return {
        "update": update,
        "rebuild": rebuild,
        "check": lambda: _cli(capsys, "check", *kb),
        "search": lambda: [_cli(capsys, "search", q, *kb) for q in QUERIES],
        "show": lambda: _cli(capsys, "show", "c3c3c3c3", *kb),
    }


@pytest.mark.parametrize("op", OPERATIONS)
def test_random_byte_flips_never_crash_and_end_with_a_fresh_index(
        corpus: Corpus, tmp_path: Path, capsys: pytest.CaptureFixture[str], op: str) -> None:
    ix = Indexer(corpus.root)
    ix.update()
    intact = ix.path.read_bytes()
    run = operations(corpus.root, capsys)[op]
    expected = run()
    pristine = ix.read(tables)
    folder = ix.path.parent
    scratch = tmp_path / "scratch.db"
    first = OPERATIONS.index(op) * SEEDS
    for seed in range(first, first + SEEDS):
        for count in FLIPS:
            for old in folder.glob(ix.path.name + "*"):
                if old.suffix != ".lock":
                    old.unlink()
            damaged = flipped(intact, seed, count)
            ix.path.write_bytes(damaged)
            case = f"seed {seed}, {count} bytes"
            got = run()  # never raises
            # (a rebuild rewrites every value: no flip may survive it)
            if op != "rebuild" and silent(damaged, pristine, scratch, thorough=op == "check"):
                continue
            assert got == expected, case
            assert ix.read(tables) == pristine, case
            if op == "check":  # the Check command runs quick_check: no damage is left
                with sqlite3.connect(f"file:{ix.path}?mode=ro", uri=True) as conn:
                    assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok", case


def _damage(ix: Indexer, how: str) -> None:
    data = bytearray(ix.path.read_bytes())
    if how == "schema":  # a column renamed in the schema's SQL, which still parses
        old = b"settlement TEXT,"
        assert data.count(old) == 1
        data = bytearray(data.replace(old, b"settlemenx TEXT,"))
    else:  # a wrong fragment count in the header of a page no command here reads
        with sqlite3.connect(f"file:{ix.path}?mode=ro", uri=True) as conn:
            page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'changes_sha'"
                                ).fetchone()[0]
            size = conn.execute("PRAGMA page_size").fetchone()[0]
        at = (page - 1) * size + 7
        data[at] = (data[at] + 0x20) % 256
    for old_file in ix.path.parent.glob(ix.path.name + "-*"):
        old_file.unlink()
    ix.path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["schema", "fragments"])
def test_damage_the_reads_do_not_meet(corpus: Corpus, capsys: pytest.CaptureFixture[str],
                                      how: str) -> None:
    """A schema whose SQL was changed but still parses is damage, found when the index is
    opened; a page that only `quick_check` finds damaged is found by the Check command."""
    ix = Indexer(corpus.root)
    ix.update()
    ops = operations(corpus.root, capsys)
    expected = {op: ops[op]() for op in ("search", "show", "check")}
    for op in expected:
        _damage(ix, how)
        assert ops[op]() == expected[op], op
        moved = list(ix.path.parent.glob("*.corrupt-*"))
        assert moved if how == "schema" or op == "check" else not moved, op
        for old in moved:
            old.unlink()
    with sqlite3.connect(f"file:{ix.path}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"


@pytest.mark.parametrize("message", [
    "Could not decode to UTF-8 column 'folder' with text 'kb/gotch\ufffds/db'",
])
def test_text_that_is_not_utf8_is_damage_and_a_full_disk_is_not(message: str) -> None:
    assert schema.is_damage(sqlite3.OperationalError(message))
    assert schema.is_damage(UnicodeDecodeError("utf-8", b"\xa5", 0, 1, "invalid start byte"))
    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
    assert not schema.is_damage(full)
    assert not schema.is_damage(sqlite3.OperationalError("no such table: x"))


def _same_size_edit(path: Path, old: bytes, new: bytes) -> None:
    """Rewrite `path` with `old` replaced by `new` (same length), mtime put back exactly."""
    st = path.stat()
    data = path.read_bytes()
    assert len(old) == len(new) and old in data
    path.write_bytes(data.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size


def test_same_size_edit_with_its_mtime_put_back_is_seen(corpus: Corpus, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    today = date(2026, 11, 30)
    ix = Indexer(corpus.root, today=today)
    ix.update()
    rel = "kb/gotchas/db/a1a1a1a1.md"
    # in the working tree, not committed: git names it, its stamp matches the index's
    _same_size_edit(corpus.root / rel, b"confidence: 0.8", b"confidence: 0.2")
    assert rel in git(corpus.root, "status", "--porcelain")
    stats = ix.update()
    assert stats.mode == "incremental" and stats.changed == [rel]
    assert main(["show", "a1a1a1a1", "--kb", str(corpus.root), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["confidence"] == 0.2
    assert_incremental_equals_rebuild(corpus.root, tmp_path)
    # put back as committed (same size, same mtime again): clean for git, stale in the index
    ix.update()
    _same_size_edit(corpus.root / rel, b"confidence: 0.2", b"confidence: 0.8")
    assert ix.update().changed == [rel]
    assert_incremental_equals_rebuild(corpus.root, tmp_path)
    # the same kind of edit, committed (by another process) before the next update
    ix.update()
    _same_size_edit(corpus.root / rel, b"confidence: 0.8", b"confidence: 0.3")
    corpus.commit("learn: lower the confidence")
    assert ix.update().changed == [rel]
    assert_incremental_equals_rebuild(corpus.root, tmp_path)
    conn = ix.connect(readonly=True)
    assert conn.execute("SELECT confidence FROM facts WHERE path = ?", (rel,)).fetchone()[0] == 0.3
    conn.close()


def test_an_index_set_aside_is_said_on_stderr(corpus: Corpus,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # a damaged index was moved aside and rebuilt without a word
    ix = Indexer(corpus.root)
    ix.update()
    ix.path.write_bytes(b"not a database at all" * 100)
    assert main(["search", "pool", "--kb", str(corpus.root)]) == 0
    err = capsys.readouterr().err
    kept = list(ix.path.parent.glob("*.corrupt-*"))
    assert len(kept) == 1
    assert f"it was kept as {kept[0]} and rebuilt" in err
    assert main(["search", "pool", "--kb", str(corpus.root)]) == 0
    assert "warning" not in capsys.readouterr().err  # once
