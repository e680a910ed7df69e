"""Find the fact files of a corpus (FORMAT.md §1.2) without following links out of it."""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from factdesk.fsio import read_path
from factdesk.model.enums import Severity
from factdesk.model.fact import Problem

#: the problems `scan` and `stat_paths` report about files (not their contents): an update
#: replaces those of the paths it looks at again
SCAN_CODES = ("symlink", "symlink_outside", "nested_repo", "unicode_name", "io_error", "hardlink",
              "unportable_name", "case_collision", "unicode_collision", "undecodable_name")

#: the most of one fact file read from disk: a larger one is an `io_error` (one up to this
#: size is read, and the parse says `too_large` past codec.MAX_BYTES)
FACT_READ_LIMIT = 64 << 20

#: names Windows reserves in any folder, with any extension (RELIABILITY C13)
_RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)),
                       *(f"lpt{i}" for i in range(1, 10))})
_UNPORTABLE_CHARS = frozenset('<>:"|?*\\') | frozenset(map(chr, range(32)))
_UNPORTABLE_RE = re.compile("[" + re.escape("".join(sorted(_UNPORTABLE_CHARS))) + "]")


@dataclass(frozen=True, slots=True)
class FileEntry:
    path: str  # repo-relative POSIX
    size: int
    mtime_ns: int


def is_fact_path(rel: str, root: str = "kb") -> bool:
    """knomit's location rule: under the root, `.md`, no segment starting with a dot."""
    if not rel.startswith(root + "/") or not rel.endswith(".md"):
        return False
    return not any(part.startswith(".") for part in rel.split("/"))


def scan(repo: Path, root: str = "kb") -> tuple[list[FileEntry], list[Problem]]:
    """Every fact file under `repo/root`, sorted; symlinks and nested repos become problems.

    Works on plain strings from `os.scandir` (no Path objects per file: at 100,000 files
    pathlib's parsing was most of a no-op update)."""
    entries: list[FileEntry] = []
    problems: list[Problem] = []
    named: list[str] = []
    top = os.fspath(repo)
    if os.path.islink(os.path.join(top, root)):  # (its files are not the repository's)
        problems.append(_symlink(top, root))
    elif os.path.isdir(os.path.join(top, root)):
        _walk(top, root, entries, problems, named)
    entries.sort(key=lambda e: e.path)
    files = {e.path for e in entries}
    for group in _by_key(named).values():
        if len(group) > 1:
            for rel in group:
                if rel in files:
                    _collision(rel, group, problems)
    return entries, problems


def stat_paths(repo: Path, paths: list[str], root: str = "kb"
               ) -> tuple[list[FileEntry], list[Problem]]:
    """The fact files among `paths` (repo-relative; a trailing `/` names a folder to walk),
    with the problems `scan` would report for them. Missing paths are left out. A path
    that is one path with another on Windows or macOS (C11, C12: a sibling's name, or a
    folder's name, differs only in case or normalisation) brings the other along, so that
    both paths' problems are found again (also when one of them is gone)."""
    entries: dict[str, FileEntry] = {}
    problems: list[Problem] = []
    top = os.fspath(repo)
    listings: dict[str, dict[str, list[str]]] = {}  # folder → its names by name key
    kinds: dict[str, str | None] = {}  # folder → "link", "repo" or None (`_folder_kind`)
    todo = list(paths)
    seen: set[str] = set()
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        # a folder on the way that is a link or a repository of its own (C05, C07, C16: git
        # names the files a tracked folder had, the link itself, a dirty path inside): said
        # as a rebuild's walk says it, nothing behind it read
        if blocked := _blocked(top, rel, kinds):
            folder, kind = blocked
            if folder not in seen:
                seen.add(folder)
                if kind == "repo":
                    problems.append(_nested_repo(folder))
                elif link := _reported_link(top, folder):
                    problems.append(link)
            continue
        if rel.endswith("/"):
            try:  # (not isdir, which says False for a folder it cannot look at: C14, C17)
                is_folder = stat.S_ISDIR(os.stat(os.path.join(top, rel)).st_mode)
            except FileNotFoundError:
                continue
            except OSError as exc:
                problems.append(io_error(rel, exc))
                continue
            if is_folder and is_fact_path(rel + "x.md", root):
                # its files are looked at one by one below (for their twins elsewhere), with
                # their own problems; the walk keeps those of what is not a fact file
                walked: list[FileEntry] = []
                found: list[Problem] = []
                _walk(top, rel.rstrip("/"), walked, found, [])
                files = {e.path for e in walked}
                problems.extend(p for p in found if p.path not in files)
                todo.extend(files)
            continue
        if not is_fact_path(rel, root):
            if (is_fact_path(rel + "/x.md", root) and os.path.islink(os.path.join(top, rel))
                    and (link := _reported_link(top, rel))):
                problems.append(link)
            continue
        if _undecodable(rel, rel, problems):
            continue
        # the paths that are (or were, when this one is gone) one path with this one
        twins = [t for t in _twins(top, rel, listings, kinds) if is_fact_path(t, root)]
        todo.extend(t for t in twins if t != rel)
        try:
            st = os.lstat(os.path.join(top, rel))
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(io_error(rel, exc))
            continue
        if stat.S_ISLNK(st.st_mode):
            problems.append(_symlink(top, rel))
        elif stat.S_ISREG(st.st_mode):
            entries[rel] = FileEntry(rel, st.st_size, st.st_mtime_ns)
            _file_problems(rel, st, problems, unportable(rel))
            if len(twins) > 1:
                _collision(rel, twins, problems)
    return sorted(entries.values(), key=lambda e: e.path), problems


def _folder_kind(top: str, folder: str, kinds: dict[str, str | None]) -> str | None:
    """"link" when `folder` is a symbolic link, "repo" when it holds a `.git` (a repository
    or a submodule of its own), else None; `kinds` caches the answers."""
    if folder not in kinds:
        full = os.path.join(top, folder)
        kinds[folder] = ("link" if os.path.islink(full)
                         else "repo" if os.path.lexists(os.path.join(full, ".git")) else None)
    return kinds[folder]


def _blocked(top: str, rel: str, kinds: dict[str, str | None]) -> tuple[str, str] | None:
    """The first folder of `rel`'s path, from the top (`rel` itself when it names a folder,
    `kb/x/`), that the walk does not enter: (folder, its `_folder_kind`), or None."""
    parts = rel.rstrip("/").split("/")
    for depth in range(1, len(parts) + (1 if rel.endswith("/") else 0)):
        folder = "/".join(parts[:depth])
        if kind := _folder_kind(top, folder, kinds):
            return folder, kind
    return None


def _twins(top: str, rel: str, listings: dict[str, dict[str, list[str]]],
           kinds: dict[str, str | None]) -> list[str]:
    """Every path on disk that is one path with `rel` on Windows or macOS (each segment
    below the root folded by `_name_key`: `kb/Topic/a.md` and `kb/topic/A.md`), `rel`
    itself included when it exists; any kind of file, never behind a folder the walk does
    not enter (a link, a repository of its own). `listings` caches the folders read."""
    root, *parts = rel.split("/")
    found = [root]
    for depth, part in enumerate(parts, 1):
        key = _name_key(part)
        below: list[str] = []
        for folder in found:
            by_key = listings.get(folder)
            if by_key is None:
                try:
                    names = os.listdir(os.path.join(top, folder))
                except OSError:
                    names = []
                by_key = listings[folder] = _by_key(names)
            below.extend(f"{folder}/{name}" for name in by_key.get(key, ()))
        if depth < len(parts):  # a folder on the way
            below = [f for f in below if not _folder_kind(top, f, kinds)]
        found = below
    return found


def is_utf8(name: str) -> bool:
    """Whether a name from the file system (or git) is UTF-8: Python holds the bytes of one
    that is not as surrogate escapes, which SQLite and every report refuse."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(name: str) -> str:
    """`name` with each byte that is not UTF-8 shown as U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _undecodable(name: str, rel: str, problems: list[Problem]) -> bool:
    """A name that is not UTF-8: not read, one problem under a printable form of its path."""
    if is_utf8(name):
        return False
    problems.append(Problem(printable(rel), 1, "undecodable_name", Severity.WARNING,
                            "file or folder name is not UTF-8: not read"))
    return True


def _name_key(name: str) -> str:
    """What two names must share to be one name on Windows or macOS (case and Unicode
    normalisation folded)."""
    return name.lower() if name.isascii() else unicodedata.normalize("NFC", name).casefold()


def _by_key(names: list[str]) -> dict[str, list[str]]:
    """One folder's names grouped by `_name_key`."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(_name_key(name), []).append(name)
    return groups


def _collision(rel: str, group: list[str], problems: list[Problem]) -> None:
    """C11, C12: `rel` is one path with the others of `group` on Windows or macOS (in one
    folder, or in folders whose names differ the same way: `kb/Topic/a.md`, `kb/topic/A.md`).
    `unicode_collision` when two of them differ only by Unicode normalisation."""
    others = ", ".join(sorted(p for p in group if p != rel))
    if len({unicodedata.normalize("NFC", p) for p in group}) < len(group):
        problems.append(Problem(rel, 1, "unicode_collision", Severity.WARNING,
                                f"{others} is this path in another Unicode normalisation "
                                "(NFC/NFD): one file on macOS"))
    else:
        problems.append(Problem(rel, 1, "case_collision", Severity.WARNING,
                                f"{others} differs from this path only in case: the two "
                                "cannot both exist on Windows or macOS"))


def _file_problems(rel: str, st: os.stat_result, problems: list[Problem],
                   unportable_why: str | None) -> None:
    """What is wrong with a fact file as a file: its name (C11's NFC form; C13: why it is
    unportable, as the caller worked it out) and its links (C09)."""
    if not rel.isascii() and unicodedata.normalize("NFC", rel) != rel:
        problems.append(Problem(rel, 1, "unicode_name", Severity.WARNING,
                                "file name is not NFC-normalised"))
    if unportable_why:
        problems.append(Problem(rel, 1, "unportable_name", Severity.WARNING,
                                f"file name cannot be checked out on Windows: {unportable_why}"))
    if st.st_nlink > 1:
        problems.append(Problem(rel, 1, "hardlink", Severity.WARNING,
                                f"file has {st.st_nlink} hard links: another name, maybe "
                                "outside the corpus, shares its bytes (factdesk's writes "
                                "replace the file and leave the others alone)"))


def unportable(rel: str) -> str | None:
    """Why a repo-relative path could not exist on Windows (reserved name, trailing dot or
    space, a forbidden character), or None."""
    for part in rel.split("/"):
        if why := _unportable_part(part):
            return why
    return None


def _unportable_part(part: str) -> str | None:
    if part.split(".", 1)[0].rstrip(" ").lower() in _RESERVED:
        return f"{part!r} is a reserved name"
    if part.endswith((".", " ")):
        return f"{part!r} ends with a dot or a space"
    if _UNPORTABLE_RE.search(part):
        return f"{part!r} holds {''.join(sorted(set(part) & _UNPORTABLE_CHARS))!r}"
    return None


def _walk(top: str, start: str, entries: list[FileEntry], problems: list[Problem],
          named: list[str]) -> None:
    """Walk `start` (repo-relative) without following links, collecting fact files, and in
    `named` every `.md` path of any kind (links, folders: the names a collision counts)."""
    stack = [start]
    while stack:
        folder = stack.pop()
        try:
            items = list(os.scandir(os.path.join(top, folder)))
        except OSError as exc:
            problems.append(io_error(folder + "/", exc))  # (a folder, as nested_repo names it)
            continue
        if any(item.name == ".git" for item in items):  # a repository (or a submodule's file)
            problems.append(_nested_repo(folder))
            continue
        folder_why = unportable(folder)  # (each folder's name checked once)
        for item in items:
            name = item.name
            rel = f"{folder}/{name}"
            if name[0] == ".":  # knomit: no path segment may start with a dot
                continue
            if _undecodable(name, rel, problems):
                continue
            if name.endswith(".md"):
                named.append(rel)
            try:
                if item.is_symlink():  # d_type: no extra system call
                    if link := _reported_link(top, rel):
                        problems.append(link)
                    continue
                if item.is_dir(follow_symlinks=False):
                    stack.append(rel)
                    continue
                if not name.endswith(".md"):
                    continue
                st = item.stat(follow_symlinks=False)
            except OSError as exc:
                problems.append(io_error(rel, exc))
                continue
            if stat.S_ISREG(st.st_mode):
                entries.append(FileEntry(rel, st.st_size, st.st_mtime_ns))
                _file_problems(rel, st, problems, folder_why or _unportable_part(name))


def _nested_repo(folder: str) -> Problem:
    """C16: a folder holding a `.git` (a repository or a submodule of its own)."""
    return Problem(folder + "/", 1, "nested_repo", Severity.WARNING,
                   "nested git repository inside the corpus: none of its files are read")


def _reported_link(top: str, rel: str) -> Problem | None:
    """The walk's rule for a symbolic link at `rel`: reported when its name is a fact's
    (`.md`) or it leads to a folder (whose files would otherwise seem to be missing); a link
    to anything else is left out silently, as any other file that is not a fact."""
    if rel.endswith(".md") or os.path.isdir(os.path.join(top, rel)):
        return _symlink(top, rel)
    return None


def _symlink(top: str, rel: str) -> Problem:
    """C05–C07: a link is never followed or read; one whose target lies outside the
    repository (`/etc/passwd`, `~/.ssh/id_rsa`, `/`) is named as such. (Resolving the
    target reads link names only, never a file's bytes.)"""
    target = os.path.realpath(os.path.join(top, rel))
    inside = os.path.commonpath([target, os.path.realpath(top)]) == os.path.realpath(top)
    if inside:
        return Problem(rel, 1, "symlink", Severity.WARNING,
                       "symbolic link in the corpus: never followed or read")
    return Problem(rel, 1, "symlink_outside", Severity.WARNING,
                   "symbolic link to a place outside the repository: never followed or read")


def io_error(rel: str, exc: OSError) -> Problem:
    """C14, C17: a file or folder the system will not open or read (a path past PATH_MAX,
    no permission): its own problem, in words without the absolute path (which can be
    4 KB). The scan and the parse both word it here."""
    what = "folder" if rel.endswith("/") else "file"
    return Problem(rel, 1, "io_error", Severity.ERROR, f"cannot read this {what}: "
                   f"{exc.strerror or exc}" + (f" (errno {exc.errno})" if exc.errno else ""))


def read_fact_file(repo: str, rel: str) -> tuple[bytes, os.stat_result]:
    """Read one fact file without following a symlink swapped in meanwhile (C08) nor
    waiting on a FIFO or reading a device (`fsio.NotRegular`, an `OSError`), and never more
    than `FACT_READ_LIMIT` bytes (`fsio.TooLarge`); with the stat of the file read (its
    size and mtime stamp the index row). Plain strings, not `Path`: a rebuild calls this
    100,000 times."""
    return read_path(os.path.join(repo, rel), FACT_READ_LIMIT)
