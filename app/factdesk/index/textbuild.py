"""The full-text half of a rebuild: in this process for a small corpus, in a process of
its own for a large one.

Tokenising the text of 100,000 facts into FTS5 (with its prefix indexes) and merging the
segments is about a third of a cold rebuild's work. On a machine with two cores it runs
beside the main process, which meanwhile inserts rows, checks the corpus-wide rules and
builds the secondary indexes. The main process sends each batch of full-text rows down a
pipe; the builder adds them to a table of the same definition in a scratch database
(no journal: nothing in it outlives the rebuild), merges its segments into one, and the
main process copies the finished shadow tables into the index inside the rebuild's own
transaction, so a failure anywhere still leaves the previous index whole.

Either way the first batch is written out as a segment of its own. FTS5's 'optimize'
leaves a single segment where it found one, on level 0, and there the automatic merging of
the small segments that later updates write pulls it in: the first incremental update
rewrote the whole index (1 s at 10,000 facts). Two or more segments are merged into one
on a level above, which the merging of small segments leaves alone.

The copy is a plain table copy (about 2 s for the 450 MB index of 100,000 facts): FTS5's
shadow tables hold the whole index, and the content of an external-content table is read
from `facts` only by `snippet`, `highlight` and `'rebuild'`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import queue
import sqlite3
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Protocol

from factdesk.index import schema

#: one full-text row: (rowid, title, body, domain, entities)
TextRow = tuple[object, object, object, object, object]

INSERT_TEXT = "INSERT INTO facts_fts(rowid, title, body, domain, entities) VALUES (?,?,?,?,?)"
#: FTS5 pending-terms memory during a bulk build (its default, 1 MiB, makes ~300 segments
#: at 100,000 facts, merged over and over)
HASHSIZE = 64 << 20
#: batches of rows (1,000 each, ~3 MB of text) waiting for the builder
QUEUED = 16
#: the shadow tables that hold the index (`_config` keeps the main table's own settings)
_SHADOW = ("data", "idx", "docsize")


class TextSink(Protocol):
    def add(self, rows: list[TextRow]) -> None: ...

    def close_input(self) -> None:
        """No more rows: a builder in another process starts its final merge."""

    def finish(self) -> None:
        """The full-text index is complete in the rebuild's connection."""

    def abort(self) -> None: ...


def bulk_begin(conn: sqlite3.Connection) -> None:
    """Before the rows of a rebuild go into the full-text index: automatic merging off (each
    flush of FTS5's in-memory terms would otherwise start merges that later flushes redo)
    and the terms flushed every HASHSIZE bytes instead of every 1 MiB (fewer, larger
    segments). `bulk_end` merges them into one and restores the defaults."""
    conn.execute("INSERT INTO facts_fts(facts_fts, rank) VALUES ('automerge', 0)")
    conn.execute("INSERT INTO facts_fts(facts_fts, rank) VALUES ('hashsize', ?)", (HASHSIZE,))


def bulk_end(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('optimize')")
    conn.execute("INSERT INTO facts_fts(facts_fts, rank) VALUES ('automerge', 4)")
    conn.execute("INSERT INTO facts_fts(facts_fts, rank) VALUES ('hashsize', ?)", (1 << 20,))


class InlineText:
    """Rows go straight into the index's own full-text table."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._batches = 0
        bulk_begin(conn)

    def add(self, rows: list[TextRow]) -> None:
        self._conn.executemany(INSERT_TEXT, rows)
        self._batches += 1
        if self._batches == 1:
            # a savepoint writes FTS5's pending terms out: a segment (see the module's doc)
            self._conn.execute("SAVEPOINT text_flush")
            self._conn.execute("RELEASE text_flush")

    def close_input(self) -> None:
        pass

    def finish(self) -> None:
        bulk_end(self._conn)

    def abort(self) -> None:
        pass


class TextBuildError(RuntimeError):
    pass


class TextBuilder:
    """Rows go to a builder process; `finish` copies its index into `conn` (which must not
    have touched `facts_fts` in this transaction: FTS5 keeps a connection's view of its
    segments, and the copy replaces them underneath it).

    The builder is the slower side while files are parsed, so rows are handed to a sender
    thread through a queue of up to QUEUED batches: the main process goes on (into the
    corpus-wide rules, when it gets there first) instead of waiting on every batch."""

    def __init__(self, conn: sqlite3.Connection, scratch: Path) -> None:
        self._conn = conn
        self._scratch = scratch
        schema.remove(scratch)
        # forkserver: the builder starts small instead of inheriting the parent's memory
        context = multiprocessing.get_context("forkserver")
        self._pipe, child = context.Pipe()
        self._process = context.Process(target=_build,
                                        args=(str(scratch), schema.FULL_TEXT, child),
                                        name="factdesk-text-index", daemon=True)
        self._process.start()
        child.close()
        self._queue: queue.Queue[list[TextRow] | None] = queue.Queue(maxsize=QUEUED)
        self._broken = False
        self._sender = threading.Thread(target=self._pump, name="factdesk-text-sender",
                                        daemon=True)
        self._sender.start()
        self._open = True

    def _pump(self) -> None:
        """Send each batch (None last); after the builder has gone, only drain the queue
        so that `add` never blocks on it."""
        while True:
            rows = self._queue.get()
            if not self._broken:
                try:
                    self._pipe.send(rows)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    self._broken = True
            if rows is None:
                return

    def add(self, rows: list[TextRow]) -> None:
        if self._broken:
            raise self._failure()
        if rows:
            self._queue.put(rows)

    def close_input(self) -> None:
        if self._open:
            self._queue.put(None)
            self._open = False

    def finish(self) -> None:
        self.close_input()
        self._sender.join()
        if self._broken:
            raise self._failure()
        try:
            error = self._pipe.recv()
        except EOFError as exc:
            raise self._failure() from exc
        self._process.join()
        if error:
            raise TextBuildError(f"the full-text builder failed: {error}")
        try:
            self._conn.execute("ATTACH DATABASE ? AS text_build", (str(self._scratch),))
            for table in _SHADOW:
                self._conn.execute(f"DELETE FROM main.facts_fts_{table}")
                self._conn.execute(f"INSERT INTO main.facts_fts_{table} "
                                   f"SELECT * FROM text_build.facts_fts_{table}")
        finally:
            # the attachment lasts until the rebuild's transaction ends (SQLite does not
            # detach inside one); the unlinked file goes with it
            schema.remove(self._scratch)

    def abort(self) -> None:
        if self._process.is_alive():
            self._process.terminate()
        self._process.join()
        self._broken = True  # the sender only drains from here on
        with contextlib.suppress(queue.Empty):
            while True:
                self._queue.get_nowait()
        self._queue.put(None)
        self._sender.join()
        self._pipe.close()
        schema.remove(self._scratch)

    def _failure(self) -> TextBuildError:
        """The builder went away: its own report when it left one, else its exit code."""
        error = None
        with contextlib.suppress(EOFError, OSError):
            if self._pipe.poll(1):
                error = self._pipe.recv()
        self._process.join(timeout=5)
        if error:
            return TextBuildError(f"the full-text builder failed: {error}")
        return TextBuildError(f"the full-text builder stopped (exit code {self._process.exitcode})")


def _build(scratch: str, definition: str, pipe: Connection) -> None:
    """The builder process: batches of rows until None, then one merge; reports None or the
    error's text."""
    try:
        conn = sqlite3.connect(scratch, isolation_level=None)
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute(definition)
        conn.execute("BEGIN")
        bulk_begin(conn)
        batches = 0
        while (rows := pipe.recv()) is not None:
            conn.executemany(INSERT_TEXT, rows)
            batches += 1
            if batches == 1:  # the first segment (see the module's doc)
                conn.execute("COMMIT")
                conn.execute("BEGIN")
        conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('optimize')")
        conn.execute("COMMIT")
        conn.close()
    except Exception as exc:  # reported to the parent, which raises it
        report: str | None = f"{type(exc).__name__}: {exc}"
    else:
        report = None
    with contextlib.suppress(OSError):  # the parent is gone: nobody to tell
        pipe.send(report)
    pipe.close()
