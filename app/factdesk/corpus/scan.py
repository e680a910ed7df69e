"""Find the fact files of a corpus (FORMAT.md §1.2) without following links out of it."""

from __future__ import annotations

import os
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from factdesk.model.enums import Severity
from factdesk.model.fact import Problem

TEMP_PREFIX = ".factdesk-tmp-"


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
    top = os.fspath(repo)
    if os.path.isdir(os.path.join(top, root)):
        _walk(top, root, entries, problems)
    entries.sort(key=lambda e: e.path)
    return entries, problems


def stat_paths(repo: Path, paths: list[str], root: str = "kb"
               ) -> tuple[list[FileEntry], list[Problem]]:
    """The fact files among `paths` (repo-relative; a trailing `/` names a folder to walk),
    with the problems `scan` would report for them. Missing paths are left out."""
    entries: list[FileEntry] = []
    problems: list[Problem] = []
    top = os.fspath(repo)
    for rel in paths:
        if rel.endswith("/"):
            if os.path.isdir(os.path.join(top, rel)) and is_fact_path(rel + "x.md", root):
                _walk(top, rel.rstrip("/"), entries, problems)
            continue
        if not is_fact_path(rel, root):
            continue
        try:
            st = os.lstat(os.path.join(top, rel))
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(Problem(rel, 1, "io_error", Severity.ERROR, str(exc)))
            continue
        if stat.S_ISLNK(st.st_mode):
            problems.append(Problem(rel, 1, "symlink", Severity.WARNING,
                                    "symbolic link in the corpus: never followed or read"))
        elif stat.S_ISREG(st.st_mode):
            entries.append(FileEntry(rel, st.st_size, st.st_mtime_ns))
            if not rel.isascii() and unicodedata.normalize("NFC", rel) != rel:
                problems.append(Problem(rel, 1, "unicode_name", Severity.WARNING,
                                        "file name is not NFC-normalised"))
    entries.sort(key=lambda e: e.path)
    return entries, problems


def _walk(top: str, start: str, entries: list[FileEntry], problems: list[Problem]) -> None:
    """Walk `start` (repo-relative) without following links, collecting fact files."""
    stack = [start]
    while stack:
        folder = stack.pop()
        try:
            items = list(os.scandir(os.path.join(top, folder)))
        except OSError as exc:
            problems.append(Problem(folder, 1, "io_error", Severity.ERROR, str(exc)))
            continue
        for item in items:
            name = item.name
            rel = f"{folder}/{name}"
            if name[0] == ".":  # knomit: no path segment may start with a dot
                if name == ".git" and item.is_dir(follow_symlinks=False):
                    problems.append(Problem(rel, 1, "nested_repo", Severity.WARNING,
                                            "nested git repository inside the corpus; not read"))
                continue
            try:
                if item.is_symlink():  # d_type: no extra system call
                    if name.endswith(".md") or os.path.isdir(item.path):
                        problems.append(Problem(rel, 1, "symlink", Severity.WARNING,
                                                "symbolic link in the corpus: never followed or read"))
                    continue
                if item.is_dir(follow_symlinks=False):
                    stack.append(rel)
                    continue
                if not name.endswith(".md"):
                    continue
                st = item.stat(follow_symlinks=False)
            except OSError as exc:
                problems.append(Problem(rel, 1, "io_error", Severity.ERROR, str(exc)))
                continue
            if stat.S_ISREG(st.st_mode):
                entries.append(FileEntry(rel, st.st_size, st.st_mtime_ns))
                if not rel.isascii() and unicodedata.normalize("NFC", rel) != rel:
                    problems.append(Problem(rel, 1, "unicode_name", Severity.WARNING,
                                            "file name is not NFC-normalised"))


def read_fact_file(repo: str, rel: str) -> tuple[bytes, os.stat_result]:
    """Read one fact file without following a symlink swapped in meanwhile (C08); with the
    stat of the file read (its size and mtime stamp the index row). Plain strings, not
    `Path`: a rebuild calls this 100,000 times."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(os.path.join(repo, rel), flags)
    try:
        st = os.fstat(fd)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)
