"""The agents' records cached in the index, per index version (issue 16: the Agents tab
filled < 1 s from a cached result).

One `meta` row, `agents_cache`, holds `{"key": …, "data": …}`; the key names the index
version it was computed from (the index's HEAD, work-tree state, registry and ontology
stamps and day) plus what the caller adds (thresholds, agent branch tips, the record
format's version). A rebuilt index starts without it. The value is derived data: a row
that does not parse is ignored and replaced.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable

META_KEY = "agents_cache"
#: the meta keys that make an index version
VERSION_KEYS = ("head", "dirty", "registry", "ontology", "today", "root")


def version_key(conn: sqlite3.Connection, extra: Iterable[str] = ()) -> str:
    """A digest of the index version (`VERSION_KEYS`) and `extra`."""
    meta = dict(conn.execute(
        f"SELECT key, value FROM meta WHERE key IN ({','.join('?' * len(VERSION_KEYS))})",
        VERSION_KEYS).fetchall())
    parts = [f"{k}={meta.get(k, '')}" for k in VERSION_KEYS] + list(extra)
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


def cached_value(conn: sqlite3.Connection, key: str) -> object | None:
    """The value cached under `key`, or None."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    if row is None:
        return None
    try:
        found = json.loads(row[0])
    except (TypeError, ValueError):
        return None
    if not isinstance(found, dict) or found.get("key") != key:
        return None
    return found.get("data")


def store_value(conn: sqlite3.Connection, key: str, data: object) -> None:
    """Keep `data` (JSON-able) under `key`; an index that cannot be written is only slower
    next time."""
    try:
        with conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                         (META_KEY, json.dumps({"key": key, "data": data}, ensure_ascii=False)))
    except sqlite3.Error:
        pass


def cached(conn: sqlite3.Connection, key: str, compute: Callable[[], object]) -> tuple[object, bool]:
    """(value, whether it came from the cache): the cached value for `key`, else
    `compute()`, stored."""
    found = cached_value(conn, key)
    if found is not None:
        return found, True
    data = compute()
    store_value(conn, key, data)
    return data, False
