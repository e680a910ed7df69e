"""Dismissed mislabel suggestions, remembered in git: `.factdesk/dismissals.yaml`.

The file is committed with the corpus (committing it is the curation layer's job), so a
dismissal survives a lost cache and is shared by every curator. Format (version 1)::

    # factdesk: mislabel suggestions a curator reviewed and dismissed
    version: 1
    dismissals:
    - path: kb/gotchas/db/d84b6810.md
      code: observation-without-refs
      reason: the evidence is the fact itself (a measurement we took)
      by: ana <ana@example.org>
      at: '2026-11-30T10:00:00Z'
      blob: 3b18e512dba79e4c8300dd08aeb37f8e728b8dad

`blob` is the git blob id of the fact when it was dismissed: once the file changes, the
dismissal no longer matches and the suggestion comes back. One entry per (path, code).

Also here, because the queue is "suggestions minus dismissals": reading the facts and the
heuristics' context out of the index (`queue_from_index`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from factdesk.corpus.yamlv3 import SAFE_LOADER
from factdesk.errors import FactdeskError
from factdesk.fsio import NotRegular, TooLarge, read_regular
from factdesk.model.fact import Fact
from factdesk.model.mislabels import CODES, MislabelContext, Suggestion, suggest_all

if TYPE_CHECKING:
    import sqlite3

DISMISSALS_PATH = ".factdesk/dismissals.yaml"
#: the most of the file that is read (about 50,000 dismissals)
DISMISSALS_LIMIT = 16 * 1024 * 1024
VERSION = 1
_FIELDS = ("path", "code", "reason", "by", "at", "blob")
_BLOB_RE = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_HEADER = "# factdesk: mislabel suggestions a curator reviewed and dismissed\n"


class DismissalsError(FactdeskError):
    """The dismissals file cannot be read; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class Dismissal:
    """A curator's decision that one suggestion (code) does not apply to one fact version."""

    path: str
    code: str
    reason: str
    by: str
    at: str
    blob: str

    @property
    def key(self) -> tuple[str, str]:
        return self.path, self.code


@dataclass(frozen=True, slots=True)
class Dismissals:
    """All dismissals of a corpus, one per (path, code), in file order."""

    entries: tuple[Dismissal, ...] = ()

    def get(self, path: str, code: str) -> Dismissal | None:
        for d in self.entries:
            if d.path == path and d.code == code:
                return d
        return None

    def index(self) -> dict[tuple[str, str], Dismissal]:
        return {d.key: d for d in self.entries}

    def __iter__(self) -> Iterator[Dismissal]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)


# ---------------------------------------------------------------- pure parse / serialize


def parse_dismissals(text: str, *, source: str = DISMISSALS_PATH) -> Dismissals:
    """Parse the file's text. Raises `DismissalsError` naming `source` and the line."""
    if not text.strip():
        return Dismissals()
    try:
        root = yaml.compose(text, Loader=SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise DismissalsError(f"{source}:{line}: not valid YAML: {problem}") from exc
    if root is None:
        return Dismissals()
    if not isinstance(root, yaml.MappingNode):
        raise DismissalsError(f"{source}:{_line(root)}: expected a mapping with 'version' and 'dismissals'")
    top = _mapping(root, source)
    version = top.get("version")
    if version is not None and (_scalar(version[1], source, "version") != str(VERSION)):
        raise DismissalsError(f"{source}:{_line(version[1])}: unsupported version "
                              f"{version[1].value!r} (this factdesk reads version {VERSION})")
    unknown = sorted(set(top) - {"version", "dismissals"})
    if unknown:
        raise DismissalsError(f"{source}:{_line(top[unknown[0]][0])}: unknown key {unknown[0]!r}")
    items = top.get("dismissals")
    if items is None or (isinstance(items[1], yaml.ScalarNode) and items[1].value in ("", "~", "null")):
        return Dismissals()
    if not isinstance(items[1], yaml.SequenceNode):
        raise DismissalsError(f"{source}:{_line(items[1])}: 'dismissals' must be a list")
    seen: dict[tuple[str, str], int] = {}
    out: list[Dismissal] = []
    for node in items[1].value:
        d = _dismissal(node, source)
        if d.key in seen:
            raise DismissalsError(f"{source}:{_line(node)}: {d.path} [{d.code}] is dismissed twice "
                                  f"(first at line {seen[d.key]})")
        seen[d.key] = _line(node)
        out.append(d)
    return Dismissals(tuple(out))


def serialize_dismissals(dismissals: Dismissals) -> str:
    """The file's text: deterministic (sorted by path, code), round-trips through parse."""
    body = {
        "version": VERSION,
        "dismissals": [{k: getattr(d, k) for k in _FIELDS}
                       for d in sorted(dismissals.entries, key=lambda d: d.key)],
    }
    text = yaml.safe_dump(body, sort_keys=False, allow_unicode=True, default_flow_style=False,
                          width=100)
    return _HEADER + text


def dismiss(dismissals: Dismissals, entry: Dismissal) -> Dismissals:
    """A new set with `entry` added, replacing an earlier dismissal of the same (path, code)."""
    _validate(entry, "<new dismissal>", 0)
    kept = tuple(d for d in dismissals.entries if d.key != entry.key)
    return Dismissals((*kept, entry))


def undismiss(dismissals: Dismissals, path: str, code: str) -> Dismissals:
    """A new set without the dismissal of (path, code); unchanged when there is none."""
    return Dismissals(tuple(d for d in dismissals.entries if d.key != (path, code)))


def rename_path(dismissals: Dismissals, old: str, new: str) -> Dismissals:
    """Follow a `move`: the blob is unchanged by a rename, so the dismissal still holds."""
    return Dismissals(tuple(replace(d, path=new) if d.path == old else d for d in dismissals.entries))


def is_dismissed(dismissals: Dismissals | Mapping[tuple[str, str], Dismissal], path: str, code: str,
                 blob: str | None) -> bool:
    """True when (path, code) was dismissed for exactly this version (`blob`) of the fact."""
    d = dismissals.get((path, code)) if isinstance(dismissals, Mapping) else dismissals.get(path, code)
    return d is not None and blob is not None and d.blob == blob


def pending(suggestions: Iterable[Suggestion], dismissals: Dismissals,
            blobs: Mapping[str, str | None]) -> list[Suggestion]:
    """The suggestions still to review: those not dismissed for the fact's current blob."""
    idx = dismissals.index()
    return [s for s in suggestions if not is_dismissed(idx, s.path, s.code, blobs.get(s.path))]


def stale(dismissals: Dismissals, blobs: Mapping[str, str | None]) -> list[Dismissal]:
    """Dismissals whose fact changed or is gone (their suggestion may resurface)."""
    return [d for d in dismissals.entries if blobs.get(d.path) != d.blob]


# ---------------------------------------------------------------- I/O


def load_dismissals(repo: Path) -> Dismissals:
    """Read `<repo>/.factdesk/dismissals.yaml` from the work tree (absent: no dismissals)."""
    path = repo / DISMISSALS_PATH
    try:
        data = read_regular(path, limit=DISMISSALS_LIMIT)
    except FileNotFoundError:
        return Dismissals()
    except (NotRegular, TooLarge) as exc:  # (a FIFO there is never waited on: issue 15 #6)
        raise DismissalsError(str(exc)) from exc
    except OSError as exc:
        raise DismissalsError(f"{DISMISSALS_PATH}: cannot read: {exc.strerror}") from exc
    if data is None:
        return Dismissals()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DismissalsError(f"{DISMISSALS_PATH}:{line}: not UTF-8") from exc
    return parse_dismissals(text, source=DISMISSALS_PATH)


def facts_from_index(conn: sqlite3.Connection, paths: Iterable[str] | None = None
                     ) -> tuple[list[Fact], dict[str, str | None], dict[str, str]]:
    """Live well-formed facts (all, or those at `paths`), their blob ids and creator
    e-mails, read from the index."""
    from factdesk.index.curation_reads import live_fact_rows
    from factdesk.index.rows import fact_from_row

    facts: list[Fact] = []
    blobs: dict[str, str | None] = {}
    creators: dict[str, str] = {}
    rows = live_fact_rows(conn, paths)
    for row in rows:
        fact = fact_from_row(row)
        if fact is None:
            continue
        facts.append(fact)
        blobs[fact.path] = row["blob"]
        if row["creator_email"]:
            creators[fact.path] = row["creator_email"]
    return facts, blobs, creators


def queue_from_index(repo: Path, conn: sqlite3.Connection, *, include_no_envelope: bool = False,
                     codes: Iterable[str] = CODES, paths: Iterable[str] | None = None
                     ) -> list[Suggestion]:
    """The suspected-mislabels queue: every suggestion for the indexed facts (or only those at
    `paths`, e.g. after an operation) that no dismissal in the work tree's
    `.factdesk/dismissals.yaml` covers, most serious first. `conn` is an up-to-date index."""
    from factdesk.corpus.registry_io import load_registry
    from factdesk.index.curation_reads import meta_values

    facts, blobs, creators = facts_from_index(conn, paths)
    meta = meta_values(conn)
    repo_ids = frozenset(str(meta.get("repo_id") or "").split()) or None
    ctx = MislabelContext(repo_id=repo_ids, registry=load_registry(repo), creators=creators,
                          include_no_envelope=include_no_envelope)
    wanted = set(codes)
    found = [s for s in suggest_all(facts, ctx) if s.code in wanted]
    return pending(found, load_dismissals(repo), blobs)


# ---------------------------------------------------------------- helpers


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _mapping(node: yaml.MappingNode, source: str) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for k, v in node.value:
        key = _scalar(k, source, "key")
        if key in out:
            raise DismissalsError(f"{source}:{_line(k)}: duplicate key {key!r}")
        out[key] = (k, v)
    return out


def _scalar(node: yaml.Node, source: str, what: str) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise DismissalsError(f"{source}:{_line(node)}: {what} must be a plain value")
    return str(node.value)


def _dismissal(node: yaml.Node, source: str) -> Dismissal:
    if not isinstance(node, yaml.MappingNode):
        raise DismissalsError(f"{source}:{_line(node)}: each dismissal must be a mapping of "
                              f"{', '.join(_FIELDS)}")
    fields = _mapping(node, source)
    unknown = sorted(set(fields) - set(_FIELDS))
    if unknown:
        raise DismissalsError(f"{source}:{_line(fields[unknown[0]][0])}: unknown field {unknown[0]!r} "
                              f"(fields: {', '.join(_FIELDS)})")
    missing = [f for f in _FIELDS if f not in fields]
    if missing:
        raise DismissalsError(f"{source}:{_line(node)}: dismissal lacks {', '.join(missing)}")
    values = {f: _scalar(fields[f][1], source, f).strip() for f in _FIELDS}
    entry = Dismissal(**values)
    _validate(entry, source, _line(node), {f: _line(fields[f][1]) for f in _FIELDS})
    return entry


def _validate(d: Dismissal, source: str, line: int, lines: Mapping[str, int] | None = None) -> None:
    def fail(field: str, msg: str) -> None:
        at = (lines or {}).get(field, line)
        raise DismissalsError(f"{source}:{at}: {msg}")

    if not d.path.startswith("kb/") or not d.path.endswith(".md") or ".." in d.path.split("/"):
        fail("path", f"path must be a fact path kb/….md, got {d.path!r}")
    if not d.code:
        fail("code", "code is empty")
    if not d.reason:
        fail("reason", "a dismissal needs a reason")
    if not d.by:
        fail("by", "a dismissal needs the curator who made it ('by')")
    if not re.match(r"^\d{4}-\d{2}-\d{2}", d.at):
        fail("at", f"'at' must be an ISO date-time, got {d.at!r}")
    if not _BLOB_RE.match(d.blob):
        fail("blob", f"blob must be a git blob id (40 or 64 hex), got {d.blob!r}")
