"""The SQLite files of derived data kept beside the index, under the git directory
(`decisions.db`, `checks.db`): opened once here, so every such cache treats a damaged,
foreign or old-version file the same way — moved aside (`<name>.corrupt-<time>`) and
started afresh. What they hold is rebuilt from git; deleting one loses nothing."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from factdesk.corpus import gitrepo

common_dir = gitrepo.common_dir


def _open(path: Path, app_id: int, version: int, schema: str, what: str) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=10)
    try:
        found = (conn.execute("PRAGMA application_id").fetchone()[0],
                 conn.execute("PRAGMA user_version").fetchone()[0])
        if found != (app_id, version):
            tables = conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
            if tables:
                raise sqlite3.DatabaseError(f"{path} is not factdesk's {what} v{version}")
            conn.executescript(schema)
            conn.execute(f"PRAGMA application_id = {app_id}")
            conn.execute(f"PRAGMA user_version = {version}")
            conn.commit()
    except BaseException:
        conn.close()
        raise
    return conn


def connect(path: Path, *, app_id: int, version: int, schema: str,
            what: str) -> sqlite3.Connection:
    """The cache file at `path` (made with `schema` when new). A file that is not this
    cache (damaged, another program's, another version) is moved aside and a new one made;
    a locked or read-only one raises `sqlite3.OperationalError` (not damage: the caller
    reads git instead)."""
    try:
        return _open(path, app_id, version, schema, what)
    except sqlite3.OperationalError:
        raise
    except sqlite3.DatabaseError:
        if path.exists():
            path.replace(path.with_name(f"{path.name}.corrupt-{int(time.time())}"))
        return _open(path, app_id, version, schema, what)
