"""Build and incrementally update the index from the corpus (files + git history).

A rebuild and an incremental update run the same per-fact code; the incremental path
only limits *which* facts it re-reads and re-checks: files whose size, mtime or blob
changed, paths touched by new commits, and every fact that cites one of those
(transitively, since evidence weight walks lineage). I1: incremental == rebuild.

The rooms: `parsing` (the worker processes), `locking` (the updater's lock, the write
transaction), `planning` (the pure change planner: what to re-read, delete, re-check),
`writing` (the two write paths: incremental and a rebuild's finish), `rebuild` (the
streamed rebuild from scratch). This module orchestrates them: it gathers what the
planner needs from git, the work tree and the index.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TypeVar

from factdesk.corpus import githistory, gitlook, gitrepo
from factdesk.corpus.codec import ParseOutcome
from factdesk.corpus.ontology import (
    Ontology,
    RuleEngine,
    load_ontology,
    ontology_bytes,
    shared_engine,
)
from factdesk.corpus.registry_io import REGISTRY_PATH, load_registry
from factdesk.corpus.scan import (
    SCAN_CODES,
    FileEntry,
    is_utf8,
    read_fact_file,
    scan,
    stat_paths,
)
from factdesk.corpus.watch import CorpusWatch
from factdesk.errors import FactdeskError, IndexBusy, IndexDiskFull
from factdesk.fsio import read_config
from factdesk.index import (
    authority_recheck,
    locking,
    parsing,
    pending,
    planning,
    schema,
    staged,
    worktree,
    writing,
)
from factdesk.index import rebuild as rebuilding
from factdesk.index.history import (
    ChangeRow,
    CommitRow,
    PathHistory,
    history_rows,
    path_history,
)
from factdesk.index.parsing import ParseStream, parse_files
from factdesk.index.planning import Stamp
from factdesk.index.rows import bad_groups, damaged_ids, damaged_ids_of, rows_in
from factdesk.index.writing import FileStamp
from factdesk.model.fact import Problem
from factdesk.model.registry import Registry

Progress = Callable[[str, int, int], None]
_T = TypeVar("_T")
#: seconds the update after factdesk's own commit waits for another updater (search's
#: bound, RELIABILITY F08), then leaves the index to catch up at the next update
AFTER_COMMIT_WAIT = schema.BUSY_TIMEOUT_MS / 1000
#: kept for callers of the old name (tests/corpus/test_scan.py)
_parse_entry = parsing.parse_entry


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
    #: what the user should know about this update (mode "behind": why it did not run)
    note: str | None = None
    #: a registry change's re-check of the authority findings (issue 16), when one ran
    rechecked: authority_recheck.Recheck | None = None


@dataclass(frozen=True)
class _Look:
    """The files an incremental update compares with the index."""

    #: every path looked at (all of them when not `partial`)
    paths: set[str]
    #: those present as fact files
    entries: list[FileEntry]
    #: the scan's findings over them
    problems: list[Problem]
    #: git's dirty set, as remembered in `meta`
    dirty: str
    #: what the index recorded of them
    known: dict[str, Stamp]
    #: only some paths were looked at (those git and the stamps name)
    partial: bool


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
        #: the pending actions' files that the last update took as HEAD has them (`pending`)
        self.pending = pending.Pending()
        #: run first by `read` (a reader's chance to finish or roll back an interrupted
        #: action, set by the layers that may write: cli, mcp_server)
        self.before_read: Callable[[], None] | None = None
        #: what tells `read` of changes in a long-running process (`corpus.watch`), or None:
        #: each read then looks at the whole work tree (`git status`) and the refs
        self.watch: CorpusWatch | None = None

    # -- public -------------------------------------------------------------------------

    def connect(self, *, readonly: bool = False) -> sqlite3.Connection:
        try:
            return schema.connect(self.path, readonly=readonly)
        except (sqlite3.Error, OSError) as exc:  # (a full disk is said in words, never damage)
            if (full := self._full(exc)) is not None:
                raise full from exc
            raise

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
        updates the index (None: wait for it, however long). With `hint` (factdesk's own
        commit is done) the wait is bounded by default (`AFTER_COMMIT_WAIT`), and giving up
        is no error: the stats say mode "behind" and `note` says so; the next update
        catches up.

        A folder that cannot be written raises `IndexUnwritable` (never taken for damage)."""
        started = time.perf_counter()
        locking.ensure_writable(self.path.parent)
        if hint is not None and lock_wait is None:
            try:
                return self.update(progress=progress, hint=hint, thorough=thorough,
                                   lock_wait=AFTER_COMMIT_WAIT)
            except IndexBusy as exc:
                return IndexStats("behind", seconds=time.perf_counter() - started,
                                  note=f"committed; the index will catch up ({exc})")
        with locking.update_lock(self.path, lock_wait):
            # rows a reader without this indexer found failing their checksums (the GUI's)
            damaged = schema.take_damage(self.path) or None
            try:
                return self._update_locked(rebuild, progress, hint, started, thorough,
                                           damaged=damaged)
            except (sqlite3.DatabaseError, OSError) as exc:
                if (full := self._full(exc)) is not None:
                    raise full from exc
                if not schema.is_busy(exc):
                    raise
                raise IndexBusy(
                    f"{self.path}: another program has held the index's write lock for "
                    f"{schema.BUSY_TIMEOUT_MS / 1000:g} s; nothing was changed (try again, or "
                    "close the program that has it open)") from exc

    def read(self, work: Callable[[sqlite3.Connection], _T], *, thorough: bool = False,
             hint: Iterable[str] | None = None, update: bool = True) -> _T:
        """`update` (with `hint`: see there; `()` follows new commits only, without looking
        at the work tree — an agent's write checks against the curated branch, issue 26;
        `update=False`: none, the caller knows nothing it reads moved), then `work` over a
        read-only connection. Damage that only the reads meet
        (a page the update did not need) moves the file aside and rebuilds it, and `work`
        runs once more, on the new file (RELIABILITY F03); other errors propagate.

        When another program holds the write lock (F08), `work` reads the index as it was,
        and `stale` says why; with no complete index to read, `IndexBusy` propagates."""
        self.stale = None
        if self.before_read is not None:
            self.before_read()
        try:
            if update or not self.path.exists():
                self._catch_up(thorough, hint)
        except (IndexBusy, IndexDiskFull) as exc:  # (the index as it was, said: F08, F09)
            try:
                usable = schema.is_usable(self.path)
            except schema.DAMAGE:
                usable = False  # (too full to open it even to read)
            if not usable:
                raise
            self.stale = str(exc)
        read_from = locking.inode(self.path)
        damaged: list[int] | None = None
        try:
            return self._read_once(work)
        except schema.RowDamaged as exc:  # rows that fail their checksums: repair them
            damaged = sorted({*exc.ids, *schema.take_damage(self.path)})
        except schema.DAMAGE as exc:
            if (full := self._full(exc)) is not None:
                raise full from exc
            if not schema.is_damage(exc):
                raise
        with locking.update_lock(self.path):
            if locking.inode(self.path) == read_from:  # (else another process replaced it already)
                if damaged is None:
                    self._set_aside()
                self._update_locked(False, None, None, time.perf_counter(), False,
                                    damaged=damaged)
        return self._read_once(work)

    def _catch_up(self, thorough: bool, hint: Iterable[str] | None) -> None:
        """`read`'s update. With a live `watch` (a long-running process: issue 23 #2), only
        what it saw is looked at: nothing when nothing changed, else the files it names
        (and what new commits touched) without `git status`; when the watch cannot say
        (not live, lost events, a folder moved), the full look, as without a watch. A
        caller's `hint` (an agent's write: `()`) is `update`'s, and leaves what the watch saw
        for the next read."""
        wait = schema.BUSY_TIMEOUT_MS / 1000
        if hint is not None:
            self.update(thorough=thorough, lock_wait=wait, hint=hint)
            return
        seen = self.watch.take() if self.watch is not None and not thorough else None
        try:
            if seen is None or seen.whole:
                self.update(thorough=thorough, lock_wait=wait)
            elif not seen.nothing:
                self.update(hint=seen.paths, lock_wait=wait)
        except BaseException:
            if self.watch is not None:  # what it saw is looked at again next time
                self.watch.lost("the last update did not finish")
            raise

    def _read_once(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        conn = self.connect(readonly=True)
        try:
            return work(conn)
        finally:
            conn.close()

    def _update_locked(self, rebuild: bool, progress: Progress | None, hint: Iterable[str] | None,
                       started: float, thorough: bool, *, damaged: list[int] | None = None
                       ) -> IndexStats:
        # what a rebuild killed part-way left behind (only an updater, holding the lock, makes them)
        for scratch in (self._building, self._text_scratch):
            schema.remove(scratch)
        failing: list[int] | None = None
        if thorough:  # every row's checksums beside the file's own checks (issue 23 #8)
            with ThreadPoolExecutor(1, thread_name_prefix="factdesk-row-sums") as pool:
                checked = pool.submit(damaged_ids_of, self.path)
                try:
                    usable = schema.is_usable(self.path, thorough=True)
                finally:
                    failing = checked.result()
        else:
            usable = schema.is_usable(self.path)
        if not usable and self.path.exists():
            self._set_aside()
        if (rebuild or not usable) and schema.is_absent(self.path):
            stats = rebuilding.build_fresh(self, progress)
        else:
            try:
                stats = self._update_in_place(
                    rebuild or not usable, progress, hint,
                    damaged=[*(damaged or ()), *(failing or ())] if failing is not None else damaged,
                    verify_all=thorough and failing is None)
            except schema.DAMAGE as exc:
                # a damaged file is moved aside and rebuilt; any other error (disk full,
                # locked, I/O) leaves the index as it was
                if not schema.is_damage(exc):
                    raise
                self._set_aside()
                stats = rebuilding.build_fresh(self, progress)
        stats.seconds = time.perf_counter() - started
        return stats

    def _update_in_place(self, rebuild: bool, progress: Progress | None,
                         hint: Iterable[str] | None, *, damaged: list[int] | None = None,
                         verify_all: bool = False) -> IndexStats:
        """`damaged`: rows a read found failing their checksums; `verify_all`: verify every
        row's checksums first (the Check command). Such rows are repaired within the
        update's transaction (`_repair_rows`)."""
        conn = self.connect()
        try:
            if rebuild:
                return rebuilding.rebuild_committed(self, conn, progress)
            hinted = set(hint) if hint is not None else None
            if self._registry_changed(conn):
                # a registry change's re-check may rewrite a third of the rows (one agent's
                # facts: ~100 MB of pages at 100,000 facts): committed without fsync, as a
                # rebuild is (`_rebuild_committed`: the index is a cache, an application
                # crash leaves the old index or the new one). The connection is closed after
                # the update, its setting with it.
                conn.execute("PRAGMA synchronous = OFF")

            def work() -> IndexStats:
                bad = list(damaged or ())
                if verify_all:
                    bad += damaged_ids(conn)
                if not bad:
                    return self._incremental(conn, progress, hinted)
                return self._repair_rows(conn, sorted(set(bad)), progress)

            return locking.transaction(conn, work)
        finally:
            conn.close()

    def _registry_changed(self, conn: sqlite3.Connection) -> bool:
        """The registry is not the one the index was written under (a re-check or a
        rebuild follows)."""
        row = conn.execute("SELECT value FROM meta WHERE key = 'registry'").fetchone()
        return row is None or row[0] != self._registry_stamp()

    def _repair_rows(self, conn: sqlite3.Connection, ids: list[int],
                     progress: Progress | None) -> IndexStats:
        """Repair rows that fail their checksums (issue 15 #10) from the corpus, in place,
        when each is a file's row (live or broken) whose full-text values still hold
        (`sum_text`: the full-text index's `delete` needs the true old values): its stamp
        and blob are cleared, and a full incremental update (no hint) re-reads its file
        — a row whose flipped path names no file is deleted, and the file of its true
        path, now without a row, is found as new. The repaired rows are verified again.
        The table's secondary indexes are made again first (`REINDEX facts`), which also
        repairs a flipped index entry (rows that verify but were hidden). Otherwise, and
        when the repair does not verify, `RowDamaged` (damage: the file is set aside and
        rebuilt by `_update_locked`)."""
        found = rows_in(conn, "SELECT * FROM facts WHERE id IN ({marks})", ids, named=True)
        broken = [r for r in found if bad_groups(r)]
        if any(r["status"] not in ("live", "broken") or bad_groups(r, ("sum_text",))
               for r in broken):
            raise schema.RowDamaged(ids)
        try:
            # the secondary indexes made again from the rows: an entry that disagrees with
            # its row (the row's value flipped, or the entry's) would make changing the
            # row fail; and a flipped entry that hid a row (`_verify_miss`) is gone
            conn.execute("REINDEX facts")
        except sqlite3.IntegrityError as exc:  # (a flipped path that names another fact)
            raise schema.RowDamaged(ids) from exc
        rows_in(conn, "UPDATE facts SET blob = NULL, size = NULL, mtime_ns = NULL "
                      "WHERE id IN ({marks})", [r["id"] for r in broken])
        schema.recount(conn)  # (what damage changed, the triggers never saw)
        stats = self._incremental(conn, progress, None, walk=True)
        again = rows_in(conn, "SELECT * FROM facts WHERE id IN ({marks})", ids, named=True)
        if any(bad_groups(r) for r in again):
            raise schema.RowDamaged(ids)
        stats.mode = "repaired"
        return stats

    # -- incremental --------------------------------------------------------------------

    def _incremental(self, conn: sqlite3.Connection, progress: Progress | None,
                     hint: set[str] | None = None, *, walk: bool = False) -> IndexStats:
        """Bring the index up to date by re-reading only what the change planner names; a
        rebuild when the settings changed or the branch's history cannot be followed.
        `walk`: compare every file's stamp too (`_look`; the repair of damaged rows)."""
        schema.ensure_sort_indexes(conn)
        schema.ensure_triggers(conn)
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        rechecked: authority_recheck.Recheck | None = None
        if planning.settings_changed(meta, root=self.root, registry=self._registry_stamp(),
                                     ontology=self._ontology_stamp()):
            if not authority_recheck.only_registry_changed(
                    meta, root=self.root, registry=self._registry_stamp(),
                    ontology=self._ontology_stamp()):
                return rebuilding.rebuild(self, conn, progress)
            # only the registry changed: its rows and findings, in place (issue 16)
            # (the registry the rows were written under: this indexer's last parse, or git's)
            old = self._parsed[1] if self._parsed and self._parsed[0][0] == meta.get(
                "registry") else authority_recheck.stored_registry(conn, self.repo,
                                                                   meta.get("registry"))
            rechecked = authority_recheck.recheck(conn, self._registry_and_ontology()[0],
                                                  stamp=self._registry_stamp(), old=old)
        self._repo_ids = frozenset(meta.get("repo_id", "").split()) or None
        head = gitrepo.head_sha(self.repo) if self._has_git() else None
        old_head = meta.get("head") or None
        touched = self._follow_head(conn, old_head, head)
        if touched is None:
            return rebuilding.rebuild(self, conn, progress)
        # a pending action's paths, and those that were (read again, from the files)
        touched |= set(self._pending_now().versions) | set(_lines(meta.get("pending", "")))
        look = self._look_at_files(conn, meta, touched, hint, walk=walk)
        look = dataclasses.replace(look, entries=self.pending.entries(look.entries))
        plan = planning.plan_files(
            known=look.known, on_disk={e.path: (e.size, e.mtime_ns) for e in look.entries},
            looked_at=look.paths, touched=touched, partial=look.partial)
        outcomes, files = self._read_changed(conn, plan, look.known)
        # history changed, bytes did not: re-read them for their history fields; and a path
        # whose file problems changed with another's (a twin brought along, C11, C12), for
        # its row's counts
        recount = self._file_problems_changed(conn, look.paths, look.partial, look.problems)
        self._parse_into(planning.rereads(touched=touched, recount=recount, read=set(outcomes),
                                          removed=plan.removed, present=plan.present),
                         outcomes, files)
        changed = set(outcomes) | plan.removed | touched
        day_changed = meta.get("today") != self.today.isoformat()
        if planning.is_unchanged(changed=changed, day_changed=day_changed,
                                 same_head=head == old_head,
                                 same_dirty=look.dirty == meta.get("dirty")):
            if rechecked is not None:
                return self._stats(conn, "registry", head, [], rechecked)
            return self._stats(conn, "unchanged", head, [])
        present = set(plan.present)
        retracted = self._retracted_paths(conn, present, only=changed | plan.removed)
        dependents = planning.dependents(changed, lambda paths: (r[0] for r in rows_in(
            conn, "SELECT DISTINCT src FROM refs WHERE target IN ({marks})", paths)))
        if day_changed:  # (due dates: every open hypothesis)
            dependents |= {r[0] for r in conn.execute(
                "SELECT path FROM facts WHERE type = 'hypothesis' AND status = 'live'")}
        if look.partial:  # only the looked-at paths were compared: the rest stand as indexed
            present |= set(self._known(conn, dependents - look.paths))
        self._parse_into(planning.rechecks(dependents=dependents, read=set(outcomes),
                                           removed=plan.removed, present=present),
                         outcomes, files)
        for path in plan.removed:
            writing.delete_path(conn, path)
        writing.write_incremental(conn, self._rule_setting(), outcomes, files, retracted,
                                  look.problems, rescanned=look.paths if look.partial else None)
        self._set_meta(conn, head, dirty=look.dirty)
        return self._stats(conn, "incremental", head, sorted(changed), rechecked)

    def _follow_head(self, conn: sqlite3.Connection, old_head: str | None, head: str | None
                     ) -> set[str] | None:
        """Take in the commits between the indexed head and the current one: the paths
        under the root that they touched (empty when the head is the same); None when the
        history cannot be followed (a rebuild)."""
        if head == old_head:
            return set()
        if old_head and head and gitrepo.is_ancestor(self.repo, old_head, head):
            seq0 = conn.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM commits").fetchone()[0]
            new = gitrepo.log(self.repo, f"{old_head}..{head}")
            self._ingest_commits(conn, new, seq0=seq0)
            return {c.path for commit in new for c in commit.changes
                    if c.path.startswith(self.root + "/")}
        if old_head and head:
            return self._rewind(conn, old_head, head)
        return None

    def _look_at_files(self, conn: sqlite3.Connection, meta: dict[str, str], touched: set[str],
                       hint: set[str] | None, *, walk: bool = False) -> _Look:
        """The files to compare with the index, and what the index recorded of them."""
        looked = None
        if self._has_git():
            # a file or folder that could not be read last time (C14, C17) is tried again:
            # git does not name a file whose bytes never changed
            unread = {r[0] for r in conn.execute(
                "SELECT DISTINCT path FROM problems WHERE code = 'io_error'")}
            looked = (self._look_hinted(meta, touched | unread, hint) if hint is not None
                      else self._look(conn, meta, touched | unread, walk=walk))
        if looked is None:  # no git to say what changed: compare every file with the index
            known = {r[0]: (r[1], r[2], r[3]) for r in conn.execute(
                "SELECT path, size, mtime_ns, blob FROM facts INDEXED BY facts_stamp "
                "WHERE status IN ('live', 'broken')")}
            entries, scan_problems = scan(self.repo, self.root)
            return _Look({e.path for e in entries} | set(known), entries, scan_problems, "",
                         known, partial=False)
        looked_at, entries, scan_problems, dirty = looked
        # with the names `stat_paths` looked at too (a colliding name's twin, C11/C12)
        looked_at = looked_at | {e.path for e in entries} | {p.path for p in scan_problems}
        # (a name that is not UTF-8 is never a row: its problem stands under a printable
        # form of it, which is in the set)
        looked_at = {p for p in looked_at if is_utf8(p)}
        return _Look(looked_at, entries, scan_problems, dirty, self._known(conn, looked_at),
                     partial=True)

    def _read_changed(self, conn: sqlite3.Connection, plan: planning.FilePlan,
                      known: dict[str, Stamp]
                      ) -> tuple[dict[str, ParseOutcome], dict[str, FileStamp]]:
        """Read the files the plan names (and those to verify whose blob differs); a file
        whose bytes are the ones indexed only gets its new stamp recorded."""
        stale = set(plan.read) | {p for p in plan.verify if not self._holds(p, known[p][2])}
        outcomes: dict[str, ParseOutcome] = {}
        files: dict[str, FileStamp] = {}
        with contextlib.closing(self._parse([p for p in plan.read + plan.verify
                                             if p in stale])) as parsed:
            for outcome, blob, size, mtime in parsed:
                if outcome.path in known and known[outcome.path][2] == blob:
                    conn.execute("UPDATE facts SET size = ?, mtime_ns = ? WHERE path = ?",
                                 (size, mtime, outcome.path))
                    continue
                outcomes[outcome.path] = outcome
                files[outcome.path] = (blob, size, mtime)
        return outcomes, files

    def _rewind(self, conn: sqlite3.Connection, old_head: str, head: str) -> set[str] | None:
        """The branch moved to a commit that does not descend from the indexed one (a reset,
        a rebase, a checkout of another branch). When their merge base lies on the new
        head's first-parent chain, drop the commits only the old head reached, add the new
        ones, and return every path either side touched; else None (rebuild)."""
        base = githistory.merge_base(self.repo, old_head, head)
        if not base or base not in githistory.first_parent_chain(self.repo, head):
            return None
        gone = githistory.commits_only_in(self.repo, old_head, head)
        touched = {r[0] for r in rows_in(
            conn, "SELECT DISTINCT path FROM changes WHERE sha IN ({marks})", gone)}
        rows_in(conn, "DELETE FROM changes WHERE sha IN ({marks})", gone)
        rows_in(conn, "DELETE FROM commits WHERE sha IN ({marks})", gone)
        seq0 = conn.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM commits").fetchone()[0]
        new = gitrepo.log(self.repo, f"{old_head}..{head}")
        self._ingest_commits(conn, new, seq0=seq0)
        touched |= {c.path for commit in new for c in commit.changes if c.path.startswith(self.root + "/")}
        return touched

    def _look(self, conn: sqlite3.Connection, meta: dict[str, str], touched: set[str], *,
              walk: bool = False
              ) -> tuple[set[str], list[FileEntry], list[Problem], str] | None:
        """What to compare with the index: (paths looked at, those present as files,
        problems found on them, the dirty-set stamp to remember); None when git cannot say.

        `gitlook.status_paths` (C, git's own stat cache, every stat field compared) names
        every file that can differ from HEAD — untracked ones, those git's ignore rules
        hide, and every entry under `--skip-worktree` or `--assume-unchanged` too (issue 15
        #7); with the paths new commits touched and the files so named at the last update,
        that is every file that can differ from the index. No walk of the work tree: a
        no-op read costs about one `git status` (issue 23 #1).

        `walk`: also compare every fact file's stamp with the index's (a Python walk of the
        work tree, while git runs): the repair of damaged rows (`_repair_rows`) clears their
        stamps, and a flipped path leaves its true file without a row — git, which calls
        both files clean, names neither."""
        differ: set[str] = set()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="factdesk-git") as pool:
            asked = pool.submit(gitlook.status_paths, self.repo, self.root)
            if walk:
                recorded = {r[0]: (r[1], r[2]) for r in conn.execute(
                    "SELECT path, size, mtime_ns FROM facts INDEXED BY facts_stamp "
                    "WHERE status IN ('live', 'broken')")}
                differ = planning.stamp_differences(recorded,
                                                    worktree.stamps(self.repo, self.root))
            status = asked.result()
        if status is None:
            return None
        dirty = rebuilding.dirty_stamp(status)
        paths = status | differ | touched | set(_lines(meta.get("dirty", "")))
        entries, problems = stat_paths(self.repo, sorted(paths), self.root)
        return paths, entries, problems, dirty

    def _look_hinted(self, meta: dict[str, str], touched: set[str], hint: set[str]
                     ) -> tuple[set[str], list[FileEntry], list[Problem], str]:
        """`_look` without `git status`: the hinted paths, the ones new commits touched and
        the ones dirty at the last full look. The hinted paths join the remembered dirty
        set until the next full look: an edit a watcher told of, put back later while no
        watcher runs, is clean to git, and would otherwise never be looked at again."""
        old = set(_lines(meta.get("dirty", "")))
        paths = {p for p in hint | touched | old if p.startswith(self.root + "/")}
        entries, problems = stat_paths(self.repo, sorted(paths), self.root)
        hinted = {p for p in hint if p.startswith(self.root + "/")}
        dirty = meta.get("dirty", "") if hinted <= old else rebuilding.dirty_stamp(old | hinted)
        return paths, entries, problems, dirty

    def _holds(self, rel: str, blob: str) -> bool:
        """Whether the file at `rel` holds the blob `blob` (False when it cannot be read)."""
        try:
            data, _ = read_fact_file(str(self.repo), rel)
        except OSError:
            return False
        return gitrepo.blob_id(data) == blob

    def _known(self, conn: sqlite3.Connection, paths: set[str]) -> dict[str, Stamp]:
        """What the index recorded of the files among `paths` that have a row as files."""
        return {r[0]: (r[1], r[2], r[3]) for r in rows_in(
            conn, "SELECT path, size, mtime_ns, blob FROM facts WHERE path IN ({marks}) "
            "AND status IN ('live', 'broken')", sorted(paths))}

    def _parse_into(self, paths: list[str], outcomes: dict[str, ParseOutcome],
                    files: dict[str, FileStamp]) -> None:
        with contextlib.closing(self._parse(paths)) as parsed:
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
        return planning.file_problems_changed(had, now)

    def record_visit(self, when: int | None = None) -> bool:
        """Remember that a person looked at the corpus now (`since:last-visit` then finds
        what changed after). Best effort, for a window closing: False when the index is
        busy or missing. A fresh build of the index forgets it, as it forgets any cache."""
        try:
            with locking.update_lock(self.path, 2.0):
                conn = self.connect()
                try:
                    schema.database(conn).table("meta").upsert(  # (its own transaction)
                        {"key": "last_visit",
                         "value": str(int(time.time()) if when is None else when)}, pk="key")
                finally:
                    conn.close()
        except (IndexBusy, sqlite3.Error, OSError):
            return False
        return True

    def staged_problems(self, conn: sqlite3.Connection) -> list[Problem]:
        """The problems of the files staged for commit, as staged (`check --staged`, the
        pre-commit hook): see `index.staged.staged_problems`."""
        return staged.staged_problems(conn, self._rule_setting(), self.root)

    def check_versions(self, conn: sqlite3.Connection, versions: Mapping[str, bytes]
                       ) -> list[Problem]:
        """The problems of other versions of some facts than the files on disk, checked
        against the rest of the corpus as indexed: see `index.staged.check_versions`."""
        return staged.check_versions(conn, self._rule_setting(), versions)

    def rule_setting(self) -> writing.RuleSetting:
        """What every check shares (registry, ontology and its engine, repository ids), for
        checks of versions other than the indexed ones (proposal review, factdesk/review)."""
        return self._rule_setting()

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

    def _rule_setting(self) -> writing.RuleSetting:
        registry, ontology = self._registry_and_ontology()
        return writing.RuleSetting(
            repo=self.repo, registry=registry, ontology=ontology,
            engine=self._rule_engine() if ontology is not None else None,
            repo_id=self._repo_ids, today=self.today, history_known=self._has_git())

    def _parse(self, paths: list[str]) -> ParseStream[parsing.Parsed]:
        return self.pending.parsed(paths, lambda ps: parse_files(self.repo, ps))

    def _pending_now(self) -> pending.Pending:
        self.pending = pending.read_pending(self.repo, self.git_dir, self.root)
        return self.pending

    def _full(self, exc: BaseException) -> IndexDiskFull | None:
        """`exc` in words when it is the disk being full (never damage: issue 22 #10)."""
        if isinstance(exc, FactdeskError) or not schema.is_disk_full(exc, self.path.parent):
            return None
        return IndexDiskFull(
            f"the disk holding the index ({self.path.parent}) is full ({exc}): the index was "
            "kept as it was and nothing was changed; free some space and try again")

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

    def _set_meta(self, conn: sqlite3.Connection, head: str | None, *, dirty: str) -> None:
        meta = {"dirty": dirty, "head": head or "", "root": self.root, "complete": "1",
                "registry": self._registry_stamp(), "ontology": self._ontology_stamp(),
                "today": self.today.isoformat(), "indexed_at": str(int(time.time())),
                "repo_id": " ".join(sorted(self._repo_ids or ())),
                "pending": "\n".join(sorted(self.pending.versions))}
        conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta.items())

    def _stats(self, conn: sqlite3.Connection, mode: str, head: str | None,
               changed: list[str], rechecked: authority_recheck.Recheck | None = None
               ) -> IndexStats:
        # the counts scan every row (27 ms at 100,000 facts, ten times that at a million):
        # counted when the rows changed and kept in `meta`; a look that found nothing
        # changed reads them back
        found = _kept_counts(conn) if mode == "unchanged" else None
        if found is None:  # (kept by triggers; an index without them: counted)
            found = schema.counted(conn) or (
                dict(conn.execute("SELECT status, COUNT(*) FROM facts GROUP BY status")),
                conn.execute("SELECT COUNT(*) FROM problems").fetchone()[0])
            if mode != "unchanged":
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('counts', ?)",
                             (json.dumps(found),))
        counts, problems = found
        return IndexStats(mode, facts=counts.get("live", 0), broken=counts.get("broken", 0),
                          retracted=counts.get("retracted", 0), problems=problems,
                          changed=changed, head=head, rechecked=rechecked)

    @staticmethod
    def _report(progress: Progress | None, stage: str, done: int, total: int) -> None:
        if progress is not None:
            progress(stage, done, total)


def _kept_counts(conn: sqlite3.Connection) -> tuple[dict[str, int], int] | None:
    """(facts by status, problems) as `Indexer._stats` kept them at the last change; None
    when absent or not what it writes."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'counts'").fetchone()
    try:
        counts, problems = json.loads(row[0]) if row else (None, None)
    except (ValueError, TypeError):
        return None
    return (counts, problems) if isinstance(counts, dict) and isinstance(problems, int) else None


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]
