"""The problems about files as files (scan.SCAN_CODES) are replaced, not added again, when
an update looks at a path again: an update equals a rebuild."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from factdesk.corpus.scan import SCAN_CODES
from factdesk.index.indexer import Indexer
from tests.conftest import Corpus


def _file_problems(repo: Path) -> list[tuple[str, str]]:
    conn = Indexer(repo).connect(readonly=True)
    try:
        marks = ",".join("?" * len(SCAN_CODES))
        return sorted((r[0], r[1]) for r in conn.execute(
            f"SELECT path, code FROM problems WHERE code IN ({marks})", SCAN_CODES))
    finally:
        conn.close()


def test_file_problems_after_updates_equal_a_rebuild(corpus: Corpus, tmp_path: Path) -> None:
    repo = corpus.root
    Indexer(repo).update()
    outside = tmp_path / "outside.md"
    shutil.copy(repo / "kb/gotchas/db/a1a1a1a1.md", outside)
    os.link(outside, repo / "kb/gotchas/db/linked.md")
    corpus.fact("kb/gotchas/db/CON.md", title="A reserved name")
    Indexer(repo).update()
    for step in range(2):  # the same paths looked at again: touched, then edited
        for rel in ("kb/gotchas/db/linked.md", "kb/gotchas/db/CON.md"):
            path = repo / rel
            if step:
                path.write_bytes(path.read_bytes() + b"\nMore.\n")
            os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
        Indexer(repo).update()
    updated, counted = _file_problems(repo), _counts(repo)
    assert updated == [("kb/gotchas/db/CON.md", "unportable_name"),
                       ("kb/gotchas/db/linked.md", "hardlink")]
    # counted in the fact's row too, so `has:problems` finds them
    assert counted["kb/gotchas/db/CON.md"] >= 1 and counted["kb/gotchas/db/linked.md"] >= 1
    Indexer(repo).update(rebuild=True)
    assert (_file_problems(repo), _counts(repo)) == (updated, counted)


def _counts(repo: Path) -> dict[str, int]:
    """Each fact's warnings and errors as its row counts them."""
    conn = Indexer(repo).connect(readonly=True)
    try:
        return {r[0]: r[1] + r[2] for r in conn.execute("SELECT path, errors, warnings FROM facts")}
    finally:
        conn.close()


def test_name_collisions_come_and_go_with_the_files(corpus: Corpus, tmp_path: Path) -> None:
    """Git names only the file that appeared or went; the update looks at its twin again
    (it is read anew) for its file problems all the same."""
    nfc, nfd = "kb/gotchas/db/caf\u00e9.md", "kb/gotchas/db/cafe\u0301.md"
    repo = corpus.root
    corpus.fact(nfc, title="Cafe, written the usual way")
    corpus.commit("learn: a fact with an accent in its name")
    Indexer(repo).update()
    corpus.fact(nfd, title="Cafe, decomposed")
    Indexer(repo).update()  # git names only the new file; its twin is warned too
    pair = [(nfd, "unicode_collision"), (nfd, "unicode_name"), (nfc, "unicode_collision")]
    assert _file_problems(repo) == pair
    Indexer(repo).update(rebuild=True)
    assert _file_problems(repo) == pair
    (repo / nfd).unlink()
    Indexer(repo).update()
    assert _file_problems(repo) == []
    Indexer(repo).update(rebuild=True)
    assert _file_problems(repo) == []


def test_a_folder_twin_comes_and_goes_with_its_files(corpus: Corpus) -> None:
    """C12 across folders: an agent writes `kb/Gotchas/db/a1a1a1a1.md` beside the committed
    `kb/gotchas/db/a1a1a1a1.md`; git names only the new path, and the update warns both,
    as a rebuild does; when it goes, so do both warnings."""
    repo = corpus.root
    Indexer(repo).update()
    twin = "kb/Gotchas/db/a1a1a1a1.md"
    corpus.fact(twin, title="The same fact, under a capitalised topic")
    Indexer(repo).update()
    pair = [(twin, "case_collision"), ("kb/gotchas/db/a1a1a1a1.md", "case_collision")]
    assert _file_problems(repo) == pair
    counted = _counts(repo)
    Indexer(repo).update(rebuild=True)
    assert (_file_problems(repo), _counts(repo)) == (pair, counted)
    shutil.rmtree(repo / "kb/Gotchas")
    Indexer(repo).update()
    assert _file_problems(repo) == []
    counted = _counts(repo)
    Indexer(repo).update(rebuild=True)
    assert (_file_problems(repo), _counts(repo)) == ([], counted)


def test_a_link_beside_its_twin_is_one_problem_and_the_update_settles(corpus: Corpus) -> None:
    """An untracked symbolic link whose name collides with a committed fact: one `symlink`
    row however many updates run, the fact warned once, and an update with nothing new is
    `unchanged` (the twin used to be read again, and its row added again, every time)."""
    repo = corpus.root
    Indexer(repo).update()
    os.symlink(repo / "kb/gotchas/db/b2b2b2b2.md", repo / "kb/gotchas/db/A1A1A1A1.md")
    for _ in range(3):
        stats = Indexer(repo).update()
    assert stats.mode == "unchanged"
    want = [("kb/gotchas/db/A1A1A1A1.md", "symlink"), ("kb/gotchas/db/a1a1a1a1.md", "case_collision")]
    assert _file_problems(repo) == want
    Indexer(repo).update(rebuild=True)
    assert _file_problems(repo) == want


def test_a_name_that_is_not_utf8_is_reported_and_not_read(corpus: Corpus) -> None:
    """One such file stopped `index` and `check` outright (the path went into SQLite)."""
    repo = corpus.root
    Indexer(repo).update()
    with open(os.fsencode(repo / "kb/gotchas/db") + b"/\xff.md", "wb") as fh:
        fh.write(b"---\ntype: observation\n---\n# A name that is not UTF-8\n")
    assert Indexer(repo).update().facts == 3
    want = [("kb/gotchas/db/\ufffd.md", "undecodable_name")]
    assert _file_problems(repo) == want
    assert Indexer(repo).update().mode == "unchanged"
    Indexer(repo).update(rebuild=True)
    assert _file_problems(repo) == want


def test_a_folder_swapped_for_a_link_out_is_never_read(corpus: Corpus, tmp_path: Path) -> None:
    """C05: an agent replaces the committed folder `kb/gotchas/db/` by a link to a folder
    outside the repository, then commits the swap. The update reports the link and reads
    nothing behind it (it used to index the outside files: only the file name was checked
    for a link), and equals a rebuild."""
    from factdesk.index.search import search

    repo = corpus.root
    Indexer(repo).update()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a1a1a1a1.md").write_text(
        "---\ntype: observation\n---\n# An outside secret named zebracorn\n")
    shutil.rmtree(repo / "kb/gotchas/db")
    os.symlink(outside, repo / "kb/gotchas/db")
    for step in ("in the working tree", "committed"):
        if step == "committed":
            corpus.commit("learn: swap a folder for a link")
        Indexer(repo).update()
        conn = Indexer(repo).connect(readonly=True)
        try:
            found = [hit.path for hit in search(conn, "zebracorn")]
            live = {r[0] for r in conn.execute("SELECT path FROM facts WHERE status = 'live'")}
        finally:
            conn.close()
        assert found == [] and not any(p.startswith("kb/gotchas/db/") for p in live), step
        assert _file_problems(repo) == [("kb/gotchas/db", "symlink_outside")], step
    counted = _counts(repo)
    Indexer(repo).update(rebuild=True)
    assert (_file_problems(repo), _counts(repo)) == ([("kb/gotchas/db", "symlink_outside")],
                                                     counted)


def test_without_git_an_update_replaces_the_file_problems_it_finds_again(tmp_path: Path) -> None:
    """A corpus with no repository of its own (here a folder below another repository's
    top, where factdesk has no git to ask): every file is looked at, and the file problems
    found are replaced, not added again (a link's warning was doubled at each update)."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    root = tmp_path / "notes"
    (root / "kb/t/p").mkdir(parents=True)
    fact = root / "kb/t/p/a.md"
    fact.write_text("---\ntype: observation\nconfidence: 0.5\nsources: 1\n---\n# A fact\n")
    os.symlink("..", root / "kb/t/loop")
    Indexer(root).update()
    first = _file_problems(root)
    assert first == [("kb/t/loop", "symlink")]
    for step in range(2):
        fact.write_text(fact.read_text() + f"\nEdit {step}.\n")
        assert Indexer(root).update().mode == "incremental"
        assert _file_problems(root) == first
    Indexer(root).update(rebuild=True)
    assert _file_problems(root) == first
