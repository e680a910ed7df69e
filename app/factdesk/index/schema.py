"""The SQLite cache: schema, location, opening with damage detection (RELIABILITY F).

The index lives under the repository's git directory (`.git/factdesk/index.v<N>.db`),
never in the working tree. It is derived: a missing, corrupt or old-schema file is moved
aside or ignored and rebuilt, never trusted; another program's SQLite file under its name
is left alone (`index_path`).
"""

from __future__ import annotations

import errno
import functools
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 9  # 9: per-row checksums (issue 15 #10)
APPLICATION_ID = 0x46444B31  # "FDK1"

#: how long a statement waits for another connection's lock (RELIABILITY F08)
BUSY_TIMEOUT_MS = 10_000

#: The full-text table (external content: its text columns are read from `facts`). A
#: rebuild makes it in a scratch database of its own too (index.textbuild).
FULL_TEXT = """CREATE VIRTUAL TABLE facts_fts USING fts5(
    title, body, domain, entities,
    content='facts', content_rowid='id', tokenize='unicode61 remove_diacritics 2',
    prefix='2 3'
)"""

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE facts (
    -- small, filterable columns first: a filter on a joined row then never reads the
    -- big text columns (or their overflow pages) at the end of the record
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,            -- live | broken | retracted
    kind TEXT, type TEXT, origin TEXT, origin_raw TEXT,
    claim_type TEXT, claim_type_derived INTEGER NOT NULL DEFAULT 0,
    claimant TEXT, claimant_derived INTEGER NOT NULL DEFAULT 0,
    claimant_type TEXT, claimant_type_derived INTEGER NOT NULL DEFAULT 0,
    subject_kind TEXT, subject_ref TEXT,
    settle_by TEXT,
    confidence REAL, sources INTEGER,
    evidence_weight REAL, evidence_weight_computed REAL,
    topic TEXT, folder TEXT,
    errors INTEGER NOT NULL DEFAULT 0, warnings INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER, created_sha TEXT, creator TEXT, creator_email TEXT,
    updated_at INTEGER, updated_sha TEXT, author TEXT, author_email TEXT, op TEXT,
    retracted_at INTEGER, retracted_sha TEXT, retracted_by TEXT, retracted_reason TEXT,
    blob TEXT, size INTEGER, mtime_ns INTEGER, title_line INTEGER NOT NULL DEFAULT 1,
    title TEXT NOT NULL DEFAULT '',
    settlement TEXT,
    domain TEXT NOT NULL DEFAULT '[]', entities TEXT NOT NULL DEFAULT '[]',
    refs TEXT NOT NULL DEFAULT '[]', extra TEXT NOT NULL DEFAULT '{}',
    key_lines TEXT NOT NULL DEFAULT '{}',
    body TEXT NOT NULL DEFAULT '',
    -- 64-bit checksums of groups of the values above (index.rows.SUM_GROUPS)
    sum_head INTEGER, sum_text INTEGER, sum_rest INTEGER
);
CREATE TABLE refs (src TEXT NOT NULL, target TEXT NOT NULL, PRIMARY KEY (src, target))
    WITHOUT ROWID;
CREATE TABLE problems (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, line INTEGER NOT NULL,
    code TEXT NOT NULL, severity TEXT NOT NULL, message TEXT NOT NULL
);
CREATE TABLE commits (
    sha TEXT PRIMARY KEY, seq INTEGER NOT NULL, first_parent INTEGER NOT NULL,
    parents TEXT NOT NULL, author TEXT, email TEXT, op TEXT, time INTEGER,
    subject TEXT, body TEXT
);
CREATE TABLE changes (
    sha TEXT NOT NULL, path TEXT NOT NULL, status TEXT NOT NULL,
    old_blob TEXT, new_blob TEXT, seq INTEGER NOT NULL, first_parent INTEGER NOT NULL
);
-- facts by status ('status:live' …) and problems ('problems'), kept by COUNTING's triggers:
-- an update's counts without a scan of every row (a tenth of a second at 1,000,000 facts)
CREATE TABLE counts (key TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX changes_path ON changes(path, seq);
CREATE INDEX changes_sha ON changes(sha);
""" + FULL_TEXT + """;
CREATE VIRTUAL TABLE facts_vocab USING fts5vocab(facts_fts, 'row');
"""


#: keep the full-text index in step with `facts` (created once a rebuild's rows are in);
#: a row updated with the same text leaves the full-text index alone (a relabel, a new
#: confidence, a settlement: the 'delete' and the insert re-tokenized the whole body, and
#: FTS5 merged its segments at the commit — 0.2 s of a 10-file commit at 100,000 facts)
TRIGGERS = """
CREATE TRIGGER facts_ai AFTER INSERT ON facts BEGIN
  INSERT INTO facts_fts(rowid, title, body, domain, entities)
  VALUES (new.id, new.title, new.body, new.domain, new.entities);
END;
CREATE TRIGGER facts_ad AFTER DELETE ON facts BEGIN
  INSERT INTO facts_fts(facts_fts, rowid, title, body, domain, entities)
  VALUES ('delete', old.id, old.title, old.body, old.domain, old.entities);
END;
CREATE TRIGGER facts_au AFTER UPDATE ON facts
WHEN old.id IS NOT new.id OR old.title IS NOT new.title OR old.body IS NOT new.body
  OR old.domain IS NOT new.domain OR old.entities IS NOT new.entities BEGIN
  INSERT INTO facts_fts(facts_fts, rowid, title, body, domain, entities)
  VALUES ('delete', old.id, old.title, old.body, old.domain, old.entities);
  INSERT INTO facts_fts(rowid, title, body, domain, entities)
  VALUES (new.id, new.title, new.body, new.domain, new.entities);
END;
"""

#: keep `counts` in step with `facts` and `problems` (created with TRIGGERS, after a
#: rebuild's rows are in and counted: `recount`); a key whose count falls to 0 goes, as a
#: count from scratch has none
COUNTING = """
CREATE TRIGGER facts_count_ai AFTER INSERT ON facts BEGIN
  INSERT INTO counts VALUES ('status:' || new.status, 1) ON CONFLICT(key) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER facts_count_ad AFTER DELETE ON facts BEGIN
  UPDATE counts SET n = n - 1 WHERE key = 'status:' || old.status;
  DELETE FROM counts WHERE key = 'status:' || old.status AND n <= 0;
END;
CREATE TRIGGER facts_count_au AFTER UPDATE OF status ON facts
WHEN old.status IS NOT new.status BEGIN
  UPDATE counts SET n = n - 1 WHERE key = 'status:' || old.status;
  DELETE FROM counts WHERE key = 'status:' || old.status AND n <= 0;
  INSERT INTO counts VALUES ('status:' || new.status, 1) ON CONFLICT(key) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER problems_count_ai AFTER INSERT ON problems BEGIN
  INSERT INTO counts VALUES ('problems', 1) ON CONFLICT(key) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER problems_count_ad AFTER DELETE ON problems BEGIN
  UPDATE counts SET n = n - 1 WHERE key = 'problems';
  DELETE FROM counts WHERE key = 'problems' AND n <= 0;
END;
"""
#: the names COUNTING and `counts` add: an index of this schema version written before
#: them gets them on update (`ensure_triggers`)
_COUNTING_NAMES = frozenset({"counts", *(line.split()[2] for line in COUNTING.splitlines()
                                         if line.startswith("CREATE TRIGGER"))})


def recount(conn: sqlite3.Connection) -> None:
    """`counts` from scratch (after a rebuild's bulk load, a repair)."""
    conn.execute("DELETE FROM counts")
    conn.execute("INSERT INTO counts SELECT 'status:' || status, COUNT(*) FROM facts "
                 "GROUP BY status")
    conn.execute("INSERT INTO counts SELECT 'problems', COUNT(*) FROM problems "
                 "HAVING COUNT(*) > 0")


def counted(conn: sqlite3.Connection) -> tuple[dict[str, int], int] | None:
    """(facts by status, problems) from `counts`; None for an index without it."""
    try:
        rows = conn.execute("SELECT key, n FROM counts").fetchall()
    except sqlite3.OperationalError:
        return None
    found = {str(k): int(n) for k, n in rows}
    return ({k.removeprefix("status:"): n for k, n in found.items() if k.startswith("status:")},
            found.get("problems", 0))


#: Secondary indexes of the tables a rebuild fills in bulk: created after the rows are in
#: (one sorted build each instead of 100,000 B-tree inserts into each of them).
BULK_INDEXES: tuple[str, ...] = (
    # (facet, status): facet counts and filters are answered from the index alone
    "CREATE INDEX facts_type ON facts(type, status)",
    "CREATE INDEX facts_kind ON facts(kind, status)",
    "CREATE INDEX facts_origin ON facts(origin, status)",
    "CREATE INDEX facts_claim ON facts(claim_type, status)",
    "CREATE INDEX facts_claimant ON facts(claimant, status)",
    "CREATE INDEX facts_claimant_type ON facts(claimant_type, status)",
    "CREATE INDEX facts_subject ON facts(subject_kind, status)",
    "CREATE INDEX facts_status ON facts(status)",
    # (updated_at, confidence and title alone: the sort indexes below lead with them)
    "CREATE INDEX facts_folder ON facts(folder)",
    # covering index: the incremental update compares file stamps without reading rows
    "CREATE INDEX facts_stamp ON facts(status, path, size, mtime_ns, blob)",
    "CREATE INDEX refs_target ON refs(target)",
    "CREATE INDEX problems_path ON problems(path, code)",
    "CREATE INDEX problems_code ON problems(code)",
)


def index_path(git_dir: Path) -> Path:
    """Where the index lives: `index.v<N>.db`, or `index.v<N>.factdesk.db` when another
    program's SQLite file holds that name (RELIABILITY F05: left alone)."""
    path = git_dir / "factdesk" / f"index.v{SCHEMA_VERSION}.db"
    return path.with_name(f"index.v{SCHEMA_VERSION}.factdesk.db") if is_foreign(path) else path


def is_foreign(path: Path) -> bool:
    """A SQLite database that another program made: SQLite's header with an
    `application_id` (header bytes 68–71) that is not ours, and tables, none of them ours.
    Ours, broken, rather (moved aside and rebuilt): a file without SQLite's header (empty,
    zeroed), one that cannot be read, one with our `meta` table (a flipped id byte), and
    one with no tables yet (an index being made in WAL mode carries id 0 in its main file
    until a checkpoint)."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
    except OSError:
        return False
    if not (len(header) == 100 and header.startswith(b"SQLite format 3\x00")
            and int.from_bytes(header[68:72], "big") != APPLICATION_ID):
        return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = set(database(conn).table_names())
        finally:
            conn.close()
    except DAMAGE:
        return False
    return bool(tables) and not tables & {"meta", "facts"}


def connect(path: Path, *, readonly: bool = False, unjournaled: bool = False
            ) -> sqlite3.Connection:
    """A connection to the index. `unjournaled`: for building a file nobody else can have
    open yet (see `is_absent`); the builder switches it to WAL when done."""
    uri = f"file:{path}?mode=ro" if readonly else f"file:{path}"
    conn = sqlite3.connect(uri, uri=True, timeout=10, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if unjournaled:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
    elif not readonly:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA cache_size = -65536")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute("PRAGMA mmap_size = 268435456")
    return conn


def create(conn: sqlite3.Connection, *, defer_indexes: bool = False) -> None:
    """The tables; their secondary indexes too unless `defer_indexes` (a bulk load, which
    calls `create_indexes` once its rows are in)."""
    for statement in SCHEMA.split(";\n"):
        if statement.strip():
            conn.execute(statement)
    if not defer_indexes:
        create_indexes(conn)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")


#: Sort orders the table asks for, each with `status` so the default filter (not retracted)
#: is answered from the index alone: the id list of 100,000 facts without touching a row.
#: Additive: an index file of this schema version without them gets them on update.
SORT_INDEXES: tuple[str, ...] = (
    "CREATE INDEX IF NOT EXISTS facts_sort_updated ON facts(updated_at, status)",
    "CREATE INDEX IF NOT EXISTS facts_sort_created ON facts(created_at, status)",
    "CREATE INDEX IF NOT EXISTS facts_sort_confidence ON facts(confidence, status)",
    "CREATE INDEX IF NOT EXISTS facts_sort_weight ON facts(evidence_weight, status)",
    "CREATE INDEX IF NOT EXISTS facts_sort_title ON facts(title COLLATE NOCASE, status)",
    "CREATE INDEX IF NOT EXISTS facts_sort_author ON facts(author, status)",
    # not a sort order: `subject:X` matches the kind or the ref, and without this index the
    # ref half read every row (the facet click `subject:world`: 0.1 s at 100,000 facts)
    "CREATE INDEX IF NOT EXISTS facts_subject_ref ON facts(subject_ref)",
    # not a sort order either: the facts sharing an 8-hex name (index.dup_ids.SAME_NAME), two
    # lookups per proposed fact; without it each read every row (issue 23 #7)
    "CREATE INDEX IF NOT EXISTS facts_name ON facts(lower(substr(path, -11)))",
)


#: ("CREATE INDEX IF NOT EXISTS <name> ON …")
_ADDED_ON_UPDATE = frozenset(sql.split()[5] for sql in SORT_INDEXES) | _COUNTING_NAMES


def create_triggers(conn: sqlite3.Connection) -> None:
    """The triggers, once the rows are in; `counts` counted from them."""
    for statement in (TRIGGERS + COUNTING).split("END;")[:-1]:
        conn.execute(statement + "END;")
    recount(conn)


def create_indexes(conn: sqlite3.Connection) -> None:
    for sql in BULK_INDEXES:
        conn.execute(sql)
    ensure_sort_indexes(conn)


def ensure_sort_indexes(conn: sqlite3.Connection) -> None:
    for sql in SORT_INDEXES:
        conn.execute(sql)


#: what an index written by an earlier release of this schema holds in today's place, as
#: SQLite records it: intact (not damage), brought to today's by `ensure_triggers`
EARLIER: Listing = {("trigger", "facts_au"): ("facts", (
    "CREATE TRIGGER facts_au AFTER UPDATE ON facts BEGIN\n"
    "  INSERT INTO facts_fts(facts_fts, rowid, title, body, domain, entities)\n"
    "  VALUES ('delete', old.id, old.title, old.body, old.domain, old.entities);\n"
    "  INSERT INTO facts_fts(rowid, title, body, domain, entities)\n"
    "  VALUES (new.id, new.title, new.body, new.domain, new.entities);\nEND"))}


def ensure_triggers(conn: sqlite3.Connection) -> None:
    """An index written by an earlier version, whose triggers differ from `TRIGGERS` (the
    update trigger before it compared the text), gets today's, in the caller's write
    transaction: the same full-text rows either way, no rebuild."""
    have = _listing(conn)
    for (kind, name), entry in _expected().items():
        if kind == "trigger" and (kind, name) in have and have[kind, name] != entry:
            conn.execute(f"DROP TRIGGER {name}")
            conn.execute(entry[1])
    if ("table", "counts") not in have:  # (written before `counts`: made and counted now)
        conn.execute(_expected()["table", "counts"][1])
        for (kind, name), entry in _expected().items():
            if kind == "trigger" and name in _COUNTING_NAMES:
                conn.execute(entry[1])
        recount(conn)


class RowDamaged(sqlite3.DatabaseError):
    """Rows of `facts` whose values fail their checksums (index.rows.verify): damage that
    SQLite cannot see (a flipped bit in a stored value). Raised by the reads that serve
    rows, before serving them; `Indexer.read` repairs the rows and reads again."""

    def __init__(self, ids: list[int]) -> None:
        shown = ", ".join(map(str, ids[:10])) + (" …" if len(ids) > 10 else "")
        super().__init__(f"index rows fail their checksums (ids {shown})")
        self.ids = ids


#: rows that failed their checksums in a read, by index file, until an update repairs them
#: (`note_damage`, `take_damage`): a reader without the indexer (the GUI's table) leaves
#: them for the next `Indexer.update` of that file
_NOTED: dict[str, set[int]] = {}
_NOTED_LOCK = threading.Lock()


def _file_of(conn: sqlite3.Connection) -> str | None:
    for row in conn.execute("PRAGMA database_list"):
        if row[1] == "main":
            return str(Path(row[2]).resolve()) if row[2] else None
    return None


def note_damage(conn: sqlite3.Connection, ids: list[int]) -> None:
    """Remember that rows `ids` of the index `conn` reads failed their checksums."""
    try:
        name = _file_of(conn)
    except sqlite3.Error:
        return
    if name:
        with _NOTED_LOCK:
            _NOTED.setdefault(name, set()).update(ids)


def take_damage(path: Path) -> list[int]:
    """The rows of the index at `path` noted as failing their checksums (then forgotten)."""
    with _NOTED_LOCK:
        return sorted(_NOTED.pop(str(path.resolve()), ()))


#: what reading a damaged index can raise; `is_damage` tells damage from the rest
DAMAGE = (sqlite3.DatabaseError, UnicodeDecodeError)

#: sqlite3's own error (no SQLite code) for a text value that is not UTF-8
_NOT_UTF8 = "Could not decode to UTF-8"


Listing = dict[tuple[str, str], tuple[str, str]]


def _listing(conn: sqlite3.Connection) -> Listing:
    return {(r[0], r[1]): (r[2], r[3]) for r in conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL")}


@functools.cache
def _expected() -> Listing:
    """The schema this version makes, as SQLite records it."""
    conn = sqlite3.connect(":memory:")
    try:
        create(conn)
        create_triggers(conn)
        return _listing(conn)
    finally:
        conn.close()


def _schema_intact(conn: sqlite3.Connection) -> bool:
    """Every table, index and trigger of the file is one this version makes, by the same
    SQL to the byte, and only sort indexes (added on update) may be missing. A flipped byte
    in the schema's SQL that still parses (a column renamed, a type changed) is damage:
    statements would then fail or read the wrong column."""
    found, expected = _listing(conn), _expected()
    if any(expected.get(key) != entry and EARLIER.get(key) != entry for key, entry in found.items()):
        return False
    return all(name in _ADDED_ON_UPDATE for _, name in set(expected) - set(found))


def is_usable(path: Path, *, thorough: bool = False) -> bool:
    """True when `path` is our index, at the current schema, completely built, and its
    schema's SQL is intact (`_schema_intact`).

    `thorough` adds `PRAGMA quick_check`, which reads the whole file (0.9 s at 100,000
    facts, page cache warm), and `PRAGMA integrity_check(facts)`, which also compares each
    secondary index of `facts` with its rows (a flipped bit in an index entry, which
    quick_check misses, hides a fact from the filters that use that index: issue 15 #10);
    the warm path skips them because any damage met later moves the file aside and
    rebuilds anyway (RELIABILITY F03, `is_damage`)."""
    if not path.exists():
        return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if app_id != APPLICATION_ID or version != SCHEMA_VERSION:
                return False
            ok = _thorough_checks(path, conn) if thorough else "ok"
            if ok != "ok" or not _schema_intact(conn):
                return False
            done = conn.execute("SELECT value FROM meta WHERE key='complete'").fetchone()
            return bool(done and done[0] == "1")
        finally:
            conn.close()
    except DAMAGE as exc:  # (a damaged schema's SQL, quoted in an error message, is not UTF-8)
        if is_disk_full(exc, path.parent):  # no room to open it: no damage (issue 22 #10)
            raise
        return False


def _thorough_checks(path: Path, conn: sqlite3.Connection) -> str:
    """`PRAGMA quick_check` (on a connection of its own, in a thread: SQLite's C code
    runs without the GIL) beside `PRAGMA integrity_check(facts)` (quick_check does not
    compare indexes with rows): "ok", or what the first that failed said. At 100,000
    facts 0.6 s and 2.4 s, each one core's work (issue 23 #8)."""
    from concurrent.futures import ThreadPoolExecutor

    def quick() -> str:
        own = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return str(own.execute("PRAGMA quick_check").fetchone()[0])
        finally:
            own.close()

    with ThreadPoolExecutor(1, thread_name_prefix="factdesk-quick-check") as pool:
        quick_done = pool.submit(quick)
        try:
            table = str(conn.execute("PRAGMA integrity_check(facts)").fetchone()[0])
        finally:
            said = quick_done.result()  # (raises what it met: damage, as before)
    return said if said != "ok" else table


#: a database file and the side files SQLite may keep beside it
_FILES = ("", "-wal", "-shm", "-journal")


def is_absent(path: Path) -> bool:
    """No index file and none of its side files: no connection can be reading it."""
    return not any(Path(f"{path}{suffix}").exists() for suffix in _FILES)


def is_damage(exc: BaseException) -> bool:
    """The file is damaged or not a database (SQLITE_CORRUPT, SQLITE_NOTADB, extended codes
    included): move it aside and rebuild. Not for a full disk, a lock or an I/O error.

    Text that is not UTF-8 is damage too: the index only holds text written from Python
    strings. A flipped byte in a value makes sqlite3 raise its `OperationalError` (no
    SQLite code); one in the schema's SQL, which SQLite quotes in its "malformed database
    schema" message, makes reading that message a `UnicodeDecodeError`."""
    if isinstance(exc, (UnicodeDecodeError, RowDamaged)):
        return True
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return str(exc).startswith(_NOT_UTF8)
    return bool(code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB))


#: below this much room, an I/O error writing the index is the disk being full (tmpfs says
#: SQLITE_IOERR_SHMSIZE when the WAL's shared memory cannot grow)
LOW_ROOM = 1 << 20


def is_disk_full(exc: BaseException, folder: Path) -> bool:
    """The write failed for want of room, not damage (issue 22 #10): SQLITE_FULL, ENOSPC,
    EDQUOT or EFBIG, or an I/O error or a file SQLite could not make while the file system
    holding `folder` has less than `LOW_ROOM` free."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return "database or disk is full" in str(exc)
    if code & 0xFF == sqlite3.SQLITE_FULL:
        return True
    if code & 0xFF not in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN):
        return False
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < LOW_ROOM


def is_busy(exc: BaseException) -> bool:
    """Another connection held the lock past `busy_timeout` (SQLITE_BUSY, SQLITE_LOCKED):
    the file is fine, only not ours to write now."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return "database is locked" in str(exc)
    return bool(code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED))


def remove(path: Path) -> None:
    """Delete a database file that was never complete, with its side files."""
    for suffix in _FILES:
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def move_aside(path: Path) -> Path | None:
    """Keep a damaged index for diagnosis: `index.vN.db.corrupt-<ts>` (never deleted; a
    second one within the same second gets `-2`, `-3`, … rather than replacing it)."""
    if not path.exists():
        return None
    stamp = f"{path.name}.corrupt-{int(time.time())}"
    target = path.with_name(stamp)
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{stamp}-{n}")
    path.replace(target)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.replace(target.with_name(target.name + suffix))
    return target


def database(conn: sqlite3.Connection) -> Any:
    """sqlite-utils over `conn`, imported when first needed (its import costs ~0.5 s of the
    window's start-up, and start-up needs none of it)."""
    import sqlite_utils

    return sqlite_utils.Database(conn)
