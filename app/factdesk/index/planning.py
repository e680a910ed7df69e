"""The change planner: given what the index recorded and what the work tree and git say
now, decide what an incremental update re-reads, deletes and re-checks.

Pure: no files, no git, no SQLite. The indexer gathers the inputs (the recorded stamps,
the files it looked at, the paths new commits touched), carries out the plan and asks the
planner again at each step (Basic Memory's change planning is the model). I1 rests on
it: an incremental update re-checks every fact whose row a rebuild would write
differently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Set
from dataclasses import dataclass

#: what the index recorded of a file: (size, mtime_ns, blob id)
Stamp = tuple[int, int, str]
#: what the work tree says of a file now: (size, mtime_ns)
Seen = tuple[int, int]
#: a path's problems as a file (code, message), as a set
FileFindings = Mapping[str, Set[tuple[str, str]]]


def settings_changed(meta: Mapping[str, str], *, root: str, registry: str,
                     ontology: str) -> bool:
    """The index was built under another root folder, registry or ontology: every row may
    differ, so the update is a rebuild."""
    return (meta.get("root") != root or meta.get("registry") != registry
            or meta.get("ontology") != ontology)


@dataclass(frozen=True, slots=True)
class FilePlan:
    """How the files looked at compare with the index."""

    #: the paths that are facts now: the files looked at, and the indexed ones not looked at
    present: frozenset[str]
    #: files to read: new ones, and those whose size or mtime differs from the record
    read: tuple[str, ...]
    #: files whose stamp matches but that may differ all the same (a same-size edit with
    #: its mtime put back, RELIABILITY F06): read them when their blob is not the recorded one
    verify: tuple[str, ...]
    #: indexed files that are gone: their rows are deleted
    removed: frozenset[str]


def plan_files(*, known: Mapping[str, Stamp], on_disk: Mapping[str, Seen],
               looked_at: Set[str], touched: Set[str], partial: bool) -> FilePlan:
    """Compare the files looked at (`on_disk`, among the paths `looked_at`) with `known`,
    what the index recorded of them. `partial`: only some paths were looked at (those git
    names, `looked_at`); the rest stand as indexed, and a looked-at file whose stamp
    matches is verified by its blob unless new commits touched it (those are re-read
    anyway). The stamp is a filter, the blob the truth."""
    present = frozenset((set(known) - set(looked_at)) | set(on_disk))
    read: list[str] = []
    verify: list[str] = []
    for path, seen in on_disk.items():
        if path not in known or (known[path][0], known[path][1]) != seen:
            read.append(path)
        elif partial and path not in touched:
            verify.append(path)
    removed = frozenset(p for p in known if p not in present)
    return FilePlan(present, tuple(read), tuple(verify), removed)


def file_problems_changed(had: FileFindings, now: FileFindings) -> set[str]:
    """The paths whose problems as files differ between the index (`had`, over the paths
    looked at) and the scan's new findings (`now`): their rows' counts change (a colliding
    name's twin, C11/C12)."""
    return {p for p in had.keys() | now.keys() if had.get(p) != now.get(p)}


def rereads(*, touched: Set[str], recount: Set[str], read: Set[str], removed: Set[str],
            present: Set[str]) -> list[str]:
    """Files to read again although their bytes did not change: paths new commits touched
    (their history fields) and those whose file problems changed (their counts)."""
    return sorted(((set(touched) | set(recount)) - set(read) - set(removed)) & set(present))


def is_unchanged(*, changed: Set[str], day_changed: bool, same_head: bool,
                 same_dirty: bool) -> bool:
    """Nothing to write: no path changed, the day (hypotheses' due dates) and the branch
    tip are the same, and git's dirty set is the one remembered."""
    return not changed and not day_changed and same_head and same_dirty


def dependents(changed: Iterable[str], citers: Callable[[list[str]], Iterable[str]]
               ) -> set[str]:
    """Every fact that cites a changed path, transitively: evidence weight (R2) and the
    lineage rules (R1, R3) walk refs through facts that cite facts. `citers(paths)` gives
    the facts whose refs name any of `paths`."""
    seen: set[str] = set()
    frontier = set(changed)
    while frontier:
        frontier = set(citers(sorted(frontier))) - seen
        seen |= frontier
    return seen


def rechecks(*, dependents: Set[str], read: Set[str], removed: Set[str],
             present: Set[str]) -> list[str]:
    """The dependents not read already: re-read and re-checked, since their findings or
    computed weight may change with what they cite."""
    return sorted((set(dependents) - set(read) - set(removed)) & set(present))


def stamp_differences(known: Mapping[str, Seen], seen: Mapping[str, Seen]) -> set[str]:
    """The paths whose file is new, gone, or of another size or mtime than the index
    recorded: compared with the index whatever git says of them."""
    return {p for p in known.keys() | seen.keys() if known.get(p) != seen.get(p)}
