"""Checking versions of facts other than the files on disk: the files staged for commit
(`check --staged`, the pre-commit hook), each checked against the rest of the corpus as
indexed."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from factdesk.corpus import gitrepo
from factdesk.corpus.codec import MAX_BYTES, parse_fact, too_large
from factdesk.corpus.ontology import check_ontology, topic_problems
from factdesk.corpus.scan import SCAN_CODES, is_fact_path
from factdesk.index.history import path_history
from factdesk.index.rows import rows_in
from factdesk.index.writing import FactsView, RuleSetting
from factdesk.model.enums import Severity
from factdesk.model.fact import Problem
from factdesk.model.rules import CheckContext, check_fact


def staged_problems(conn: sqlite3.Connection, setting: RuleSetting, root: str) -> list[Problem]:
    """The problems of the files staged for commit, as staged (`check --staged`, the
    pre-commit hook): the index's for a file whose working copy is what is staged; for
    one changed again after `git add`, its staged blob checked (`check_versions`) with
    the scan's findings about the file on disk kept."""
    staged = gitrepo.staged_blobs(setting.repo)
    on_disk = dict(rows_in(conn, "SELECT path, blob FROM facts WHERE path IN ({marks})",
                           list(staged)))
    versions: dict[str, bytes] = {}
    found: list[Problem] = []
    with gitrepo.BlobReader(setting.repo) as reader:
        for path, blob in staged.items():
            if not is_fact_path(path, root) or on_disk.get(path) == blob:
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
    found += check_versions(conn, setting, versions)
    return sorted(kept + found, key=lambda p: (p.path, p.line, p.code))


def check_versions(conn: sqlite3.Connection, setting: RuleSetting,
                   versions: Mapping[str, bytes]) -> list[Problem]:
    """The problems of other versions of some facts than the files on disk (those staged
    for commit), each read and checked against the rest of the corpus as indexed (the
    working tree's): the parse, every per-fact rule and the ontology's. Who created a
    file is taken from its indexed history; what a synthesis's sources were when it was
    written is not known here, so R1's "cited a hypothesis then" case is left to the
    full check."""
    registry, ontology = setting.registry, setting.ontology
    outcomes = {p: parse_fact(p, data) for p, data in versions.items()}
    creators = {p: h.creator_email for p in versions
                if (h := path_history(conn, p)).creator_email}
    ctx = CheckContext(
        facts=FactsView(conn, {p: o.fact for p, o in outcomes.items()}),
        repo_id=setting.repo_id, registry=registry, today=setting.today,
        retracted=FactsView(conn, {}, status="retracted"), creators=creators,
        history_known=setting.history_known)
    engine = setting.engine
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
