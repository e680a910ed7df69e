"""The paths of a pending factdesk action, as HEAD has them (issue 22 #3, #4).

A curation action writes its intent journal (`.git/factdesk/journal/<id>.json`,
curation/recovery.py) before it replaces any file, and removes it once its commit is
published and git's index synced. While a journal is there — the action is running in
another process, or was killed and not yet finished or rolled back — the files it names may
hold bytes no commit has: half of an accept, say. The index never takes those for the
corpus's truth: for each fact path a pending journal names whose file differs from HEAD's,
the index holds HEAD's version (no row when HEAD has no such file), and `Pending.note` says
which actions are pending. Other work-tree edits stay the truth (I1).

Such rows carry a stamp no file has (size -1), and the paths are remembered in `meta`
(`pending`), so the first update after the journal is gone reads the files again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from factdesk.corpus import gitrepo
from factdesk.corpus.codec import parse_fact
from factdesk.corpus.ontology import Ontology, check_ontology, shared_engine, topic_problems
from factdesk.corpus.scan import FileEntry, is_fact_path, read_fact_file
from factdesk.index.parsing import Checked, Parsed, ParseStream
from factdesk.model.fact import Problem

_T = TypeVar("_T")
#: the stamp of a row that holds HEAD's version instead of the file's: no file has it
NO_SIZE = -1


@dataclass(frozen=True)
class Pending:
    """What the pending journals name, where the work tree differs from HEAD."""

    #: fact path → HEAD's bytes (None: HEAD has no file there), where the file differs
    versions: Mapping[str, bytes | None] = field(default_factory=dict)
    #: every fact path a pending journal names → that action's subject
    named: Mapping[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.named)

    def note(self, path: str | None = None) -> str | None:
        """What a reader says (about `path`, or about any path): None when no pending
        action names it. A path it names is never shown as an ordinary fact (issue 22 #4)."""
        if not self.named or (path is not None and path not in self.named):
            return None
        which = "; ".join(f"'{a}'" for a in dict.fromkeys(
            self.named[p] for p in ([path] if path is not None else sorted(self.named))))
        what = (f"{path} is shown as HEAD has it" if path is not None else
                f"the {len(self.named)} fact file(s) it names are shown as HEAD has them")
        return (f"a factdesk action is pending ({which}): {what}, never as a half-written "
                "file; the next factdesk command that can take the writer lock finishes or "
                "rolls it back")

    def entries(self, entries: list[FileEntry]) -> list[FileEntry]:
        """The work tree's fact files as the index takes them: HEAD's for pending paths."""
        out = [e for e in entries if e.path not in self.versions]
        out += [FileEntry(p, NO_SIZE, NO_SIZE) for p, data in self.versions.items()
                if data is not None]
        return sorted(out, key=lambda e: e.path)

    def parsed(self, paths: list[str], from_disk: Callable[[list[str]], ParseStream[Parsed]]
               ) -> ParseStream[Parsed]:
        """`parse_files` over `paths`, with HEAD's version of each pending path."""
        def one(rel: str, data: bytes) -> Parsed:
            return parse_fact(rel, data), gitrepo.blob_id(data), NO_SIZE, NO_SIZE
        return self._merged(paths, from_disk, one)

    def checked(self, paths: list[str], ontology: Ontology | None,
                from_disk: Callable[[list[str]], ParseStream[Checked]]) -> ParseStream[Checked]:
        """`parse_and_check_files` over `paths`, with HEAD's version of each pending path."""
        def one(rel: str, data: bytes) -> Checked:
            outcome = parse_fact(rel, data)
            found: list[Problem] = []
            if outcome.fact is not None and ontology is not None:
                found.extend(check_ontology(outcome.fact, ontology, shared_engine()))
                found.extend(topic_problems(outcome.fact, ontology))
            return outcome, gitrepo.blob_id(data), NO_SIZE, NO_SIZE, found
        return self._merged(paths, from_disk, one)

    def _merged(self, paths: list[str], from_disk: Callable[[list[str]], ParseStream[_T]],
                one: Callable[[str, bytes], _T]) -> ParseStream[_T]:
        if not any(p in self.versions for p in paths):
            return from_disk(paths)
        return _Merged(paths, self.versions, from_disk, one)


class _Merged(Iterator[_T]):
    """The disk's stream, with the pending paths' results put in their places (in order)."""

    def __init__(self, paths: list[str], versions: Mapping[str, bytes | None],
                 from_disk: Callable[[list[str]], ParseStream[_T]],
                 one: Callable[[str, bytes], _T]) -> None:
        self._paths = iter(paths)
        self._versions = versions
        self._one = one
        self._disk = from_disk([p for p in paths if p not in versions])

    def __next__(self) -> _T:
        for rel in self._paths:
            if rel not in self._versions:
                return next(self._disk)
            data = self._versions[rel]
            if data is not None:
                return self._one(rel, data)
        raise StopIteration

    def close(self) -> None:
        self._disk.close()


def journal_dir(git_dir: Path) -> Path:
    return git_dir / "factdesk" / "journal"


def read_pending(repo: Path, git_dir: Path, root: str) -> Pending:
    """The pending journals' fact paths whose file differs from HEAD's (a journal being
    written or removed meanwhile is read as it is found, or skipped)."""
    directory = journal_dir(git_dir)
    if not directory.is_dir():
        return Pending()
    named: dict[str, str] = {}
    for journal in sorted(directory.glob("*.json")):
        try:
            record = json.loads(journal.read_bytes())
            changes = record["changes"]
            subject = (str(record.get("message") or "").splitlines() or ["?"])[0]
            paths = [str(c["path"]) for c in changes]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        for p in paths:
            if is_fact_path(p, root):
                named.setdefault(p, subject)
    if not named:
        return Pending()
    # (a journal whose action was committed, git's index not yet synced: the files are HEAD's)
    versions: dict[str, bytes | None] = {}
    with gitrepo.BlobReader(repo) as reader:
        for p in sorted(named):
            at_head = reader.read(f"HEAD:{p}")
            try:
                on_disk: bytes | None = read_fact_file(str(repo), p)[0]
            except FileNotFoundError:
                on_disk = None
            except OSError:
                on_disk = b""  # (unreadable: never equal to HEAD's)
            if on_disk != at_head:
                versions[p] = at_head
    return Pending(versions, named)
