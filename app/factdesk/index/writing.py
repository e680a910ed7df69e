"""The two write paths of the index: an incremental update's (`write_incremental`: check
the facts read, replace their rows, refs and problems) and a rebuild's last step
(`finish_rebuild`: its rows are in already; check the corpus-wide rules and update the
few rows they change). Both check facts the same way (`_Checker`), so a rebuild and an
incremental update give the same rows (I1)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from factdesk.corpus import gitrepo
from factdesk.corpus.codec import ParseOutcome, parse_fact
from factdesk.corpus.ontology import (
    Ontology,
    RuleEngine,
    check_ontology,
    rule_problems,
    topic_problems,
)
from factdesk.corpus.scan import SCAN_CODES
from factdesk.index.history import FirstParentChanges, PathHistory, blob_at, path_history
from factdesk.index.rows import (
    ROW_COLUMNS,
    fact_from_row,
    fact_row,
    head_sum_sql,
    late_values,
    problem_counts,
    register_sum,
    row_values,
)
from factdesk.model.enums import FactType
from factdesk.model.fact import Fact, Problem
from factdesk.model.refs import local_targets
from factdesk.model.registry import Registry
from factdesk.model.rules import CheckContext, check_fact
from factdesk.model.weight import evidence_weight, is_weighted

#: a fact file's (blob id, size, mtime_ns)
FileStamp = tuple[str, int, int]

_NAMES = ",".join(ROW_COLUMNS)
_MARKS = ",".join("?" * len(ROW_COLUMNS))
INSERT_ROW = f"INSERT INTO facts ({_NAMES}) VALUES ({_MARKS})"
INSERT_ROW_ID = f"INSERT INTO facts (id, {_NAMES}) VALUES (?, {_MARKS})"
UPSERT_ROW = (INSERT_ROW + " ON CONFLICT(path) DO UPDATE SET "
              + ",".join(f"{c}=excluded.{c}" for c in ROW_COLUMNS if c != "path"))
NO_HISTORY = PathHistory()


@dataclass(frozen=True)
class RuleSetting:
    """What every check of one update shares: the corpus-wide inputs of the rules."""

    repo: Path
    registry: Registry
    ontology: Ontology | None
    #: the ontology's rule engine (None without an ontology)
    engine: RuleEngine | None
    repo_id: frozenset[str] | None
    today: date
    #: whether git history is known (without it, history rules stay quiet)
    history_known: bool


class FactsView(Mapping[str, Fact]):
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


class _Checker:
    """Checks facts against one `CheckContext`, collecting their refs and problems."""

    def __init__(self, setting: RuleSetting, ctx: CheckContext) -> None:
        self.setting = setting
        self.ctx = ctx
        self.ref_rows: list[tuple[str, str]] = []

    def rules(self, fact: Fact) -> list[Problem]:
        """The per-fact rules in context (not the ontology's)."""
        return check_fact(fact, self.ctx)

    def ontology(self, fact: Fact) -> list[Problem]:
        setting = self.setting
        if setting.ontology is None or setting.engine is None:
            return []
        return [*check_ontology(fact, setting.ontology, setting.engine),
                *topic_problems(fact, setting.ontology)]

    def refs_and_weight(self, path: str, fact: Fact | None) -> float | None:
        """Note the fact's local refs; its computed evidence weight (None when it has none)."""
        if fact is None:
            return None
        repo_id = self.setting.repo_id
        self.ref_rows.extend((path, t) for t in local_targets(fact.refs, repo_id))
        if is_weighted(fact) or fact.evidence_weight is not None:
            return evidence_weight(fact, self.ctx.lookup, repo_id)
        return None


def corpus_problems(setting: RuleSetting, scan_problems: list[Problem]) -> list[Problem]:
    """The problems that are no one fact's: the scan's, the registry's, the ontology's and
    its rules' (in that order, the order the problems table holds them)."""
    problems: list[Problem] = list(scan_problems)
    problems.extend(setting.registry.problems)
    if setting.ontology is not None:
        problems.extend(setting.ontology.problems)
        if setting.engine is not None:
            problems.extend(rule_problems(setting.ontology, setting.engine))
    return problems


def by_path(problems: list[Problem]) -> dict[str, list[Problem]]:
    out: dict[str, list[Problem]] = {}
    for problem in problems:
        out.setdefault(problem.path, []).append(problem)
    return out


def retracted_row(outcome: ParseOutcome, history: PathHistory, registry: Registry
                  ) -> dict[str, object]:
    """The row of a retracted fact: its last version, as it was; no file, no findings."""
    return fact_row(outcome, status="retracted", history=history, registry=registry,
                    file=None, computed_weight=None, problems=[])


def read_retracted(repo: Path, retracted: Mapping[str, PathHistory]) -> dict[str, ParseOutcome]:
    """Retracted facts: their last version, read from git."""
    gone: dict[str, ParseOutcome] = {}
    if retracted:
        with gitrepo.BlobReader(repo) as reader:
            for path, hist in retracted.items():
                data = reader.read(hist.last_blob or "")
                gone[path] = parse_fact(path, data) if data else ParseOutcome(path, None)
    return gone


def _insert_refs_and_problems(conn: sqlite3.Connection, ref_rows: list[tuple[str, str]],
                              problems: list[Problem]) -> None:
    conn.executemany("INSERT OR IGNORE INTO refs VALUES (?, ?)", ref_rows)
    conn.executemany(
        "INSERT INTO problems (path, line, code, severity, message) VALUES (?,?,?,?,?)",
        [(p.path, p.line, p.code, str(p.severity), p.message) for p in problems],
    )


def _clear_findings(conn: sqlite3.Connection, paths: list[str], scan_problems: list[Problem],
                    rescanned: set[str] | None) -> None:
    """Delete what an incremental update writes again: the refs and problems of `paths`, the
    registry's and ontology's problems, and the scan's findings over the paths looked at
    (`rescanned`; None: every path)."""
    for path in paths:
        conn.execute("DELETE FROM problems WHERE path = ?", (path,))
        conn.execute("DELETE FROM refs WHERE src = ?", (path,))
    conn.execute("DELETE FROM problems WHERE code IN ('ontology', 'registry', 'registry-trust')")
    found_again = {p.path for p in scan_problems}
    for pid, ppath, pcode in conn.execute(
            f"SELECT id, path, code FROM problems WHERE code IN "
            f"({','.join('?' * len(SCAN_CODES))})", SCAN_CODES).fetchall():
        # a file the parse could not read keeps its io_error until it is read (its
        # problems go above) or is gone (`delete_path`); one the scan reports again
        # (it could not even stat the file) is replaced like any scan problem
        if pcode == "io_error" and not ppath.endswith("/") and ppath not in found_again:
            continue
        if rescanned is None or ppath in rescanned or any(
                ppath.startswith(d) for d in rescanned if d.endswith("/")):
            conn.execute("DELETE FROM problems WHERE id = ?", (pid,))


def delete_path(conn: sqlite3.Connection, path: str) -> None:
    """A fact file that is gone: its row, problems and refs."""
    conn.execute("DELETE FROM facts WHERE path = ?", (path,))
    conn.execute("DELETE FROM problems WHERE path = ?", (path,))
    conn.execute("DELETE FROM refs WHERE src = ?", (path,))


def write_incremental(conn: sqlite3.Connection, setting: RuleSetting,
                      outcomes: dict[str, ParseOutcome], files: dict[str, FileStamp],
                      retracted: dict[str, PathHistory], scan_problems: list[Problem], *,
                      rescanned: set[str] | None) -> None:
    """Check the facts read (`outcomes`) against the rest of the index and replace their
    rows, refs and problems, and those of the newly retracted facts (`retracted`).
    `rescanned`: the paths the scan looked at (None: all), whose file problems it gave."""
    gone = read_retracted(setting.repo, retracted)
    histories = {p: path_history(conn, p) for p in outcomes}
    ctx = CheckContext(
        facts=FactsView(conn, {p: o.fact for p, o in outcomes.items()}),
        repo_id=setting.repo_id, registry=setting.registry, today=setting.today,
        retracted=FactsView(conn, {p: o.fact for p, o in gone.items() if o.fact},
                            status="retracted"),
        creators={p: h.creator_email for p, h in histories.items() if h.creator_email},
        history_known=setting.history_known,
        cited_types_then=cited_types_then(setting.repo, conn, outcomes, files, histories,
                                          setting.repo_id))
    checker = _Checker(setting, ctx)
    _clear_findings(conn, list(outcomes) + list(retracted), scan_problems, rescanned)
    problems = corpus_problems(setting, scan_problems)
    as_file = by_path(scan_problems)  # a fact file's own, counted in its row too

    def rows() -> Iterator[tuple[object, ...]]:
        """One row at a time (an update can re-check every hypothesis when the day changes)."""
        for path in sorted(outcomes):
            outcome = outcomes[path]
            fact = outcome.fact
            found = list(outcome.problems)
            if fact is not None:
                found.extend(checker.rules(fact))
                found.extend(checker.ontology(fact))
            computed = checker.refs_and_weight(path, fact)
            problems.extend(found)
            yield row_values(fact_row(outcome, status="live" if fact else "broken",
                                      history=histories[path], registry=setting.registry,
                                      file=files.get(path), computed_weight=computed,
                                      problems=found + as_file.get(path, [])))
        for path, hist in retracted.items():
            yield row_values(retracted_row(gone[path], hist, setting.registry))

    conn.executemany(UPSERT_ROW, rows())
    _insert_refs_and_problems(conn, checker.ref_rows, problems)


def finish_rebuild(conn: sqlite3.Connection, setting: RuleSetting,
                   outcomes: dict[str, ParseOutcome], files: dict[str, FileStamp],
                   gone: dict[str, ParseOutcome], scan_problems: list[Problem], *,
                   early: dict[str, list[Problem]], histories: Mapping[str, PathHistory],
                   first_parent: FirstParentChanges,
                   alongside: Callable[[], None] = lambda: None) -> None:
    """A streamed rebuild's last step: every row (the retracted facts' too) is in, carrying
    the parse and ontology findings in `early`; check the rules that need the whole corpus
    and update the rows whose counts or computed weight they change.

    The rules run on a thread of their own over facts and history held in memory
    (`outcomes`, `gone`, `first_parent`: they must not use the connection meanwhile), while
    `alongside` does SQLite work on this one (the secondary indexes, during which SQLite
    does not hold the GIL)."""
    histories = {p: histories.get(p, NO_HISTORY) for p in outcomes}
    problems = corpus_problems(setting, scan_problems)
    as_file = by_path(scan_problems)
    late: list[tuple[object, ...]] = []  # rows the rules change

    def check_all() -> list[tuple[str, str]]:
        ctx = CheckContext(
            facts={p: o.fact for p, o in outcomes.items() if o.fact is not None},
            repo_id=setting.repo_id, registry=setting.registry, today=setting.today,
            retracted={p: o.fact for p, o in gone.items() if o.fact},
            creators={p: h.creator_email for p, h in histories.items() if h.creator_email},
            history_known=setting.history_known,
            cited_types_then=cited_types_then(setting.repo, None, outcomes, files, histories,
                                              setting.repo_id, first_parent))
        checker = _Checker(setting, ctx)
        for path in sorted(outcomes):
            outcome = outcomes[path]
            fact = outcome.fact
            found = list(early[path])
            known = len(found)
            if fact is not None:  # (in the parse's findings' place: the rebuild's order)
                found[len(outcome.problems):len(outcome.problems)] = checker.rules(fact)
            computed = checker.refs_and_weight(path, fact)
            problems.extend(found)
            if len(found) != known or computed is not None:
                errors, warnings = problem_counts(found + as_file.get(path, []))
                late.append((*late_values(errors, warnings, computed),
                             *late_values(errors, warnings, computed), path))
        return checker.ref_rows

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="factdesk-rules") as pool:
        checked = pool.submit(check_all)
        alongside()
        ref_rows = checked.result()
    register_sum(conn)  # (the row's checksum over its stored values and the new counts)
    conn.executemany("UPDATE facts SET errors = ?, warnings = ?, evidence_weight_computed = ?, "
                     f"sum_head = {head_sum_sql()} WHERE path = ?", late)
    _insert_refs_and_problems(conn, ref_rows, problems)


def cited_types_then(repo: Path, conn: sqlite3.Connection | None,
                     outcomes: dict[str, ParseOutcome], files: Mapping[str, FileStamp],
                     histories: Mapping[str, PathHistory], repo_id: frozenset[str] | None,
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

    with gitrepo.BlobReader(repo) as reader:
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


