#!/usr/bin/env python3
"""The cost of the row checksums (issue 15 #10) on the reads that serve rows.

    PYTHONPATH=<code>/app python bench/row_checksum_bench.py --kb KB [--runs 7] [--json F]

Runs with whichever factdesk is first on the path (the code before the checksums has no
`search.table_rows`; its table page is read with the old SELECT of `columns.ROW_FIELDS`,
as the GUI's page loader did), against that version's index of KB (built first, untimed).
Timed, each `--runs` times, the medians reported:

  * search: run_bench.QUERIES (20 queries, limit 20) with `search.search`, total per pass;
  * table: 80 pages of 256 ids evenly spread over the default order (`fact_ids(conn, "")`),
    each read as the table's page loader reads it and one screen of it (34 rows) read from
    the page, as the view does, total per pass; and the same with all 256 rows read;
  * show: `get_fact_row` of 50 fact names (8-hex, as `factdesk show` takes them);
  * (with checksums) the same three, passes with and without the checksum test alternated
    (`failing` switched off: the schema's extra columns are still read);
  * (with checksums) check's additions: `damaged_ids` over every row, `PRAGMA
    integrity_check(facts)`, and the in-place repair's `REINDEX facts` (rolled back).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_bench import QUERIES


def _median_ms(fn: Any, runs: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(times), 2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kb", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)

    import factdesk
    from factdesk.index import columns, search
    from factdesk.index.indexer import Indexer
    from factdesk.index.schema import SCHEMA_VERSION

    ix = Indexer(args.kb)
    ix.update()
    conn = ix.connect(readonly=True)
    new = hasattr(search, "table_rows")
    out: dict[str, Any] = {"code": str(Path(factdesk.__file__).parent.parent),
                           "schema": SCHEMA_VERSION, "checksums": new}

    def searches() -> None:
        for q in QUERIES:
            search.search(conn, q, limit=20)

    ids = search.fact_ids(conn, "")
    step = max(1, len(ids) // 80)
    pages = [ids[i:i + 256] for i in range(0, len(ids), step)][:80]

    def load(page: list[int]) -> Any:
        if new:
            return search.table_rows(conn, page, leave_out=True)
        marks = ",".join("?" * len(page))
        sql = f"SELECT {columns.ROW_FIELDS} FROM facts WHERE id IN ({marks})"
        return {r["id"]: r for r in conn.execute(sql, page)}

    def table() -> None:  # each page loaded, one screen of it (34 rows) read
        for page in pages:
            rows_ = load(page)
            for fid in page[:34]:
                rows_.get(fid)

    def table_all() -> None:  # each page loaded and all its rows read
        for page in pages:
            rows_ = load(page)
            for fid in page:
                rows_.get(fid)

    rng = random.Random(7)  # noqa: S311 (a sample, not a secret)
    paths = [r[0] for r in conn.execute("SELECT path FROM facts WHERE status = 'live'")]
    names = [p.rsplit("/", 1)[-1].removesuffix(".md") for p in rng.sample(paths, 50)]

    def shows() -> None:
        for name in names:
            search.get_fact_row(conn, name)

    out["facts"] = len(ids)
    out["search_ms"] = _median_ms(searches, args.runs)
    out["table_80_pages_ms"] = _median_ms(table, args.runs)
    out["table_80_pages_all_rows_ms"] = _median_ms(table_all, args.runs)
    out["show_50_ms"] = _median_ms(shows, args.runs)
    if new:  # the same reads with the checksum test switched off, passes alternated
        from factdesk.index import rows

        real, holds = rows.failing, rows.CheckedRows._holds

        def off(fn: Any) -> Any:
            def run() -> None:
                rows.failing = lambda *a, **k: []
                rows.CheckedRows._holds = lambda *a: True  # type: ignore[method-assign]
                try:
                    fn()
                finally:
                    rows.failing = real
                    rows.CheckedRows._holds = holds  # type: ignore[method-assign]
            return run

        for name, fn in (("search_ms", searches), ("table_80_pages_ms", table),
                         ("table_80_pages_all_rows_ms", table_all), ("show_50_ms", shows)):
            on_t, off_t = [], []
            for _ in range(args.runs):
                for bucket, f in ((on_t, fn), (off_t, off(fn))):
                    t0 = time.perf_counter()
                    f()
                    bucket.append((time.perf_counter() - t0) * 1000)
            out[name + "_alternated_on_off"] = [round(statistics.median(on_t), 2),
                                                round(statistics.median(off_t), 2)]
        from factdesk.index.rows import damaged_ids

        out["check_verify_all_rows_ms"] = _median_ms(lambda: damaged_ids(conn), 3)
        out["check_integrity_check_facts_ms"] = _median_ms(
            lambda: conn.execute("PRAGMA integrity_check(facts)").fetchall(), 3)
        out["check_quick_check_ms"] = _median_ms(
            lambda: conn.execute("PRAGMA quick_check").fetchall(), 3)
        conn.close()
        wconn = ix.connect()
        wconn.isolation_level = None

        def reindex() -> None:
            wconn.execute("BEGIN IMMEDIATE")
            wconn.execute("REINDEX facts")
            wconn.execute("ROLLBACK")

        out["repair_reindex_facts_ms"] = _median_ms(reindex, 2)
        wconn.close()
    else:
        conn.close()
    print(json.dumps(out))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
