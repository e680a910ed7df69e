"""The commits the curation trust rule reads, parsed once and kept by sha (issue 23 #7):
`<git common dir>/factdesk/decisions.db`, never in the work tree.

The trust rule (`curation.trust`) reads every commit on the curated branch's first-parent
line whose message holds `Factdesk-Action-Id: ` — all of them: a depth cap let older
decisions drop out and their proposals reopen. Read from git each time that is a walk of
the whole line (100,000 commits at 100,000 facts); here it is one walk, then O(new):

- `commits`: per sha, what `git log` said of it (parents, e-mails, subject, message) and its
  final trailer block, parsed once; `older`: the next such commit on *its own* first-parent
  line ("" at the root). A commit's id names its content and its parents, so its line and
  these rows never change.
- `tips`: a branch tip read before → the newest such commit on its line. A new tip is read
  as `git log <old tip>..<tip>` when an old tip is on its first-parent line (git says so:
  `gitreview.first_parent_since`); else as a whole line.
- `sublines`: a trusted sync merge's second-parent line down to what its first parent has
  (tip and stops in the key) → its commits: fixed by their ids too.

Verdicts are not kept: they depend on the registry and on where sync merges sit, and are
recomputed from these rows on each read (cheap; `trust._decisions_on`).

Never trusted over git: what could change a line without changing its ids — replace refs,
grafts, a shallow boundary — is stamped (`world_stamp`), and a different stamp empties the cache;
a rewritten branch has a new tip whose line git checks before any row is used; a chain
with a missing link, a damaged, foreign or old-version file is read from git again (the file
moved aside). Derived data only: deleting it loses nothing.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

from factdesk.corpus import githistory, gitrepo, gitreview
from factdesk.corpus.githistory import LoggedCommit
from factdesk.index import cache_file

VERSION = 1
APPLICATION_ID = 0x46444B44  # "FDKD"
#: what a decision's (and a sync merge's) message holds: the trust rule reads these only
NEEDLE = "Factdesk-Action-Id: "
#: how many old tips a new one is tried against, newest first (each costs one rev-list)
_BASES = 3
#: old tips kept (a row each)
_KEEP_TIPS = 64
_SHA = re.compile(r"^[0-9a-f]{40}$")


common_dir = cache_file.common_dir


def cache_path(repo: Path) -> Path:
    return common_dir(repo) / "factdesk" / "decisions.db"


def line(repo: Path, tip: str, exclude: Sequence[str] = ()) -> list[LoggedCommit]:
    """The commits of `tip`'s first-parent line (merges included) whose message holds
    `NEEDLE`, newest first, stopping at what `exclude` reaches: `githistory.decision_log`'s
    answer, from the cache when it has it. A range or a name that is not a full commit id
    is read from git directly."""
    if not _SHA.match(tip) or not all(_SHA.match(e) for e in exclude):
        return githistory.decision_log(repo, tip, NEEDLE, merges=True, exclude=exclude)
    try:
        conn = _connect(cache_path(repo))
    except (OSError, sqlite3.DatabaseError, gitrepo.GitError):
        return githistory.decision_log(repo, tip, NEEDLE, merges=True, exclude=exclude)
    try:
        _check_world(conn, repo)
        if exclude:
            return _subline(conn, repo, tip, tuple(exclude))
        return _main_line(conn, repo, tip)
    except (sqlite3.DatabaseError, ValueError, TypeError):  # damaged rows: git again
        return githistory.decision_log(repo, tip, NEEDLE, merges=True, exclude=exclude)
    finally:
        conn.close()


# -- the file ----------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE commits (sha TEXT PRIMARY KEY, parents TEXT NOT NULL, author TEXT NOT NULL,
                      committer TEXT NOT NULL, subject TEXT NOT NULL, message TEXT NOT NULL,
                      trailers TEXT, older TEXT);
CREATE TABLE tips (tip TEXT PRIMARY KEY, newest TEXT NOT NULL, used INTEGER NOT NULL);
CREATE TABLE sublines (key TEXT PRIMARY KEY, shas TEXT NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _connect(path: Path) -> sqlite3.Connection:
    return cache_file.connect(path, app_id=APPLICATION_ID, version=VERSION, schema=_SCHEMA,
                              what="decision cache")


world_stamp = githistory.world_stamp


def _check_world(conn: sqlite3.Connection, repo: Path) -> None:
    stamp = world_stamp(repo)
    row = conn.execute("SELECT value FROM meta WHERE key = 'world'").fetchone()
    if row is not None and row[0] == stamp:
        return
    with conn:
        for table in ("commits", "tips", "sublines", "meta"):
            conn.execute(f"DELETE FROM {table}")
        conn.execute("INSERT INTO meta VALUES ('world', ?)", (stamp,))


# -- reading -----------------------------------------------------------------------------------


def _main_line(conn: sqlite3.Connection, repo: Path, tip: str) -> list[LoggedCommit]:
    row = conn.execute("SELECT newest FROM tips WHERE tip = ?", (tip,)).fetchone()
    if row is not None:
        found = _chain(conn, row[0])
        if found is not None:
            _touch(conn, tip, row[0])
            return found
    for (base, newest) in conn.execute("SELECT tip, newest FROM tips ORDER BY used DESC LIMIT ?",
                                       (_BASES,)).fetchall():
        if gitreview.first_parent_since(repo, base, tip) is None:
            continue
        below = _chain(conn, newest)
        if below is None:
            continue
        new = githistory.decision_log(repo, tip, NEEDLE, merges=True, exclude=(base,))
        _store(conn, new, newest)
        _touch(conn, tip, new[0].sha if new else newest)
        return [*new, *below]
    whole = githistory.decision_log(repo, tip, NEEDLE, merges=True)
    _store(conn, whole, "")
    _touch(conn, tip, whole[0].sha if whole else "")
    return whole


def _subline(conn: sqlite3.Connection, repo: Path, tip: str,
             exclude: tuple[str, ...]) -> list[LoggedCommit]:
    key = " ^".join((tip, *exclude))
    row = conn.execute("SELECT shas FROM sublines WHERE key = ?", (key,)).fetchone()
    if row is not None:
        shas = row[0].split()
        rows = _rows(conn, shas)
        if len(rows) == len(shas):
            return [rows[s] for s in shas]
    found = githistory.decision_log(repo, tip, NEEDLE, merges=True, exclude=exclude)
    _store(conn, found, None)
    _write(conn, "INSERT OR REPLACE INTO sublines VALUES (?, ?)",
           (key, " ".join(c.sha for c in found)))
    return found


_CHAIN = """
WITH RECURSIVE chain(sha, n) AS (
    SELECT ?, 0
    UNION ALL
    SELECT c.older, chain.n + 1 FROM commits c JOIN chain ON c.sha = chain.sha
    WHERE c.older IS NOT NULL AND c.older != '')
SELECT c.sha, c.parents, c.author, c.committer, c.subject, c.message, c.trailers, c.older
FROM chain JOIN commits c ON c.sha = chain.sha ORDER BY chain.n
"""


def _chain(conn: sqlite3.Connection, newest: str) -> list[LoggedCommit] | None:
    """The commits from `newest` down its `older` links, or None when a link is missing."""
    if newest == "":
        return []
    out = []
    older = None
    for row in conn.execute(_CHAIN, (newest,)):
        out.append(_logged(row))
        older = row[7]
    return out if out and older == "" else None


def _rows(conn: sqlite3.Connection, shas: Sequence[str]) -> dict[str, LoggedCommit]:
    found: dict[str, LoggedCommit] = {}
    for i in range(0, len(shas), 500):
        part = shas[i:i + 500]
        for row in conn.execute(
                "SELECT sha, parents, author, committer, subject, message, trailers, older "
                f"FROM commits WHERE sha IN ({','.join('?' * len(part))})", part):
            found[row[0]] = _logged(row)
    return found


def _logged(row: tuple[str, ...]) -> LoggedCommit:
    sha, parents, author, committer, subject, message, trailers = row[:7]
    block = None if trailers is None else tuple((str(k), str(v)) for k, v in json.loads(trailers))
    return LoggedCommit(sha, tuple(parents.split()), author, committer, subject, message, block)


# -- writing (a cache that cannot be written is only slower next time) -------------------------


def _store(conn: sqlite3.Connection, commits: Sequence[LoggedCommit], below: str | None) -> None:
    """Keep `commits` (one line, newest first); `below`: the commit after the last of them
    on that line ("" none; None: not known, as on a sync merge's cut line)."""
    rows = []
    for i, c in enumerate(commits):
        older = commits[i + 1].sha if i + 1 < len(commits) else below
        rows.append((c.sha, " ".join(c.parents), c.author_email, c.committer_email, c.subject,
                     c.message, None if c.trailers is None else json.dumps(c.trailers),
                     older))
    _write(conn, "INSERT INTO commits VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(sha) DO "
                 "UPDATE SET older = excluded.older WHERE excluded.older IS NOT NULL", rows,
           many=True)


def _touch(conn: sqlite3.Connection, tip: str, newest: str) -> None:
    _write(conn, "INSERT OR REPLACE INTO tips VALUES (?, ?, ?)", (tip, newest, time.time_ns()))
    _write(conn, "DELETE FROM tips WHERE tip NOT IN "
                 "(SELECT tip FROM tips ORDER BY used DESC LIMIT ?)", (_KEEP_TIPS,))


def _write(conn: sqlite3.Connection, sql: str, args: object, *, many: bool = False) -> None:
    try:
        with conn:
            if many:
                conn.executemany(sql, args)  # type: ignore[arg-type]
            else:
                conn.execute(sql, args)  # type: ignore[arg-type]
    except sqlite3.OperationalError:  # (read-only, locked past the timeout, full disk)
        pass
