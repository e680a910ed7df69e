"""What every family of curation operations shares: the corpus, the curator, reading a fact
to act on it, the legality context, and the pure helpers that turn edits into bytes.

The families (`labels`, `files`, `settling`, `undo`, `dismiss`) are mixins over
`CurationBase`; `factdesk.curation.Curation` combines them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from factdesk.corpus import gitrepo
from factdesk.corpus.codec import MAX_BYTES, ParseOutcome, parse_fact
from factdesk.corpus.registry_io import load_registry
from factdesk.corpus.writer import FieldValue, WriteRefused, edit_frontmatter, render_item
from factdesk.curation.changes import ChangeSet, Plan, run_plan
from factdesk.curation.gitwrite import Conflict, Identity, Refused, refuse_links
from factdesk.curation.identity import curator_identity
from factdesk.fsio import NotRegular, TooLarge, read_regular
from factdesk.index import DatabaseError
from factdesk.index.curation_reads import stored_repo_ids
from factdesk.index.indexer import Indexer
from factdesk.model import legality
from factdesk.model.fact import Fact
from factdesk.model.refs import is_contained_repo_path, local_targets
from factdesk.model.registry import Registry


@dataclass(frozen=True, slots=True)
class Relabelable:
    """A fact as the relabel editor starts from it (`Curation.read_labels`)."""

    fact: Fact  #: for its title, refs and text (for an unreadable type: read without it)
    values: dict[str, str | None]  #: the relabel fields as written (`legality.values_of`)
    fault: str | None = None  #: why the file is unreadable until relabelled, if it is


class CurationBase:
    """The write operations' shared state over one corpus (an `Indexer` for its index)."""

    def __init__(self, indexer: Indexer, curator: Identity | None = None, *,
                 update_index: bool = True, defer_index_sync: bool = False,
                 identity_file: Path | None = None) -> None:
        self.indexer = indexer
        self.repo = indexer.repo
        self._curator = curator
        #: factdesk's own identity file, read when git has no user.name/user.email
        self.identity_file = identity_file
        self.update_index = update_index
        #: the GUI defers syncing git's own index to after its view has updated
        #: (`changes.finish_change`, run on a worker thread)
        self.defer_index_sync = defer_index_sync
        self._registry = load_registry(self.repo)
        self._repo_ids: frozenset[str] | None = None

    @property
    def curator(self) -> Identity:
        """Who commits: resolved on first use, so that opening a corpus never needs an
        identity; `identity.MissingIdentity` (a refusal that says how to set one) if none."""
        if self._curator is None:
            self._curator = curator_identity(self.repo, self.identity_file)
        return self._curator

    @property
    def registry(self) -> Registry:
        return self._registry

    @property
    def repo_ids(self) -> frozenset[str]:
        if self._repo_ids is None:
            ids: frozenset[str] | None = None
            try:  # the index remembers them (computing them walks the whole history)
                conn = self.indexer.connect(readonly=True)
                try:
                    ids = stored_repo_ids(conn)
                finally:
                    conn.close()
            except DatabaseError:
                ids = None
            if ids is None:
                ids = gitrepo.repo_ids(self.repo) if gitrepo.head_sha(self.repo) else frozenset()
            self._repo_ids = ids
        return self._repo_ids

    # -- reading the facts an action acts on ------------------------------------------------

    def _parse(self, path: str, expected: Mapping[str, str] | None) -> tuple[bytes, ParseOutcome]:
        data = self._read_checked(path, expected, root="kb", noun="fact", shape="kb/…/<name>.md")
        return data, parse_fact(path, data)

    def _read_checked(self, path: str, expected: Mapping[str, str] | None, *, root: str,
                      noun: str, shape: str) -> bytes:
        """The bytes of the file an action acts on: a `.md` under `root`, read through no
        link, and still the version the caller saw (`expected`: path → blob id)."""
        if not path.startswith(f"{root}/") or not path.endswith(".md") \
                or not is_contained_repo_path(path):
            raise Refused(f"{path}: not a {noun} path ({shape})")
        refuse_links(self.repo, path)
        data = read_file(self.repo, path)
        if data is None:
            raise Refused(f"{path}: no such {noun} on disk")
        if expected is not None and path in expected and expected[path] != gitrepo.blob_id(data):
            raise Conflict(f"{path} changed on disk since you looked; reload and review the change")
        return data

    def _read(self, path: str, expected: Mapping[str, str] | None) -> tuple[bytes, Fact]:
        data, outcome = self._parse(path, expected)
        if outcome.fact is None:
            raise Refused(unreadable(outcome, "fix the file first"))
        return data, outcome.fact

    def read_fact(self, path: str) -> Fact:
        """The fact as it is on disk now (Refused when it is missing or unreadable)."""
        return self._read(path, None)[1]

    def _read_labels(self, path: str, expected: Mapping[str, str] | None) -> tuple[bytes, Relabelable]:
        data, outcome = self._parse(path, expected)
        if outcome.fact is not None:
            return data, Relabelable(outcome.fact, legality.values_of(outcome.fact))
        untyped = parse_fact(path, data, without=("kind", "type")).fact
        if untyped is None:  # (other faults too: a relabel alone cannot repair it)
            raise Refused(unreadable(outcome, "fix the file first"))
        values = legality.values_of(untyped)  # its kind and type as written:
        values.update(kind=outcome.raw.get("kind", "epistemic"), type=outcome.raw.get("type"))
        return data, Relabelable(untyped, values, outcome.problems[0].message)

    def read_labels(self, path: str) -> Relabelable:
        """What the relabel editor starts from: the fact and its envelope as written. A fact
        whose only fault is an unknown or miswritten kind or type (`type: factoid`,
        RELIABILITY B01) is offered too, so that a relabel can repair it."""
        return self._read_labels(path, None)[1]

    def context_for(self, fact: Fact, *, attesting: bool = False,
                    values: Mapping[str, str | None] | None = None) -> legality.Context:
        """What the legality rules need to know about `fact` besides its envelope (`values`:
        the envelope as written, when the fact's own is a stand-in: `read_labels`)."""
        return legality.Context(
            was_ground_truth=legality.is_ground_truth(
                values if values is not None else legality.values_of(fact)),
            registry=self._registry,
            local_refs=len(local_targets(fact.refs, self.repo_ids)),
            any_refs=bool(fact.refs),
            text=f"{fact.title}\n{fact.body}",
            attesting=attesting,
        )

    # -- the shared tail --------------------------------------------------------------------

    def _run(self, plan: Plan, reason: str, expected_head: str | None, preview: bool) -> ChangeSet:
        return run_plan(plan, reason, repo=self.repo, curator=None if preview else self.curator,
                        indexer=self.indexer if self.update_index else None,
                        expected_head=expected_head, preview=preview,
                        defer_sync=self.defer_index_sync)


# -- reading files an action acts on --------------------------------------------------------------

#: the most factdesk reads of a file it acts on (a fact over `codec.MAX_BYTES` is unreadable
#: anyway; the dismissals and attestations logs grow with use)
READ_LIMIT = 8 * MAX_BYTES


def read_file(repo: Path, rel: str, *, limit: int = READ_LIMIT) -> bytes | None:
    """The bytes of the regular file `rel` in `repo`, None when it does not exist. A FIFO, a
    device or a folder there, or a file over `limit`, is refused in words, without blocking
    (issue 15 #6: `fsio.read_regular`)."""
    try:
        return read_regular(repo / rel, limit=limit)
    except FileNotFoundError:
        return None
    except (NotRegular, TooLarge) as exc:
        raise Refused(f"{rel}: {_after_path(str(exc), repo / rel)}", rule="file") from None
    except OSError as exc:
        raise Refused(f"{rel}: cannot be read: {exc.strerror or exc}", rule="file") from None


def exists(repo: Path, rel: str) -> bool:
    """Whether anything (a file, a folder, a FIFO, a link) is at `rel`: never opens it."""
    return os.path.lexists(repo / rel)


def _after_path(message: str, path: Path) -> str:
    prefix = f"{path}: "
    return message[len(prefix):] if message.startswith(prefix) else message


# -- pure helpers -------------------------------------------------------------------------------


def unreadable(outcome: ParseOutcome, advice: str) -> str:
    first = outcome.problems[0] if outcome.problems else None
    return (f"{outcome.path}:{first.line if first else 1}: cannot curate an unreadable fact "
            f"({first.message if first else 'unparseable'}); {advice}")


def unique(paths: Iterable[str]) -> list[str]:
    out = list(dict.fromkeys(paths))
    if not out:
        raise Refused("no facts selected")
    return out


def frontmatter_edits(before: Mapping[str, str | None], after: Mapping[str, str | None]
                      ) -> dict[str, FieldValue]:
    """The key edits that turn `before` into `after`; kind epistemic is knomit's default and
    is only written when the file already has a kind line."""
    edits: dict[str, FieldValue] = {}
    for key in legality.RELABEL_FIELDS:
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if key == "kind" and new == "epistemic" and old is None:
            continue
        edits[key] = new
    return edits


def apply_edits(path: str, data: bytes, edits: Mapping[str, FieldValue]) -> bytes:
    try:
        return edit_frontmatter(data, edits)
    except WriteRefused as exc:
        raise Refused(f"{path}: {exc}") from None
    except UnicodeDecodeError:
        raise Refused(f"{path}: not UTF-8; factdesk will not rewrite it") from None


def check_edit_values(changes: Mapping[str, object]) -> dict[str, object]:
    """The edit's values checked and normalised (confidence a number in 0..1, sources a
    whole number, lists split on commas); Refused naming the first bad one."""
    out: dict[str, object] = {}
    for key, value in changes.items():
        if key == "confidence":
            try:
                number = float(value)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                raise Refused(f"confidence {value!r} is not a number", rule="confidence") from None
            if not 0.0 <= number <= 1.0:
                raise Refused(f"confidence {number} is outside 0..1", rule="confidence")
            out[key] = number
        elif key == "sources":
            try:
                count = int(str(value))
            except ValueError:
                raise Refused(f"sources {value!r} is not a whole number", rule="sources") from None
            if not 0 <= count <= 1000:
                raise Refused(f"sources {count} is outside 0..1000", rule="sources")
            out[key] = count
        elif key in ("domain", "entities", "refs"):
            items = value if isinstance(value, (list, tuple)) else [v.strip() for v in str(value).split(",")]
            items = [str(v).strip() for v in items if str(v).strip()]
            for item in items:
                render_item(item)
            out[key] = items
        else:
            out[key] = value
    return out
