"""scan / stat_paths / read_fact_file: what is wrong with a fact file as a file
(RELIABILITY C07, C08, C09, C11–C17): reported once, named by path, and never a hang or a
file read from outside the corpus."""

from __future__ import annotations

import os
import subprocess
import sys
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


def test_a_name_of_255_bytes_is_read_and_a_path_past_path_max_is_one_problem(
        tmp_path: Path) -> None:
    """C14: the longest name a file system allows is an ordinary fact; a folder chain
    deeper than PATH_MAX (4,096 bytes) cannot be opened by path: one `io_error` on the
    folder where the path got too long, in words without the 4 KB path, and the rest read."""
    long_name = "n" * 252 + ".md"  # 255 bytes
    repo = _tree(tmp_path, {"kb/a/good.md": FACT, f"kb/a/{long_name}": FACT})
    segment = "d" * 250
    fd = os.open(repo / "kb", os.O_RDONLY)
    for _ in range(20):  # 20 × 251 bytes: built through directory handles, as no path can
        os.mkdir(segment, dir_fd=fd)
        inner = os.open(segment, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    deep = os.open("deep.md", os.O_WRONLY | os.O_CREAT, dir_fd=fd)
    os.write(deep, FACT)
    os.close(deep)
    os.close(fd)
    entries, problems = scan(repo)
    assert [e.path for e in entries] == ["kb/a/good.md", f"kb/a/{long_name}"]
    [problem] = problems
    assert problem.code == "io_error" and problem.path.startswith("kb/" + segment + "/")
    assert problem.path.endswith("/") and len(problem.path) > 4096 - len(str(repo))
    assert problem.message == "cannot read this folder: File name too long (errno 36)"
    # the update, handed that folder again, reports it again (it cannot be looked at)
    assert stat_paths(repo, [problem.path]) == ([], [problem])
    assert _parse_entry(str(repo), f"kb/a/{long_name}")[0].fact is not None


def test_files_that_are_not_facts_are_never_listed(tmp_path: Path) -> None:
    """C15: images, editor and OS litter, and factdesk's own temporary files (also one
    left by a write killed after writing it, crash point `write.tmp_written`) are not
    fact files: not listed by a scan or by the update's look at git's paths."""
    junk = ["kb/a/diagram.png", "kb/a/.DS_Store", "kb/a/.fact.md.swp", "kb/a/fact.md~",
            "kb/a/notes.markdown", "kb/a/.hidden.md", "kb/.drafts/x.md", "kb/a/.factdesk-tmp-0a1b2c"]
    repo = _tree(tmp_path, {"kb/a/fact.md": FACT, **dict.fromkeys(junk, FACT)})
    killed = subprocess.run(
        [sys.executable, "-c", "import sys; from pathlib import Path; "
         "from factdesk.fsio import atomic_write; atomic_write(Path(sys.argv[1]), b'new')",
         str(repo / "kb/a/fact.md")],
        env={**os.environ, "FACTDESK_CRASH_AT": "write.tmp_written"}, check=False)
    assert killed.returncode == -9  # SIGKILL at the crash point, the temporary file left
    left = [p.name for p in (repo / "kb/a").iterdir() if p.name.startswith(".factdesk-tmp-")]
    assert len(left) == 2
    entries, problems = scan(repo)
    assert [e.path for e in entries] == ["kb/a/fact.md"] and problems == []
    asked = [*junk, *(f"kb/a/{name}" for name in left), "kb/a/fact.md"]
    entries, problems = stat_paths(repo, asked)
    assert [e.path for e in entries] == ["kb/a/fact.md"] and problems == []
    assert (repo / "kb/a/fact.md").read_bytes() == FACT  # the killed write changed nothing


def test_nothing_behind_a_linked_folder_is_listed_whoever_names_it(tmp_path: Path) -> None:
    """C05, C07: a folder replaced by a link to one outside the repository. The update is
    handed the paths git names (the files the folder had, the link, a folder once dirty):
    it reports the link, as a rebuild's walk does, and lists nothing behind it; a linked
    corpus root is not the repository's either."""
    outside = _tree(tmp_path / "outside", {"fact.md": FACT, "deeper/two.md": FACT})
    repo = _tree(tmp_path / "repo", {"kb/a/one.md": FACT})
    os.symlink(outside, repo / "kb/x")
    want = [("kb/x", "symlink_outside")]
    entries, problems = scan(repo)
    assert [e.path for e in entries] == ["kb/a/one.md"] and _codes(problems) == want
    for asked in (["kb/x/fact.md"], ["kb/x"], ["kb/x/"], ["kb/x/deeper/two.md", "kb/x/"]):
        entries, problems = stat_paths(repo, asked)
        assert (entries, _codes(problems)) == ([], want), asked
    os.symlink(repo / "kb/a", repo / "kb/y")  # inside the repository: a plain `symlink`
    entries, problems = stat_paths(repo, ["kb/y/one.md"])
    assert (entries, _codes(problems)) == ([], [("kb/y", "symlink")])
    elsewhere = _tree(tmp_path / "elsewhere", {"kb/a/one.md": FACT})
    (elsewhere / "kb-link").symlink_to(repo / "kb")  # the whole root a link
    entries, problems = scan(elsewhere, "kb-link")
    assert entries == [] and _codes(problems) == [("kb-link", "symlink_outside")]


def test_a_twin_search_never_looks_behind_a_link_or_into_a_nested_repository(
        tmp_path: Path) -> None:
    """C05, C12, C16 together: `kb/t/topic` (a link out) and `kb/t/Sub/` (a repository of its
    own) hold names that fold onto real paths beside them. The update's twin search used
    to look behind both (it indexed the nested file and named the outside one in a
    collision); it now says what the rebuild's walk says, and nothing more."""
    outside = _tree(tmp_path / "outside", {"A.md": FACT})
    repo = _tree(tmp_path / "repo", {"kb/t/Topic/a.md": FACT, "kb/t/sub/A.md": FACT,
                                     "kb/t/Sub/a.md": FACT, "kb/t/Sub/.git/HEAD": b"ref\n"})
    os.symlink(outside, repo / "kb/t/topic")
    want = [("kb/t/Sub/", "nested_repo"), ("kb/t/topic", "symlink_outside")]
    entries, problems = scan(repo)
    assert [e.path for e in entries] == ["kb/t/Topic/a.md", "kb/t/sub/A.md"]
    assert _codes(problems) == want
    entries, problems = stat_paths(repo, ["kb/t/Topic/a.md", "kb/t/sub/A.md"])
    assert [e.path for e in entries] == ["kb/t/Topic/a.md", "kb/t/sub/A.md"] and problems == []
    entries, problems = stat_paths(repo, ["kb/t/topic/A.md", "kb/t/Sub/a.md", "kb/t/Sub/"])
    assert entries == [] and _codes(problems) == want


def test_a_link_to_a_file_on_the_way_is_not_reported_as_a_folder_link(tmp_path: Path) -> None:
    """The walk reports a link that is not `.md` only when it leads to a folder; handed a
    path through a link to a file (or a dangling one), the update says nothing either."""
    repo = _tree(tmp_path, {"kb/f.md": FACT})
    os.symlink(repo / "kb/f.md", repo / "kb/old")
    os.symlink(repo / "kb/gone", repo / "kb/dangling")
    assert scan(repo) == ([scan(repo)[0][0]], [])
    assert stat_paths(repo, ["kb/old", "kb/old/a.md", "kb/dangling/x.md"]) == ([], [])
