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
