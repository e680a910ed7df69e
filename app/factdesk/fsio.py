"""All corpus file writes go through here (RELIABILITY.md I3, G01–G11, §3.2, §3.4).

A write is: open a random temp name in the target's directory with O_CREAT|O_EXCL,
write, fsync, copy the old file's permission bits, `os.replace` onto the target, fsync
the directory. A failure at any step removes the temp file and leaves the target as it
was. `os` functions are called as module attributes so tests can inject faults.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from factdesk import faults
from factdesk.errors import FactdeskError

TEMP_PREFIX = ".factdesk-tmp-"


class WriteFailed(OSError):
    """The file could not be written; the target is unchanged."""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _open_temp(directory: Path) -> tuple[int, Path]:
    for _ in range(20):
        tmp = directory / f"{TEMP_PREFIX}{secrets.token_hex(6)}"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644), tmp
        except FileExistsError:
            continue
    raise WriteFailed(errno.EEXIST, "could not create a temporary file", str(directory))


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, crash_points: bool = True) -> None:
    """Replace `path` with `data` all-or-nothing (creating parent folders as needed).
    `crash_points=False` for factdesk's own bookkeeping files (the journal), so the named
    crash points fire only in corpus writes."""
    point = faults.point if crash_points else _no_point
    directory = path.parent
    try:  # (a read-only or immutable folder: words, not a traceback — issue 15)
        directory.mkdir(parents=True, exist_ok=True)
        try:
            mode: int | None = stat.S_IMODE(os.lstat(path).st_mode)
        except FileNotFoundError:
            mode = None
        fd, tmp = _open_temp(directory)
    except WriteFailed:
        raise
    except OSError as exc:
        raise WriteFailed(exc.errno or errno.EIO, f"could not write {path}: {exc.strerror or exc}",
                          str(path)) from exc
    try:
        try:
            _write_all(fd, data)
            point("write.tmp_written")
            os.fsync(fd)
            point("write.tmp_fsynced")
            if mode is not None:
                os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        _remove_quietly(tmp)
        raise WriteFailed(exc.errno or errno.EIO, f"could not write {path}: {exc.strerror or exc}",
                          str(path)) from exc
    point("write.replaced")
    fsync_dir(directory)
    point("write.dir_fsynced")


def _no_point(name: str) -> None:
    return None


def remove_stale_temps(directory: Path) -> list[Path]:
    """Delete our own temp files in `directory` (call only while holding the writer lock)."""
    removed = []
    for tmp in directory.glob(TEMP_PREFIX + "*") if directory.is_dir() else []:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
            removed.append(tmp)
    return removed


def remove(path: Path) -> None:
    """Delete `path` (a retraction or the old side of a move) and make it durable."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise WriteFailed(exc.errno or errno.EIO, f"could not delete {path}: {exc.strerror}",
                          str(path)) from exc
    fsync_dir(path.parent)
    _prune_empty(path.parent)


def _prune_empty(directory: Path) -> None:
    """Remove folders a deletion left empty, up to (not including) `kb/`, like git does."""
    while directory.name and directory.name != "kb":
        try:
            os.rmdir(directory)
        except OSError:
            return
        directory = directory.parent


def _remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def linked_component(repo: Path, rel: str) -> str | None:
    """The first part of the repo-relative path `rel` (a folder on the way, or the file
    itself) that is a symbolic link, or None. factdesk never reads or writes through one
    (RELIABILITY C05, C06): `O_NOFOLLOW` guards only the last part of a path."""
    parts = rel.split("/")
    for depth in range(1, len(parts) + 1):
        part = "/".join(parts[:depth])
        if os.path.islink(repo / part):
            return part
    return None


def read_config(repo: Path, rel: str) -> tuple[bytes | None, str | None]:
    """A configuration file's bytes (the ontology, the agent registry): (bytes, None);
    (None, None) when it does not exist; (None, why) when it is not read: a symbolic link
    on its path (its content would not be the repository's) or an error from the system."""
    if link := linked_component(repo, rel):
        return None, f"{link} is a symbolic link: not read"
    try:
        return read_or_none(repo / rel), None
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or exc}"


def read_or_none(path: Path) -> bytes | None:
    """The file's bytes, or None when it does not exist (symlinks are not followed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class NotRegular(FactdeskError):
    """A file factdesk reads is not a regular file (a FIFO, a device, a socket, a folder or
    a symbolic link); nothing was read from it."""


class TooLarge(FactdeskError):
    """A file factdesk reads is larger than the limit for its kind; it was not read."""


def read_regular(path: Path, *, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them (issue 15 #6). The
    open never blocks (O_NONBLOCK: a FIFO with no writer) and follows no symbolic link;
    anything but a regular file raises `NotRegular`, a longer file `TooLarge`, both naming
    the path. A missing file raises FileNotFoundError, as `open` does."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegular(f"{path}: a symbolic link; not read") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(f"{path}: not a regular file (a FIFO, device or folder); not read")
        if st.st_size > limit:
            raise TooLarge(f"{path}: {st.st_size} bytes, more than the {limit} read for it")
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise TooLarge(f"{path}: more than the {limit} bytes read for it")
        return b"".join(chunks)
    finally:
        os.close(fd)
