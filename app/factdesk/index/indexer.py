"""Build and incrementally update the index from the corpus (files + git history).

A rebuild and an incremental update run the same per-fact code; the incremental path
only limits *which* facts it re-reads and re-checks: files whose size, mtime or blob
changed, paths touched by new commits, and every fact that cites one of those
(transitively, since evidence weight walks lineage). I1: incremental == rebuild.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import fcntl
import gc
import itertools
import json
import multiprocessing
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Protocol, TypeVar

from factdesk import faults
from factdesk.corpus import gitrepo
from factdesk.corpus.codec import MAX_BYTES, ParseOutcome, parse_fact, too_large
from factdesk.corpus.ontology import (
    Ontology,
    RuleEngine,
    check_ontology,
    load_ontology,
    ontology_bytes,
    rule_problems,
    shared_engine,
    topic_problems,
)
from factdesk.corpus.registry_io import REGISTRY_PATH, load_registry
from factdesk.corpus.scan import (
    SCAN_CODES,
    FileEntry,
    io_error,
    is_fact_path,
    is_utf8,
    printable,
    read_fact_file,
    scan,
    stat_paths,
)
from factdesk.errors import IndexBusy
from factdesk.fsio import read_config
from factdesk.index import schema
from factdesk.index.history import (
    ChangeRow,
    CommitRow,
    FirstParentChanges,
    PathHistory,
    all_histories,
    blob_at,
    history_rows,
    path_history,
)
from factdesk.index.rows import (
    ROW_COLUMNS,
    fact_from_row,
    fact_row,
    problem_counts,
    row_values,
    text_values,
)
from factdesk.index.search import rows_in
from factdesk.index.textbuild import InlineText, TextBuilder, TextRow, TextSink
from factdesk.model.enums import FactType, Severity
from factdesk.model.fact import Fact, Problem
from factdesk.model.refs import local_targets
from factdesk.model.registry import Registry
from factdesk.model.rules import CheckContext, check_fact
from factdesk.model.weight import evidence_weight, is_weighted

Progress = Callable[[str, int, int], None]
_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)
PARALLEL_MIN = 4000
CHUNK = 250
#: chunks parsed ahead of the consumer (~1 MB each): enough to keep the workers busy while
#: a rebuild reads git's history
AHEAD = 24
#: rows per insert (and per batch of full-text rows) in a rebuild
BATCH = 1000
WORKER_NICENESS = 5


@dataclass
class IndexStats:
    mode: str
    facts: int = 0
    broken: int = 0
    retracted: int = 0
    problems: int = 0
    changed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    head: str | None = None
    #: a rebuild's phases: name -> (wall seconds, this process's CPU seconds), in order
    phases: dict[str, tuple[float, float]] = field(default_factory=dict)


def _parse_entry(repo: str, rel: str) -> tuple[ParseOutcome, str, int, int]:
    try:
        data, st = read_fact_file(repo, rel)
    except OSError as exc:
        return ParseOutcome(rel, None, (io_error(rel, exc),)), "", 0, 0
    return parse_fact(rel, data), gitrepo.blob_id(data), st.st_size, st.st_mtime_ns


Parsed = tuple[ParseOutcome, str, int, int]
Checked = tuple[ParseOutcome, str, int, int, list[Problem]]

#: the ontology a rebuild's parse worker checks each fact against (set by its initializer)
_worker_ontology: Ontology | None = None


def _init_worker(ontology: Ontology | None) -> None:
    global _worker_ontology
    _worker_ontology = ontology
    # The parse workers run ahead of the process that consumes them; at a lower priority
    # they take the cores that the main process and the full-text builder (the slowest
    # consumer) leave idle, instead of taking turns with them.
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)


def _parse_chunk(repo: str, paths: list[str]) -> list[Parsed]:
    return [_parse_entry(repo, p) for p in paths]


def _check_entry(repo: str, rel: str, ontology: Ontology | None) -> Checked:
    """Parse one file and run the rules that need nothing but the fact itself: the
    ontology's validations (in this process's V8 context) and its topic rules."""
    outcome, blob, size, mtime = _parse_entry(repo, rel)
    found: list[Problem] = []
    if outcome.fact is not None and ontology is not None:
        found.extend(check_ontology(outcome.fact, ontology, shared_engine()))
        found.extend(topic_problems(outcome.fact, ontology))
    return outcome, blob, size, mtime, found


def _check_chunk(repo: str, paths: list[str]) -> list[Checked]:
    return [_check_entry(repo, p, _worker_ontology) for p in paths]


class _InWorkers(Iterator[_T]):
    """`work` over chunks of `paths` in worker processes, results in order. The workers start
    at once, so they parse while the caller reads git's history. At most AHEAD chunks are
    done ahead of the consumer: when it is the slower side, parsed files with their bodies
    wait in a short queue instead of piling up in memory."""

    def __init__(self, work: Callable[[str, list[str]], list[_T]], repo: Path,
                 paths: list[str], ontology: Ontology | None = None) -> None:
        self._work = work
        self._repo = str(repo)
        self._chunks = collections.deque(paths[i : i + CHUNK] for i in range(0, len(paths), CHUNK))
        # forkserver: workers start small instead of inheriting the parent's history in memory
        context = multiprocessing.get_context("forkserver")
        self._pool = ProcessPoolExecutor(max_workers=min(4, os.cpu_count() or 2),
                                         mp_context=context, initializer=_init_worker,
                                         initargs=(ontology,))
        self._pending: collections.deque[Future[list[_T]]] = collections.deque()
        self._ready: collections.deque[_T] = collections.deque()
        while self._chunks and len(self._pending) < AHEAD:
            self._submit()

    def _submit(self) -> None:
        self._pending.append(self._pool.submit(self._work, self._repo, self._chunks.popleft()))

    def __next__(self) -> _T:
        while not self._ready:
            if not self._pending:
                self.close()
                raise StopIteration
            self._ready.extend(self._pending.popleft().result())
            if self._chunks:
                self._submit()
        return self._ready.popleft()

    def close(self) -> None:
        """Stop the workers (also when the consumer gives up part-way)."""
        for future in self._pending:
            future.cancel()
        self._pending.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)


def _parallel(paths: list[str]) -> bool:
    return len(paths) >= PARALLEL_MIN and (os.cpu_count() or 1) >= 2


class ParseStream(Protocol[_T_co]):
    """Parsed files in order; `close()` stops the workers when the consumer gives up."""

    def __iter__(self) -> Iterator[_T_co]: ...

    def __next__(self) -> _T_co: ...

    def close(self) -> None: ...


def parse_files(repo: Path, paths: list[str]) -> ParseStream[Parsed]:
    """Parse files in order, in two processes when there are many (this machine has 2 cores)."""
    if not _parallel(paths):
        return (_parse_entry(str(repo), p) for p in paths)
    return _InWorkers(_parse_chunk, repo, paths)


def parse_and_check_files(repo: Path, paths: list[str], ontology: Ontology | None
                          ) -> ParseStream[Checked]:
    """`parse_files` plus each fact's ontology findings (`check_ontology`, then
    `topic_problems`), worked out in the parse workers."""
    if not _parallel(paths):
        return (_check_entry(str(repo), p, ontology) for p in paths)
    return _InWorkers(_check_chunk, repo, paths, ontology)


class _FactsView(Mapping[str, Fact]):
    """Live facts for the rules: changed ones in memory, the rest read from the index."""

    def __init__(self, conn: sqlite3.Connection, overlay: dict[str, Fact | None],
                 status: str = "live") -> None:
        self._conn = conn
        self._overlay = overlay
        self._status = status
        self._cache: dict[str, Fact | None] = {}

    def __getitem__(self, path: str) -> Fact:
        fact = self.get(path)
        if fact is None:
            raise KeyError(path)
        return fact

    def get(self, path: str, default: object = None) -> Fact | None:  # type: ignore[override]
        if path in self._overlay:
            return self._overlay[path]
        if path not in self._cache:
            row = self._conn.execute(
                "SELECT * FROM facts WHERE path = ? AND status = ?", (path, self._status)
            ).fetchone()
            self._cache[path] = fact_from_row(row) if row else None
        return self._cache[path]

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.get(path) is not None

    def __iter__(self) -> Iterator[str]:
        raise NotImplementedError("the view is for lookups only")

    def __len__(self) -> int:
        raise NotImplementedError("the view is for lookups only")


class Indexer:
    """Owns one corpus's index file; `update()` brings it up to date."""

    def __init__(self, repo: Path, *, root: str = "kb", today: date | None = None) -> None:
        self.repo = repo.resolve()
        self.root = root
        self.today = today or date.today()
        self.git_dir = gitrepo.git_dir(self.repo)
        self.path = schema.index_path(self.git_dir)
        self._repo_ids: frozenset[str] | None = None
        self._parsed: tuple[tuple[str, str], Registry, Ontology | None] | None = None
        #: a first index is built here, then renamed into place (`_build_fresh`)
        self._building = self.path.with_name(self.path.name + ".building")
        #: the full-text builder's scratch database during a rebuild (index.textbuild)
        self._text_scratch = self.path.with_name(self.path.name + ".text-build")
        self._engine: RuleEngine | None = None
        #: why the last `read` showed the index as it was instead of updating it, or None
        self.stale: str | None = None
        #: where unusable index files (damaged, or another version's) were moved aside and
        #: kept since this object was made (each was then rebuilt)
        self.set_aside: list[Path] = []

    # -- public -------------------------------------------------------------------------

    def connect(self, *, readonly: bool = False) -> sqlite3.Connection:
        return schema.connect(self.path, readonly=readonly)

    def update(self, *, rebuild: bool = False, progress: Progress | None = None,
               hint: Iterable[str] | None = None, thorough: bool = False,
               lock_wait: float | None = None) -> IndexStats:
        """Bring the index up to date. `hint`: the caller knows these are the only working-
        tree paths that changed besides what new commits touched (factdesk's own action
        just committed them), so `git status` and the full stat comparison are skipped;
        the next plain update still looks at everything. `thorough`: first run `PRAGMA
        quick_check` over the whole file (the Check command, RELIABILITY 3.11), which finds
        damage in pages an update does not read.

        A damaged index (`schema.is_damage`), found at open or by any statement of the
        update, is moved aside and rebuilt (RELIABILITY F03); other errors propagate.

        `lock_wait`: give up with `IndexBusy` after that many seconds while another process
        updates the index (None: wait for it, however long)."""
        started = time.perf_counter()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _update_lock(self.path, lock_wait):
            try:
                return self._update_locked(rebuild, progress, hint, started, thorough)
            except sqlite3.OperationalError as exc:
                if not schema.is_busy(exc):
                    raise
                raise IndexBusy(
                    f"{self.path}: another program has held the index's write lock for "
                    f"{schema.BUSY_TIMEOUT_MS / 1000:g} s; nothing was changed (try again, or "
                    "close the program that has it open)") from exc

    def read(self, work: Callable[[sqlite3.Connection], _T], *, thorough: bool = False) -> _T:
        """`update`, then `work` over a read-only connection. Damage that only the reads meet
        (a page the update did not need) moves the file aside and rebuilds it, and `work`
        runs once more, on the new file (RELIABILITY F03); other errors propagate.

        When another program holds the write lock (F08), `work` reads the index as it was,
        and `stale` says why; with no complete index to read, `IndexBusy` propagates."""
        self.stale = None
        try:
            self.update(thorough=thorough, lock_wait=schema.BUSY_TIMEOUT_MS / 1000)
        except IndexBusy as exc:
            if not schema.is_usable(self.path):
                raise
            self.stale = str(exc)
        read_from = _inode(self.path)
        try:
            return self._read_once(work)
        except schema.DAMAGE as exc:
            if not schema.is_damage(exc):
                raise
        with _update_lock(self.path):
            if _inode(self.path) == read_from:  # (else another process replaced it already)
                self._set_aside()
                self._update_locked(False, None, None, time.perf_counter(), False)
        return self._read_once(work)

    def _read_once(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        conn = self.connect(readonly=True)
        try:
            return work(conn)
        finally:
            conn.close()

    def _update_locked(self, rebuild: bool, progress: Progress | None, hint: Iterable[str] | None,
                       started: float, thorough: bool) -> IndexStats:
        # what a rebuild killed part-way left behind (only an updater, holding the lock, makes them)
        for scratch in (self._building, self._text_scratch):
            schema.remove(scratch)
        usable = schema.is_usable(self.path, thorough=thorough)
        if not usable and self.path.exists():
            self._set_aside()
        if (rebuild or not usable) and schema.is_absent(self.path):
            stats = self._build_fresh(progress)
        else:
            try:
                stats = self._update_in_place(rebuild or not usable, progress, hint)
            except schema.DAMAGE as exc:
                # a damaged file is moved aside and rebuilt; any other error (disk full,
                # locked, I/O) leaves the index as it was
                if not schema.is_damage(exc):
                    raise
                self._set_aside()
                stats = self._build_fresh(progress)
        stats.seconds = time.perf_counter() - started
        return stats

    def _update_in_place(self, rebuild: bool, progress: Progress | None,
                         hint: Iterable[str] | None) -> IndexStats:
        conn = self.connect()
        try:
            if rebuild:
                return self._rebuild_committed(conn, progress)
            hinted = set(hint) if hint is not None else None
            return _transaction(conn, lambda: self._incremental(conn, progress, hinted))
        finally:
            conn.close()

    # -- rebuild ------------------------------------------------------------------------

    def _build_fresh(self, progress: Progress | None) -> IndexStats:
        """A rebuild where no index file exists (the first index of a corpus, or after a
        damaged one was moved aside). It is built under a name of its own, which no reader
        knows, so without a journal: every page written once, instead of into the WAL and
        again by the checkpoint (about 4 s for the 1.1 GB index of 100,000 facts). Switched
        to WAL, it is then renamed into place; readers meanwhile find no index, as before.
        A failure removes the partial file."""
        conn = schema.connect(self._building, unjournaled=True)
        try:
            stats = _transaction(conn, lambda: self._rebuild(conn, progress))
            # (main: the full-text builder's scratch file is still attached, and deleted)
            conn.execute("PRAGMA main.journal_mode = WAL")
        except BaseException:
            conn.close()
            schema.remove(self._building)
            raise
        conn.close()  # the last connection: its WAL is checkpointed and removed
        os.replace(self._building, self.path)
        schema.remove(self._building)  # any side file left under the old name
        return stats

    def _rebuild_committed(self, conn: sqlite3.Connection, progress: Progress | None
                           ) -> IndexStats:
        """`_rebuild` in one transaction, without fsync: the checkpoint after it then copies
        the new index into the file without waiting for the disk (seconds for 1 GB). An
        application crash still leaves the old index or the new one; only an operating-
        system crash in the seconds after could leave a damaged file, which the next open
        moves aside and rebuilds (RELIABILITY F03): the index is a cache."""
        conn.execute("PRAGMA synchronous = OFF")
        try:
            return _transaction(conn, lambda: self._rebuild(conn, progress))
        finally:
            conn.execute("PRAGMA synchronous = NORMAL")

    def _rebuild(self, conn: sqlite3.Connection, progress: Progress | None) -> IndexStats:
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
            return self._rebuild_all(conn, progress)
        finally:
            if collecting:
                gc.enable()

    def _rebuild_all(self, conn: sqlite3.Connection, progress: Progress | None) -> IndexStats:
        clock = _PhaseClock()
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table') AND name NOT LIKE "
            "'sqlite_%' AND name NOT LIKE 'facts_fts_%'"
        ).fetchall():
            conn.execute(f'DROP TABLE IF EXISTS "{name}"')
        schema.create(conn, defer_indexes=True)
        head = gitrepo.head_sha(self.repo) if self._has_git() else None
        # git reads the history while this process scans and the workers start parsing
        pending_log = gitrepo.PendingLog(self.repo) if head else None
        parsed: ParseStream[Checked] | None = None
        text: TextSink | None = None
        try:
            self._repo_ids = gitrepo.repo_ids(self.repo) if head else None
            entries, scan_problems = scan(self.repo, self.root)
            registry, ontology = self._registry_and_ontology()
            paths = [e.path for e in entries]
            clock.lap("scan, registry, ontology (git log and the parse workers start)")
            self._report(progress, "parsing", 0, len(entries))
            parsed = parse_and_check_files(self.repo, paths, ontology)
            first_parent = FirstParentChanges(*self._ingest_commits(
                conn, pending_log.commits() if pending_log else [], seq0=0))
            histories = all_histories(conn)
            clock.lap("history (git log, per-path history)")
            text = (TextBuilder(conn, self._text_scratch)
                    if _parallel(paths) else InlineText(conn))
            outcomes: dict[str, ParseOutcome] = {}
            files: dict[str, tuple[str, int, int]] = {}
            early: dict[str, list[Problem]] = {}  # per path: parse and ontology findings
            as_file = _by_path(scan_problems)  # counted in the row too (`has:problems`)
            batch: list[tuple[object, ...]] = []
            texts: list[TextRow] = []
            for i, (outcome, blob, size, mtime, onto_found) in enumerate(parsed):
                path, fact = outcome.path, outcome.fact
                found = [*outcome.problems, *onto_found]
                files[path] = (blob, size, mtime)
                early[path] = found
                row = fact_row(outcome, status="live" if fact else "broken",
                               history=histories.get(path, _NO_HISTORY), registry=registry,
                               file=files[path], computed_weight=None,
                               problems=found + as_file.get(path, []))
                # ids in path order, as an autoincrement would give them; the full-text row
                # goes on too, while the workers go on parsing (no second pass over the table)
                batch.append((i + 1, *row_values(row)))
                texts.append((i + 1, *text_values(row)))
                if len(batch) >= BATCH:
                    conn.executemany(_INSERT_ROW_ID, batch)
                    text.add(texts)
                    batch.clear()
                    texts = []
                outcomes[path] = _slim(outcome)
                if i % 2000 == 0:
                    self._report(progress, "parsing", i, len(entries))
            conn.executemany(_INSERT_ROW_ID, batch)
            text.add(texts)
            del batch, texts
            clock.lap("parse + ontology rules (workers); rows, full-text rows (streamed)")
            # the retracted facts' rows (the next ids) and text go in now, so the full-text
            # builder merges its segments while the rules are checked
            retracted = self._retracted_paths(conn, set(outcomes), histories=histories)
            gone = self._read_retracted(retracted)
            gone_rows = [_retracted_row(gone[path], hist, registry)
                         for path, hist in retracted.items()]
            first_gone = len(paths) + 1
            conn.executemany(_INSERT_ROW_ID, [(first_gone + k, *row_values(row))
                                              for k, row in enumerate(gone_rows)])
            text.add([(first_gone + k, *text_values(row)) for k, row in enumerate(gone_rows)])
            del gone_rows
            text.close_input()
            clock.lap("retracted facts (read from git)")
            self._report(progress, "checking", 0, len(outcomes))
            self._write(conn, outcomes, files, retracted, scan_problems, full=True,
                        early=early, histories=histories, gone=gone, first_parent=first_parent,
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
        status = gitrepo.status_paths(self.repo, self.root) if head else None
        self._set_meta(conn, head, dirty=_dirty_stamp(status or set()))
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('build_phases', ?)",
                     (json.dumps(clock.phases),))
        stats = self._stats(conn, "rebuild", head, paths)
        stats.phases = clock.phases
        return stats

    # -- incremental --------------------------------------------------------------------

    def _incremental(self, conn: sqlite3.Connection, progress: Progress | None,
                     hint: set[str] | None = None) -> IndexStats:
        schema.ensure_sort_indexes(conn)
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        head = gitrepo.head_sha(self.repo) if self._has_git() else None
        old_head = meta.get("head") or None
        if meta.get("root") != self.root or meta.get("registry") != self._registry_stamp() \
                or meta.get("ontology") != self._ontology_stamp():
            return self._rebuild(conn, progress)
        touched: set[str] = set()
        self._repo_ids = frozenset(meta.get("repo_id", "").split()) or None
        if head != old_head:
            if old_head and head and gitrepo.is_ancestor(self.repo, old_head, head):
                seq0 = conn.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM commits"
                                    ).fetchone()[0]
                new = gitrepo.log(self.repo, f"{old_head}..{head}")
                self._ingest_commits(conn, new, seq0=seq0)
                touched = {c.path for commit in new for c in commit.changes
                           if c.path.startswith(self.root + "/")}
            elif old_head and head and (rewound := self._rewind(conn, old_head, head)) is not None:
                touched = rewound
            else:
                return self._rebuild(conn, progress)
        looked = None
        if self._has_git():
            # a file or folder that could not be read last time (C14, C17) is tried again:
            # git does not name a file whose bytes never changed
            unread = {r[0] for r in conn.execute(
                "SELECT DISTINCT path FROM problems WHERE code = 'io_error'")}
            looked = (self._look_hinted(meta, touched | unread, hint) if hint is not None
                      else self._look(meta, touched | unread))
        # partial: only the looked-at paths are compared; the rest stand as indexed
        partial = looked is not None
        if looked is not None:
            looked_at, entries, scan_problems, dirty = looked
            # with the names `stat_paths` looked at too (a colliding name's twin, C11/C12)
            looked_at = looked_at | {e.path for e in entries} | {p.path for p in scan_problems}
            # (a name that is not UTF-8 is never a row: its problem stands under a
            # printable form of it, which is in the set)
            looked_at = {p for p in looked_at if is_utf8(p)}
            known = self._known(conn, looked_at)
        else:  # no git to say what changed: compare every file with the index
            known = {r[0]: (r[1], r[2], r[3]) for r in conn.execute(
                "SELECT path, size, mtime_ns, blob FROM facts INDEXED BY facts_stamp "
                "WHERE status IN ('live', 'broken')")}
            entries, scan_problems = scan(self.repo, self.root)
            looked_at, dirty = {e.path for e in entries} | set(known), ""
        on_disk = {e.path: e for e in entries}
        present = (set(known) - looked_at) | set(on_disk)
        # The stamp is a filter, the blob the truth (RELIABILITY F06): a path git names
        # whose size and mtime still match (a same-size edit with its mtime put back) is
        # hashed. (Paths new commits touched are re-read below anyway; without git every
        # file is looked at, and hashing them all on each update would read the corpus.)
        candidates = [p for p, e in on_disk.items()
                      if p not in known or (known[p][0], known[p][1]) != (e.size, e.mtime_ns)
                      or (partial and p not in touched and not self._holds(p, known[p][2]))]
        outcomes: dict[str, ParseOutcome] = {}
        files: dict[str, tuple[str, int, int]] = {}
        with contextlib.closing(parse_files(self.repo, candidates)) as parsed:
            for outcome, blob, size, mtime in parsed:
                if outcome.path in known and known[outcome.path][2] == blob:
                    conn.execute("UPDATE facts SET size = ?, mtime_ns = ? WHERE path = ?",
                                 (size, mtime, outcome.path))
                    continue
                outcomes[outcome.path] = outcome
                files[outcome.path] = (blob, size, mtime)
        removed = {p for p in known if p not in present}
        # history changed, bytes did not: re-read them for their history fields; and a path
        # whose file problems changed with another's (a twin brought along, C11, C12), for
        # its row's counts
        recount = self._file_problems_changed(conn, looked_at, partial, scan_problems)
        self._parse_into(sorted(((touched | recount) - set(outcomes) - removed) & present),
                         outcomes, files)
        changed = set(outcomes) | removed | touched
        meta_changed = meta.get("today") != self.today.isoformat()
        if not changed and not meta_changed and head == old_head and dirty == meta.get("dirty"):
            return self._stats(conn, "unchanged", head, [])
        retracted = self._retracted_paths(conn, present, only=changed | removed)
        dependents = self._dependents(conn, changed)
        if meta_changed:
            dependents |= {r[0] for r in conn.execute(
                "SELECT path FROM facts WHERE type = 'hypothesis' AND status = 'live'")}
        if partial:  # only the looked-at paths were compared: the rest stand as indexed
            present |= set(self._known(conn, dependents - looked_at))
        self._parse_into(sorted((dependents - set(outcomes) - removed) & present), outcomes, files)
        for path in removed:
            self._delete_path(conn, path)
        self._write(conn, outcomes, files, retracted, scan_problems, full=False,
                    rescanned=looked_at if partial else None)
        self._set_meta(conn, head, dirty=dirty)
        return self._stats(conn, "incremental", head, sorted(changed))

    def _rewind(self, conn: sqlite3.Connection, old_head: str, head: str) -> set[str] | None:
        """The branch moved to a commit that does not descend from the indexed one (a reset,
        a rebase, a checkout of another branch). When their merge base lies on the new
        head's first-parent chain, drop the commits only the old head reached, add the new
        ones, and return every path either side touched; else None (rebuild)."""
        base = gitrepo.run_git(self.repo, "merge-base", old_head, head, check=False).decode().strip()
        if not base:
            return None
        chain = gitrepo.run_git(self.repo, "rev-list", "--first-parent", head, check=False).split()
        if base.encode() not in chain:
            return None
        gone = gitrepo.run_git(self.repo, "rev-list", f"{head}..{old_head}", check=False).decode().split()
        touched: set[str] = set()
        for i in range(0, len(gone), 500):
            part = gone[i : i + 500]
            marks = ",".join("?" * len(part))
            touched |= {r[0] for r in conn.execute(
                f"SELECT DISTINCT path FROM changes WHERE sha IN ({marks})", part)}
            conn.execute(f"DELETE FROM changes WHERE sha IN ({marks})", part)
            conn.execute(f"DELETE FROM commits WHERE sha IN ({marks})", part)
        seq0 = conn.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM commits").fetchone()[0]
        new = gitrepo.log(self.repo, f"{old_head}..{head}")
        self._ingest_commits(conn, new, seq0=seq0)
        touched |= {c.path for commit in new for c in commit.changes if c.path.startswith(self.root + "/")}
        return touched

    def _look(self, meta: dict[str, str], touched: set[str]
              ) -> tuple[set[str], list[FileEntry], list[Problem], str] | None:
        """What to compare with the index: (paths looked at, those present as files,
        problems found on them, the dirty-set stamp to remember); None when git cannot say.

        `git status` (C, using git's own stat cache) names the files that differ from HEAD;
        with the paths new commits touched and the files that were dirty at the last update,
        that is every file that can differ from the index."""
        status = gitrepo.status_paths(self.repo, self.root)
        if status is None:
            return None
        dirty = _dirty_stamp(status)
        paths = status | touched | set(_lines(meta.get("dirty", "")))
        entries, problems = stat_paths(self.repo, sorted(paths), self.root)
        return paths, entries, problems, dirty

    def _look_hinted(self, meta: dict[str, str], touched: set[str], hint: set[str]
                     ) -> tuple[set[str], list[FileEntry], list[Problem], str]:
        """`_look` without `git status`: the hinted paths, the ones new commits touched and
        the ones dirty at the last full look; the remembered dirty stamp is kept."""
        paths = hint | touched | set(_lines(meta.get("dirty", "")))
        paths = {p for p in paths if p.startswith(self.root + "/")}
        entries, problems = stat_paths(self.repo, sorted(paths), self.root)
        return paths, entries, problems, meta.get("dirty", "")

    def _holds(self, rel: str, blob: str) -> bool:
        """Whether the file at `rel` holds the blob `blob` (False when it cannot be read)."""
        try:
            data, _ = read_fact_file(str(self.repo), rel)
        except OSError:
            return False
        return gitrepo.blob_id(data) == blob

    def _known(self, conn: sqlite3.Connection, paths: set[str]) -> dict[str, tuple[int, int, str]]:
        out: dict[str, tuple[int, int, str]] = {}
        batch = sorted(paths)
        for i in range(0, len(batch), 500):
            part = batch[i : i + 500]
            marks = ",".join("?" * len(part))
            for r in conn.execute(f"SELECT path, size, mtime_ns, blob FROM facts WHERE path IN ({marks}) "
                                  "AND status IN ('live', 'broken')", part):
                out[r[0]] = (r[1], r[2], r[3])
        return out

    def _parse_into(self, paths: list[str], outcomes: dict[str, ParseOutcome],
                    files: dict[str, tuple[str, int, int]]) -> None:
        with contextlib.closing(parse_files(self.repo, paths)) as parsed:
            for outcome, blob, size, mtime in parsed:
                outcomes[outcome.path] = outcome
                files[outcome.path] = (blob, size, mtime)

    @staticmethod
    def _file_problems_changed(conn: sqlite3.Connection, paths: set[str], partial: bool,
                               found: list[Problem]) -> set[str]:
        """The paths among `paths` whose problems as files (scan.SCAN_CODES) differ between
        the index and `found`, the scan's new findings over them. (Not `io_error`: a file
        the scan cannot look at is no row, and one the parse could not read is re-read
        when its stamp changes.)"""
        codes = tuple(c for c in SCAN_CODES if c != "io_error")
        now: dict[str, set[tuple[str, str]]] = {}
        for problem in found:
            if problem.code in codes:
                now.setdefault(problem.path, set()).add((problem.code, problem.message))
        marks = ",".join("?" * len(codes))
        sql = f"SELECT path, code, message FROM problems WHERE code IN ({marks})"
        rows: Iterable[tuple[str, str, str]]
        if partial:  # a few paths: the (path, code) index
            rows = itertools.chain.from_iterable(
                conn.execute(sql + " AND path = ?", (*codes, p)) for p in paths)
        else:  # every path looked at: one pass over the table
            rows = conn.execute(sql, codes)
        had: dict[str, set[tuple[str, str]]] = {}
        for path, code, message in rows:
            if path in paths:
                had.setdefault(path, set()).add((code, message))
        return {p for p in had.keys() | now.keys() if had.get(p) != now.get(p)}

    def _dependents(self, conn: sqlite3.Connection, changed: set[str]) -> set[str]:
        """Every fact that cites a changed path, transitively (lineage for R1/R2/R3)."""
        seen: set[str] = set()
        frontier = set(changed)
        while frontier:
            batch = list(frontier)
            frontier = set()
            for i in range(0, len(batch), 500):
                part = batch[i : i + 500]
                marks = ",".join("?" * len(part))
                for (src,) in conn.execute(
                    f"SELECT DISTINCT src FROM refs WHERE target IN ({marks})", part
                ):
                    if src not in seen:
                        seen.add(src)
                        frontier.add(src)
        return seen

    def record_visit(self, when: int | None = None) -> bool:
        """Remember that a person looked at the corpus now (`since:last-visit` then finds
        what changed after). Best effort, for a window closing: False when the index is
        busy or missing. A fresh build of the index forgets it, as it forgets any cache."""
        try:
            with _update_lock(self.path, 2.0):
                conn = self.connect()
                try:
                    with conn:
                        conn.execute("INSERT OR REPLACE INTO meta VALUES ('last_visit', ?)",
                                     (str(int(time.time()) if when is None else when),))
                finally:
                    conn.close()
        except (IndexBusy, sqlite3.Error, OSError):
            return False
        return True

    def staged_problems(self, conn: sqlite3.Connection) -> list[Problem]:
        """The problems of the files staged for commit, as staged (`check --staged`, the
        pre-commit hook): the index's for a file whose working copy is what is staged; for
        one changed again after `git add`, its staged blob checked (`check_versions`) with
        the scan's findings about the file on disk kept."""
        staged = gitrepo.staged_blobs(self.repo)
        on_disk = dict(rows_in(conn, "SELECT path, blob FROM facts WHERE path IN ({marks})",
                               list(staged)))
        versions: dict[str, bytes] = {}
        found: list[Problem] = []
        with gitrepo.BlobReader(self.repo) as reader:
            for path, blob in staged.items():
                if not is_fact_path(path, self.root) or on_disk.get(path) == blob:
                    continue
                try:
                    data = reader.read(blob, limit=MAX_BYTES)
                except gitrepo.BlobTooLarge as exc:
                    found.extend(too_large(path, exc.size).problems)
                    continue
                if data is not None:
                    versions[path] = data
        kept = [Problem(r[0], r[1], r[2], Severity(r[3]), r[4]) for r in rows_in(
            conn, "SELECT path, line, code, severity, message FROM problems WHERE path IN ({marks})",
            list(staged)) if r[0] not in versions or r[2] in SCAN_CODES]
        found += self.check_versions(conn, versions)
        return sorted(kept + found, key=lambda p: (p.path, p.line, p.code))

    def check_versions(self, conn: sqlite3.Connection, versions: Mapping[str, bytes]
                       ) -> list[Problem]:
        """The problems of other versions of some facts than the files on disk (those staged
        for commit), each read and checked against the rest of the corpus as indexed (the
        working tree's): the parse, every per-fact rule and the ontology's. Who created a
        file is taken from its indexed history; what a synthesis's sources were when it was
        written is not known here, so R1's "cited a hypothesis then" case is left to the
        full check."""
        registry, ontology = self._registry_and_ontology()
        outcomes = {p: parse_fact(p, data) for p, data in versions.items()}
        creators = {p: h.creator_email for p in versions
                    if (h := path_history(conn, p)).creator_email}
        ctx = CheckContext(
            facts=_FactsView(conn, {p: o.fact for p, o in outcomes.items()}),
            repo_id=self._repo_ids, registry=registry, today=self.today,
            retracted=_FactsView(conn, {}, status="retracted"), creators=creators,
            history_known=self._has_git())
        engine = self._rule_engine() if ontology is not None else None
        found: list[Problem] = []
        for outcome in outcomes.values():
            found.extend(outcome.problems)
            if outcome.fact is None:
                continue
            found.extend(check_fact(outcome.fact, ctx))
            if ontology is not None and engine is not None:
                found.extend(check_ontology(outcome.fact, ontology, engine))
                found.extend(topic_problems(outcome.fact, ontology))
        return found

    # -- shared -------------------------------------------------------------------------

    def _registry_and_ontology(self) -> tuple[Registry, Ontology | None]:
        """Parsed once per content (stamped by blob id): an update after a one-fact change
        does not re-read them."""
        stamp = (self._registry_stamp(), self._ontology_stamp())
        if self._parsed is None or self._parsed[0] != stamp:
            self._parsed = (stamp, load_registry(self.repo), load_ontology(self.repo))
        return self._parsed[1], self._parsed[2]

    def _rule_engine(self) -> RuleEngine:
        """The process's sandboxed V8 context (`shared_engine`); compiled rules are kept by
        their source text, so a changed ontology compiles only what is new."""
        if self._engine is None:
            self._engine = shared_engine()
        return self._engine

    def _set_aside(self) -> None:
        if (kept := schema.move_aside(self.path)) is not None:
            self.set_aside.append(kept)

    def _has_git(self) -> bool:
        return (self.repo / ".git").exists()

    def _registry_stamp(self) -> str:
        data, why = read_config(self.repo, REGISTRY_PATH)
        return gitrepo.blob_id(data) if data is not None else why or ""

    def _ontology_stamp(self) -> str:
        found = ontology_bytes(self.repo)
        if found is None:
            return ""
        rel, data, why = found
        return f"{rel}:{gitrepo.blob_id(data) if data is not None else why}"

    def _ingest_commits(self, conn: sqlite3.Connection, commits: list[gitrepo.Commit],
                        seq0: int) -> tuple[list[CommitRow], list[ChangeRow]]:
        """Write `commits` to the `commits` and `changes` tables; the rows written."""
        rows, changes = history_rows(commits, self.root, seq0)
        conn.executemany("INSERT OR REPLACE INTO commits VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
        conn.executemany("INSERT INTO changes VALUES (?,?,?,?,?,?,?)", changes)
        return rows, changes

    def _retracted_paths(self, conn: sqlite3.Connection, live: set[str],
                         only: set[str] | None = None,
                         histories: Mapping[str, PathHistory] | None = None
                         ) -> dict[str, PathHistory]:
        """Paths deleted on the first-parent chain and absent now: retracted facts."""
        if only is None:
            paths = [r[0] for r in conn.execute("SELECT DISTINCT path FROM changes")]
        else:
            paths = list(only)
        out = {}
        for path in paths:
            if path in live:
                continue
            hist = histories[path] if histories is not None else path_history(conn, path)
            if hist.deleted and hist.last_blob:
                out[path] = hist
        return out

    def _read_retracted(self, retracted: dict[str, PathHistory]) -> dict[str, ParseOutcome]:
        """Retracted facts: their last version, read from git."""
        gone: dict[str, ParseOutcome] = {}
        if retracted:
            with gitrepo.BlobReader(self.repo) as reader:
                for path, hist in retracted.items():
                    data = reader.read(hist.last_blob or "")
                    gone[path] = parse_fact(path, data) if data else ParseOutcome(path, None)
        return gone

    def _delete_path(self, conn: sqlite3.Connection, path: str) -> None:
        conn.execute("DELETE FROM facts WHERE path = ?", (path,))
        conn.execute("DELETE FROM problems WHERE path = ?", (path,))
        conn.execute("DELETE FROM refs WHERE src = ?", (path,))

    def _write(self, conn: sqlite3.Connection, outcomes: dict[str, ParseOutcome],
               files: dict[str, tuple[str, int, int]], retracted: dict[str, PathHistory],
               scan_problems: list[Problem], *, full: bool,
               rescanned: set[str] | None = None,
               early: dict[str, list[Problem]] | None = None,
               histories: Mapping[str, PathHistory] | None = None,
               gone: dict[str, ParseOutcome] | None = None,
               alongside: Callable[[], None] | None = None,
               first_parent: FirstParentChanges | None = None) -> None:
        """Check `outcomes` and write their rows, refs and problems. With `early` (the
        streamed rebuild), their rows and the retracted facts' are already in, carrying the
        parse and ontology findings given there; only the rows the corpus-wide rules change
        are updated.

        `gone`: the retracted facts' last versions, when the caller has read them already.
        `alongside`: SQLite work to do on this thread
        while another checks the rules (the rebuild builds its secondary indexes, during
        which SQLite does not hold the GIL); it needs `full` and `first_parent` (the
        history in memory: the rules' thread must not use the connection meanwhile)."""
        repo_id = self._repo_ids
        registry, ontology = self._registry_and_ontology()
        retracted_outcomes = gone if gone is not None else self._read_retracted(retracted)
        retracted_facts = {p: o.fact for p, o in retracted_outcomes.items() if o.fact}
        overlay: dict[str, Fact | None] = {p: o.fact for p, o in outcomes.items()}
        facts_view: Mapping[str, Fact]
        retracted_view: Mapping[str, Fact]
        if full:
            facts_view = {p: f for p, f in overlay.items() if f is not None}
            retracted_view = retracted_facts
        else:
            facts_view = _FactsView(conn, overlay)
            retracted_view = _FactsView(conn, dict(retracted_facts), status="retracted")
        if histories is None:
            histories = {p: path_history(conn, p) for p in outcomes}
        else:
            histories = {p: histories.get(p, _NO_HISTORY) for p in outcomes}
        creators = {p: h.creator_email for p, h in histories.items() if h.creator_email}
        history_known = self._has_git()

        def context() -> CheckContext:
            return CheckContext(
                facts=facts_view, repo_id=repo_id, registry=registry, today=self.today,
                retracted=retracted_view, creators=creators, history_known=history_known,
                cited_types_then=self._cited_types_then(
                    None if first_parent is not None else conn, outcomes, files, histories,
                    repo_id, first_parent),
            )

        engine = self._rule_engine() if ontology is not None else None
        if not full:
            for path in list(outcomes) + list(retracted):
                conn.execute("DELETE FROM problems WHERE path = ?", (path,))
                conn.execute("DELETE FROM refs WHERE src = ?", (path,))
            conn.execute("DELETE FROM problems WHERE code IN ('ontology', 'registry', 'registry-trust')")
            found_again = {p.path for p in scan_problems}
            for pid, ppath, pcode in conn.execute(
                    f"SELECT id, path, code FROM problems WHERE code IN "
                    f"({','.join('?' * len(SCAN_CODES))})", SCAN_CODES).fetchall():
                # a file the parse could not read keeps its io_error until it is read (its
                # problems go above) or is gone (`_delete_path`); one the scan reports again
                # (it could not even stat the file) is replaced like any scan problem
                if pcode == "io_error" and not ppath.endswith("/") and ppath not in found_again:
                    continue
                if rescanned is None or ppath in rescanned or any(
                        ppath.startswith(d) for d in rescanned if d.endswith("/")):
                    conn.execute("DELETE FROM problems WHERE id = ?", (pid,))
        problems: list[Problem] = list(scan_problems)
        as_file = _by_path(scan_problems)  # a fact file's own, counted in its row too
        problems.extend(registry.problems)
        if ontology is not None:
            problems.extend(ontology.problems)
            if engine is not None:
                problems.extend(rule_problems(ontology, engine))
        ref_rows: list[tuple[str, str]] = []
        late: list[tuple[int, int, float | None, str]] = []  # rows the rules change

        def rows() -> Iterator[dict[str, object]]:
            """One row at a time, so 100,000 row dicts never sit in memory together."""
            ctx = context()
            for path in sorted(outcomes):
                outcome = outcomes[path]
                fact = outcome.fact
                if early is not None:
                    found = list(early[path])
                    known = len(found)
                    if fact is not None:
                        found[len(outcome.problems):len(outcome.problems)] = check_fact(fact, ctx)
                else:
                    found = list(outcome.problems)
                    if fact is not None:
                        found.extend(check_fact(fact, ctx))
                        if ontology is not None and engine is not None:
                            found.extend(check_ontology(fact, ontology, engine))
                            found.extend(topic_problems(fact, ontology))
                if fact is not None:
                    ref_rows.extend((path, t) for t in local_targets(fact.refs, repo_id))
                computed = (evidence_weight(fact, ctx.lookup, repo_id)
                            if fact is not None and (is_weighted(fact)
                                                     or fact.evidence_weight is not None)
                            else None)
                problems.extend(found)
                if early is not None:
                    if len(found) != known or computed is not None:
                        errors, warnings = problem_counts(found + as_file.get(path, []))
                        late.append((errors, warnings, computed, path))
                    continue
                yield fact_row(outcome, status="live" if fact else "broken",
                               history=histories[path], registry=registry,
                               file=files.get(path), computed_weight=computed,
                               problems=found + as_file.get(path, []))

        def gone_rows() -> Iterator[tuple[object, ...]]:
            for path, hist in retracted.items():
                yield row_values(_retracted_row(retracted_outcomes[path], hist, registry))

        written: Iterator[tuple[object, ...]] = map(row_values, rows())
        if alongside is not None:
            assert full and first_parent is not None, \
                "the rules run on another thread only over facts and history held in memory"
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="factdesk-rules") as pool:
                checked = pool.submit(list, written)
                alongside()
                written = iter(checked.result())
        # (with `early`, `written` is empty: consuming it runs the checks)
        conn.executemany(_UPSERT_ROW, written if early is not None
                         else itertools.chain(written, gone_rows()))
        conn.executemany("UPDATE facts SET errors = ?, warnings = ?, evidence_weight_computed = ? "
                         "WHERE path = ?", late)
        conn.executemany("INSERT OR IGNORE INTO refs VALUES (?, ?)", ref_rows)
        conn.executemany(
            "INSERT INTO problems (path, line, code, severity, message) VALUES (?,?,?,?,?)",
            [(p.path, p.line, p.code, str(p.severity), p.message) for p in problems],
        )

    def _cited_types_then(self, conn: sqlite3.Connection | None,
                          outcomes: dict[str, ParseOutcome],
                          files: dict[str, tuple[str, int, int]],
                          histories: dict[str, PathHistory], repo_id: frozenset[str] | None,
                          first_parent: FirstParentChanges | None = None
                          ) -> dict[str, dict[str, str]]:
        """For each synthesis: the type of each cited fact when the synthesis was written.
        History comes from `first_parent` when given (a rebuild, on the rules' thread,
        with `conn` None: every fact that is indexed is then in `outcomes`), else from the
        index's tables."""
        wanted: dict[str, dict[str, str]] = {}
        blobs_needed: dict[str, list[tuple[str, str]]] = {}
        for path, outcome in outcomes.items():
            fact = outcome.fact
            if fact is None or fact.type != FactType.SYNTHESIS:
                continue
            sha = histories[path].created_sha
            if not sha:
                continue
            if first_parent is not None:
                seq = first_parent.seq.get(sha)
            else:
                assert conn is not None
                row = conn.execute("SELECT seq FROM commits WHERE sha = ?", (sha,)).fetchone()
                seq = row[0] if row else None
            if seq is None:
                continue
            for target in local_targets(fact.refs, repo_id):
                blob = (first_parent.blob_at(target, seq) if first_parent is not None
                        else blob_at(conn, target, seq))  # type: ignore[arg-type]
                if blob:
                    blobs_needed.setdefault(blob, []).append((path, target))
        if not blobs_needed:
            return wanted

        def current_type(target: str, blob: str) -> str | None:
            """The cited fact's type when that version is the one indexed or being indexed."""
            if target in outcomes:
                fact = outcomes[target].fact
                return fact.type if fact and files.get(target, ("",))[0] == blob else None
            if conn is None:
                return None
            row = conn.execute("SELECT type FROM facts WHERE path = ? AND blob = ?",
                               (target, blob)).fetchone()
            return row[0] if row else None

        with gitrepo.BlobReader(self.repo) as reader:
            for blob, users in blobs_needed.items():
                type_ = current_type(users[0][1], blob)
                if type_ is None:
                    data = reader.read(blob)
                    old = parse_fact(users[0][1], data).fact if data else None
                    type_ = old.type if old else None
                if type_:
                    for path, target in users:
                        wanted.setdefault(path, {})[target] = type_
        return wanted

    def _set_meta(self, conn: sqlite3.Connection, head: str | None, *, dirty: str) -> None:
        meta = {"dirty": dirty, "head": head or "", "root": self.root, "complete": "1",
                "registry": self._registry_stamp(), "ontology": self._ontology_stamp(),
                "today": self.today.isoformat(), "indexed_at": str(int(time.time())),
                "repo_id": " ".join(sorted(self._repo_ids or ()))}
        conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta.items())

    def _stats(self, conn: sqlite3.Connection, mode: str, head: str | None,
               changed: list[str]) -> IndexStats:
        counts = dict(conn.execute("SELECT status, COUNT(*) FROM facts GROUP BY status"))
        problems = conn.execute("SELECT COUNT(*) FROM problems").fetchone()[0]
        return IndexStats(mode, facts=counts.get("live", 0), broken=counts.get("broken", 0),
                          retracted=counts.get("retracted", 0), problems=problems,
                          changed=changed, head=head)

    @staticmethod
    def _report(progress: Progress | None, stage: str, done: int, total: int) -> None:
        if progress is not None:
            progress(stage, done, total)


@contextlib.contextmanager
def _update_lock(path: Path, wait: float | None = None) -> Iterator[None]:
    """One updater per index file across processes. Without it a second process could find
    a rebuild half-done (not yet marked complete), take it for damage and move it aside.
    `wait`: seconds to wait for another updater before `IndexBusy` (None: no limit)."""
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
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
                        raise IndexBusy(
                            f"{path}: another factdesk process has been updating the index for "
                            f"{wait:g} s; nothing was changed (try again when it is done)"
                        ) from None
                    time.sleep(0.05)
        yield
    finally:
        os.close(fd)


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return None


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]


def _dirty_stamp(status: set[str]) -> str:
    """The paths git says differ from HEAD, as the text kept in `meta` and compared with it
    on the next update (a name that is not UTF-8 in its printable form)."""
    return printable("\n".join(sorted(status)))


def _by_path(problems: list[Problem]) -> dict[str, list[Problem]]:
    out: dict[str, list[Problem]] = {}
    for problem in problems:
        out.setdefault(problem.path, []).append(problem)
    return out


def _transaction(conn: sqlite3.Connection, work: Callable[[], IndexStats]) -> IndexStats:
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


_NAMES = ",".join(ROW_COLUMNS)
_MARKS = ",".join("?" * len(ROW_COLUMNS))
_INSERT_ROW = f"INSERT INTO facts ({_NAMES}) VALUES ({_MARKS})"
_INSERT_ROW_ID = f"INSERT INTO facts (id, {_NAMES}) VALUES (?, {_MARKS})"
_UPSERT_ROW = (_INSERT_ROW + " ON CONFLICT(path) DO UPDATE SET "
               + ",".join(f"{c}=excluded.{c}" for c in ROW_COLUMNS if c != "path"))
_NO_HISTORY = PathHistory()


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


def _retracted_row(outcome: ParseOutcome, history: PathHistory, registry: Registry
                   ) -> dict[str, object]:
    """The row of a retracted fact: its last version, as it was; no file, no findings."""
    return fact_row(outcome, status="retracted", history=history, registry=registry,
                    file=None, computed_weight=None, problems=[])


def _slim(outcome: ParseOutcome) -> ParseOutcome:
    """What the corpus-wide rules need of a fact already written: everything but the body
    (and a broken file's raw text). A hypothesis keeps its body: H1 reads its prose."""
    fact = outcome.fact
    if fact is not None and fact.type != FactType.HYPOTHESIS and fact.body:
        fact = dataclasses.replace(fact, body="")
    if fact is outcome.fact and not outcome.text and outcome.salvaged is None:
        return outcome
    return dataclasses.replace(outcome, fact=fact, text="", salvaged=None)
