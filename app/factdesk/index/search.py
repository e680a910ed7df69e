"""Queries over the index: ranked search, the table's id list, facet counts, one fact.

Ranking: FTS5 bm25 (title weighted 10, domain/entities 3, body 1). To keep p95 low for
very common terms, bm25 is computed over at most RANK_WINDOW matches, newest first
(rowid descending); a query matching fewer facts is ranked exactly.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from factdesk.errors import FactdeskError
from factdesk.index import columns, dup_ids
from factdesk.index.query import CompiledQuery, compile_query, revision_resolver
from factdesk.index.rows import (
    HEAD_SUMS,
    TABLE_SUMS,
    CheckedRows,
    damaged_ids,
    named_rows,
    rows_in,
    sum_sql,
    verify,
)
from factdesk.index.schema import RowDamaged, note_damage
from factdesk.model.fact import Problem

if TYPE_CHECKING:  # numpy is imported where it is used: not on the window's start-up path
    import numpy as np
    import numpy.typing as npt

    IdArray = npt.NDArray[np.int64]
    BoolArray = npt.NDArray[np.bool_]
else:
    IdArray = BoolArray = object

RANK_WINDOW = 4000
#: match sets up to this size are ordered by reading their rows (`_newest`)
SMALL_SET = 4000
#: (defined with the table's columns, index.columns)
SORTABLE = columns.SORTABLE

#: the covering (column, status) index of a sort order (schema.SORT_INDEXES)
SORT_INDEX = {"updated": "facts_sort_updated", "created": "facts_sort_created",
              "confidence": "facts_sort_confidence", "evidence_weight": "facts_sort_weight",
              "title": "facts_sort_title", "author": "facts_sort_author"}


@dataclass(frozen=True, slots=True)
class SearchHit:
    id: int
    path: str
    title: str
    type: str | None
    score: float

    def as_dict(self) -> dict[str, object]:
        return {"id": self.id, "path": self.path, "title": self.title, "type": self.type,
                "score": round(self.score, 6)}


def _compiled(conn: sqlite3.Connection, query: str | CompiledQuery) -> CompiledQuery:
    if isinstance(query, CompiledQuery):
        return query
    last_visit = conn.execute("SELECT value FROM meta WHERE key = 'last_visit'").fetchone()
    commit_time = None
    if "since:" in query:
        commit_time = {r[0]: r[1] for r in conn.execute("SELECT sha, time FROM commits")}
    return compile_query(query, since_last_visit=int(last_visit[0]) if last_visit else None,
                         commit_time=commit_time, resolve_rev=revision_resolver(conn))


def search(conn: sqlite3.Connection, query: str | CompiledQuery, *, limit: int = 20
           ) -> list[SearchHit]:
    """The best `limit` facts for a query: bm25 order with text, newest first without."""
    q = _compiled(conn, query)
    if q.fts is None:
        rows = _newest(conn, q, limit)
    else:
        # The ranking window reads only the FTS index: field filters and the retracted
        # facts are materialised once as id lists from their narrow indexes, and each text
        # match is tested against them (`+rowid` keeps SQLite from handing the lists to
        # FTS5 as rowid lookups, which takes seconds). Facts rows are read for the top
        # `limit` only, instead of for every match of a common word.
        clauses: list[str] = ["facts_fts MATCH ?"]
        params: list[object] = [q.fts]
        if q.where:  # one probe per match: the filters and the status together
            clauses.append(f"+facts_fts.rowid IN (SELECT f.id FROM facts f WHERE {q.where_sql()})")
            params.extend(q.params)
        elif not q.include_retracted:
            clauses.append("+facts_fts.rowid NOT IN "
                           "(SELECT f.id FROM facts f WHERE f.status = 'retracted')")
        sql = (f"SELECT facts_fts.rowid, bm25(facts_fts, 10.0, 1.0, 3.0, 3.0) FROM facts_fts "
               f"WHERE {' AND '.join(clauses)} ORDER BY facts_fts.rowid DESC LIMIT ?")
        ranked = sorted(conn.execute(sql, [*params, RANK_WINDOW]).fetchall(),
                        key=lambda r: (r[1], -r[0]))[:limit]
        score = {r[0]: r[1] for r in ranked}
        found = {r["id"]: r for r in rows_in(
            conn, f"SELECT {_HIT_SQL} FROM facts WHERE id IN ({{marks}})", list(score),
            named=True)}
        verify(list(found.values()), HEAD_SUMS, conn)  # (issue 15 #10: never serve a flipped row)
        rows = [(i, found[i]["path"], found[i]["title"], found[i]["type"], score[i])
                for i in score if i in found]
    return [SearchHit(r[0], r[1], r[2], r[3], -float(r[4])) for r in rows]


def _newest(conn: sqlite3.Connection, q: CompiledQuery, limit: int) -> list[tuple[Any, ...]]:
    """The `limit` newest facts a query without text selects. Their ids come as one set
    (`_matching`); a few thousand are ordered by reading just those rows, more by walking
    the `updated` index newest first until `limit` of them have passed (expected steps:
    `limit` × facts ÷ matches) — instead of reading and sorting every match."""
    ids = _matching(conn, q)
    columns = _HIT_SQL_F
    if len(ids) <= SMALL_SET:
        return _hits(named_rows(
            conn, f"SELECT {columns} FROM facts f WHERE f.id IN (SELECT value FROM json_each(?)) "
            "ORDER BY f.updated_at DESC, f.id DESC LIMIT ?", [json.dumps(ids.tolist()), limit]),
            conn)
    wanted = set(ids.tolist())
    cursor = conn.cursor()
    cursor.row_factory = None
    cursor.execute("SELECT f.id FROM facts f INDEXED BY facts_sort_updated "
                   "ORDER BY f.updated_at DESC, f.id DESC")
    top: list[int] = []
    while len(top) < limit and (batch := cursor.fetchmany(512)):
        top += [fid for (fid,) in batch if fid in wanted][: limit - len(top)]
    cursor.close()
    found = {r[0]: r for r in rows_in(conn, f"SELECT {columns} FROM facts f WHERE f.id IN ({{marks}})",
                                      top, named=True)}
    return _hits([found[i] for i in top if i in found], conn)


#: what a search hit reads: its fields and what verifies them (`rows.verify`)
_HIT_SQL = sum_sql(HEAD_SUMS)
_HIT_SQL_F = sum_sql(HEAD_SUMS, prefix="f.")


def _hits(rows: list[Any], conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    """(id, path, title, type, 0.0) of each row, once they all pass their checksums."""
    verify(rows, HEAD_SUMS, conn)
    return [(r["id"], r["path"], r["title"], r["type"], 0.0) for r in rows]


#: what a row of the fact table reads: the shown fields (columns.ROW_FIELDS) and what
#: verifies them
TABLE_SQL = columns.ROW_FIELDS


def table_rows(conn: sqlite3.Connection, ids: Sequence[int], *, leave_out: bool = False
               ) -> dict[int, Any]:
    """The fact table's rows of `ids` (a page), by id, each with the fields of
    `columns.ROW_FIELDS`. A row that fails its checksums (issue 15 #10) raises
    `RowDamaged`; with `leave_out` (the GUI's page loader, which has no indexer to repair
    with) each row is verified when first read from the answer (`rows.CheckedRows`: a
    failing one reads as missing and is noted for the next update to repair)."""
    if not ids:
        return {}
    rows = rows_in(conn, f"SELECT {TABLE_SQL} FROM facts WHERE id IN ({{marks}})", ids,
                   batch=1000, named=True)
    if not leave_out:
        verify(rows, TABLE_SUMS, conn)
        return {r["id"]: r for r in rows}
    return CheckedRows(conn, rows, TABLE_SUMS)


def max_fact_id(conn: sqlite3.Connection) -> int:
    """The highest fact id (ids run from 1, retracted facts included): the corpus's size
    as the index sees it, from the rowid b-tree alone."""
    row = conn.execute("SELECT max(id) FROM facts").fetchone()
    return int(row[0] or 0) if row else 0


def _matching(conn: sqlite3.Connection, q: CompiledQuery) -> IdArray:
    """Every id a query selects, ascending, as one array."""
    import numpy as np

    mask = _match_mask(conn, q, max_fact_id(conn) + 1)
    return np.flatnonzero(mask).astype(np.int64)


def fact_ids(conn: sqlite3.Connection, query: str | CompiledQuery, *, sort: str = "updated",
             descending: bool = True, orders: SortOrders | None = None) -> list[int]:
    """Every matching fact id in table order (the big table's model holds only these).

    With `orders` (the GUI keeps one per connection) and the full order of `sort` cached
    there, the matching ids are read as an unordered set and filtered through that order —
    no SQL sort of every match; the result is identical to the SQL path."""
    q = _compiled(conn, query)
    if sort == "relevance" and q.fts:
        hits = search(conn, q, limit=RANK_WINDOW)
        return [h.id for h in hits]
    if orders is not None and sort in SORTABLE:
        order = orders.get(conn, sort)  # read in the background (a miss takes the SQL path)
        if order is not None:
            return _through_order(conn, q, order, descending)
    order_sql = SORTABLE.get(sort, "f.updated_at")
    direction = "DESC" if descending else "ASC"
    where, params = _where(q)
    # Unfiltered (the default view): read the id list from the sort's covering index. With
    # filters the planner picks (a facet index is better for a selective one).
    hint = ""
    if not q.fts and not q.where and sort in SORT_INDEX:
        hint = f" INDEXED BY {SORT_INDEX[sort]}"
    sql = (f"SELECT f.id FROM facts f{hint} WHERE {where} "
           f"ORDER BY {order_sql} {direction}, f.id {direction}")
    return _ids(conn, sql, params)


def _ids(conn: sqlite3.Connection, sql: str, params: Sequence[object] = ()) -> list[int]:
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: a third faster than sqlite3.Row for 100k ids
    return [fid for (fid,) in cursor.execute(sql, params).fetchall()]


class SortOrders:
    """The order of every fact (retracted ones too) by each sort key, ascending by (key,
    id), for one connection and one state of the index (`PRAGMA data_version`: any commit
    by another connection drops them all).

    A table query then needs only its set of matching ids — from FTS5 and the narrow
    (column, status) indexes, unsorted — filtered through the cached order: at 100,000
    facts tens of milliseconds instead of an SQL sort of every match. Descending is the
    reverse (the tie-break on id reverses with it). Orders are kept as numpy arrays (800 KB
    each at 100,000 facts). Thread-safe: a background read may `offer` orders it computed
    on its own connection."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: tuple[int, int] | None = None
        self._orders: dict[str, IdArray] = {}

    @staticmethod
    def version(conn: sqlite3.Connection) -> tuple[int, int]:
        """The state of the index as `conn` sees it (cheap: no page is read)."""
        return id(conn), int(conn.execute("PRAGMA data_version").fetchone()[0])

    def get(self, conn: sqlite3.Connection, sort: str, *, compute: bool = False
            ) -> IdArray | None:
        """The cached order of `sort`, or (with `compute`) read now and kept; None when
        not cached and not to be computed."""
        version = self.version(conn)
        with self._lock:
            if version != self._version:
                self._version, self._orders = version, {}
            found = self._orders.get(sort)
        if found is not None or not compute:
            return found
        order = full_order(conn, sort)
        self.offer(version, {sort: order})
        return order

    def offer(self, version: tuple[int, int], orders: dict[str, IdArray]) -> bool:
        """Keep `orders`, read while the index was at `version` (or later: a newer read
        under an older label is dropped at the next check, never served stale)."""
        with self._lock:
            if self._version is not None and version != self._version:
                return False
            self._version = version
            self._orders.update(orders)
            return True

    def missing(self) -> list[str]:
        with self._lock:
            return [k for k in SORTABLE if k not in self._orders]


def full_order(conn: sqlite3.Connection, sort: str) -> IdArray:
    """Every fact id ascending by (`sort`, id): the cache entry of `SortOrders`."""
    import numpy as np

    cursor = conn.cursor()
    cursor.row_factory = None
    rows = cursor.execute(f"SELECT f.id FROM facts f ORDER BY {SORTABLE[sort]}, f.id").fetchall()
    return np.fromiter((fid for (fid,) in rows), dtype=np.int64, count=len(rows))


def _id_set(conn: sqlite3.Connection, sql: str, params: Sequence[object] = ()) -> IdArray:
    """The ids `sql` selects, in no particular order, as one array: SQLite joins them into
    one string and numpy parses it — a third of the time of fetching 100,000 rows."""
    import numpy as np

    row = conn.execute(f"SELECT group_concat(id) FROM ({sql})", params).fetchone()
    if row is None or not row[0]:
        return np.empty(0, dtype=np.int64)
    return np.fromstring(row[0], dtype=np.int64, sep=",")


def _through_order(conn: sqlite3.Connection, q: CompiledQuery, order: IdArray,
                   descending: bool) -> list[int]:
    """`fact_ids` by filtering the full `order` with the set of matching ids (a mask)."""
    keep = _match_mask(conn, q, int(order.max()) + 1 if len(order) else 0)
    ids = order[::-1] if descending else order
    result: list[int] = ids[keep[ids]].tolist()
    return result


def _match_mask(conn: sqlite3.Connection, q: CompiledQuery, size: int) -> BoolArray:
    """A boolean array over ids `0 … size-1`: True where the query selects the fact. Each
    part is read as an unordered id set from its own index (FTS5, the narrow (column,
    status) indexes) and the sets are intersected; filters no index answers alone are
    evaluated together in one statement."""
    import numpy as np

    keep: BoolArray | None = None

    def narrow(ids: IdArray) -> None:
        nonlocal keep
        mask = np.zeros(size, dtype=np.bool_)
        mask[ids[ids < size]] = True
        keep = mask if keep is None else keep & mask

    if q.fts:
        narrow(_id_set(conn, "SELECT rowid AS id FROM facts_fts WHERE facts_fts MATCH ?", [q.fts]))
    rest = [f for f in q.filters if not f.indexed]
    for f in q.filters:
        if f.indexed:
            narrow(_id_set(conn, f"SELECT f.id FROM facts f WHERE {f.sql}", f.params))
    if rest:
        sql = " AND ".join(f.sql for f in rest)
        narrow(_id_set(conn, f"SELECT f.id FROM facts f WHERE {sql} AND {q.status_sql()}",
                       [p for f in rest for p in f.params]))
    if keep is None:
        keep = np.ones(size, dtype=np.bool_)
        keep[:1] = False  # ids start at 1
    if not q.include_retracted and not rest:
        retracted = _id_set(conn, "SELECT f.id FROM facts f WHERE f.status = 'retracted'")
        keep[retracted[retracted < size]] = False
    return keep


def _where(q: CompiledQuery) -> tuple[str, list[object]]:
    """The WHERE clause over `facts f` (with the full-text match as an id subquery) and its
    parameters, for id lists."""
    where = q.where_sql()
    params: list[object] = list(q.params)
    if q.fts:
        where = f"f.id IN (SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?) AND {where}"
        params.insert(0, q.fts)
    return where, params


def place_ids(conn: sqlite3.Connection, query: str | CompiledQuery, ids: list[int],
              changed: Iterable[int], *, sort: str = "updated", descending: bool = True
              ) -> list[int] | None:
    """`fact_ids(query, sort)` after only the facts `changed` changed, given its result
    `ids` from before: each changed fact is dropped, then put back (if it still matches)
    by a binary search with the sort key read by id — a few dozen indexed lookups instead
    of re-reading every id. None when the order is by relevance (ask `fact_ids`)."""
    q = _compiled(conn, query)
    if sort not in SORTABLE or (sort == "relevance" and q.fts):
        return None
    order = SORTABLE[sort]
    nocase = "NOCASE" in order
    where, params = _where(q)
    wanted = set(changed)
    out = [i for i in ids if i not in wanted]

    def key(fid: int) -> tuple[object, ...]:
        row = conn.execute(f"SELECT {order} FROM facts f WHERE f.id = ?", (fid,)).fetchone()
        return (*_order_key(row[0] if row else None, nocase=nocase), fid)

    for fid in sorted(wanted):
        if conn.execute(f"SELECT 1 FROM facts f WHERE f.id = ? AND {where}",
                        [fid, *params]).fetchone() is None:
            continue  # it no longer matches
        mine = key(fid)
        lo, hi = 0, len(out)
        while lo < hi:
            mid = (lo + hi) // 2
            other = key(out[mid])
            if (other > mine) if descending else (other < mine):
                lo = mid + 1
            else:
                hi = mid
        out.insert(lo, fid)
    return out


def _order_key(value: object, *, nocase: bool) -> tuple[object, ...]:
    """SQLite's ORDER BY as a Python key: NULL < numbers < text (bytes; NOCASE folds ASCII)."""
    if value is None:
        return (0,)
    if isinstance(value, (int, float)):
        return (1, value)
    text = str(value)
    if nocase:
        text = text.translate(_ASCII_LOWER)
    return (2, text.encode("utf-8"))


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def ids_of_paths(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, int]:
    return {p: i for p, i in rows_in(conn, "SELECT path, id FROM facts WHERE path IN ({marks})", paths)}


def live_paths_of_ids(conn: sqlite3.Connection, ids: Sequence[int]) -> list[str]:
    """The paths of those facts that are not retracted, in the order of `ids`."""
    found = dict(rows_in(conn, "SELECT id, path FROM facts WHERE id IN ({marks}) "
                               "AND status != 'retracted'", ids))
    return [found[i] for i in ids if i in found]


def seen_state(conn: sqlite3.Connection, paths: Sequence[str]) -> tuple[dict[str, str], str | None]:
    """The blob of each path and the branch tip as the index has them: what the user saw,
    the preconditions of a write (a change since is a conflict)."""
    blobs = {p: b for p, b in rows_in(conn, "SELECT path, blob FROM facts WHERE path IN ({marks})",
                                      paths) if b}
    row = conn.execute("SELECT value FROM meta WHERE key = 'head'").fetchone()
    return blobs, (row[0] if row and row[0] else None)


def problem_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM problems").fetchone()[0])


def count(conn: sqlite3.Connection, query: str | CompiledQuery) -> int:
    """How many facts a query selects, without fetching them."""
    q = _compiled(conn, query)
    where, params = _where(q)
    return int(conn.execute(f"SELECT COUNT(*) FROM facts f WHERE {where}", params).fetchone()[0])


def facet_counts(conn: sqlite3.Connection, column: str, query: str | CompiledQuery = ""
                 ) -> list[tuple[str | None, int]]:
    """(value, count) for a facet column over the facts a query selects."""
    allowed = {"type", "kind", "origin", "claim_type", "claimant_type", "subject_kind",
               "status", "topic", "claimant", "op"}
    if column not in allowed:
        raise ValueError(column)
    q = _compiled(conn, query)
    where, params = _where(q)
    sql = (f"SELECT f.{column}, COUNT(*) FROM facts f WHERE {where} "
           f"GROUP BY f.{column} ORDER BY COUNT(*) DESC")
    return [(r[0], r[1]) for r in conn.execute(sql, params)]


#: live facts per folder (the sidebar's folder tree): every fact counted from the folder
#: index alone, less the few retracted ones (a `status` test on every row read 100,000
#: rows: 0.7 s of start-up)
ONTOLOGY_SQL = ("SELECT folder, COUNT(*) FROM facts GROUP BY folder UNION ALL "
                "SELECT folder, -COUNT(*) FROM facts WHERE status = 'retracted' GROUP BY folder")


def folder_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Live facts under each folder and each of its ancestors (`kb`, `kb/gotchas`, …)."""
    counts: dict[str, int] = {}
    for folder, count in conn.execute(ONTOLOGY_SQL):
        folder = folder or ""
        cut = folder.find("/")
        while cut != -1:  # every ancestor
            counts[folder[:cut]] = counts.get(folder[:cut], 0) + count
            cut = folder.find("/", cut + 1)
        counts[folder] = counts.get(folder, 0) + count
    return {k: n for k, n in counts.items() if n > 0}  # not folders of retracted facts only


def get_fact_row(conn: sqlite3.Connection, ref: str) -> Any:
    """A fact by id, by path (`kb/…md`, case-insensitive), or by its 8-hex file name;
    `RowDamaged` when its row fails its checksums (issue 15 #10: show, the inspector)."""
    row = _fact_row(conn, ref)
    if row is None and not ref.strip().isdigit():
        _verify_miss(conn, ref)
    verify([row], conn=conn)
    return row


def _verify_miss(conn: sqlite3.Connection, ref: str) -> None:
    """A path or name that finds no row: before saying so, make sure no damage hides it —
    a flipped path in the path's index entry (a path is looked up again in the table
    without its indexes; a name is looked up by a scan of the table already) or in a row
    (`sum_head` of every row). `RowDamaged` when either is found. (Only on a miss: a scan
    of the table's narrow columns, about 0.1 s per 20,000 facts.)"""
    ref = ref.strip()
    if "/" in ref:
        path = ref if ref.endswith(".md") else ref + ".md"
        for (fid,) in conn.execute("SELECT id FROM facts NOT INDEXED WHERE path = ? OR path = ?",
                                   (path, path.lower())):
            note_damage(conn, [fid])
            raise RowDamaged([fid])
    bad = damaged_ids(conn, HEAD_SUMS)
    if bad:
        note_damage(conn, bad)
        raise RowDamaged(bad)


def _fact_row(conn: sqlite3.Connection, ref: str) -> Any:
    ref = ref.strip()
    if ref.isdigit():
        row = conn.execute("SELECT * FROM facts WHERE id = ?", (int(ref),)).fetchone()
        if row:
            return row
    path = ref if ref.endswith(".md") else ref + ".md"
    row = conn.execute("SELECT * FROM facts WHERE path = ? OR path = ?",
                       (path, path.lower())).fetchone()
    if row or "/" in ref:
        return row
    rows = conn.execute("SELECT * FROM facts WHERE path LIKE ?",
                        ("%/" + ref.lower().removesuffix(".md") + ".md",)).fetchall()
    if len(rows) > 1:  # a moved fact leaves its old path behind, retracted: the live one
        rows = [r for r in rows if r["status"] != "retracted"] or rows
    if len(rows) > 1:  # 8-hex names are not unique (FORMAT §1.4): every match, named
        raise AmbiguousName(ref, [(r["path"], r["title"] or "", r["status"]) for r in rows])
    return rows[0] if rows else None


class AmbiguousName(FactdeskError, LookupError):
    """A file name that names more than one fact (issue 22 #9): `matches` lists each as
    (path, title, status)."""

    def __init__(self, ref: str, matches: Sequence[tuple[str, str, str]]) -> None:
        self.ref = ref
        self.matches = sorted(matches)
        listed = "\n".join(f"  {p}  [{st}]  {t}" for p, t, st in self.matches)
        super().__init__(f"{ref!r} is ambiguous: {len(self.matches)} facts have that name "
                         f"(name one by its path):\n{listed}")


def resolve_local_ref(conn: sqlite3.Connection, raw: str, target: str) -> Any:
    """The fact a local ref names: its exact path first, then knomit's lower-cased lookup
    (verified: `RowDamaged`)."""
    row = _resolve_local_ref(conn, raw, target)
    verify([row], conn=conn)
    return row


def _resolve_local_ref(conn: sqlite3.Connection, raw: str, target: str) -> Any:
    exact = raw.split("/", 3)[3] if raw.startswith("kb://") and raw.count("/") >= 3 else raw
    for candidate in (exact, target):
        hit = conn.execute("SELECT * FROM facts WHERE path = ?", (candidate,)).fetchone()
        if hit:
            return hit
    return conn.execute("SELECT * FROM facts WHERE lower(path) = ?", (target,)).fetchone()


def cited_by(conn: sqlite3.Connection, path: str) -> list[sqlite3.Row]:
    """The facts whose local refs name `path`."""
    rows = conn.execute(
        "SELECT f.* FROM refs r JOIN facts f ON f.path = r.src "
        "WHERE r.target = ? OR r.target = ? ORDER BY f.path", (path, path.lower())).fetchall()
    verify(rows, conn=conn)
    return rows


def problems_for(conn: sqlite3.Connection, path: str) -> list[dict[str, Any]]:
    """The findings of the fact at `path`, with the derived `dup_id` (index.dup_ids)."""
    rows = [dict(r) for r in conn.execute(
        "SELECT * FROM problems WHERE path = ? ORDER BY severity, line, code", (path,))]
    return rows + [_as_row(p) for p in dup_ids.problems_for(conn, path)]


def all_problems(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every problem of the corpus, as `check` lists them (by path, line, code), with the
    derived `dup_id` warnings (index.dup_ids)."""
    rows = [dict(r) for r in conn.execute(
        "SELECT p.path, p.line, p.code, p.severity, p.message FROM problems p")]
    rows += [_as_row(p) for p in dup_ids.all_problems(conn)]
    return sorted(rows, key=lambda r: (r["path"], r["line"], r["code"]))


def _as_row(p: Problem) -> dict[str, Any]:
    return {"path": p.path, "line": p.line, "code": p.code, "severity": str(p.severity),
            "message": p.message}


def fact_count(conn: sqlite3.Connection) -> int:
    """Facts that are not retracted (live and broken)."""
    return int(conn.execute("SELECT COUNT(*) FROM facts WHERE status != 'retracted'"
                            ).fetchone()[0])


def titles_of(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, str]:
    """The title of each of `paths` that has a row."""
    return {r[0]: r[1] for r in rows_in(conn, "SELECT path, title FROM facts "
                                              "WHERE path IN ({marks})", paths)}


def live_paths_by_batch(conn: sqlite3.Connection, ids: Sequence[int]) -> list[str]:
    """The paths of those facts that are not retracted, by path within each batch of
    `rows_in` (the order `--query` selections have always had)."""
    return [r[0] for r in rows_in(conn, "SELECT path FROM facts WHERE id IN ({marks}) "
                                        "AND status != 'retracted' ORDER BY path", ids)]

