"""Proposal checks kept by agent commit (issue 23 #7): `<git common dir>/factdesk/checks.db`,
never in the work tree.

A proposal's checks (`review.checks`: each version as if accepted) are a function of
- the agent commit (its id names its versions, its author, its parent),
- the corpus the checks read: the index version (`index_stamp`: the indexed HEAD, the
  paths that differ from it and their indexed rows' checksums, the registry, ontology,
  repository ids and the day the index was read with) and the rule setting the checks run
  with (the registry and ontology files as the work tree holds them now),
- the branch's earlier open proposals they build on (`chain`: a digest of each earlier
  proposal's id and the status, path and version of each of its facts, in branch order).

`answers`: the whole answer of `proposals --format json` (`answer_key`), for a read that finds
nothing changed: keyed by the index version and rule setting (as above), every ref of the
repository and what it points to (the queue, the decisions on the curated branch, the sync
merges: all read from git through them), `decision_log.world_stamp`, the repository's
config, the command's options and the code that wrote the answer. A moved ref, a new
commit, an edit in the work tree or a new day is another key; the last few answers are
kept (`_KEEP_ANSWERS`).

`reads`: what `review.proposals` read from git for one agent branch against the curated
branch (the range's commits with their changes, the merge base, the two tree diffs), keyed
by the two tips and `decision_log.world_stamp` (replace refs, grafts, shallow: what can
change a line without changing its ids): fixed by those ids, so a warm queue runs no git
process per branch, and a moved tip is read from git again.

One row per agent commit: `(sha, key, value)`, `key` the digest of all of that; a row
whose key differs is no answer (checked again, and replaced). So a new agent commit costs
one check; a decision or a curated commit changes the key and the queue is checked again
(the curated corpus is what every check reads). Derived data only: a damaged, foreign or
old-version file is moved aside (`cache_file`), a row that does not parse is a miss, a
file that cannot be written makes the next read slower, never different. Values are JSON
with ASCII escapes (a path that is not UTF-8 keeps its lone surrogates (`\\udcNN`) through it).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from factdesk.corpus import gitrepo
from factdesk.corpus.ontology import ontology_bytes
from factdesk.corpus.registry_io import REGISTRY_PATH
from factdesk.fsio import read_config
from factdesk.index import cache_file
from factdesk.index.rows import rows_in

if TYPE_CHECKING:
    from factdesk.index.writing import RuleSetting

VERSION = 2  # 2: `answers`
APPLICATION_ID = 0x46444B43  # "FDKC"
_SCHEMA = """
CREATE TABLE checked (sha TEXT PRIMARY KEY, key TEXT NOT NULL, value TEXT NOT NULL);
CREATE TABLE reads (key TEXT PRIMARY KEY, value TEXT NOT NULL, used INTEGER NOT NULL);
CREATE TABLE answers (key TEXT PRIMARY KEY, value TEXT NOT NULL, used INTEGER NOT NULL);
"""
#: whole answers kept (each up to tens of MB for thousands of proposals)
_KEEP_ANSWERS = 4
#: branch reads kept (a row each; the least recently used go first)
_KEEP_READS = 512
#: rows written per transaction
_BATCH = 256
#: the index `meta` rows a check's answer depends on
_META = ("head", "dirty", "pending", "registry", "ontology", "repo_id", "today", "root")


def cache_path(repo: Path) -> Path:
    return cache_file.common_dir(repo) / "factdesk" / "checks.db"


def index_stamp(conn: sqlite3.Connection, extra: Iterable[str] = ()) -> str:
    """A digest of the index version the checks read through `conn` (module doc), and of
    `extra`. The paths that differ from HEAD are named in `meta` by path only, so their
    rows' checksums are part of it: a second edit of the same file is another version."""
    meta = dict(conn.execute(
        f"SELECT key, value FROM meta WHERE key IN ({','.join('?' * len(_META))})",
        _META).fetchall())
    parts = [f"{k}={meta.get(k, '')}" for k in _META]
    off_head = sorted({p for k in ("dirty", "pending") for p in meta.get(k, "").split("\n") if p})
    rows = {r[0]: r[1:] for r in rows_in(
        conn, "SELECT path, status, blob, sum_head, sum_text, sum_rest FROM facts "
              "WHERE path IN ({marks})", off_head)} if off_head else {}
    parts += [f"{p}:{rows.get(p)!r}" for p in off_head]
    parts += list(extra)
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def review_stamp(conn: sqlite3.Connection, repo: Path, setting: RuleSetting) -> str:
    """The stamp of one run of review's checks: the index version, the rule files and
    the rule setting they ran with ("" when the index cannot be read: nothing is kept)."""
    try:
        return index_stamp(conn, [
            setting_stamp(repo), f"repo_id={sorted(setting.repo_id or ())}",
            f"today={setting.today.isoformat()}", f"history={setting.history_known}"])
    except sqlite3.DatabaseError:
        return ""


def setting_stamp(repo: Path) -> str:
    """The registry and ontology files as the work tree holds them (the rule setting the
    checks run with is read from these)."""
    data, why = read_config(repo, REGISTRY_PATH)
    parts = [gitrepo.blob_id(data) if data is not None else f"-{why or ''}"]
    found = ontology_bytes(repo)
    if found is not None:
        rel, onto, why = found
        parts.append(f"{rel}:{gitrepo.blob_id(onto) if onto is not None else f'-{why}'}")
    return " ".join(parts)


def answer_key(conn: sqlite3.Connection, repo: Path, setting: RuleSetting,
               options: Iterable[str]) -> str:
    """The key of a whole answer (module doc: `answers`); "" when there is none to give
    (the index cannot be read, git cannot list the refs)."""
    from factdesk.corpus.githistory import every_ref, world_stamp

    stamp = review_stamp(conn, repo, setting)
    if not stamp:
        return ""
    try:
        refs = every_ref(repo)
        head = (gitrepo.git_dir(repo) / "HEAD").read_bytes()
        config = (cache_file.common_dir(repo) / "config").read_bytes()
    except (OSError, gitrepo.GitError):
        return ""
    parts = [stamp, hashlib.sha256(refs).hexdigest(), hashlib.sha256(head).hexdigest(),
             hashlib.sha256(config).hexdigest(), world_stamp(repo), _code_stamp(), *options]
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def _code_stamp() -> str:
    """The code that writes an answer: the installed version and its modules' files (an
    edited checkout under one version number)."""
    import factdesk
    from factdesk.version import version

    root = Path(factdesk.__file__).parent
    parts = [version()]
    for rel in ("cli/review_cmds.py", "review/checks.py", "review/model.py", "review/rows.py",
                "review/clean.py", "review/proposals.py", "index/check_cache.py"):
        try:
            st = (root / rel).stat()
            parts.append(f"{rel}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{rel}:-")
    return " ".join(parts)


def chain(previous: str, sha: str, facts: Iterable[tuple[str, str, str | None, str]]) -> str:
    """The digest of a branch's proposals up to and including `sha`, from `previous` (the
    digest of those before it, "" for none); `facts`: (path, status, new blob, change)."""
    text = "\x00".join([previous, sha, *(f"{p}\x01{s}\x01{b or ''}\x01{c}" for p, s, b, c in facts)])
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def key_of(stamp: str, sha: str, chained: str) -> str:
    return hashlib.sha256(f"{stamp}\x00{sha}\x00{chained}".encode()).hexdigest()


class CheckCache:
    """The cache file, open for one run of checks (a context manager). Reads and writes
    that fail make it a cache that holds nothing."""

    def __init__(self, repo: Path) -> None:
        self._waiting: list[tuple[str, str, str]] = []
        self.conn: sqlite3.Connection | None
        try:
            self.conn = cache_file.connect(cache_path(repo), app_id=APPLICATION_ID,
                                           version=VERSION, schema=_SCHEMA, what="check cache")
        except (OSError, sqlite3.DatabaseError, gitrepo.GitError):
            self.conn = None

    def __enter__(self) -> CheckCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_many(self, keys: Mapping[str, str]) -> dict[str, dict[str, object]]:
        """sha → the value kept for it under exactly `keys[sha]` (others: missing)."""
        found: dict[str, dict[str, object]] = {}
        if self.conn is None or not keys:
            return found
        try:
            for sha, key, value in rows_in(
                    self.conn, "SELECT sha, key, value FROM checked WHERE sha IN ({marks})",
                    list(keys)):
                if keys.get(sha) != key:
                    continue
                try:
                    data = json.loads(value)
                except ValueError:
                    continue
                if isinstance(data, dict):
                    found[sha] = data
        except sqlite3.DatabaseError:
            return {}
        return found

    def put(self, sha: str, key: str, value: Mapping[str, object]) -> None:
        if self.conn is None:
            return
        self._waiting.append((sha, key, json.dumps(value)))
        if len(self._waiting) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        rows, self._waiting = self._waiting, []
        if self.conn is None or not rows:
            return
        try:
            with self.conn:
                self.conn.executemany("INSERT OR REPLACE INTO checked VALUES (?, ?, ?)", rows)
        except sqlite3.Error:  # (read-only, locked past the timeout, full disk)
            pass

    def read(self, key: str) -> object | None:
        """The branch read kept under `key` (JSON), or None."""
        text = self._kept("reads", key, touch=False)
        try:
            return None if text is None else json.loads(text)
        except ValueError:
            return None

    def keep_read(self, key: str, value: object) -> None:
        self._keep("reads", key, json.dumps(value), _KEEP_READS)

    def answer(self, key: str) -> str | None:
        """The whole answer kept under `key`, or None."""
        return self._kept("answers", key, touch=True) if key else None

    def keep_answer(self, key: str, text: str) -> None:
        if key:
            self._keep("answers", key, text, _KEEP_ANSWERS)

    def _kept(self, table: str, key: str, *, touch: bool) -> str | None:
        """`table`'s value under `key` (`touch`: marked as used now), or None."""
        if self.conn is None:
            return None
        try:
            row = self.conn.execute(f"SELECT value FROM {table} WHERE key = ?", (key,)).fetchone()
            if row is not None and touch:
                with self.conn:
                    self.conn.execute(f"UPDATE {table} SET used = ? WHERE key = ?",
                                      (time.time_ns(), key))
            return None if row is None else str(row[0])
        except sqlite3.Error:
            return None

    def _keep(self, table: str, key: str, text: str, keep: int) -> None:
        """`text` under `key` in `table`, keeping its `keep` most recently used rows."""
        if self.conn is None:
            return
        try:
            with self.conn:
                self.conn.execute(f"INSERT OR REPLACE INTO {table} VALUES (?, ?, ?)",
                                  (key, text, time.time_ns()))
                self.conn.execute(f"DELETE FROM {table} WHERE key NOT IN (SELECT key FROM "
                                  f"{table} ORDER BY used DESC LIMIT ?)", (keep,))
        except sqlite3.Error:
            pass

    def drop(self) -> None:
        """Forget what waits to be written (the corpus changed while it was checked)."""
        self._waiting = []

    def close(self) -> None:
        self.flush()
        if self.conn is not None:
            self.conn.close()
            self.conn = None
