"""scan / stat_paths / read_fact_file: what is wrong with a fact file as a file
(RELIABILITY C08, C09, C13, C16): reported once, named by path, and never a hang or a
file read from outside the corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from factdesk.corpus.scan import read_fact_file, scan, stat_paths
from factdesk.index.indexer import _parse_entry

FACT = b"---\ntype: observation\n---\n# A fact\n"


def _tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def _codes(problems) -> list[tuple[str, str]]:
    return sorted((p.path, p.code) for p in problems)


def test_a_nested_repository_is_reported_and_none_of_its_files_read(tmp_path: Path) -> None:
    repo = _tree(tmp_path, {"kb/a/one.md": FACT, "kb/nested/two.md": FACT,
                            "kb/nested/sub/three.md": FACT, "kb/nested/.git/HEAD": b"ref\n",
                            "kb/module/four.md": FACT, "kb/module/.git": b"gitdir: ../x\n"})
    entries, problems = scan(repo)
    assert [e.path for e in entries] == ["kb/a/one.md"]
    assert _codes(problems) == [("kb/module/", "nested_repo"), ("kb/nested/", "nested_repo")]
    # the incremental path (git names an untracked folder) sees the same
    entries, problems = stat_paths(repo, ["kb/nested/", "kb/a/one.md"])
    assert [e.path for e in entries] == ["kb/a/one.md"]
    assert _codes(problems) == [("kb/nested/", "nested_repo")]


@pytest.mark.parametrize("name", ["CON.md", "aux.md", "com1.notes.md", "co:lon.md",
                                  "back\\slash.md", "q?.md"])
def test_names_windows_cannot_check_out_are_warned(tmp_path: Path, name: str) -> None:
    repo = _tree(tmp_path, {f"kb/a/{name}": FACT, "kb/a/fine.md": FACT, "kb/dir./x.md": FACT})
    entries, problems = scan(repo)
    assert len(entries) == 3  # still read
    assert _codes(problems) == [(f"kb/a/{name}", "unportable_name"),
                                ("kb/dir./x.md", "unportable_name")]
    assert _codes(stat_paths(repo, [f"kb/a/{name}", "kb/a/fine.md"])[1]) == [
        (f"kb/a/{name}", "unportable_name")]


def test_a_hard_link_is_warned(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_bytes(FACT)
    repo = _tree(tmp_path / "repo", {"kb/a/plain.md": FACT})
    os.link(outside, repo / "kb/a/linked.md")
    entries, problems = scan(repo)
    assert len(entries) == 2
    assert _codes(problems) == [("kb/a/linked.md", "hardlink")]
    assert _codes(stat_paths(repo, ["kb/a/linked.md"])[1]) == [("kb/a/linked.md", "hardlink")]


def test_a_fifo_swapped_in_is_refused_without_waiting(tmp_path: Path) -> None:
    """C08: the reader opens without following links and without blocking, and reads
    only a regular file (a FIFO in place of a fact would otherwise hang the index)."""
    repo = _tree(tmp_path, {"kb/a/fact.md": FACT})
    os.mkfifo(repo / "kb/a/pipe.md")
    os.symlink(repo / "kb/a/fact.md", repo / "kb/a/link.md")
    with pytest.raises(OSError, match="not a regular file"):
        read_fact_file(str(repo), "kb/a/pipe.md")
    with pytest.raises(OSError):
        read_fact_file(str(repo), "kb/a/link.md")  # O_NOFOLLOW
    outcome = _parse_entry(str(repo), "kb/a/pipe.md")[0]
    assert [(p.code, p.line) for p in outcome.problems] == [("io_error", 1)]
    assert read_fact_file(str(repo), "kb/a/fact.md")[0] == FACT


def test_names_that_would_be_one_file_elsewhere_are_both_warned(tmp_path: Path) -> None:
    """C11, C12: both names are read (the index key is the name on disk), and each is
    warned; the incremental path, handed one of them, brings the other along."""
    nfc, nfd = "caf\u00e9.md", "cafe\u0301.md"
    repo = _tree(tmp_path, {f"kb/a/{nfc}": FACT, f"kb/a/{nfd}": FACT, "kb/a/Fact.md": FACT,
                            "kb/a/fact.md": FACT, "kb/a/other.md": FACT, "kb/b/fact.md": FACT})
    entries, problems = scan(repo)
    assert len(entries) == 6
    want = [("kb/a/Fact.md", "case_collision"), (f"kb/a/{nfd}", "unicode_collision"),
            (f"kb/a/{nfd}", "unicode_name"), (f"kb/a/{nfc}", "unicode_collision"),
            ("kb/a/fact.md", "case_collision")]
    assert _codes(problems) == sorted(want)
    entries, problems = stat_paths(repo, ["kb/a/Fact.md", f"kb/a/{nfc}"])
    assert sorted(e.path for e in entries) == sorted(
        ["kb/a/Fact.md", "kb/a/fact.md", f"kb/a/{nfc}", f"kb/a/{nfd}"])
    assert _codes(problems) == sorted(want)
    (repo / "kb/a/Fact.md").unlink()  # gone: its sibling is looked at again, now alone
    entries, problems = stat_paths(repo, ["kb/a/Fact.md"])
    assert [e.path for e in entries] == ["kb/a/fact.md"] and problems == []


def test_paths_whose_folders_differ_only_in_case_are_warned_too(tmp_path: Path) -> None:
    """C12 across folders: `kb/Topic/a.md` and `kb/topic/A.md` are one path on Windows or
    macOS (one would overwrite the other at checkout); files that only share a folder
    name's letters are not (`kb/Topic/b.md` beside `kb/topic/c.md` can both exist)."""
    repo = _tree(tmp_path, {"kb/Topic/x/a.md": FACT, "kb/topic/x/A.md": FACT,
                            "kb/TOPIC/X/a.md": FACT, "kb/Topic/x/b.md": FACT,
                            "kb/topic/x/c.md": FACT})
    group = ["kb/TOPIC/X/a.md", "kb/Topic/x/a.md", "kb/topic/x/A.md"]
    want = [(p, "case_collision") for p in group]
    entries, problems = scan(repo)
    assert len(entries) == 5 and _codes(problems) == want
    first = next(p for p in problems if p.path == "kb/Topic/x/a.md")
    assert "kb/TOPIC/X/a.md, kb/topic/x/A.md differs" in first.message  # names the others
    # the incremental path, handed one of them (or a folder), finds the same three
    for asked in (["kb/topic/x/A.md"], ["kb/TOPIC/"]):
        entries, problems = stat_paths(repo, asked)
        assert sorted(e.path for e in entries) == group and _codes(problems) == want
    (repo / "kb/topic/x/A.md").unlink()
    (repo / "kb/TOPIC/X/a.md").unlink()  # gone: the one left is looked at again, alone
    entries, problems = stat_paths(repo, ["kb/topic/x/A.md", "kb/TOPIC/X/a.md"])
    assert [e.path for e in entries] == ["kb/Topic/x/a.md"] and problems == []


def test_colliding_symlinks_are_each_reported_once(tmp_path: Path) -> None:
    """Two names that are one name elsewhere, both links (or a link beside a folder): each
    is looked at once (the twins used to hand each other back forever)."""
    repo = _tree(tmp_path, {"kb/a/target.md": FACT})
    os.symlink(repo / "kb/a/target.md", repo / "kb/a/X.md")
    os.symlink(repo / "kb/a/target.md", repo / "kb/a/x.md")
    (repo / "kb/a/Y.md").mkdir()
    os.symlink(repo / "kb/a/target.md", repo / "kb/a/y.md")
    entries, problems = stat_paths(repo, ["kb/a/X.md", "kb/a/y.md"])
    assert entries == []
    assert _codes(problems) == [("kb/a/X.md", "symlink"), ("kb/a/x.md", "symlink"),
                                ("kb/a/y.md", "symlink")]
