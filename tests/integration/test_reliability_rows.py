"""RELIABILITY sections A, B and C through the command line: a corpus holding one bad
file per row beside good facts. `check` names each file with its code and line, the good
facts are all indexed and searchable, nothing hangs, and an update after the bad files
appeared equals a rebuild. (Each row's finer cases are in the unit tests: test_codec,
test_scan, test_rules.)"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.index.indexer import Indexer
from tests.conftest import Corpus

GOOD = "---\ntype: observation\nconfidence: 0.8\nsources: 1\n---\n# {title}\n\nBody.\n"

#: row → (path, bytes, the problem (code, line) expected at that path)
ROWS: dict[str, tuple[str, bytes, tuple[str, int]]] = {
    "A01": ("kb/bad/a01.md", b"---\ntype: observation\nconfidence: [0.8\n---\n# T\n",
            ("yaml_syntax", 4)),  # where libyaml finds the list unclosed
    "A09": ("kb/bad/a09.md", b"---\r\ntype: observation\r\n---\n# Mixed endings\n",
            ("line_endings", 1)),
    "A15": ("kb/bad/a15.md", b"+++\ntype = 'observation'\n+++\n# TOML fence\n",
            ("no_frontmatter", 1)),
    "A16": ("kb/bad/a16.md", b"---\njust a sentence\n---\n# Scalar frontmatter\n",
            ("frontmatter_not_mapping", 2)),
    "A18": ("kb/bad/a18.md",
            b"---\ntype: observation\n---\n# T\n<<<<<<<ours\na\n=======x\nb\n>>>>>>>theirs\n",
            ("conflict_markers", 5)),
    "A20": ("kb/bad/a20.md", b"---\ntype: observation\nnote: \"a\x00b\"\n---\n# NUL in YAML\n",
            ("yaml_syntax", 3)),
    "B07": ("kb/bad/b07.md", b"---\ntype: hypothesis\nsettle_by: 2024-02-30\n"
            b"settlement: p95 under 100 ms\n---\n# An impossible date\n", ("E1", 3)),
    "B07b": ("kb/bad/b07b.md", b"---\ntype: observation\nsources: 1\ncreated: 2024-02-30\n"
             b"---\n# An impossible date in a key knomit does not know\n", ("yaml_value", 4)),
    "B10": ("kb/bad/b10.md", b"---\ntype: observation\nrefs: [[kb/x.md]]\n---\n# Nested\n",
            ("refs_shape", 3)),
    "I8": ("kb/bad/i8.md", b"---\ntype: observation\nsources: 99999999999999999999999\n---\n"
           b"# More sources than an int64 holds\n", ("sources_range", 3)),  # crashed the index
    "B13": ("kb/bad/b13.md", b"---\ntype: observation\nsources: 1\nrefs: [kb/none/gone.md]\n"
            b"---\n# Dangling\n", ("ref-broken", 4)),
    "C01": ("kb/bad/c01.md", b"---\ntype: observation\nsources: 1\nrefs: ['../../etc/passwd']\n"
            b"---\n# Traversal\n", ("ref-traversal", 4)),
    "C02": ("kb/bad/c02.md", b"---\ntype: observation\nsources: 1\n"
            b"refs: ['C:\\\\Windows\\\\win.ini']\n---\n# Drive\n", ("ref-absolute", 4)),
    "C13": ("kb/bad/CON.md", GOOD.format(title="Reserved name").encode(),
            ("unportable_name", 1)),
}


def _problems(capsys: pytest.CaptureFixture[str], kb: Path) -> tuple[int, dict[str, set]]:
    code = main(["check", "--kb", str(kb), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    found: dict[str, set[tuple[str, int]]] = {}
    for p in out["errors"] + out["warnings"]:
        found.setdefault(p["path"], set()).add((p["code"], p["line"]))
    return code, found


def test_one_bad_file_per_row_never_stops_the_rest(corpus: Corpus, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    kb = corpus.root
    for i in range(5):
        corpus.write(f"kb/good/g{i}.md", GOOD.format(title=f"Good fact number {i}"))
    corpus.commit("learn: good facts")
    for _row, (path, data, _want) in ROWS.items():
        corpus.write(path, data)
    # files whose trouble is the file itself (C05–C07, C09, C10, C16)
    outside = tmp_path / "outside.md"
    outside.write_text(GOOD.format(title="Outside the corpus"))
    secrets = kb.parent / (kb.name + "-secrets")  # C04: a sibling sharing the repo's prefix
    secrets.mkdir()
    (secrets / "key.md").write_text(GOOD.format(title="A secret"))
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text(GOOD.format(title="Somewhere else entirely"))
    os.symlink(elsewhere, kb / "kb/bad/c05.md")  # C05: a link out of the repository
    os.symlink(secrets / "key.md", kb / "kb/bad/c04.md")
    os.symlink(kb / "kb/good/g0.md", kb / "kb/bad/c06.md")  # C06: to a fact inside
    os.symlink(kb / "kb", kb / "kb/bad/loop")  # C07: a folder link back up
    os.symlink("/", kb / "kb/bad/root")  # C07: and one out to the root
    os.link(outside, kb / "kb/bad/c09.md")
    for odd in ("-rf.md", "--upload-pack=x.md", "tab\tname.md"):  # C10: read as names
        corpus.write(f"kb/gotchas/odd/{odd}", GOOD.format(title=f"Odd name {odd!r}"))
    corpus.write("kb/nested/.git/HEAD", "ref: refs/heads/main\n")  # C16
    corpus.write("kb/nested/n1.md", GOOD.format(title="Inside a nested repository"))
    corpus.commit("learn: the bad files")

    code, found = _problems(capsys, kb)
    assert code == 1  # errors found, and said so by the exit code
    for row, (path, _data, want) in ROWS.items():
        assert want in found.get(path, set()), (row, path, found.get(path))
    for link, link_code in (("kb/bad/c05.md", "symlink_outside"),
                            ("kb/bad/c04.md", "symlink_outside"), ("kb/bad/c06.md", "symlink"),
                            ("kb/bad/loop", "symlink"), ("kb/bad/root", "symlink_outside")):
        assert found[link] == {(link_code, 1)}, link
    assert ("hardlink", 1) in found["kb/bad/c09.md"]
    assert ("nested_repo", 1) in found["kb/nested/"]
    assert {p: found[p] for p in found if p.startswith("kb/gotchas/odd/")} == {
        "kb/gotchas/odd/tab\tname.md": {("unportable_name", 1)}}  # (a control character)

    conn = Indexer(kb).connect(readonly=True)
    try:
        paths = {r[0] for r in conn.execute("SELECT path FROM facts WHERE status = 'live'")}
    finally:
        conn.close()
    assert {f"kb/good/g{i}.md" for i in range(5)} <= paths  # every good fact read
    assert {"kb/gotchas/odd/-rf.md", "kb/gotchas/odd/--upload-pack=x.md",
            "kb/gotchas/odd/tab\tname.md"} <= paths
    assert "kb/nested/n1.md" not in paths
    assert not paths & {"kb/bad/c04.md", "kb/bad/c05.md", "kb/bad/c06.md"}
    # nothing behind a link was read: no fact of theirs is listed or searchable
    for words in ("A secret", "Somewhere else entirely"):
        assert main(["search", words, "--kb", str(kb), "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["results"] == [], words
    assert main(["search", "Good fact number", "--kb", str(kb), "--format", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["results"]) == 5

    # the update that found them equals a rebuild
    assert main(["index", "--kb", str(kb), "--rebuild"]) == 0
    capsys.readouterr()
    assert _problems(capsys, kb) == (code, found)


def test_a_file_the_system_will_not_let_us_read_is_one_problem(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """C17: permission denied on one file (the suite runs as root, where `chmod 000` stops
    nothing, so the reader is made to refuse it): an `io_error` named by path, the fact
    listed as broken, the others indexed; readable again, it is read at the next update."""
    from factdesk.index import parsing as indexer

    kb = corpus.root
    for i in range(3):
        corpus.write(f"kb/gotchas/perm/g{i}.md", GOOD.format(title=f"Good fact number {i}"))
    corpus.commit("learn: good facts")
    real = indexer.read_fact_file

    def refuse(repo: str, rel: str):  # type: ignore[no-untyped-def]
        if rel == "kb/gotchas/perm/g1.md":
            raise PermissionError(13, "Permission denied")
        return real(repo, rel)

    monkeypatch.setattr(indexer, "read_fact_file", refuse)
    code, found = _problems(capsys, kb)
    mine = {p: f for p, f in found.items() if p.startswith("kb/gotchas/perm/")}
    assert code == 1 and mine == {"kb/gotchas/perm/g1.md": {("io_error", 1)}}
    conn = Indexer(kb).connect(readonly=True)
    try:
        rows = dict(conn.execute("SELECT path, status FROM facts "
                                 "WHERE path LIKE 'kb/gotchas/perm/%'").fetchall())
    finally:
        conn.close()
    assert rows == {"kb/gotchas/perm/g0.md": "live", "kb/gotchas/perm/g1.md": "broken",
                    "kb/gotchas/perm/g2.md": "live"}
    stats = Indexer(kb).update()  # tried again, still refused: nothing else to do
    assert (stats.mode, _problems(capsys, kb)[1].get("kb/gotchas/perm/g1.md")) == (
        "unchanged", {("io_error", 1)})
    corpus.write("kb/gotchas/perm/g2.md", GOOD.format(title="Good fact number 2, edited"))
    assert Indexer(kb).update().mode == "incremental"  # another file's update keeps it
    assert _problems(capsys, kb)[1].get("kb/gotchas/perm/g1.md") == {("io_error", 1)}
    monkeypatch.setattr(indexer, "read_fact_file", real)  # readable again: no change on disk
    code, found = _problems(capsys, kb)
    assert not any(p.startswith("kb/gotchas/perm/") for p in found)


def test_a_fact_with_bad_values_keeps_its_other_fields_in_the_index(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    """RELIABILITY B03, B10: listed as broken, with every error at its line, and the rest
    of the fact indexed (its type, domain and envelope filter and facet; the bad number is
    missing, not 0), yet never a fact to the rules or the queues, and never a citation."""
    from factdesk.index import search as search_mod
    from factdesk.index.rows import fact_from_row

    corpus.write("kb/gotchas/db/e5e5e5e5.md",
                 b"---\ntype: hypothesis\nconfidence: high\ndomain: [ops, quokka]\n"
                 b"refs: kb/gotchas/db/a1a1a1a1.md\nsettle_by: 2020-01-01\n---\n"
                 b"# Pools may run dry at night\n\nBody.\n")
    corpus.commit("learn: a hypothesis with bad values")
    code, found = _problems(capsys, corpus.root)
    assert code == 1
    assert found["kb/gotchas/db/e5e5e5e5.md"] == {("confidence_type", 3), ("refs_shape", 5)}
    conn = Indexer(corpus.root).connect(readonly=True)
    try:
        row = conn.execute("SELECT * FROM facts WHERE path = 'kb/gotchas/db/e5e5e5e5.md'").fetchone()
        assert (row["status"], row["type"], row["domain"], row["confidence"], row["settle_by"]) == (
            "broken", "hypothesis", '["ops", "quokka"]', None, "2020-01-01")
        assert [h.path for h in search_mod.search(conn, "domain:quokka")] == [
            "kb/gotchas/db/e5e5e5e5.md"]
        assert fact_from_row(row) is None  # what the rules and the queues read rows through
        assert conn.execute("SELECT COUNT(*) FROM refs WHERE src = 'kb/gotchas/db/e5e5e5e5.md'"
                            ).fetchone()[0] == 0
    finally:
        conn.close()


def test_a_broken_fact_retracted_stays_no_fact_to_the_rules(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    """A broken fact (bad values, the rest read) cited by another, then deleted: the update
    that follows an edit of the citing fact reads the retracted row as no fact, as the
    rebuild does (it came back as a fact, `ref-retracted` instead of `ref-broken`)."""
    corpus.write("kb/gotchas/db/e5e5e5e5.md", b"---\ntype: observation\nconfidence: 0.8\n"
                 b"sources: many\n---\n# Broken one\n\nBody.\n")
    corpus.fact("kb/gotchas/db/f6f6f6f6.md", title="Cites the broken one",
                refs="kb/gotchas/db/e5e5e5e5.md")
    corpus.commit("learn: a broken fact and one citing it")
    Indexer(corpus.root).update()
    (corpus.root / "kb/gotchas/db/e5e5e5e5.md").unlink()
    corpus.commit("retract: the broken one", op="retract")
    Indexer(corpus.root).update()
    corpus.fact("kb/gotchas/db/f6f6f6f6.md", title="Cites the broken one, edited",
                refs="kb/gotchas/db/e5e5e5e5.md")
    corpus.commit("update: the citing fact", op="update")
    Indexer(corpus.root).update()
    updated = _problems(capsys, corpus.root)
    assert ("ref-broken", 7) in updated[1]["kb/gotchas/db/f6f6f6f6.md"]
    assert main(["index", "--kb", str(corpus.root), "--rebuild"]) == 0
    capsys.readouterr()
    assert _problems(capsys, corpus.root) == updated
