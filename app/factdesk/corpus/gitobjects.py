"""The repository as GitPython objects: refs, branches and remotes, read in pure Python.

GitPython shells out to git for most commands (and its default object database for every
object read), and those command lines would carry none of `gitrepo.git_argv`'s protections
(RELIABILITY I6). So in the `Repo` opened here both runners are replaced by one that refuses
to run anything: only GitPython's file readers (refs, packed-refs, config) are ever used
(its pure-Python object database, gitdb, is deprecated by GitPython 3.2). Commands
go through `gitrepo.run_git`; history through one `git log` pass (`gitrepo.log`), which is
50 times faster than GitPython's per-commit diffs (docs/architecture.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factdesk.corpus.gitrepo import GitError

if TYPE_CHECKING:
    import git


class _NoCommands:
    """Stands in for GitPython's `Git` runner: any command is a bug here (I6)."""

    def __getattr__(self, name: str) -> Any:
        raise GitError(f"GitPython tried to run `git {name}`: factdesk runs git only through "
                       "corpus.gitrepo.run_git")


def repository(repo: Path) -> git.Repo:
    """`repo` as a GitPython `Repo` that cannot run git (see the module's note); never a
    parent folder's repository."""
    import git

    try:
        found = git.Repo(repo, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise GitError(f"{repo} is not a git repository") from exc
    found.git = _NoCommands()  # type: ignore[assignment]
    # (and the object database's `cat-file` runner)
    found.odb._git = _NoCommands()  # type: ignore[assignment]
    return found


def branches(repo: Path) -> dict[str, str]:
    """Local branch name → the commit id it points to."""
    found = repository(repo)
    # (the ref files' ids: `head.commit` would read the object to learn its type)
    return {head.name: head.dereference_recursive(found, head.path) for head in found.heads}


def current_branch(repo: Path) -> str | None:
    """The branch HEAD points to, or None when HEAD is detached."""
    head = repository(repo).head
    return None if head.is_detached else head.reference.name


@dataclass(frozen=True, slots=True)
class Remote:
    """A remote as the repository's config defines it: data, never a command (K01)."""

    name: str
    urls: tuple[str, ...]


def remotes(repo: Path) -> list[Remote]:
    """The repository's remotes and their fetch URLs (the config's `url` values, read by
    GitPython's config reader; `Remote.urls` would run git)."""
    found = repository(repo)
    reader = found.config_reader()
    out = []
    for remote in found.remotes:
        section = f'remote "{remote.name}"'
        urls = (tuple(str(u) for u in reader.get_values(section, "url"))
                if reader.has_option(section, "url") else ())
        out.append(Remote(remote.name, urls))
    return out


_SCP_LIKE = re.compile(r"^([A-Za-z0-9._~-]+@)?[A-Za-z0-9.-]{2,}:(?!//)")
ALLOWED_SCHEMES = ("https", "ssh", "file")


def checked_remote_url(url: str) -> str:
    """`url` if factdesk may fetch from or push to it (RELIABILITY K01): https, ssh (also
    `user@host:path`), file, or a local path; never a transport helper (`ext::`, `fd::`,
    `<vcs>::`), never anything that reads as an option or holds a control character. Raises
    `GitError` in words otherwise. (What git does with the URL after an `insteadOf` rewrite is
    held by the fixed `protocol.ext.allow=never`.)"""
    if not url or url.startswith("-") or any(ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise GitError(f"refused remote URL {url!r}: empty, an option or a control character")
    if "::" in url:
        raise GitError(f"refused remote URL {url!r}: a transport helper ({url.split('::')[0]}::)")
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", url)
    if scheme:
        if scheme.group(1).lower() not in ALLOWED_SCHEMES:
            raise GitError(f"refused remote URL {url!r}: only {', '.join(ALLOWED_SCHEMES)}")
        return url
    if _SCP_LIKE.match(url):
        return url  # ssh's scp-like form
    if ":" in url.split("/", 1)[0]:
        raise GitError(f"refused remote URL {url!r}: not a URL git reads as https, ssh or file")
    return url  # a local path
