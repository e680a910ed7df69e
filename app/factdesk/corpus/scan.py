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
    """Every fact file under `repo/root`, sorted; symlinks and nested repos become problems."""
    entries: list[FileEntry] = []
    problems: list[Problem] = []
    base = repo / root
    if not base.is_dir():
        return entries, problems
    stack = [base]
    while stack:
        folder = stack.pop()
        try:
            items = list(os.scandir(folder))
        except OSError as exc:
            rel = folder.relative_to(repo).as_posix()
            problems.append(Problem(rel, 1, "io_error", Severity.ERROR, str(exc)))
            continue
        for item in items:
            if item.name.startswith("."):
                if item.name == ".git" and item.is_dir(follow_symlinks=False):
                    rel = Path(item.path).relative_to(repo).as_posix()
                    problems.append(Problem(rel, 1, "nested_repo", Severity.WARNING,
                                            "nested git repository inside the corpus; not read"))
                continue
            rel = Path(item.path).relative_to(repo).as_posix()
            try:
                st = item.stat(follow_symlinks=False)
            except OSError as exc:
                problems.append(Problem(rel, 1, "io_error", Severity.ERROR, str(exc)))
                continue
            if stat.S_ISLNK(st.st_mode):
                if rel.endswith(".md") or os.path.isdir(item.path):
                    problems.append(Problem(rel, 1, "symlink", Severity.WARNING,
                                            "symbolic link in the corpus: never followed or read"))
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(Path(item.path))
            elif stat.S_ISREG(st.st_mode) and is_fact_path(rel, root):
                entries.append(FileEntry(rel, st.st_size, st.st_mtime_ns))
                if unicodedata.normalize("NFC", rel) != rel:
                    problems.append(Problem(rel, 1, "unicode_name", Severity.WARNING,
                                            "file name is not NFC-normalised"))
    entries.sort(key=lambda e: e.path)
    return entries, problems


def read_fact_bytes(repo: Path, rel: str) -> bytes:
    """Read one fact file without following a symlink swapped in meanwhile (C08)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(repo / rel, flags)
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
