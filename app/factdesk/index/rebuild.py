"""A rebuild of the index from scratch (the rebuild path out of `indexer.Indexer`).

Everything is streamed: the workers parse each file and run its ontology rules, this
process inserts its row as it arrives and hands its full-text row on (index.textbuild),
keeping a slim copy of each fact for the corpus-wide rules. The functions take the
`Indexer` whose file they write (its settings, its parsed registry and ontology, its
shared helpers); `Indexer.update` decides when a rebuild runs.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from factdesk.corpus import gitlook, gitrepo
from factdesk.corpus.codec import ParseOutcome
from factdesk.corpus.scan import printable, scan
from factdesk.index import locking, parsing, schema, writing
from factdesk.index.history import FirstParentChanges, PathHistory, all_histories
from factdesk.index.parsing import ParseStream
from factdesk.index.rows import fact_row, row_values, text_values
from factdesk.index.textbuild import InlineText, TextBuilder, TextRow, TextSink
from factdesk.index.writing import FileStamp
from factdesk.model.enums import FactType
from factdesk.model.fact import Problem
from factdesk.model.registry import Registry

if TYPE_CHECKING:
    from factdesk.index.indexer import Indexer, IndexStats, Progress

#: rows per insert (and per batch of full-text rows) in a rebuild
BATCH = 1000
Checked = parsing.Checked


def build_fresh(ix: Indexer, progress: Progress | None) -> IndexStats:
    """A rebuild where no index file exists (the first index of a corpus, or after a
    damaged one was moved aside). It is built under a name of its own, which no reader
    knows, so without a journal: every page written once, instead of into the WAL and
    again by the checkpoint (about 4 s for the 1.1 GB index of 100,000 facts). Switched
    to WAL, it is then renamed into place; readers meanwhile find no index, as before.
    A failure removes the partial file."""
    conn = schema.connect(ix._building, unjournaled=True)
    try:
        stats = locking.transaction(conn, lambda: rebuild(ix, conn, progress))
        # (main: the full-text builder's scratch file is still attached, and deleted)
        conn.execute("PRAGMA main.journal_mode = WAL")
    except BaseException:
        conn.close()
        schema.remove(ix._building)
        raise
    conn.close()  # the last connection: its WAL is checkpointed and removed
    os.replace(ix._building, ix.path)
    schema.remove(ix._building)  # any side file left under the old name
    return stats

def rebuild_committed(ix: Indexer, conn: sqlite3.Connection, progress: Progress | None
                       ) -> IndexStats:
    """`_rebuild` in one transaction, without fsync: the checkpoint after it then copies
    the new index into the file without waiting for the disk (seconds for 1 GB). An
    application crash still leaves the old index or the new one; only an operating-
    system crash in the seconds after could leave a damaged file, which the next open
    moves aside and rebuilds (RELIABILITY F03): the index is a cache."""
    conn.execute("PRAGMA synchronous = OFF")
    try:
        return locking.transaction(conn, lambda: rebuild(ix, conn, progress))
    finally:
        conn.execute("PRAGMA synchronous = NORMAL")

def rebuild(ix: Indexer, conn: sqlite3.Connection, progress: Progress | None) -> IndexStats:
    """Everything from scratch, streamed: the workers parse each file and run its
    ontology rules; this process inserts its row as it arrives and hands its full-text
    row on (to a builder process for a large corpus, index.textbuild), keeping only a
    slim copy of the fact (no body) for the corpus-wide rules, whose findings then
    update the few rows they change. Secondary indexes come last, while the full-text
    segments are merged. Same rows, ids, problems and order as `_write`
    (tests/index/test_rebuild_stream.py); one transaction, as before."""
    # mapped pages of the file count as resident memory; the build reads what it writes
    conn.execute("PRAGMA mmap_size = 0")
    # the build makes no cycles worth collecting; full collections over the growing heap
    # of slim facts had cost ~5 s at 100,000 facts. (Only on the main thread, as the
    # CLI runs it: the switch is process-wide, and the app rebuilds on a worker thread.)
    collecting = gc.isenabled() and threading.current_thread() is threading.main_thread()
    if collecting:
        gc.disable()
    try:
        return _rebuild_all(ix, conn, progress)
    finally:
        if collecting:
            gc.enable()

def _rebuild_all(ix: Indexer, conn: sqlite3.Connection, progress: Progress | None) -> IndexStats:
    clock = _PhaseClock()
    # (the full-text table's shadow tables go with it)
    for name in schema.database(conn).table_names():
        if not name.startswith(("sqlite_", "facts_fts_")):
            conn.execute(f'DROP TABLE IF EXISTS "{name}"')
    schema.create(conn, defer_indexes=True)
    head = gitrepo.head_sha(ix.repo) if ix._has_git() else None
    # git reads the history while this process scans and the workers start parsing
    pending_log = gitrepo.PendingLog(ix.repo) if head else None
    parsed: ParseStream[Checked] | None = None
    text: TextSink | None = None
    try:
        ix._repo_ids = gitrepo.repo_ids(ix.repo) if head else None
        entries, scan_problems = scan(ix.repo, ix.root)
        entries = ix._pending_now().entries(entries)
        registry, ontology = ix._registry_and_ontology()
        paths = [e.path for e in entries]
        clock.lap("scan, registry, ontology (git log and the parse workers start)")
        ix._report(progress, "parsing", 0, len(entries))
        parsed = ix.pending.checked(paths, ontology, lambda ps: parsing.parse_and_check_files(
            ix.repo, ps, ontology))
        first_parent = FirstParentChanges(*ix._ingest_commits(
            conn, pending_log.commits() if pending_log else [], seq0=0))
        histories = all_histories(conn)
        clock.lap("history (git log, per-path history)")
        text = (TextBuilder(conn, ix._text_scratch)
                if parsing.parallel(paths) else InlineText(conn))
        outcomes, files, early = _stream_rows(ix, conn, parsed, text, histories, registry,
                                                   scan_problems, progress, len(paths))
        clock.lap("parse + ontology rules (workers); rows, full-text rows (streamed)")
        # the retracted facts' rows (the next ids) and text go in now, so the full-text
        # builder merges its segments while the rules are checked
        retracted = ix._retracted_paths(conn, set(outcomes), histories=histories)
        gone = writing.read_retracted(ix.repo, retracted)
        _insert_retracted(conn, text, retracted, gone, registry, first_id=len(paths) + 1)
        text.close_input()
        clock.lap("retracted facts (read from git)")
        ix._report(progress, "checking", 0, len(outcomes))
        writing.finish_rebuild(conn, ix._rule_setting(), outcomes, files, gone,
                               scan_problems, early=early, histories=histories,
                               first_parent=first_parent,
                               alongside=lambda: schema.create_indexes(conn))
        del outcomes, files, early, histories, gone
        clock.lap("corpus-wide rules (a thread) beside the secondary indexes; problems")
        text.finish()
        clock.lap("full-text index: final merge" if isinstance(text, InlineText)
                  else "full-text index: wait for its builder, copy it in")
    except BaseException:
        if pending_log is not None:
            pending_log.close()
        if parsed is not None:
            parsed.close()
        if text is not None:
            text.abort()
        raise
    schema.create_triggers(conn)
    status = gitlook.status_paths(ix.repo, ix.root) if head else None
    ix._set_meta(conn, head, dirty=dirty_stamp(status or set()))
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('build_phases', ?)",
                 (json.dumps(clock.phases),))
    stats = ix._stats(conn, "rebuild", head, paths)
    stats.phases = clock.phases
    return stats

def _stream_rows(ix: Indexer, conn: sqlite3.Connection, parsed: ParseStream[Checked],
                 text: TextSink, histories: Mapping[str, PathHistory], registry: Registry,
                 scan_problems: list[Problem], progress: Progress | None, total: int
                 ) -> tuple[dict[str, ParseOutcome], dict[str, FileStamp],
                            dict[str, list[Problem]]]:
    """Insert each parsed file's row as it arrives, and hand its full-text row on; keep
    a slim copy of each fact (no body) for the corpus-wide rules, its file stamp and
    its parse and ontology findings."""
    outcomes: dict[str, ParseOutcome] = {}
    files: dict[str, FileStamp] = {}
    early: dict[str, list[Problem]] = {}  # per path: parse and ontology findings
    as_file = writing.by_path(scan_problems)  # counted in the row too (`has:problems`)
    batch: list[tuple[object, ...]] = []
    texts: list[TextRow] = []
    for i, (outcome, blob, size, mtime, onto_found) in enumerate(parsed):
        path, fact = outcome.path, outcome.fact
        found = [*outcome.problems, *onto_found]
        files[path] = (blob, size, mtime)
        early[path] = found
        row = fact_row(outcome, status="live" if fact else "broken",
                       history=histories.get(path, writing.NO_HISTORY), registry=registry,
                       file=files[path], computed_weight=None,
                       problems=found + as_file.get(path, []))
        # ids in path order, as an autoincrement would give them; the full-text row
        # goes on too, while the workers go on parsing (no second pass over the table)
        batch.append((i + 1, *row_values(row)))
        texts.append((i + 1, *text_values(row)))
        if len(batch) >= BATCH:
            conn.executemany(writing.INSERT_ROW_ID, batch)
            text.add(texts)
            batch.clear()
            texts = []
        outcomes[path] = _slim(outcome)
        if i % 2000 == 0:
            ix._report(progress, "parsing", i, total)
    conn.executemany(writing.INSERT_ROW_ID, batch)
    text.add(texts)
    return outcomes, files, early


class _PhaseClock:
    """Wall and CPU time of consecutive phases (the rebuild's breakdown, kept in `meta`)."""

    def __init__(self) -> None:
        self.phases: dict[str, tuple[float, float]] = {}
        self._wall = time.perf_counter()
        self._cpu = time.process_time()

    def lap(self, name: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        self.phases[name] = (round(wall - self._wall, 3), round(cpu - self._cpu, 3))
        self._wall, self._cpu = wall, cpu


def _insert_retracted(conn: sqlite3.Connection, text: TextSink,
                      retracted: Mapping[str, PathHistory], gone: Mapping[str, ParseOutcome],
                      registry: Registry, *, first_id: int) -> None:
    """The retracted facts' rows (ids from `first_id`) and full-text rows."""
    rows = [writing.retracted_row(gone[path], hist, registry) for path, hist in retracted.items()]
    conn.executemany(writing.INSERT_ROW_ID, [(first_id + k, *row_values(row))
                                             for k, row in enumerate(rows)])
    text.add([(first_id + k, *text_values(row)) for k, row in enumerate(rows)])


def _slim(outcome: ParseOutcome) -> ParseOutcome:
    """What the corpus-wide rules need of a fact already written: everything but the body
    (and a broken file's raw text). A hypothesis keeps its body: H1 reads its prose."""
    fact = outcome.fact
    if fact is not None and fact.type != FactType.HYPOTHESIS and fact.body:
        fact = dataclasses.replace(fact, body="")
    if fact is outcome.fact and not outcome.text and outcome.salvaged is None:
        return outcome
    return dataclasses.replace(outcome, fact=fact, text="", salvaged=None)


def dirty_stamp(status: set[str]) -> str:
    """The paths git says differ from HEAD, as the text kept in `meta` and compared with it
    on the next update (a name that is not UTF-8 in its printable form)."""
    return printable("\n".join(sorted(status)))
