"""Issue 22 #5: a path git refuses on any platform (`.git` in any case, `.git.`, `git~1`,
HFS's ignorable code points, Windows's reserved names and characters) is never written by
factdesk, whatever a curator overrides: one clone of the shared remote would fail for
everyone."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factdesk.corpus.gitpaths import git_refuses
from factdesk.curation import Refused
from factdesk.review.checks import check_proposal
from factdesk.review.proposals import load_queue
from tests.conftest import Corpus, git
from tests.review.decide_helpers import BRANCH, agent_commit, fact_text, review_of

#: paths git's own verify_path refuses (core.protectNTFS and core.protectHFS on)
DOTGIT = ["kb/.git/config", "kb/.GIT/config", "kb/.Git/x.md", ".git", ".GIT/hooks/pre-commit",
          "kb/.git./config", "kb/.git /x.md", "kb/.git. . ./x.md", "kb/git~1/config",
          "kb/GIT~1/x.md",
          "kb/.g\u200cit/config", "kb/\ufeff.GIT/config", "kb/.gi\u200dt\u200e/x.md",
          "kb/.git\u206f/x.md", "kb/../x.md", "kb/./x.md", "/kb/x.md", "kb//x.md", "kb/x.md/"]
#: what Git for Windows refuses besides (is_valid_win32_path): not testable with this git
WINDOWS = ["kb/x/a:b.md", "kb/x/a*.md", "kb/x/a?.md", 'kb/x/a".md', "kb/x/a<b.md",
           "kb/x/a>b.md", "kb/x/a|b.md", "kb/x/a\\b.md", "kb/x/a.md.", "kb/x /a.md",
           "kb/x/a.md ", "kb/CON/a.md", "kb/x/nul.md", "kb/x/Com1.txt.md", "kb/lpt9/a.md",
           "kb/x/conin$.md", "kb/x/a\x01.md", "C:x/a.md", "kb/.git::$INDEX_ALLOCATION/x.md"]
FINE = ["kb/gotchas/db/a1a1a1a1.md", "kb/.gitkeep", "kb/x/.github/a.md", "kb/x/git~2/a.md",
        "kb/x/.gitx/a.md", "kb/x/git/a.md", ".gitattributes", ".knomit/ontology.yaml",
        "kb/x/console.md", "kb/x/com10.md", "kb/x/a.b.md", "kb/x/café.md"]


def _git_accepts(repo: Path, path: str) -> bool:
    """Whether git's verify_path takes `path` into an index (both protections on)."""
    blob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    proc = subprocess.run(["git", "-c", "core.protectNTFS=true", "-c", "core.protectHFS=true",
                           "-C", str(repo), "update-index", "--add", "--cacheinfo",
                           f"100644,{blob},{path}"], capture_output=True,
                          env={"GIT_INDEX_FILE": str(repo / ".git" / "scratch-index"),
                               "PATH": "/usr/bin:/bin"})
    return proc.returncode == 0


@pytest.mark.parametrize("path", DOTGIT + FINE)
def test_the_rule_is_gits_own(corpus: Corpus, path: str) -> None:
    assert (git_refuses(path) is not None) == (path in DOTGIT)
    assert (git_refuses(path) is None) == _git_accepts(corpus.root, path), git_refuses(path)


@pytest.mark.parametrize("path", WINDOWS)
def test_what_git_for_windows_refuses_is_refused(path: str) -> None:
    assert git_refuses(path) is not None


def _tree_with(repo: Path, tree: str | None, parts: list[str], blob: str) -> str:
    """`tree` with the blob at `parts` added, built with `mktree` (no path check: git's
    porcelain refuses `.GIT`; an agent's own tooling need not)."""
    lines = []
    if tree is not None:
        lines = [line for line in git(repo, "ls-tree", tree).splitlines()
                 if line.split("\t", 1)[1] != parts[0]]
    if len(parts) == 1:
        lines.append(f"100644 blob {blob}\t{parts[0]}")
    else:
        sub = next((line.split()[2] for line in git(repo, "ls-tree", tree).splitlines()
                    if line.split("\t", 1)[1] == parts[0]), None) if tree else None
        lines.append(f"040000 tree {_tree_with(repo, sub, parts[1:], blob)}\t{parts[0]}")
    out = subprocess.run(["git", "-C", str(repo), "mktree"], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _hostile_commit(corpus: Corpus, path: str, text: str = "[core]\n\tfsmonitor = evil\n") -> str:
    """An agent commit on its branch adding `path` (made with git's plumbing)."""
    repo = corpus.root
    tip = agent_commit(corpus, "learn: one fact", {"kb/gotchas/db/e5e5e5e5.md": fact_text("Lag")})
    blob = subprocess.run(["git", "-C", str(repo), "hash-object", "-w", "--stdin"], input=text,
                          capture_output=True, text=True, check=True).stdout.strip()
    tree = _tree_with(repo, git(repo, "rev-parse", f"{tip}^{{tree}}").strip(), path.split("/"), blob)
    sha = git(repo, "commit-tree", tree, "-p", tip, "-m", "learn: a fact",
              author="host-8ef0cd32", email="host-8ef0cd32+learn@agents.knomit.io",
              env={"GIT_COMMITTER_EMAIL": "host-8ef0cd32@agents.knomit.io"}).strip()
    git(repo, "update-ref", f"refs/heads/{BRANCH}", sha)
    return sha


@pytest.mark.parametrize("path", ["kb/.GIT/config", "kb/git~1/config", "kb/.git./x.md"])
def test_a_proposal_git_would_refuse_is_never_accepted_even_overridden(corpus: Corpus,
                                                                      path: str) -> None:
    sha = _hostile_commit(corpus, path)
    review = review_of(corpus)
    checked = check_proposal(review.indexer, load_queue(corpus.root), sha)
    found = {(p.code, p.severity) for f in checked.facts for p in f.problems or ()}
    assert ("git_path", "error") in found
    with pytest.raises(Refused) as refused:
        review.accept([sha], "I know better", override=True)
    assert refused.value.rule == "git_path" and "no override" in str(refused.value)
    assert path not in git(corpus.root, "ls-tree", "-r", "--name-only", "HEAD")
    review.reject([sha], "a path git refuses")  # a rejection records it


def test_a_clean_fact_under_a_path_git_refuses_is_not_clean(corpus: Corpus) -> None:
    """`kb/.GIT/x.md` holding a well-formed fact: `accept --all-clean` leaves it out (it is
    not clean), and takes the rest."""
    sha = _hostile_commit(corpus, "kb/.GIT/a1b2c3d4.md", fact_text("Lag is 4 s"))
    review = review_of(corpus)
    cs = review.accept_all_clean(BRANCH, "the clean ones")
    tree = git(corpus.root, "ls-tree", "-r", "--name-only", "HEAD")
    assert "kb/gotchas/db/e5e5e5e5.md" in tree and ".GIT" not in tree, cs
    assert sha


def _refuses_by_the_rules(path: str, symlink: bool) -> bool:
    """`git_refuses` without its shortcut for plain names."""
    from factdesk.corpus import gitpaths

    plain = gitpaths._PLAIN
    try:
        gitpaths._PLAIN = re.compile(r"(?!)")  # (matches nothing)
        return git_refuses(path, symlink=symlink) is not None
    finally:
        gitpaths._PLAIN = plain


_TRICKY = ["con", "CON", "nul", "Com1", "lpt9", "con.md", "con-x", "console", "com10", "aux.",
           ".git", "git~1", "GIT~1", "gitmod~1", "a.", "a ", ".", "..", "", "a:b", "a-", "-a",
           "_a", "a.b.c", "x.md", "kb", "Ab9"]


@given(st.lists(st.one_of(st.sampled_from(_TRICKY),
                          st.text(alphabet="abcCON1.-_~ :/g\u200c", max_size=8)),
                min_size=1, max_size=4),
       st.booleans())
@settings(max_examples=600, deadline=None)
def test_the_shortcut_for_plain_names_agrees_with_every_rule(parts: list[str], symlink: bool
                                                             ) -> None:
    path = "/".join(parts)
    assert (git_refuses(path, symlink=symlink) is not None) == _refuses_by_the_rules(path, symlink)
