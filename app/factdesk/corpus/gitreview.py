"""The questions to git that deciding on agents' proposals asks (review/decide.py and
review/merge.py), each one command line through `gitrepo`'s protocol (RELIABILITY I6):
what one agent commit changed, which agent branches hold it, which commits of a range
touched some paths, the commits of a range with their parents."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from factdesk.corpus import gitrepo
from factdesk.corpus.gitrepo import Commit, run_git

_HEX = re.compile(r"^[0-9a-f]{4,64}$")


def one_commit(repo: Path, sha: str) -> Commit | None:
    """`sha` with its parents, author, subject, body and what it changed against its first
    parent (None when it names no commit)."""
    if not _HEX.match(sha):
        return None
    found = _log(repo, "-1", sha)
    return found[0] if found else None


def range_commits(repo: Path, rev_range: str) -> list[Commit]:
    """Every commit of `rev_range` (`curated..agent/x`) with its parents and changes, in
    topological order, oldest first (a parent before its children)."""
    return _log(repo, "--topo-order", "--reverse", rev_range)


def _log(repo: Path, *args: str) -> list[Commit]:
    fmt = "%x01%H%x00%P%x00%an%x00%ae%x00%at%x00%s%x00%b%x00"
    out = run_git(repo, "log", f"--format={fmt}", "--raw", "-z", "--no-abbrev", "--no-renames",
                  "--diff-merges=first-parent", "--no-textconv", "--no-ext-diff", *args[:-1],
                  "--end-of-options", args[-1], "--", check=False)
    return list(gitrepo._parse_log(out))


def agent_branches_with(repo: Path, sha: str, *, local_only: bool = False) -> list[str]:
    """The `agent/*` branches (local `agent/x`, remote-tracking `origin/agent/x`; only the
    local ones with `local_only`) whose tip reaches `sha`."""
    out = run_git(repo, "for-each-ref", "--format=%(refname)", f"--contains={sha}",
                  "refs/heads/agent/", *([] if local_only else ["refs/remotes/"]),
                  check=False).decode("utf-8", "replace")
    names = []
    for ref in out.splitlines():
        short = ref.removeprefix("refs/heads/").removeprefix("refs/remotes/")
        if ref.startswith("refs/heads/agent/") or "/agent/" in short:
            names.append(short)
    return names


def agent_branches(repo: Path) -> list[tuple[str, str]]:
    """(short name, tip) of every `agent/*` branch, local and remote-tracking."""
    out = run_git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/agent/",
                  "refs/remotes/", check=False).decode("utf-8", "replace")
    found = []
    for line in out.splitlines():
        ref, _, tip = line.partition(" ")
        short = ref.removeprefix("refs/heads/").removeprefix("refs/remotes/")
        if ref.startswith("refs/heads/agent/") or (ref.startswith("refs/remotes/")
                                                  and short.split("/", 1)[-1].startswith("agent/")):
            found.append((short, tip))
    return found


def touching(repo: Path, rev_range: str, paths: Sequence[str]) -> list[str]:
    """The commits of `rev_range` that change one of `paths` (against their first parent,
    merges left out), oldest first."""
    if not paths:
        return []
    return run_git(repo, "rev-list", "--reverse", "--topo-order", "--no-merges",
                   "--end-of-options", rev_range, "--", *paths, check=False).decode().split()


def changed_files(repo: Path, old: str, new: str) -> list[str]:
    """Every path whose content differs between two commits."""
    out = run_git(repo, "diff", "--name-only", "-z", "--no-renames", "--no-textconv",
                  "--no-ext-diff", "--end-of-options", old, new, "--", check=False)
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\x00") if p]


def topo_order(repo: Path, shas: Sequence[str]) -> list[str]:
    """`shas` in topological order, oldest first (an ancestor before its descendants): one
    walk from them down to their common ancestor."""
    if len(shas) < 2:
        return list(shas)
    base = run_git(repo, "merge-base", "--octopus", "--end-of-options", *shas,
                   check=False).decode().strip()
    walk = run_git(repo, "rev-list", "--topo-order", "--reverse", "--end-of-options", *shas,
                   *([f"^{base}"] if base else []), "--", check=False).decode().split()
    wanted = set(shas)
    order = [s for s in walk if s in wanted]
    seen = set(order)
    return [s for s in shas if s not in seen] + order  # (the common ancestor itself: first)


def first_parent_since(repo: Path, old: str, new: str) -> list[str] | None:
    """The commits on `new`'s first-parent line after `old`, newest first, when `old` is on
    that line (None when it is not: the line was rewritten, or joined another one)."""
    if old == new:
        return []
    out = run_git(repo, "rev-list", "--first-parent", "--parents", "--end-of-options",
                  f"{old}..{new}", "--", check=False).decode().splitlines()
    if not out:
        return None
    oldest = out[-1].split()
    if len(oldest) < 2 or oldest[1] != old:
        return None
    return [line.split()[0] for line in out]


def set_branch(repo: Path, ref: str, new: str, old: str | None, reason: str) -> None:
    """Point `ref` at `new` if it still holds `old` (None: absent) — a compare-and-swap."""
    run_git(repo, "update-ref", "-m", reason, "--end-of-options", ref, new, old or "0" * 40)


def commit_count(repo: Path, tip: str) -> int:
    """How many commits `tip` reaches (0 when it names nothing)."""
    out = run_git(repo, "rev-list", "--count", "--end-of-options", tip, "--", check=False)
    return int(out.decode().strip() or 0)
