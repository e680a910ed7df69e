"""Named crash points in the write path (RELIABILITY.md §3.3).

Production code calls `point(name)` at each step; it does nothing unless the environment
variable `FACTDESK_CRASH_AT` names that point, in which case the process kills itself
with SIGKILL there. Tests use it to prove that a crash at any step leaves old-or-new
bytes and a reportable state, never a mix.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

ENV = "FACTDESK_CRASH_AT"

#: the points of the curation write path (tests/curation/test_crash.py crashes at each)
WRITE_POINTS: tuple[str, ...] = (
    "write.tmp_written",
    "write.tmp_fsynced",
    "write.replaced",
    "write.dir_fsynced",
    "action.before_write",
    "action.journal_written",
    "action.file_replaced",
    "action.between_files",
    "commit.blob_written",
    "commit.tree_written",
    "commit.commit_written",
    "commit.before_cas",
    "commit.ref_updated",
    "commit.published",
    "commit.index_synced",
)

#: the index's: its write transaction is open, every row written, not yet committed
#: (RELIABILITY F07; tests/index/test_damage_and_stale.py)
INDEX_POINTS: tuple[str, ...] = ("index.txn_open",)

#: a sync's move of the branch (curation/gitwrite.move_branch): every file of the join
#: replaced, the ref not moved yet; the ref moved, git's index not synced yet
SYNC_POINTS: tuple[str, ...] = ("sync.files_replaced", "sync.published")

ALL_POINTS: tuple[str, ...] = WRITE_POINTS + INDEX_POINTS + SYNC_POINTS


#: in-process test hooks: what another writer does at a point (an agent's `git commit -a`,
#: a branch switch, a full disk), set only by tests through `at()`
_HOOKS: dict[str, Callable[[], None]] = {}


@contextmanager
def at(name: str, action: Callable[[], None]) -> Iterator[None]:
    """Run `action` each time the write path passes `name`, while the block runs (tests only)."""
    if name not in ALL_POINTS:
        raise ValueError(f"no crash point named {name!r}")
    _HOOKS[name] = action
    try:
        yield
    finally:
        _HOOKS.pop(name, None)


def point(name: str) -> None:
    """Crash here when asked to (a no-op otherwise)."""
    if _HOOKS:
        hook = _HOOKS.get(name)
        if hook is not None:
            hook()
    if os.environ.get(ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
