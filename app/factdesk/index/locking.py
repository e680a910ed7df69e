"""Locks and transactions of the index: one file lock that waits a bounded time, the
updater's lock built on it, and the write transaction every update runs in.

`file_lock` is the one lock-with-timeout loop of the product (the curation writer's lock
is the same loop with its own message)."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from factdesk import faults
from factdesk.errors import IndexBusy, IndexDiskFull, IndexUnwritable

_T = TypeVar("_T")

#: how often a waiting lock tries again
POLL_S = 0.02


@contextlib.contextmanager
def file_lock(lock_path: Path, wait: float | None,
              busy: Callable[[], BaseException]) -> Iterator[None]:
    """Hold an exclusive `flock` on `lock_path` (created when missing) for the block.
    `wait`: seconds to wait for another holder before raising `busy()`; None waits for as
    long as it takes. Released when the block ends or the process dies."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if wait is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise busy() from None
                    time.sleep(POLL_S)
        yield
    finally:
        os.close(fd)


def update_lock(path: Path, wait: float | None = None) -> contextlib.AbstractContextManager[None]:
    """One updater per index file across processes. Without it a second process could find
    a rebuild half-done (not yet marked complete), take it for damage and move it aside.
    `wait`: seconds to wait for another updater before `IndexBusy` (None: no limit)."""
    return file_lock(path.with_name(path.name + ".lock"), wait, lambda: IndexBusy(
        f"{path}: another factdesk process has been updating the index for "
        f"{wait:g} s; nothing was changed (try again when it is done)"))


def ensure_writable(folder: Path) -> None:
    """Make `folder` (when missing) and check that a file can be made in it, or raise
    `IndexUnwritable` naming it. (A probe, not `os.access`: permission bits do not stop
    root, an immutable flag or a read-only mount do.)"""
    probe = folder / f".write-probe-{os.getpid()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    except FileExistsError:  # (a probe left by a killed process of the same id)
        with contextlib.suppress(OSError):
            os.unlink(probe)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise IndexDiskFull(f"{folder}: the disk holding the index is full "
                                f"({exc.strerror or exc}); nothing was changed: free some "
                                "space and try again") from exc
        raise IndexUnwritable(
            f"{folder}: the index's folder cannot be written ({exc.strerror or exc}); "
            "factdesk keeps its index there and changed nothing: make it writable, "
            "e.g. chmod u+w (or chattr -i) on it") from exc


def inode(path: Path) -> int | None:
    """The file's inode number (None when it is missing): tells a file replaced by a rename
    from the one a connection opened."""
    try:
        return path.stat().st_ino
    except OSError:
        return None


def transaction(conn: sqlite3.Connection, work: Callable[[], _T]) -> _T:
    """Run `work` in one write transaction: a crash or error leaves the old index intact."""
    conn.isolation_level = None
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = work()
    except BaseException:
        # (a rollback that fails, or finds the transaction gone, must not hide the error:
        # damage is told from other errors by it)
        with contextlib.suppress(sqlite3.Error):
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        raise
    faults.point("index.txn_open")
    conn.execute("COMMIT")
    return result
