"""A small cache of transition logs: `<git dir>/factdesk/reflect.db` (never in the work tree).

`cached_walk(repo, base)` loads the log last saved for that start (the whole history, or
`base..`), extends it to HEAD (`transitions.extend`: only the new commits are read; a
rewritten history is walked again) and saves it. The file is derived data: a damaged,
foreign or old-version file is moved aside and rebuilt, never trusted.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

from factdesk.corpus import githistory, gitrepo
from factdesk.reflect.transitions import TransitionLog, extend, walk

VERSION = 1
APPLICATION_ID = 0x46444B52  # "FDKR"


def cache_path(repo: Path) -> Path:
    return gitrepo.git_dir(repo) / "factdesk" / "reflect.db"


def _open(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=10)
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if (app_id, version) != (APPLICATION_ID, VERSION):
        tables = conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
        if tables:
            raise sqlite3.DatabaseError(f"{path} is not factdesk's reflect cache v{VERSION}")
        conn.execute("CREATE TABLE logs (base TEXT PRIMARY KEY, data TEXT NOT NULL)")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {VERSION}")
        conn.commit()
    return conn


def _connect(path: Path) -> sqlite3.Connection:
    try:
        return _open(path)
    except sqlite3.DatabaseError:
        if path.exists():
            path.replace(path.with_name(f"{path.name}.corrupt-{int(time.time())}"))
        return _open(path)


def cached_walk(repo: Path, base: str | None = None, until: str = "HEAD") -> TransitionLog:
    """The transitions of `base..until` (whole history without `base`), from the cache when
    it has them, with only the new commits read.

    A `base` on the first-parent chain is answered from the whole history's log (cached,
    then filtered): rebuilding the state at `base` from its tree costs as much as walking
    the whole history."""
    key = "" if base is None else githistory.resolve_commit(repo, base) or base
    if base is not None:
        chain = githistory.first_parent_chain(repo, until)
        if key in chain:
            whole = cached_walk(repo, None, until)
            seq = chain.index(key)
            return replace(whole, base=key, commits=len(chain) - 1 - seq,
                           transitions=[t for t in whole.transitions if t.seq > seq])
    path = cache_path(repo)
    try:
        conn = _connect(path)
    except (OSError, sqlite3.DatabaseError):  # unwritable git dir: no cache, same answer
        return walk(repo, until if base is None else f"{key}..{until}")
    try:
        log = None
        try:
            row = conn.execute("SELECT data FROM logs WHERE base = ?", (key,)).fetchone()
            if row is not None:
                log = TransitionLog.from_dict(json.loads(row[0]))
        except (sqlite3.DatabaseError, ValueError, TypeError, KeyError):
            log = None
        if log is None:
            log = walk(repo, until if base is None else f"{key}..{until}")
        else:
            log = extend(log, repo, until)
        try:
            conn.execute("INSERT OR REPLACE INTO logs (base, data) VALUES (?, ?)",
                         (key, json.dumps(log.as_dict(), ensure_ascii=False)))
            conn.commit()
        except sqlite3.DatabaseError:
            pass  # a cache that cannot be written is only slower next time
        return log
    finally:
        conn.close()
