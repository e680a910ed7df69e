"""What the write path says and takes: its errors (CurationError and its kinds), one file's
change, the identities a commit is made under, and what a committed action returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from factdesk import fsio
from factdesk.errors import FactdeskError


class CurationError(FactdeskError):
    """An action was refused; nothing was written. The message says why."""


class Conflict(CurationError):
    """Someone else changed what the action was computed from (no last-writer-wins)."""


class Refused(CurationError):
    """The action breaks a rule or the repository is in a state that forbids writing."""

    def __init__(self, message: str, rule: str | None = None) -> None:
        super().__init__(message)
        self.rule = rule


class Failed(CurationError):
    """The system failed the action (a full disk, an I/O error, git failing): nothing was
    committed. The message says so in words and says what state the files were left in."""


def refuse_links(repo: Path, path: str) -> None:
    """Refused (rule `symlink`) when a part of `path` is a symbolic link: factdesk never
    reads or writes through one (RELIABILITY C05, C06)."""
    if link := fsio.linked_component(repo, path):
        raise Refused(f"{path}: {link} is a symbolic link; factdesk never reads or writes "
                      "through one", rule="symlink")


@dataclass(frozen=True, slots=True)
class FileChange:
    """`path` goes from `old` (None: must not exist) to `new` (None: delete)."""

    path: str
    old: bytes | None
    new: bytes | None


@dataclass(frozen=True, slots=True)
class Identity:
    name: str
    email: str


@dataclass(frozen=True, slots=True)
class Committed:
    sha: str
    parent: str
    branch: str
    rebased: bool
    #: paths whose real-index entries still wait for `finish_sync` (deferred), and the
    #: journal kept until then
    pending_sync: tuple[str, ...] = ()
    journal: Path | None = None
    #: the action is committed, but something after the ref moved needs saying (the
    #: checkout switched branch during it; finishing failed and is left to recovery)
    warnings: tuple[str, ...] = ()
    #: HEAD's symbolic ref right after the ref moved, when it was no longer `branch`
    switched_to: str | None = field(default=None, compare=False)


def with_warning(done: Committed, text: str) -> Committed:
    """`done`, with one more thing to say (the commit stands)."""
    return Committed(done.sha, done.parent, done.branch, done.rebased, done.pending_sync,
                     done.journal, (*done.warnings, text), done.switched_to)


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}{f': {exc.filename}' if exc.filename else ''}"
    return str(exc)
