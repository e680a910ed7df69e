"""Issue 15 #10: a flipped bit in a stored value of the index is never served. Each `facts`
row carries checksums of its values (index.rows.SUM_GROUPS); `show`, search, the table's
page reader and the inspector's reads verify the rows they serve and repair a failing row
from the corpus before answering; `check` verifies every row and compares the secondary
indexes with the rows (`PRAGMA integrity_check(facts)`). Afterwards the index equals a
rebuild (I1)."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from factdesk.cli import main
from factdesk.index import schema
from factdesk.index.indexer import Indexer
from factdesk.index.rows import SUM_GROUPS, checksum, damaged_ids
from factdesk.index.search import get_fact_row, search, table_rows
from tests.conftest import Corpus
from tests.index.test_indexer import dump

FACT = "kb/decisions/api/c3c3c3c3.md"
#: a title no other fact shares: its bytes are in the row, the title sort index and the
#: full-text table (as tokens)
TITLE = "Rate limit is 100 requests per minute"
#: its id (ids follow the paths' order in a rebuild)
FACT_ID = 1


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main([*args, "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out else None


def _table(ix: Indexer) -> dict[str, dict[str, Any]]:
    """Every row as the fact table's page reader serves it (through `Indexer.read`), by
    path, without its id (a row repaired in place under a new id is the same row)."""
    def page(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
        ids = [r[0] for r in conn.execute("SELECT id FROM facts")]
        return {r["path"]: {k: r[k] for k in r.keys() if k != "id"}
                for r in table_rows(conn, ids).values()}
    return ix.read(page)


def _flip_bit(data: bytes, at: int, bit: int = 0x04) -> bytes:
    out = bytearray(data)
    out[at] ^= bit
    return bytes(out)


def _occurrences(data: bytes, needle: bytes) -> list[int]:
    found, at = [], data.find(needle)
    while at != -1:
        found.append(at)
        at = data.find(needle, at + 1)
    return found


def _fresh(ix: Indexer) -> None:
    for old in ix.path.parent.glob(ix.path.name + "*"):
        if old.suffix != ".lock":
            old.unlink()


def _served(capsys: pytest.CaptureFixture[str], ix: Indexer, op: str) -> Any:
    kb = ("--kb", str(ix.repo))
    if op == "show":  # (without the id: a row repaired in place may get a new one)
        code, shown = _cli(capsys, "show", "c3c3c3c3", *kb)
        return code, {k: v for k, v in (shown or {}).items() if k != "id"}
    if op == "search":
        return [_cli(capsys, "search", q, *kb) for q in ("type:reference", "rate limit")]
    if op == "table":
        return _table(ix)
    if op == "inspector":  # the inspector reads its fact by id with get_fact_row
        def inspect(conn: sqlite3.Connection) -> dict[str, Any]:
            row = get_fact_row(conn, str(FACT_ID))  # (the id the table's list held)
            return {k: row[k] for k in row.keys() if k != "id"} if row else {}
        return ix.read(inspect)
    assert op == "check"
    return _cli(capsys, "check", *kb)


OPS = ("show", "search", "table", "inspector", "check")


def test_every_row_of_a_fresh_index_passes_its_checksums(corpus: Corpus) -> None:
    ix = Indexer(corpus.root)
    ix.update()
    assert ix.read(damaged_ids) == []
    # (every value column is covered but the file stamp)
    covered = {c for cols in SUM_GROUPS.values() for c in cols}
    conn = ix.connect(readonly=True)
    cols = [r[1] for r in conn.execute("PRAGMA table_info(facts)")]
    conn.close()
    assert set(cols) - covered == {"id", "size", "mtime_ns", *SUM_GROUPS}
    # canonical: a whole float and an int, an enum and its string, sum alike
    assert checksum((1.0, "a")) == checksum((1, "a")) != checksum((1.5, "a"))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("needle", [b"reference", TITLE.encode(), b"c3c3c3c3.md"])
def test_a_flipped_bit_in_a_stored_value_is_never_served(
        corpus: Corpus, capsys: pytest.CaptureFixture[str], op: str, needle: bytes) -> None:
    """Each place the value's bytes are stored in the file (the row; an index entry), one
    bit flipped: the reads never serve the flipped value, and `check` then leaves an
    index equal to a rebuild."""
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    expected = _served(capsys, ix, op)
    pristine = dump(ix)
    intact = ix.path.read_bytes()
    places = _occurrences(intact, needle)
    assert places, needle
    flipped_text = _flip_bit(needle, 1).decode()
    for at in places:
        _fresh(ix)
        ix.path.write_bytes(_flip_bit(intact, at + 1))
        got = _served(capsys, ix, op)
        assert flipped_text not in json.dumps(got, default=str), (at, got)
        if op == "inspector":  # (a flipped path repaired in place: the row has a new id,
            assert got in (expected, {}), at  # and the old one shows nothing)
        elif op != "search":
            assert got == expected, at
        _cli(capsys, "check", "--kb", str(corpus.root))
        assert dump(Indexer(corpus.root, today=date(2026, 11, 30))) == pristine, at
        assert ix.read(damaged_ids) == []


def test_a_flipped_type_is_repaired_in_place_and_a_flipped_title_by_a_rebuild(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    """The repair is local (the row re-read from its file) when the row's full-text values
    hold; a flipped title (in the full-text table's columns) sets the file aside."""
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    pristine = dump(ix)
    intact = ix.path.read_bytes()
    for at in _occurrences(intact, b"reference"):
        _fresh(ix)
        ix.path.write_bytes(_flip_bit(intact, at + 1))
        probe = sqlite3.connect(f"file:{ix.path}?immutable=1", uri=True)
        stored = probe.execute("SELECT type FROM facts WHERE path = ?", (FACT,)).fetchone()[0]
        probe.close()
        if stored == "reference":
            continue  # an index entry's copy: the row reads intact
        assert stored == "raference"
        kept_before = set(ix.path.parent.glob("*.corrupt-*"))
        code, shown = _cli(capsys, "show", FACT, "--kb", str(corpus.root))
        assert code == 0 and shown["type"] == "reference"
        assert set(ix.path.parent.glob("*.corrupt-*")) == kept_before  # repaired in place
        assert dump(ix) == pristine
        break
    else:
        pytest.fail("the row's copy of the type was not found")


FLIP_SEEDS = 24
FLIP_SIZES = (1, 4)


def _flipped(data: bytes, seed: int, count: int) -> bytes:
    """RELIABILITY §3.9's flip(seed, nbytes): `count` random bytes anywhere in the file,
    each XORed with a random non-zero byte."""
    rng = random.Random(seed * 1000 + count)
    out = bytearray(data)
    for _ in range(count):
        out[rng.randrange(len(out))] ^= rng.randrange(1, 256)
    return bytes(out)


@pytest.mark.parametrize("op", ("show", "table", "search", "check"))
def test_random_flips_never_serve_a_changed_row(
        corpus: Corpus, capsys: pytest.CaptureFixture[str], op: str) -> None:
    """flip(seed, nbytes) over 24 seeds: `show` and the table's reader answer as from the
    intact index (a row failing its checksums is repaired first); search serves no hit
    whose fields differ from the intact index's (a flip in a secondary index or the
    full-text table can still change which facts a filter finds: see docs/reliability.md);
    `check` ends with the intact index's tables."""
    ix = Indexer(corpus.root, today=date(2026, 11, 30))
    ix.update()
    expected = _served(capsys, ix, op)
    pristine = dump(ix)
    table = _table(ix)
    intact = ix.path.read_bytes()
    for seed in range(FLIP_SEEDS):
        for count in FLIP_SIZES:
            case = f"seed {seed}, {count} bytes"
            _fresh(ix)
            ix.path.write_bytes(_flipped(intact, seed, count))
            got = _served(capsys, ix, op)
            if op == "search":
                for _code, answer in got:
                    for hit in (answer or {}).get("results", []):
                        row = table.get(hit["path"])
                        assert row is not None, case
                        assert (hit["title"], hit["type"]) == (row["title"], row["type"]), case
            else:
                assert got == expected, case
            if op == "check":
                assert dump(ix) == pristine, case
                with sqlite3.connect(f"file:{ix.path}?mode=ro", uri=True) as conn:
                    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok", case


def test_row_damage_is_index_damage() -> None:
    exc = schema.RowDamaged([3])
    assert schema.is_damage(exc) and "3" in str(exc)
