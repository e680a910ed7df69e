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

#: the most `read_config` reads of one configuration file (the ontology, the registry)
CONFIG_LIMIT = 8 << 20
#: the most `read_or_none` reads (factdesk's logs, a fact file being rewritten)
READ_LIMIT = 64 << 20


class NotRegular(FactdeskError, OSError):
    """The path is a FIFO, a device, a socket, a folder or a symbolic link: not read
    (RELIABILITY C08; issue 15 #6: a FIFO would block the reader, a device never end)."""

    def __init__(self, path: Path | str, what: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({what}): not read", os.fspath(path))
        self.path = os.fspath(path)
        self.what = what

    def __str__(self) -> str:
        return f"{self.path} is not a regular file ({self.what}): not read"


class TooLarge(FactdeskError, OSError):
    """The file is over the reader's size limit: not read."""

    def __init__(self, path: Path | str, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"file is over {limit} bytes (limit): not read",
                         os.fspath(path))
        self.path = os.fspath(path)
        self.size = size
        self.limit = limit

    def __str__(self) -> str:
        return f"{self.path} is over {self.limit} bytes: not read"


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


def read_config(repo: Path, rel: str, *, limit: int = CONFIG_LIMIT
                ) -> tuple[bytes | None, str | None]:
    """A configuration file's bytes (the ontology, the agent registry): (bytes, None);
    (None, None) when it does not exist; (None, why) when it is not read: a symbolic link
    on its path (its content would not be the repository's), not a regular file (a FIFO,
    a device), over `limit`, or an error from the system."""
    if link := linked_component(repo, rel):
        return None, f"{link} is a symbolic link: not read"
    try:
        return read_or_none(repo / rel, limit=limit), None
    except NotRegular as exc:
        return None, f"is not a regular file ({exc.what}): not read"
    except TooLarge as exc:
        return None, f"is over {exc.limit} bytes: not read"
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or exc}"


def read_or_none(path: Path, *, limit: int = READ_LIMIT) -> bytes | None:
    """The file's bytes, or None when it does not exist; `read_regular`'s rules otherwise
    (`NotRegular`, `TooLarge`)."""
    try:
        return read_regular(path, limit=limit)
    except FileNotFoundError:
        return None


def read_regular(path: Path, *, limit: int) -> bytes:
    """The bytes of the regular file at `path`, never blocking and never more than `limit`
    bytes: a FIFO, a device, a socket or a symbolic link (not followed) raises `NotRegular`,
    a longer file `TooLarge`; `FileNotFoundError` and other `OSError`s pass through. Every
    configuration read and the corpus scan's reader (`read_fd`) share these rules."""
    return read_path(os.fspath(path), limit)[0]


def read_path(path: str, limit: int) -> tuple[bytes, os.stat_result]:
    """`read_regular` with the stat of the file read (plain strings: the corpus scan calls
    this once per fact)."""
    try:  # (a device is not even opened: opening one can act, a tape rewinds)
        st = os.lstat(path)
    except OSError:
        st = None  # (open says why, below)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise NotRegular(path, file_kind(st.st_mode))
    try:
        # O_NONBLOCK: a FIFO swapped in since the lstat is not waited on
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW on a link swapped in
            raise NotRegular(path, "a symbolic link") from exc
        raise
    try:
        return read_fd(fd, path, limit)
    finally:
        os.close(fd)


def read_fd(fd: int, path: str, limit: int) -> tuple[bytes, os.stat_result]:
    """Read the open file `fd` whole after checking (fstat) that it is a regular file of at
    most `limit` bytes; stops reading at `limit` + 1 bytes whatever the stat said (a file
    that grows meanwhile)."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegular(path, file_kind(st.st_mode))
    if st.st_size > limit:
        raise TooLarge(path, st.st_size, limit)
    chunks = []
    left = limit + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    data = b"".join(chunks)
    if len(data) > limit:
        raise TooLarge(path, len(data), limit)
    return data, st


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a file"
