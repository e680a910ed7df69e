"""Reads of the index for proposal review (factdesk/review/): the derived facts awaiting a
curator's attestation, and the facts citing a path (a deletion that leaves citations
behind). SQL lives in `factdesk.index`; review only calls these."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from factdesk.corpus.codec import parse_fact
from factdesk.corpus.ontology import (
    Ontology,
    RuleEngine,
    check_ontology,
    fact_for_js,
    topic_problems,
)
from factdesk.index import dup_ids
from factdesk.index.curation_reads import stored_repo_ids
from factdesk.index.history import path_history
from factdesk.index.rows import fact_from_row, rows_in
from factdesk.index.writing import FactsView, RuleSetting
from factdesk.model.enums import Severity
from factdesk.model.fact import Fact, Problem
from factdesk.model.rules import CheckContext, check_fact
from factdesk.model.weight import evidence_weight, is_weighted


def derived_facts(conn: sqlite3.Connection) -> list[tuple[str, str, str, str, str, str, int]]:
    """(path, title, type, origin, blob, creator e-mail, created at) of every live fact
    whose origin is `distilled` or `discovered`, newest first."""
    return [tuple(r) for r in conn.execute(
        "SELECT path, title, type, origin, blob, creator_email, created_at FROM facts "
        "WHERE status = 'live' AND origin IN ('distilled', 'discovered') "
        "ORDER BY created_at DESC, path")]


def citing(conn: sqlite3.Connection, targets: Sequence[str]) -> dict[str, list[str]]:
    """target path (lower case, as the refs table keeps it) → the live facts citing it."""
    out: dict[str, list[str]] = {}
    if not targets:
        return out
    for src, target in rows_in(
            # (CROSS JOIN: refs by target first; the planner otherwise walks every live fact)
            conn, "SELECT r.src, r.target FROM refs r CROSS JOIN facts f ON f.path = r.src "
                  "WHERE r.target IN ({marks}) AND f.status = 'live'",
            [t.lower() for t in targets]):
        out.setdefault(target, []).append(src)
    return out


@dataclass(frozen=True, slots=True)
class CheckedVersion:
    """One proposed version checked as if accepted: its findings, its parsed fact (None
    when it does not parse) and its evidence weight, recorded and computed."""

    problems: list[Problem]
    fact: Fact | None
    weight_recorded: float | None
    weight_computed: float | None


def check_proposed(conn: sqlite3.Connection, setting: RuleSetting,
                   versions: Mapping[str, bytes | None], checked: Sequence[str],
                   creators: Mapping[str, str], *, twins: bool = True
                   ) -> dict[str, CheckedVersion]:
    """Check the versions of `checked` (paths of `versions`) against the indexed corpus
    with every version of `versions` in place of the indexed one (None: the fact deleted,
    so refs to it read as refs to a retracted fact): the parse, every per-fact rule and
    the ontology's, like `staged.check_versions` (`twins`: the `dup_id` warning too).
    `creators`: path → the e-mail of the commit that creates it (a fact the proposal
    adds: the agent commit's author); the others' come from their indexed history."""
    if setting.repo_id is None:
        setting = replace(setting, repo_id=stored_repo_ids(conn))
    outcomes = {p: parse_fact(p, data) for p, data in versions.items() if data is not None}
    overlay: dict[str, Fact | None] = {}
    for p in versions:
        fact = outcomes[p].fact if p in outcomes else None
        overlay[p] = fact
        overlay.setdefault(p.lower(), fact)
    gone: dict[str, Fact | None] = {}
    for p, data in versions.items():
        if data is None:
            row = conn.execute("SELECT * FROM facts WHERE path = ? AND status = 'live'",
                               (p,)).fetchone()
            if row is not None and (old := fact_from_row(row)) is not None:
                gone[p.lower()] = old
    who = {p: h.creator_email for p in checked if p not in creators
           and (h := path_history(conn, p)).creator_email}
    ctx = CheckContext(
        facts=FactsView(conn, overlay), repo_id=setting.repo_id, registry=setting.registry,
        today=setting.today, retracted=FactsView(conn, gone, status="retracted"),
        creators={**who, **creators}, history_known=setting.history_known)
    out: dict[str, CheckedVersion] = {}
    # (an 8-hex name another fact has, or another version of the decision: issue 22 #9)
    # `twins=False`: no `dup_id` look-up (a scan of every path: ~0.1 s at 100,000 facts),
    # for a write that mints a fresh random name and lets `dup_id` through anyway (issue 26)
    twin_of = dup_ids.among([p for p in checked if p in outcomes], conn,
                          gone=[p for p, data in versions.items() if data is None]
                          ) if twins else {}
    for path in checked:
        outcome = outcomes.get(path)
        if outcome is None:
            continue
        found = list(outcome.problems)
        if path in twin_of:
            found.append(dup_ids.problem(path, twin_of[path]))
        fact = outcome.fact
        recorded = computed = None
        if fact is not None:
            found.extend(check_fact(fact, ctx))
            if setting.ontology is not None and setting.engine is not None:
                found.extend(check_ontology(fact, setting.ontology, setting.engine))
                found.extend(topic_problems(fact, setting.ontology))
            recorded = fact.evidence_weight
            if recorded is not None or is_weighted(fact):
                computed = evidence_weight(fact, ctx.lookup, setting.repo_id)
        out[path] = CheckedVersion(found, fact, recorded, computed)
    return out


def indexed_problems(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, list[Problem]]:
    """path → the findings the index holds for the version it read (the curated one)."""
    out: dict[str, list[Problem]] = {}
    for r in rows_in(conn, "SELECT path, line, code, severity, message FROM problems "
                           "WHERE path IN ({marks})", list(paths)):
        out.setdefault(r[0], []).append(Problem(r[0], r[1], r[2], Severity(r[3]), r[4]))
    for path in paths:  # (derived, never stored: index.dup_ids)
        for found in dup_ids.problems_for(conn, path):
            out.setdefault(path, []).append(found)
    return out


def live_paths(conn: sqlite3.Connection, paths: Sequence[str]) -> set[str]:
    """Those of `paths` that are live facts in the index (on the curated branch)."""
    return {r[0] for r in rows_in(conn, "SELECT path FROM facts WHERE status = 'live' "
                                        "AND path IN ({marks})", list(paths))}


def live_blob(conn: sqlite3.Connection, path: str) -> str | None:
    """The blob id of the live fact at `path` as indexed (the curated version), or None."""
    row = conn.execute("SELECT blob FROM facts WHERE path = ? AND status = 'live'",
                       (path,)).fetchone()
    return None if row is None else row[0]


def rule_findings(conn: sqlite3.Connection, engine: RuleEngine, new: Ontology,
                  gone: Sequence[tuple[str, str]], come: Sequence[tuple[str, str]]
                  ) -> tuple[int, int]:
    """What an ontology change does to the curated branch's findings: (added, removed).
    Removed: the indexed `ontology-rule` findings of the rules `gone` ((scope, name): the
    rules it deletes or rewrites). Added: the live facts each rule of `come` (rules of
    `new` it adds or rewrites) fails, each evaluated on the facts in its scope."""
    removed = 0
    for scope, name in gone:
        removed += conn.execute(
            "SELECT COUNT(*) FROM problems WHERE code = 'ontology-rule' AND "
            "substr(message, 1, ?) = ?", (len(head := f'validation "{name}" at {scope}:'),
                                          head)).fetchone()[0]
    wanted = set(come)
    added = 0
    if wanted:
        for row in conn.execute("SELECT * FROM facts WHERE status = 'live'"):
            fact = fact_from_row(row)
            if fact is None:
                continue
            rules = [(sc, v) for sc, v in new.rules_for(fact.path) if (sc, v.name) in wanted]
            if not rules:
                continue
            payload = fact_for_js(fact)
            added += sum(1 for _sc, v in rules if not engine.passes(v.rule, payload)[0])
    return added, removed
