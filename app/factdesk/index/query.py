"""The search language: field filters plus free text, with `OR` and parentheses
(DESIGN.md §5; the grammar is written down in docs/query.md).

    type:hypothesis origin:distilled confidence:<0.5 "retry limit" -kind:pragmatic
    (retry OR backoff) -type:policy        type:hypothesis OR problem:H1

Filters become parameterised SQL over `facts f`; free text becomes an FTS5 expression in
which every user token is a quoted string (a trailing `*` makes a prefix query), so FTS5
syntax typed by a user is never interpreted (RELIABILITY F10): the only operators are the
ones this module writes (`OR`, `AND`, `NOT` and parentheses, from the user's `OR`, `-` and
parentheses).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from factdesk.errors import QueryError

FIELDS: dict[str, str] = {
    "type": "type of fact (observation, hypothesis, synthesis, policy, …)",
    "kind": "epistemic or pragmatic",
    "origin": "authored, distilled or discovered",
    "claim": "claim type (assertion, observation, report, inference, …)",
    "claimant": "claimant agent id or claimant type (tool, persona, view, peer, user)",
    "agent": "the claimant agent id exactly (the Agents list's id, e.g. agent:codex)",
    "subject": "subject kind (self, user, other_agent, codebase, world, meta) or ref",
    "domain": "a domain tag",
    "entity": "an entity (case-insensitive)",
    "motif": "a motif (knomit's kebab-case mechanism phrases, e.g. motif:retry-storm-amplification)",
    "path": "path prefix (kb/gotchas/…)",
    "topic": "top-level ontology topic",
    "confidence": "confidence comparison, e.g. confidence:<0.5",
    "weight": "evidence weight comparison, e.g. weight:>0.7",
    "status": "live, broken, retracted or problems",
    "has": "problems, errors, envelope, weight, refs",
    "problem": "a checker rule code, e.g. problem:R1",
    "since": "changed since a date, a commit, or last-visit",
    "author": "the agent or person of the last change",
    "op": "operation token of the last change (learn, update, relabel, …)",
    "include": "include:messages also searches the message store (msg/; facts only without it)",
}
#: fields a fact has one value of: two positive filters on one of them match nothing
SINGLE_VALUED = frozenset({"type", "kind", "origin", "claim", "status", "topic", "path", "op"})
#: the frontmatter's own names for the envelope fields, which the relabel diff and `show`
#: use: typed as field names, they matched nothing (they were read as plain text)
ALIASES: dict[str, str] = {"claim_type": "claim", "claimant_type": "claimant",
                           "claimant_agent_id": "claimant", "subject_kind": "subject",
                           "subject_ref": "subject", "entities": "entity",
                           "motifs": "motif"}
#: one token: (negation, field name, value, phrase, word, parenthesis)
_TOKEN = re.compile(
    r'\s*(-?)(?:(\w+):("(?:[^"]|"")*"?|[^\s()]*)|("(?:[^"]|"")*"?)|([^\s()]+)|([()]))')
#: how deep parentheses may nest
MAX_DEPTH = 20
_CMP = re.compile(r"^(<=|>=|<|>|=)?\s*(-?\d+(?:\.\d+)?|-?\.\d+)$")
#: field -> (column, whether a narrow (column, status) index of schema.BULK_INDEXES answers
#: the filter alone); `topic` and `op` have no index
_EQ_COLUMNS = {"type": ("type", True), "kind": ("kind", True), "origin": ("origin", True),
               "claim": ("claim_type", True), "topic": ("topic", False), "op": ("op", False)}


@dataclass(frozen=True)
class Filter:
    """One field filter over `facts f`: its SQL, its parameters, and whether a narrow
    (column, status) index answers it alone (its id set can then be read on its own and
    intersected with the others')."""

    sql: str
    params: tuple[object, ...] = ()
    indexed: bool = False


@dataclass
class CompiledQuery:
    filters: list[Filter] = field(default_factory=list)
    fts: str | None = None
    terms: list[str] = field(default_factory=list)
    include_retracted: bool = False
    #: `include:messages`: the message store is searched too (index.messages); it is no
    #: filter over facts
    include_messages: bool = False

    @property
    def where(self) -> list[str]:
        return [f.sql for f in self.filters]

    @property
    def params(self) -> list[object]:
        return [p for f in self.filters for p in f.params]

    def filter_sql(self) -> str:
        """The user's field filters over `facts f` (parameters: `params`)."""
        return " AND ".join(self.where) if self.where else "1"

    def status_sql(self) -> str:
        """Retracted facts stay hidden unless a filter asks for them."""
        return "1" if self.include_retracted else "f.status != 'retracted'"

    def where_sql(self) -> str:
        return f"{self.filter_sql()} AND {self.status_sql()}"


def _unquote(value: str) -> str:
    if value.startswith('"'):
        value = value[1:-1] if value.endswith('"') and len(value) > 1 else value[1:]
        value = value.replace('""', '"')
    return value


def fts_string(term: str) -> str:
    """One FTS5 string literal: the term, with `"` doubled."""
    return '"' + term.replace('"', '""') + '"'


SIMILAR_PREFIX = "similar:"


def paths_query(paths: Sequence[str]) -> CompiledQuery:
    """The facts at `paths` as a query (a `similar:` answer, which the semantic layer finds):
    for facet counts and every other read that takes a `CompiledQuery`."""
    return CompiledQuery([Filter("f.path IN (SELECT value FROM json_each(?))",
                                 (json.dumps(list(paths)),))])


def parse_similar(raw: str) -> str | None:
    """The target of a `similar:<fact or text>` query (answered by the semantic layer, not
    by SQL), or None if it is not one."""
    text = raw.strip()
    if not text.lower().startswith(SIMILAR_PREFIX):
        return None
    target = text[len(SIMILAR_PREFIX):].strip()
    return target or None


#: the longest query text taken (RELIABILITY F10: 200,000 characters took FTS5 7 s)
MAX_QUERY_CHARS = 2_000


def field_of(name: str) -> str | None:
    """The field a name before a colon filters (an alias resolved), or None: plain text."""
    key = ALIASES.get(name.lower(), name.lower())
    return key if key in FIELDS else None


def _matches(text: str) -> Iterator[re.Match[str]]:
    """The query's tokens, in order (groups: negation, field name, value, phrase, word,
    parenthesis)."""
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            return
        pos = m.end()
        yield m


# -- the syntax tree: leaves, and groups made by OR and parentheses ------------------------


@dataclass(frozen=True)
class _Field:
    name: str
    value: str
    neg: bool


@dataclass(frozen=True)
class _Text:
    expr: str  # one FTS5 string (maybe a prefix): `"retry limit"`, `"back"*`
    tokens: tuple[str, ...]
    neg: bool


@dataclass(frozen=True)
class _Group:
    op: str  # "and" | "or"
    items: tuple[_Node, ...]
    neg: bool = False


_Node = _Field | _Text | _Group
_OR, _AND, _OPEN, _CLOSE = "OR", "AND", "(", ")"


def _tokens(text: str) -> list[object]:
    """Leaves (`_Field`, `_Text`; None for text with no word in it) and the operator
    strings `OR`, `AND`, `(` (or `-(`) and `)`."""
    out: list[object] = []
    for m in _matches(text):
        neg, name, value, phrase, word, paren = m.groups()
        if paren is not None:
            out.append(neg + paren if paren == _OPEN else paren)
            continue
        if word in (_OR, _AND) and not neg:
            out.append(word)
            continue
        key = field_of(name) if name is not None else None
        if key is not None:
            out.append(_Field(key, _unquote(value or ""), bool(neg)))
            continue
        if name is not None:  # `foo:bar` with an unknown field name is plain text
            word = f"{name}:{value}"
        raw = _unquote(phrase) if phrase is not None else word
        prefix = phrase is None and raw.endswith("*") and len(raw.rstrip("*")) >= 2
        term = raw.rstrip("*") if prefix else raw
        words = tuple(re.findall(r"\w+", term))
        out.append(_Text(fts_string(" ".join(words)) + ("*" if prefix else ""), words, bool(neg))
                   if words else None)
    return out


class _Parser:
    """query := or ; or := and ("OR" and)* ; and := (["AND"] unary)* ;
    unary := ["-"] "(" or ")" | leaf (docs/query.md)."""

    def __init__(self, tokens: list[object]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> object:
        return self.tokens[self.at] if self.at < len(self.tokens) else _CLOSE + "end"

    def parse(self) -> _Node:
        node = self.or_(0)
        if self.at < len(self.tokens):  # (only a `)` stops `or_` early)
            raise QueryError("a ')' closes no '('")
        return node

    def or_(self, depth: int) -> _Node:
        branches = [self.and_(depth)]
        while self.peek() == _OR:
            self.at += 1
            branches.append(self.and_(depth))
        if len(branches) == 1:
            return branches[0]
        if any(isinstance(b, _Group) and b.op == "and" and not b.items for b in branches):
            raise QueryError("OR needs words or filters on both sides (to search for the word, "
                             'quote it: "OR")')
        return _Group("or", tuple(branches))

    def and_(self, depth: int) -> _Node:
        items: list[_Node] = []
        while True:
            token = self.peek()
            if token == _OR or (isinstance(token, str) and token.startswith(_CLOSE)):
                break
            self.at += 1
            if token == _AND or token is None:  # (AND is the default; text with no word)
                continue
            if token in (_OPEN, "-" + _OPEN):
                if depth >= MAX_DEPTH:
                    raise QueryError(f"parentheses nest deeper than {MAX_DEPTH}")
                inner = self.or_(depth + 1)
                if self.peek() != _CLOSE:
                    raise QueryError("a '(' is not closed by a ')'")
                self.at += 1
                if isinstance(inner, _Group) and not inner.items:
                    continue  # `()`: nothing
                if token == "-" + _OPEN:
                    inner = _Group(inner.op, inner.items, True) if isinstance(inner, _Group) \
                        else _Group("and", (inner,), True)
                items.append(inner)
                continue
            assert isinstance(token, (_Field, _Text))
            items.append(token)
        return items[0] if len(items) == 1 else _Group("and", tuple(items))


def _pure_text(node: _Node) -> bool:
    """Text leaves only, none negated (one FTS5 expression says it)."""
    if isinstance(node, _Text):
        return not node.neg
    if isinstance(node, _Group):
        return not node.neg and bool(node.items) and all(_pure_text(i) for i in node.items)
    return False


def _fts_of(node: _Node) -> str:
    if isinstance(node, _Text):
        return node.expr
    assert isinstance(node, _Group)
    parts = [_fts_of(i) if isinstance(i, _Text) else f"({_fts_of(i)})" for i in node.items]
    return f" {node.op.upper()} ".join(parts)


def _terms_of(node: _Node) -> list[str]:
    if isinstance(node, _Text):
        return [] if node.neg else list(node.tokens)
    if isinstance(node, _Group):
        return [] if node.neg else [t for i in node.items for t in _terms_of(i)]
    return []


def compile_query(text: str, *, since_last_visit: int | None = None,
                  commit_time: dict[str, int] | None = None,
                  resolve_rev: Callable[[str], str | None] | None = None) -> CompiledQuery:
    """Compile `text`; raises QueryError naming the offending token. `commit_time`: the
    index's commits (sha → time); `resolve_rev`: a revision's full sha, for `since:`."""
    if len(text) > MAX_QUERY_CHARS:  # FTS5's time grows with the square of a query's terms
        raise QueryError(f"the query is {len(text):,} characters long; at most "
                         f"{MAX_QUERY_CHARS:,} are searched")
    q = CompiledQuery()
    ctx: dict[str, Any] = {"since_last_visit": since_last_visit,
                           "commit_time": commit_time or {}, "resolve_rev": resolve_rev}
    tokens = _tokens(text.strip())
    q.include_messages = _take_include(tokens)
    tree = _Parser(tokens).parse()
    items = tree.items if isinstance(tree, _Group) and tree.op == "and" and not tree.neg \
        else (tree,)
    fts_parts: list[str] = []
    excluded: list[str] = []
    for item in _flatten(items):
        if isinstance(item, _Field):
            q.filters.append(_clause(q, item.name, item.value, item.neg, **ctx))
        elif (isinstance(item, _Text) and not item.neg) or _pure_text(item):
            fts_parts.append(item.expr if isinstance(item, _Text) else f"({_fts_of(item)})")
            q.terms.extend(_terms_of(item))
        elif isinstance(item, _Text) or (isinstance(item, _Group) and item.neg
                                         and _pure_text(_Group(item.op, item.items))):
            excluded.append(item.expr if isinstance(item, _Text)
                            else f"({_fts_of(_Group(item.op, item.items))})")
        else:  # a group mixing filters and text, or negating inside: one SQL filter
            q.terms.extend(_terms_of(item))
            sql, params = _group_sql(q, item, _asks_retracted(item), ctx)
            q.filters.append(Filter(sql, tuple(params)))
    if fts_parts:  # FTS5 has no leading NOT: the excluded words follow the wanted ones
        q.fts = " ".join(fts_parts) + "".join(f" NOT {e}" for e in excluded)
    elif excluded:  # only excluded words: every fact but their matches
        q.filters.append(Filter("NOT (f.id IN (SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?))",
                                (" OR ".join(excluded),)))
    return q


def includes_messages(text: str) -> bool:
    """Whether a query says `include:messages` (the message store is searched too)."""
    try:
        return _take_include(_tokens(text.strip()))
    except QueryError:
        return False


def _take_include(tokens: list[object]) -> bool:
    """Remove the `include:` tokens (they apply to the whole query, wherever written) and
    say whether messages are included (`-include:messages` leaves them out)."""
    include = False
    for token in [t for t in tokens if isinstance(t, _Field) and t.name == "include"]:
        assert isinstance(token, _Field)
        if token.value.lower() != "messages":
            raise QueryError(f"include:{token.value} — include: takes messages "
                             "(include:messages also searches the message store)")
        include = not token.neg
        tokens.remove(token)
    return include


def _flatten(items: tuple[_Node, ...]) -> list[_Node]:
    """Top-level items, a parenthesised AND (`(a b) c`) opened up."""
    out: list[_Node] = []
    for item in items:
        if isinstance(item, _Group) and item.op == "and" and not item.neg:
            out.extend(_flatten(item.items))
        else:
            out.append(item)
    return out


_MATCH_SQL = "f.id IN (SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?)"


def _asks_retracted(node: _Node) -> bool:
    if isinstance(node, _Field):
        return node.name == "status" and node.value == "retracted" and not node.neg
    if isinstance(node, _Group):
        return any(_asks_retracted(i) for i in node.items)
    return False


def _group_sql(q: CompiledQuery, node: _Node, guard: bool, ctx: dict[str, Any]
               ) -> tuple[str, list[object]]:
    """SQL over `facts f` for a group. `guard`: a `status:retracted` inside lets retracted
    facts in; every other leaf still keeps them out."""
    if isinstance(node, _Group):
        parts = [_group_sql(q, i, guard, ctx) for i in node.items]
        sql = "(" + f" {node.op.upper()} ".join(p for p, _ in parts) + ")"
        params = [v for _, ps in parts for v in ps]
        return (f"NOT {sql}" if node.neg else sql), params
    if isinstance(node, _Text):
        sql, params = _MATCH_SQL, [node.expr]
        sql = f"NOT ({sql})" if node.neg else sql
    else:
        f = _clause(q, node.name, node.value, node.neg, **ctx)
        sql, params = f.sql, list(f.params)
        if _asks_retracted(node):
            return sql, params
    return (f"({sql} AND f.status != 'retracted')" if guard else sql), params


#: the closed vocabularies a field filter is checked against for `vocabulary_hints`
_VOCABULARY_OF = {"type": "type", "kind": "kind", "origin": "origin", "claim": "claim_type"}


def vocabulary_hints(text: str) -> list[str]:
    """For a query that found nothing: each closed-vocabulary filter whose value is no word
    of its vocabulary but close to one (`type:hypotesis`), said with the word meant. Values
    far from every word are left alone: a misspelt type a broken fact carries is searchable
    as written (`type:factoid`)."""
    from difflib import get_close_matches

    from factdesk.model.legality import VOCABULARY

    hints = []
    for m in _matches(text):
        name, value = m.group(2), _unquote(m.group(3) or "")
        field = field_of(name) if name else None
        if field in _VOCABULARY_OF and value:
            words = VOCABULARY[_VOCABULARY_OF[field]]
            close = get_close_matches(value.lower(), words, n=1, cutoff=0.75)
            if value not in words and close:
                hints.append(f"{name}:{value} is no {field} (did you mean {name}:{close[0]}?)")
    return hints


def _clause(q: CompiledQuery, name: str, value: str, neg: bool, *,
            since_last_visit: int | None, commit_time: dict[str, int],
            resolve_rev: Callable[[str], str | None] | None = None) -> Filter:
    """One field filter (`status:retracted` also lets retracted facts into `q`)."""
    if not value:
        raise QueryError(f"{name}: needs a value (e.g. {name}:{_example(name)})")
    clause: str
    params: list[object]
    indexed = False  # set where the clause is one that narrow indexes answer alone
    if name in _EQ_COLUMNS:
        column, indexed = _EQ_COLUMNS[name]
        clause, params = f"f.{column} = ?", [value]
    elif name == "agent":  # (the Agents list: its claims alone, never a type's)
        clause, params, indexed = "f.claimant = ?", [value], True
    elif name == "claimant":  # (an OR of two indexes)
        clause, params, indexed = "(f.claimant = ? OR f.claimant_type = ?)", [value, value], True
    elif name == "subject":
        clause, params, indexed = "(f.subject_kind = ? OR f.subject_ref = ?)", [value, value], True
    elif name == "author":
        clause, params = "(f.author = ? OR f.author_email LIKE ?)", [value, value + "%"]
    elif name == "path":
        clause, params = "f.path LIKE ? ESCAPE '\\'", [_like_prefix(value)]
    elif name == "domain":
        clause = "EXISTS (SELECT 1 FROM json_each(f.domain) d WHERE d.value = ?)"
        params = [value]
    elif name == "entity":
        clause = ("EXISTS (SELECT 1 FROM json_each(f.entities) e "
                  "WHERE e.value = ? COLLATE NOCASE)")
        params = [value]
    elif name == "motif":  # (index.rows keeps them in `extra`)
        clause = "EXISTS (SELECT 1 FROM json_each(f.extra, '$.motifs') m WHERE m.value = ?)"
        params = [value.lower()]
    elif name in ("confidence", "weight"):
        m = _CMP.match(value)
        if not m:
            raise QueryError(f"{name}: expects a comparison like {name}:<0.5, got {value!r}")
        column = "f.confidence" if name == "confidence" else "f.evidence_weight"
        clause, params = f"{column} {m.group(1) or '='} ?", [float(m.group(2))]
    elif name == "status":
        if value == "problems":
            clause, params = "(f.errors + f.warnings) > 0", []
        elif value in ("live", "broken", "retracted"):
            clause, params, indexed = "f.status = ?", [value], True
            if value == "retracted":
                q.include_retracted = True
        else:
            raise QueryError("status: must be live, broken, retracted or problems")
    elif name == "has":
        clause = {
            "problems": "(f.errors + f.warnings) > 0",
            "errors": "f.errors > 0",
            "envelope": "f.claim_type_derived = 0",
            "weight": "f.evidence_weight IS NOT NULL",
            "refs": "f.refs != '[]'",
        }.get(value, "")
        params = []
        if not clause:
            raise QueryError("has: must be problems, errors, envelope, weight or refs")
    elif name == "problem":
        # a list built once from the code index; a correlated EXISTS made SQLite scan
        # every problem with that code for each fact (minutes at 100,000 facts)
        clause = "f.path IN (SELECT p.path FROM problems p WHERE p.code = ?)"
        params = [value]
    else:  # since
        clause, params = _since(value, since_last_visit, commit_time, resolve_rev)
    return Filter(f"NOT ({clause})" if neg else clause, tuple(params), indexed and not neg)


#: facts whose last change is a commit after the one given (in the index's commit order):
#: strictly after it, so that commit's own changes are out
_AFTER_COMMIT = ("f.updated_sha IN (SELECT c.sha FROM commits c WHERE c.seq > "
                 "(SELECT c0.seq FROM commits c0 WHERE c0.sha = ?))")


def _since(value: str, last_visit: int | None, commit_time: dict[str, int],
           resolve_rev: Callable[[str], str | None] | None) -> tuple[str, list[object]]:
    """`since:` a date (that day's start, UTC), last-visit, or a commit: a sha or a prefix of
    one the index knows, else any revision git resolves (a branch, a tag, `HEAD~3`) through
    `resolve_rev` (`gitrepo.resolve_commit`)."""
    if value == "last-visit":
        return "f.updated_at >= ?", [last_visit or 0]
    try:
        day = date.fromisoformat(value)
        return "f.updated_at >= ?", [int(datetime(day.year, day.month, day.day,
                                                  tzinfo=UTC).timestamp())]
    except ValueError:
        pass
    if len(value) >= 4 and re.fullmatch(r"[0-9a-fA-F]+", value):
        found = [sha for sha in commit_time if sha.startswith(value.lower())]
        if len(found) == 1:
            return _AFTER_COMMIT, [found[0]]
        if len(found) > 1:
            raise QueryError(f"since: {value!r} is the start of {len(found)} commits: give "
                             "more of the sha")
    sha = resolve_rev(value) if resolve_rev is not None else None
    if sha is not None and sha in commit_time:
        return _AFTER_COMMIT, [sha]
    if sha is not None:
        raise QueryError(f"since: {value!r} is a commit the index has not read (update the "
                         "index, or name a commit on the corpus's branch)")
    raise QueryError(f"since: {value!r} is not a date (YYYY-MM-DD), a commit or branch git "
                     "knows, or last-visit")


def revision_resolver(conn: sqlite3.Connection) -> Callable[[str], str | None]:
    """`since:`'s resolver for the repository whose index `conn` reads (the index lives in
    the git directory, where git finds the repository): `gitrepo.resolve_commit` there."""
    from factdesk.corpus.gitrepo import resolve_commit

    def resolve(rev: str) -> str | None:
        row = next((r for r in conn.execute("PRAGMA database_list") if r[1] == "main"), None)
        if row is None or not row[2]:
            return None
        return resolve_commit(Path(row[2]).parent, rev)

    return resolve


def _like_prefix(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _example(name: str) -> str:
    return {"confidence": "<0.5", "weight": ">0.7", "status": "retracted",
            "has": "problems", "since": "2026-11-01", "include": "messages"}.get(name, "hypothesis")
