"""The curator's operations (issue 4), shared by the GUI and the CLI.

Each operation takes a required reason, reads the files it acts on, computes the new
bytes with the core's minimal-diff writer, validates the result against the model's
rules (`model.legality`, the authority table), and — unless asked for a preview —
publishes exactly one commit through `gitwrite.commit_files`, then brings the index up
to date and returns a `ChangeSet`. A bulk operation over many facts is one commit.

Commits are authored by the curator with knomit's `+op` convention
(`ana+relabel@example.org`), titled in knomit's style and carry trailers:

    Factdesk-Action: relabel
    Factdesk-Action-Id: 1f3a…
    Factdesk-Change: kb/…/ab12cd34.md type: observation → hypothesis
    Factdesk-Reason: hedged wording ("probably") is a guess, not an observation

Undo reverts factdesk's own last action as a new commit (`Factdesk-Reverts:`); redo
reverts that revert. Both stacks are read back from the branch's history, so they
survive restarts, and both refuse when later commits touched the same files.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import os
import re
import secrets
import sqlite3
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from factdesk.corpus import gitrepo
from factdesk.corpus.codec import ParseOutcome, parse_fact
from factdesk.corpus.gitrepo import ZERO
from factdesk.corpus.ontology import load_ontology
from factdesk.corpus.registry_io import load_registry
from factdesk.corpus.scan import unportable
from factdesk.corpus.writer import FieldValue, WriteRefused, edit_frontmatter, edit_text, render_item
from factdesk.curation.gitwrite import (
    Committed,
    Conflict,
    CurationError,
    FileChange,
    Identity,
    Refused,
    commit_files,
    current_branch,
    finish_sync,
    refuse_links,
    with_warning,
)
from factdesk.errors import FactdeskError
from factdesk.fsio import read_or_none
from factdesk.index.indexer import Indexer, IndexStats
from factdesk.index.search import resolve_local_ref, rows_in
from factdesk.model import legality
from factdesk.model.fact import Fact
from factdesk.model.refs import (
    RefKind,
    classify_ref,
    is_contained_repo_path,
    local_targets,
    unwritable,
)
from factdesk.model.registry import Registry
from factdesk.model.rules import read_settle_answer
from factdesk.model.words import an

__all__ = ["ChangeSet", "Conflict", "Curation", "CurationError", "Refused", "Relabelable",
           "curator_identity"]

ATTESTATIONS = ".factdesk/attestations.yaml"
#: the rule of an undo or redo with nothing to revert (a window says it quietly)
EMPTY_STACK = "empty-stack"
EDIT_FIELDS = ("confidence", "sources", "domain", "entities", "refs", "title", "body")
_DERIVABLE = ("claim_type", "claimant_agent_id", "claimant_type", "subject_kind", "subject_ref")


@dataclass(frozen=True, slots=True)
class Relabelable:
    """A fact as the relabel editor starts from it (`Curation.read_labels`)."""

    fact: Fact  #: for its title, refs and text (for an unreadable type: read without it)
    values: dict[str, str | None]  #: the relabel fields as written (`legality.values_of`)
    fault: str | None = None  #: why the file is unreadable until relabelled, if it is


@dataclass(frozen=True, slots=True)
class FieldChange:
    path: str
    field: str
    old: object
    new: object

    def trailer(self) -> str:
        return f"{self.path} {self.field}: {_show(self.old)} → {_show(self.new)}"


@dataclass(frozen=True, slots=True)
class FileDiff:
    path: str
    new_path: str | None
    diff: str


@dataclass
class ChangeSet:
    """What an action changed (or, for a preview, would change)."""

    action: str
    action_id: str
    subject: str
    reason: str
    fields: list[FieldChange]
    files: list[FileDiff]
    commit: str | None = None
    index: IndexStats | None = None
    rebased: bool = False
    paths_after: list[str] = field(default_factory=list)
    #: every file the action wrote or deleted (an index update hint)
    paths_touched: list[str] = field(default_factory=list)
    committed: Committed | None = None

    def finish(self, repo: Path) -> None:
        """Complete a commit made with `defer_index_sync` (a no-op otherwise)."""
        if self.committed is not None and self.committed.pending_sync:
            finish_sync(repo, self.committed)

    @property
    def preview(self) -> bool:
        return self.commit is None

    def as_dict(self) -> dict[str, object]:
        return {
            "action": self.action, "action_id": self.action_id, "subject": self.subject,
            "reason": self.reason, "commit": self.commit,
            "fields": [{"path": f.path, "field": f.field, "old": f.old, "new": f.new}
                       for f in self.fields],
            "files": [{"path": f.path, "new_path": f.new_path, "diff": f.diff} for f in self.files],
            "paths": self.paths_after,
        }


def _show(value: object) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "…"


def curator_identity(repo: Path) -> Identity:
    """The curator: FACTDESK_CURATOR_NAME/EMAIL, else git's user.name/user.email, else a
    placeholder that says so (commits never fail for want of an identity: RELIABILITY E17)."""
    name = os.environ.get("FACTDESK_CURATOR_NAME")
    email = os.environ.get("FACTDESK_CURATOR_EMAIL")
    if not name:
        name = gitrepo.run_git(repo, "config", "user.name", check=False).decode().strip() or None
    if not email:
        email = gitrepo.run_git(repo, "config", "user.email", check=False).decode().strip() or None
    return Identity(name or "factdesk curator", email or "curator@factdesk.invalid")


def with_op(identity: Identity, op: str) -> Identity:
    """`ana@example.org` → `ana+relabel@example.org` (any earlier `+op` replaced)."""
    local, at, domain = identity.email.partition("@")
    return Identity(identity.name, f"{local.split('+', 1)[0]}+{op}{at}{domain}")


def _diff(path: str, old: bytes | None, new: bytes | None, new_path: str | None = None) -> str:
    a = old.decode("utf-8", "replace").splitlines(keepends=True) if old is not None else []
    b = new.decode("utf-8", "replace").splitlines(keepends=True) if new is not None else []
    return "".join(difflib.unified_diff(a, b, f"a/{path}" if old is not None else "/dev/null",
                                        f"b/{new_path or path}" if new is not None else "/dev/null",
                                        n=1))


@dataclass
class _Plan:
    action: str
    subject: str
    changes: list[FileChange]
    fields: list[FieldChange]
    moves: dict[str, str] = field(default_factory=dict)
    extra_trailers: list[str] = field(default_factory=list)


class Curation:
    """The write operations over one corpus (an `Indexer` for its index)."""

    def __init__(self, indexer: Indexer, curator: Identity | None = None, *,
                 update_index: bool = True, defer_index_sync: bool = False) -> None:
        self.indexer = indexer
        self.repo = indexer.repo
        self.curator = curator or curator_identity(self.repo)
        self.update_index = update_index
        #: the GUI defers syncing git's own index to after its view has updated
        #: (`ChangeSet.finish()`, run on a worker thread)
        self.defer_index_sync = defer_index_sync
        self._registry = load_registry(self.repo)
        self._repo_ids: frozenset[str] | None = None

    # -- reading ------------------------------------------------------------------------------

    @property
    def repo_ids(self) -> frozenset[str]:
        if self._repo_ids is None:
            ids: frozenset[str] | None = None
            try:  # the index remembers them (computing them walks the whole history)
                conn = self.indexer.connect(readonly=True)
                try:
                    row = conn.execute("SELECT value FROM meta WHERE key = 'repo_id'").fetchone()
                finally:
                    conn.close()
                if row and row[0]:
                    ids = frozenset(row[0].split())
            except sqlite3.Error:
                ids = None
            if ids is None:
                ids = gitrepo.repo_ids(self.repo) if gitrepo.head_sha(self.repo) else frozenset()
            self._repo_ids = ids
        return self._repo_ids

    def _parse(self, path: str, expected: Mapping[str, str] | None) -> tuple[bytes, ParseOutcome]:
        if not path.startswith("kb/") or not path.endswith(".md") or not is_contained_repo_path(path):
            raise Refused(f"{path}: not a fact path (kb/…/<name>.md)")
        refuse_links(self.repo, path)
        data = read_or_none(self.repo / path)
        if data is None:
            raise Refused(f"{path}: no such fact on disk")
        if expected is not None and path in expected and expected[path] != gitrepo.blob_id(data):
            raise Conflict(f"{path} changed on disk since you looked; reload and review the change")
        return data, parse_fact(path, data)

    def _read(self, path: str, expected: Mapping[str, str] | None) -> tuple[bytes, Fact]:
        data, outcome = self._parse(path, expected)
        if outcome.fact is None:
            raise Refused(_unreadable(outcome, "fix the file first"))
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
            raise Refused(_unreadable(outcome, "fix the file first"))
        values = legality.values_of(untyped)  # its kind and type as written:
        values.update(kind=outcome.raw.get("kind", "epistemic"), type=outcome.raw.get("type"))
        return data, Relabelable(untyped, values, outcome.problems[0].message)

    def read_labels(self, path: str) -> Relabelable:
        """What the relabel editor starts from: the fact and its envelope as written. A fact
        whose only fault is an unknown or miswritten kind or type (`type: factoid`,
        RELIABILITY B01) is offered too, so that a relabel can repair it."""
        return self._read_labels(path, None)[1]

    @property
    def registry(self) -> Registry:
        return self._registry

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

    # -- relabel ------------------------------------------------------------------------------

    def plan_relabel(self, paths: Sequence[str], changes: Mapping[str, str | None],
                     expected: Mapping[str, str] | None = None) -> _Plan:
        unknown = set(changes) - set(legality.RELABEL_FIELDS)
        if unknown:
            raise Refused(f"relabel cannot change {', '.join(sorted(unknown))} "
                          f"(it changes {', '.join(legality.RELABEL_FIELDS)}; use edit for the rest)")
        if not changes:
            raise Refused("relabel needs at least one field to change")
        file_changes: list[FileChange] = []
        fields: list[FieldChange] = []
        for path in _unique(paths):
            data, labels = self._read_labels(path, expected)
            before = labels.values
            after = legality.follow(before, changes)
            problems = legality.violations(after, self.context_for(labels.fact, values=before))
            if problems:
                first = problems[0]
                raise Refused(f"{path}: {first}", rule=first.rule)
            edits = _frontmatter_edits(before, after)
            if not edits:
                continue
            new = _apply(path, data, edits)
            if labels.fault is not None and (repaired := parse_fact(path, new)).fact is None:
                raise Refused(_unreadable(repaired, "choose a known kind and type"))
            file_changes.append(FileChange(path, data, new))
            fields += [FieldChange(path, k, before.get(k), v) for k, v in edits.items()]
        if not file_changes:
            raise Refused("nothing to change: every selected fact already has those values")
        return _Plan("relabel", self._subject("relabel", file_changes, fields), file_changes, fields)

    def relabel(self, paths: Sequence[str], changes: Mapping[str, str | None], reason: str, *,
                expected: Mapping[str, str] | None = None, expected_head: str | None = None,
                preview: bool = False) -> ChangeSet:
        """Change envelope fields of one or many facts (one commit)."""
        return self._run(self.plan_relabel(paths, changes, expected), reason, expected_head, preview)

    # -- edit ---------------------------------------------------------------------------------

    def edit(self, paths: Sequence[str], changes: Mapping[str, object], reason: str, *,
             expected: Mapping[str, str] | None = None, expected_head: str | None = None,
             preview: bool = False) -> ChangeSet:
        """Change confidence, sources, domain, entities, refs, title or body (one commit)."""
        unknown = set(changes) - set(EDIT_FIELDS)
        if unknown:
            raise Refused(f"edit cannot change {', '.join(sorted(unknown))} "
                          f"(it changes {', '.join(EDIT_FIELDS)}; use relabel for the envelope)")
        if not changes:
            raise Refused("edit needs at least one field to change")
        checked = _check_edit_values(changes)
        file_changes: list[FileChange] = []
        fields: list[FieldChange] = []
        for path in _unique(paths):
            data, fact = self._read(path, expected)
            front = {k: v for k, v in checked.items() if k not in ("title", "body")}
            current: dict[str, object] = {
                "confidence": fact.confidence, "sources": fact.sources, "domain": list(fact.domain),
                "entities": list(fact.entities), "refs": list(fact.refs), "title": fact.title,
                "body": fact.body,
            }
            front = {k: v for k, v in front.items() if _norm(current[k]) != _norm(v)}
            new = _apply(path, data, front) if front else data  # type: ignore[arg-type]
            title = checked.get("title")
            body = checked.get("body")
            text_changes = {}
            if title is not None and title != fact.title:
                text_changes["title"] = str(title)
            if body is not None and str(body).strip() != fact.body.strip():
                text_changes["body"] = str(body)
            if text_changes:
                try:
                    new = edit_text(new, **text_changes)
                except WriteRefused as exc:
                    raise Refused(f"{path}: {exc}") from None
            if new == data:
                continue
            after = parse_fact(path, new).fact
            if after is None:
                raise Refused(f"{path}: the edit would make the file unreadable")
            self._refuse_new_refs(path, [r for r in after.refs if r not in fact.refs])
            problems = legality.violations(legality.values_of(after), self.context_for(after))
            if problems:
                raise Refused(f"{path}: {problems[0]}", rule=problems[0].rule)
            file_changes.append(FileChange(path, data, new))
            for k, v in {**front, **text_changes}.items():
                fields.append(FieldChange(path, k, current[k], v))
        if not file_changes:
            raise Refused("nothing to change: every selected fact already has those values")
        plan = _Plan("edit", self._subject("edit", file_changes, fields), file_changes, fields)
        return self._run(plan, reason, expected_head, preview)

    def _refuse_new_refs(self, path: str, added: Sequence[str]) -> None:
        """knomit's write gate (FORMAT §4.3–4.4): every ref newly added must be well formed
        and stay inside the repository, and a local one must name a fact that exists or once
        did (a retracted one is in the index too); refs the fact already had are not checked
        again. Every problem is listed at once, and nothing is written."""
        problems: list[str] = []
        missing: list[tuple[str, str]] = []
        for raw in added:
            if why := unwritable(raw, self.repo_ids):
                problems.append(f"{raw!r}: {why}")
            elif (ref := classify_ref(raw, self.repo_ids)).kind is RefKind.LOCAL_FACT and ref.target:
                missing.append((raw, ref.target))
        if missing:
            conn = self.indexer.connect(readonly=True)
            try:
                problems += [f"{target!r}: no such fact" for raw, target in missing
                             if resolve_local_ref(conn, raw, target) is None]
            finally:
                conn.close()
        if problems:
            raise Refused(f"{path}: refs that cannot be written, nothing was written: "
                          + "; ".join(problems), rule="refs")

    # -- move ---------------------------------------------------------------------------------

    def plan_move(self, moves: Mapping[str, str], expected: Mapping[str, str] | None = None) -> _Plan:
        if not moves:
            raise Refused("nothing to move")
        onto = load_ontology(self.repo)
        file_changes: dict[str, FileChange] = {}
        fields: list[FieldChange] = []
        lower_moves = {old.lower(): new for old, new in moves.items()}
        for old, new in moves.items():
            if not new.startswith("kb/") or not new.endswith(".md") or not is_contained_repo_path(new):
                raise Refused(f"{new}: a fact's path is kb/<topic>/…/<name>.md")
            if old == new:
                raise Refused(f"{old}: already there")
            if (nfc := unicodedata.normalize("NFC", new)) != new:  # RELIABILITY C11
                raise Refused(f"{new!r}: new names are NFC-normalised; use {nfc!r}")
            if why := unportable(new):  # C13: one that Windows could not check out
                raise Refused(f"{new}: {why}, a name Windows cannot check out")
            data, _ = self._read(old, expected)
            refuse_links(self.repo, new)  # (before anything is read through it)
            if read_or_none(self.repo / new) is not None or new in file_changes:
                raise Refused(f"{new} already exists")
            topic = new.split("/")[1]
            if onto is not None and onto.topics and topic not in onto.topics:
                raise Refused(f"{new}: topic {topic!r} is not in the ontology "
                              f"({', '.join(sorted(onto.topics))})", rule="ontology-topic")
            file_changes[old] = FileChange(old, data, None)
            file_changes[new] = FileChange(new, None, data)
            fields.append(FieldChange(old, "path", old, new))
        # refs to the moved facts, updated in the same commit
        conn = self.indexer.connect(readonly=True)
        try:
            citing = {src for (src,) in rows_in(
                conn, "SELECT DISTINCT src FROM refs WHERE target IN ({marks})", list(lower_moves))}
        finally:
            conn.close()
        for src in sorted(citing):
            src_now = moves.get(src, src)
            if src in file_changes and file_changes[src].new is None:
                moved_bytes = file_changes[src_now].new
                assert moved_bytes is not None
                data = moved_bytes
            else:
                data, _ = self._read(src, expected)
            fact = parse_fact(src_now, data).fact
            if fact is None:
                continue
            new_refs = [self._moved_ref(raw, lower_moves) for raw in fact.refs]
            if new_refs == list(fact.refs):
                continue
            new_bytes = _replace_refs(src_now, data, fact.refs, new_refs)
            if src_now in file_changes:
                old_change = file_changes[src_now]
                file_changes[src_now] = FileChange(src_now, old_change.old, new_bytes)
            else:
                file_changes[src_now] = FileChange(src_now, data, new_bytes)
            fields.append(FieldChange(src_now, "refs", list(fact.refs), new_refs))
        from factdesk.curation import dismissals as dz

        old_dz = read_or_none(self.repo / dz.DISMISSALS_PATH)
        if old_dz is not None:
            try:
                ds = dz.parse_dismissals(old_dz.decode("utf-8"))
            except (dz.DismissalsError, UnicodeDecodeError) as exc:
                raise Refused(f"{exc}; fix it before moving facts", rule="dismissals") from None
            for old, new in moves.items():
                ds = dz.rename_path(ds, old, new)
            new_dz = dz.serialize_dismissals(ds).encode("utf-8")
            if new_dz != old_dz:
                file_changes[dz.DISMISSALS_PATH] = FileChange(dz.DISMISSALS_PATH, old_dz, new_dz)
        changes = list(file_changes.values())
        if len(moves) == 1:
            (old, new), = moves.items()
            subject = f"move: {old} -> {new}"
        else:
            subject = f"move: {len(moves)} facts"
            tops = {(o.split('/')[1], n.split('/')[1]) for o, n in moves.items()}
            if len(tops) == 1:
                (a, b), = tops
                subject += f" ({a} → {b})"
        return _Plan("move", subject, changes, fields, moves=dict(moves))

    def _moved_ref(self, raw: str, lower_moves: Mapping[str, str]) -> str:
        ref = classify_ref(raw, self.repo_ids)
        if ref.kind is not RefKind.LOCAL_FACT or ref.target is None or ref.target not in lower_moves:
            return raw
        new = lower_moves[ref.target]
        if raw.startswith("kb://"):
            prefix = raw[: raw.index("/", len("kb://")) + 1]
            return prefix + new
        return new

    def move(self, moves: Mapping[str, str], reason: str, *, expected: Mapping[str, str] | None = None,
             expected_head: str | None = None, preview: bool = False) -> ChangeSet:
        """File facts under other paths (git renames), updating refs to them in the same commit."""
        return self._run(self.plan_move(moves, expected), reason, expected_head, preview)

    def topic_move_targets(self, paths: Sequence[str], topic: str) -> dict[str, str]:
        """`kb/<old topic>/rest` → `kb/<topic>/rest` for each path; topic `auto` picks, for
        each fact, the topic most of its local sources are filed under (ties: the first
        cited), never the one it is leaving."""
        out: dict[str, str] = {}
        for path in paths:
            parts = path.split("/")
            if len(parts) < 3:
                raise Refused(f"{path}: not under a topic")
            target = topic
            if topic == "auto":
                _, fact = self._read(path, None)
                tops = [t.split("/")[1] for t in local_targets(fact.refs, self.repo_ids)
                        if t.count("/") >= 2 and t.split("/")[1] != parts[1]]
                if not tops:
                    raise Refused(f"{path}: cites no fact under another topic; name the topic")
                target = max(dict.fromkeys(tops), key=tops.count)
            out[path] = "/".join([parts[0], target, *parts[2:]])
        return out

    # -- retract / restore --------------------------------------------------------------------

    def retract(self, paths: Sequence[str], reason: str, *, expected: Mapping[str, str] | None = None,
                expected_head: str | None = None, preview: bool = False) -> ChangeSet:
        """Delete facts in one commit whose message records the reason (knomit's retract)."""
        changes = []
        fields = []
        for path in _unique(paths):
            data, _ = self._read(path, expected)
            changes.append(FileChange(path, data, None))
            fields.append(FieldChange(path, "status", "live", "retracted"))
        subject = (f"retract(curation): {changes[0].path}" if len(changes) == 1
                   else f"retract(curation): {len(changes)} facts")
        return self._run(_Plan("retract", subject, changes, fields), reason, expected_head, preview)

    def restore(self, paths: Sequence[str], reason: str, *, expected_head: str | None = None,
                preview: bool = False) -> ChangeSet:
        """Bring retracted facts back with the bytes of their last live version."""
        changes = []
        fields = []
        for path in _unique(paths):
            if read_or_none(self.repo / path) is not None:
                raise Refused(f"{path} is not retracted: it exists on disk")
            sha = self._deleted_in(path)
            with gitrepo.BlobReader(self.repo) as reader:
                data = reader.read(f"{sha}^:{path}") if sha is not None else None
            if sha is None or data is None:
                raise Refused(f"{path}: no earlier version in this branch's history")
            if elsewhere := self._moved_to(sha, path):
                raise Refused(f"{path}: the fact lives on at {elsewhere} (moved there); restoring "
                              "it would make a second copy")
            changes.append(FileChange(path, None, data))
            fields.append(FieldChange(path, "status", "retracted", "live"))
        title = parse_fact(changes[0].path, changes[0].new or b"").title  # (an unreadable one's too)
        subject = (f"restore: {title or changes[0].path}" if len(changes) == 1
                   else f"restore: {len(changes)} facts")
        return self._run(_Plan("restore", subject, changes, fields), reason, expected_head, preview)

    def _deleted_in(self, path: str) -> str | None:
        """The first-parent commit that last deleted `path` (retracted or moved it), or None."""
        out = gitrepo.run_git(self.repo, "log", "--first-parent", "-n", "1", "--format=%H",
                              "--diff-filter=D", "HEAD", "--", path, check=False).decode().strip()
        return out or None

    def _moved_to(self, sha: str, path: str) -> str | None:
        """Where commit `sha`, which deleted `path`, moved it (a rename git sees), if it is
        still there; None for a retraction. (A file name alone says nothing: FORMAT §1.4,
        names are not unique across folders.)"""
        out = gitrepo.run_git(self.repo, "diff-tree", "-r", "-M", "-z", "--no-commit-id",
                              f"{sha}^", sha, check=False)
        return next((c.new_path for c in gitrepo.raw_changes(out) if c.path == path and c.new_path
                     and read_or_none(self.repo / c.new_path) is not None), None)

    # -- attest -------------------------------------------------------------------------------

    def attest(self, paths: Sequence[str], reason: str, changes: Mapping[str, str | None] | None = None,
               *, expected: Mapping[str, str] | None = None, expected_head: str | None = None,
               preview: bool = False) -> ChangeSet:
        """A curator confirms a fact's derived or legacy envelope: the envelope is written
        out explicitly (with any corrections) and the attestation is appended to
        `.factdesk/attestations.yaml` in the same commit. This is the only way to ground truth."""
        changes = dict(changes or {})
        file_changes: list[FileChange] = []
        fields: list[FieldChange] = []
        entries: list[str] = []
        conn = self.indexer.connect(readonly=True)
        try:
            for path in _unique(paths):
                data, fact = self._read(path, expected)
                before = legality.values_of(fact)
                row = conn.execute("SELECT claim_type, claimant, claimant_type, subject_kind "
                                   "FROM facts WHERE path = ?", (path,)).fetchone()
                derived = {
                    "claim_type": fact.claim_type,
                    "claimant_agent_id": before["claimant_agent_id"] or (row["claimant"] if row else None),
                    "claimant_type": before["claimant_type"] or (row["claimant_type"] if row else None),
                    "subject_kind": before["subject_kind"] or (row["subject_kind"] if row else None),
                }
                after = legality.follow({**before, **derived}, changes)
                missing = [k for k in ("claim_type", "claimant_agent_id", "claimant_type", "subject_kind")
                           if not after.get(k)]
                if missing:
                    raise Refused(f"{path}: cannot attest without {', '.join(missing)} "
                                  "(nothing to derive it from; give it explicitly)", rule="attest")
                if after.get("claim_type") == "legacy":
                    raise Refused(f"{path}: a legacy claim type is what attestation replaces; give "
                                  "the claim type you confirm", rule="attest")
                problems = legality.violations(after, self.context_for(fact, attesting=True))
                if problems:
                    raise Refused(f"{path}: {problems[0]}", rule=problems[0].rule)
                edits: dict[str, FieldValue] = {
                    k: v for k, v in after.items()
                    if k in _DERIVABLE and v is not None and before.get(k) != v}
                edits.update(_frontmatter_edits(before, {**before, **{k: v for k, v in after.items()
                                                                        if k not in _DERIVABLE}}))
                new = _apply(path, data, edits) if edits else data
                file_changes.append(FileChange(path, data, new))
                fields += [FieldChange(path, k, before.get(k), v) for k, v in edits.items()]
                fields.append(FieldChange(path, "attested", None, f"{self.curator.name}"))
                entries.append(_attestation_entry(path, gitrepo.blob_id(new), self.curator, reason,
                                                  {k: after.get(k) for k in _DERIVABLE if after.get(k)}))
        finally:
            conn.close()
        old_log = read_or_none(self.repo / ATTESTATIONS)
        header = b"# Curator attestations (factdesk attest): who confirmed which envelope, when.\n"
        new_log = (old_log if old_log is not None else header) + "".join(entries).encode("utf-8")
        file_changes.append(FileChange(ATTESTATIONS, old_log, new_log))
        subject = self._subject("attest", file_changes[:-1], fields)
        return self._run(_Plan("attest", subject, file_changes, fields), reason, expected_head, preview)

    # -- settling hypotheses (issue 5) ------------------------------------------------------------

    def _hypothesis(self, path: str, expected: Mapping[str, str] | None) -> tuple[bytes, Fact]:
        data, fact = self._read(path, expected)
        if fact.type != "hypothesis":
            raise Refused(f"{path} is typed {fact.type}: not a hypothesis", rule="settle")
        return data, fact

    def confirm(self, hypothesis: str, observation: str | None, reason: str, *,
                new_title: str | None = None, new_body: str = "", confidence: object = 0.8,
                expected: Mapping[str, str] | None = None, expected_head: str | None = None,
                preview: bool = False) -> ChangeSet:
        """Reality outranks prediction (R4, knomit's collision path §6.6): the observation
        stays (or is written, from `new_title`/`new_body`), it cites the hypothesis, and the
        hypothesis is retracted — all in one commit."""
        h_data, hyp = self._hypothesis(hypothesis, expected)
        changes = [FileChange(hypothesis, h_data, None)]
        fields = [FieldChange(hypothesis, "status", "open hypothesis", "confirmed, retracted")]
        if observation is not None:
            o_data, obs = self._read(observation, expected)
            if obs.type == "hypothesis":
                raise Refused(f"{observation} is itself a hypothesis: in a settlement the "
                              "non-hypothesis wins (R4)", rule="R4")
            if obs.kind == "pragmatic":
                raise Refused(f"{observation} is {an(obs.type)}: only evidence settles a prediction",
                              rule="R4")
            cited = {t for t in local_targets(obs.refs, self.repo_ids)}
            if hypothesis.lower() not in cited:
                new_refs = [*obs.refs, hypothesis]
                changes.append(FileChange(observation, o_data, _apply(observation, o_data,
                                                                      {"refs": new_refs})))
                fields.append(FieldChange(observation, "refs", list(obs.refs), new_refs))
            title = obs.title
        else:
            if not new_title:
                raise Refused("confirm needs the confirming observation: an existing fact or a new "
                              "title and body", rule="settle")
            from factdesk.corpus.writer import serialize_fact

            folder = hypothesis.rsplit("/", 1)[0]
            name = secrets.token_hex(4)
            while read_or_none(self.repo / f"{folder}/{name}.md") is not None:
                name = secrets.token_hex(4)
            observation = f"{folder}/{name}.md"
            checked = float(_check_edit_values({"confidence": confidence})["confidence"])  # type: ignore[arg-type]
            data = serialize_fact({"type": "observation", "domain": list(hyp.domain),
                                   "confidence": checked, "sources": 1,
                                   "entities": list(hyp.entities), "refs": [hypothesis]},
                                  new_title, new_body)
            changes.append(FileChange(observation, None, data))
            fields.append(FieldChange(observation, "status", None, "learned"))
            title = new_title
        subject = f"settle: confirmed {_short(hyp.title, 60)} (by {_short(title, 40)})"
        plan = _Plan("confirm", subject, changes, fields,
                     extra_trailers=[f"Factdesk-Confirmed-By: {observation}"])
        return self._run(plan, reason, expected_head, preview)

    def refute(self, hypothesis: str, reason: str, *, evidence: Sequence[str] = (),
               expected: Mapping[str, str] | None = None, expected_head: str | None = None,
               preview: bool = False) -> ChangeSet:
        """The prediction did not hold: retract it with the reason and the evidence."""
        data, _ = self._hypothesis(hypothesis, expected)
        plan = _Plan("refute", f"retract(refuted): {hypothesis}", [FileChange(hypothesis, data, None)],
                     [FieldChange(hypothesis, "status", "open hypothesis", "refuted, retracted")],
                     extra_trailers=[f"Factdesk-Evidence: {e}" for e in evidence])
        return self._run(plan, reason, expected_head, preview)

    def extend(self, hypothesis: str, reason: str, *, settle_by: str | None = None,
               settlement: str | None = None, expected: Mapping[str, str] | None = None,
               expected_head: str | None = None, preview: bool = False) -> ChangeSet:
        """A new date or criterion, with the reason. The date may be written short
        (`2027-3-1` is written `2027-03-01`); one that names no day is refused."""
        self._hypothesis(hypothesis, expected)
        if settle_by is not None:
            try:
                settle_by, _text = read_settle_answer(settle_by)
            except ValueError as exc:
                raise Refused(str(exc), rule="settle") from None
            if settle_by is None:
                raise Refused(f"{_text!r} is not a date (YYYY-MM-DD)", rule="settle")
        changes = {k: v for k, v in (("settle_by", settle_by), ("settlement", settlement)) if v}
        if not changes:
            raise Refused("extend needs a new settle-by date or criterion", rule="settle")
        plan = self.plan_relabel([hypothesis], changes, expected)
        plan.action = "extend"
        plan.subject = plan.subject.replace("relabel: ", "extend: ", 1)
        return self._run(plan, reason, expected_head, preview)

    def promote(self, hypothesis: str, reason: str, *, expected: Mapping[str, str] | None = None,
                expected_head: str | None = None, preview: bool = False) -> ChangeSet:
        """Promote in place (knomit's update path): the hypothesis becomes an observation."""
        self._hypothesis(hypothesis, expected)
        plan = self.plan_relabel([hypothesis], {"type": "observation"}, expected)
        plan.action = "promote"
        plan.subject = plan.subject.replace("relabel: ", "promote: ", 1)
        return self._run(plan, reason, expected_head, preview)

    # -- dismiss a suggested mislabel -----------------------------------------------------------

    def dismiss(self, path: str, code: str, reason: str, *, expected_head: str | None = None,
                preview: bool = False) -> ChangeSet:
        """Record in git (`.factdesk/dismissals.yaml`) that a suspected-mislabel suggestion
        does not apply to this version of the fact; an edited fact comes back to the queue."""
        from factdesk.curation import dismissals as dz
        from factdesk.model.mislabels import CODES

        if code not in CODES:  # (a typo would be recorded, and dismiss nothing)
            raise Refused(f"{code!r} is not a mislabel suggestion code ({', '.join(CODES)})",
                          rule="dismiss")
        data, fact = self._read(path, None)
        old = read_or_none(self.repo / dz.DISMISSALS_PATH)
        try:
            current = dz.parse_dismissals(old.decode("utf-8")) if old is not None else dz.Dismissals(())
        except (dz.DismissalsError, UnicodeDecodeError) as exc:
            raise Refused(f"{exc}; fix the file before dismissing more", rule="dismissals") from None
        entry = dz.Dismissal(path=path, code=code, reason=" ".join(reason.split()),
                             by=f"{self.curator.name} <{self.curator.email}>",
                             at=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                             blob=gitrepo.blob_id(data))
        new = dz.serialize_dismissals(dz.dismiss(current, entry)).encode("utf-8")
        plan = _Plan("dismiss", f"dismiss: {code} on {_short(fact.title)}",
                     [FileChange(dz.DISMISSALS_PATH, old, new)],
                     [FieldChange(path, "dismissed", None, code)])
        return self._run(plan, reason, expected_head, preview)

    # -- undo / redo --------------------------------------------------------------------------

    def stacks(self) -> tuple[list[ActionRecord], list[ActionRecord]]:
        """(undo stack, redo stack), top last, read from the branch's history."""
        return _stacks(self.repo)

    def undo(self, reason: str = "", *, preview: bool = False) -> ChangeSet:
        undo, _ = self.stacks()
        if not undo:
            raise Refused("nothing to undo: no factdesk action on this branch", rule=EMPTY_STACK)
        target = undo[-1]
        plan = self._revert_plan(target, "undo")
        return self._run(plan, reason or f"undo {target.subject}", None, preview)

    def redo(self, reason: str = "", *, preview: bool = False) -> ChangeSet:
        _, redo = self.stacks()
        if not redo:
            raise Refused("nothing to redo", rule=EMPTY_STACK)
        target = redo[-1]
        plan = self._revert_plan(target, "redo")
        return self._run(plan, reason or f"redo {target.subject}", None, preview)

    def _revert_plan(self, target: ActionRecord, action: str) -> _Plan:
        """Undo: put back the state before `target`'s commit. Redo: put back the state
        `target`'s commit made (reverting the undo)."""
        commit = target.commit if action == "undo" else target.undone_by
        assert commit is not None
        with gitrepo.BlobReader(self.repo) as reader:
            entries = _commit_changes(self.repo, commit)
            changes: list[FileChange] = []
            fields: list[FieldChange] = []
            later = []
            for path, old_blob, new_blob in entries:
                disk = read_or_none(self.repo / path)
                disk_blob = gitrepo.blob_id(disk) if disk is not None else None
                if disk_blob != new_blob:
                    later.append(path)
                    continue
                back = reader.read(old_blob) if old_blob else None
                changes.append(FileChange(path, disk, back))
                fields.append(FieldChange(path, "content", new_blob, old_blob))
        if later:
            log = gitrepo.run_git(self.repo, "log", "--format=%h %an: %s", f"{commit}..HEAD", "--",
                                  *later, check=False).decode("utf-8", "replace").strip()
            raise Refused(f"cannot {action} '{target.subject}': later changes touched "
                          f"{', '.join(later)}" + (f"\n{log}" if log else " (uncommitted edits)"),
                          rule=action)
        subject = f"{action}: {target.subject}"
        return _Plan(action, subject, changes, fields,
                     extra_trailers=[f"Factdesk-Reverts: {target.action_id}"])

    # -- the shared tail ----------------------------------------------------------------------

    def _subject(self, action: str, changes: Sequence[FileChange], fields: Sequence[FieldChange]) -> str:
        n = len(changes)
        first = changes[0]
        title = parse_fact(first.path, first.old or b"").title  # (an unreadable fact's too)
        what = (title or first.path) if n == 1 else f"{n} facts"
        relevant = [f for f in fields if f.field != "attested"]
        if not relevant:
            return f"{action}: {what}"
        by_field: dict[str, list[FieldChange]] = {}
        for f in relevant:
            by_field.setdefault(f.field, []).append(f)
        key = "type" if "type" in by_field else next(iter(by_field))
        olds = {_show(f.old) for f in by_field[key]}
        news = {_show(f.new) for f in by_field[key]}
        arrow = (f"{olds.pop() if len(olds) == 1 else 'mixed'} → {news.pop() if len(news) == 1 else 'mixed'}")
        detail = arrow if key == "type" else f"{key}: {arrow}"
        if key in ("body",):
            detail = key
        more = len(by_field) - 1
        if more and action != "relabel":
            detail += f", +{more} more"
        if len(what) > 72:
            what = what[:71] + "…"
        return f"{action}: {what} ({detail})"

    def _run(self, plan: _Plan, reason: str, expected_head: str | None, preview: bool) -> ChangeSet:
        reason = " ".join(reason.split())
        if not reason:
            raise Refused("a reason is required: say why, for the next reader of the history")
        action_id = secrets.token_hex(8)
        diffs = []
        renamed = {new: old for old, new in plan.moves.items()}
        for c in plan.changes:
            if c.path in plan.moves:
                continue  # shown once, as a rename, with its new side
            if c.path in renamed:
                source = next(x for x in plan.changes if x.path == renamed[c.path])
                text = f"rename {renamed[c.path]} → {c.path}\n" + _diff(renamed[c.path], source.old, c.new,
                                                                       new_path=c.path)
                diffs.append(FileDiff(renamed[c.path], c.path, text))
                continue
            diffs.append(FileDiff(c.path, None, _diff(c.path, c.old, c.new)))
        result = ChangeSet(plan.action, action_id, plan.subject, reason, plan.fields, diffs,
                           paths_after=[c.path for c in plan.changes if c.new is not None],
                           paths_touched=[c.path for c in plan.changes])
        if preview:
            return result
        message = _message(plan, action_id, reason)
        author = with_op(self.curator, plan.action)
        committed: Committed = commit_files(self.repo, plan.changes, message, author=author,
                                            committer=self.curator, action_id=action_id,
                                            expected_head=expected_head,
                                            defer_sync=self.defer_index_sync)
        result.committed = committed
        result.commit = committed.sha
        result.rebased = committed.rebased
        if self.update_index:
            try:
                result.index = self.indexer.update(hint=result.paths_touched)
            except (sqlite3.Error, OSError, FactdeskError) as exc:  # the ref moved: committed
                result.committed = with_warning(committed, f"committed as {committed.sha[:12]}, but the "
                                                f"index could not be brought up to date ({exc}); the "
                                                "next command does it")
        return result


def _unreadable(outcome: ParseOutcome, advice: str) -> str:
    first = outcome.problems[0] if outcome.problems else None
    return (f"{outcome.path}:{first.line if first else 1}: cannot curate an unreadable fact "
            f"({first.message if first else 'unparseable'}); {advice}")


def _message(plan: _Plan, action_id: str, reason: str) -> str:
    lines = [plan.subject, "", reason, ""]
    lines.append(f"Factdesk-Action: {plan.action}")
    lines.append(f"Factdesk-Action-Id: {action_id}")
    lines.extend(plan.extra_trailers)
    for f in plan.fields:
        if f.field in ("content",):
            continue
        lines.append(f"Factdesk-Change: {f.trailer()}")
    lines.append(f"Factdesk-Reason: {reason}")
    return "\n".join(lines) + "\n"


def _short(text: str, limit: int = 72) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unique(paths: Iterable[str]) -> list[str]:
    out = list(dict.fromkeys(paths))
    if not out:
        raise Refused("no facts selected")
    return out


def _norm(value: object) -> object:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return value
    return value


def _frontmatter_edits(before: Mapping[str, str | None], after: Mapping[str, str | None]
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


def _apply(path: str, data: bytes, edits: Mapping[str, FieldValue]) -> bytes:
    try:
        return edit_frontmatter(data, edits)
    except WriteRefused as exc:
        raise Refused(f"{path}: {exc}") from None
    except UnicodeDecodeError:
        raise Refused(f"{path}: not UTF-8; factdesk will not rewrite it") from None


def _replace_refs(path: str, data: bytes, old_refs: Sequence[str], new_refs: Sequence[str]) -> bytes:
    """Swap ref items in place, keeping every other byte of the refs line (quoting, spacing);
    fall back to re-rendering the list if the in-place edit does not parse back exactly."""
    end = data.find(b"\n---", 3)
    front, rest = data[:end], data[end:]
    for old, new in zip(old_refs, new_refs, strict=True):
        if old != new:
            pattern = re.compile(rb"(?<=[\[\s,'\"])" + re.escape(old.encode()) + rb"(?=[\],\s'\"])")
            front = pattern.sub(new.encode().replace(b"\\", b"\\\\"), front)
    out = front + rest
    fact = parse_fact(path, out).fact
    if end > 0 and fact is not None and list(fact.refs) == list(new_refs):
        return out
    return _apply(path, data, {"refs": list(new_refs)})


def _check_edit_values(changes: Mapping[str, object]) -> dict[str, object]:
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


def _attestation_entry(path: str, blob: str, curator: Identity, reason: str,
                       envelope: Mapping[str, str | None]) -> str:
    env = ", ".join(f"{k}: {render_item(str(v))}" for k, v in envelope.items())
    return (f"- path: {render_item(path)}\n"
            f"  by: {render_item(f'{curator.name} <{curator.email}>')}\n"
            f"  at: {_dt.datetime.now(_dt.UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}\n"
            f"  blob: {blob}\n"
            f"  envelope: {{{env}}}\n"
            f"  reason: {render_item(reason)}\n")


def load_attestations(repo: Path) -> dict[str, list[dict[str, str]]]:
    """`.factdesk/attestations.yaml` by fact path (unreadable or absent: none)."""
    import yaml

    data = read_or_none(repo / ATTESTATIONS)
    if data is None:
        return {}
    try:
        entries = yaml.safe_load(data)
    except (yaml.YAMLError, UnicodeDecodeError):
        return {}
    out: dict[str, list[dict[str, str]]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            out.setdefault(entry["path"], []).append({k: str(v) for k, v in entry.items()})
    return out


# -- the undo history ----------------------------------------------------------------------------


@dataclass
class ActionRecord:
    action_id: str
    action: str
    subject: str
    commit: str
    undone_by: str | None = None

    @property
    def label(self) -> str:
        """'relabel of 3 facts' / 'relabel of <title>' for menus."""
        head = self.subject.split(": ", 1)
        what = head[1] if len(head) > 1 else self.subject
        what = re.sub(r" \(.*\)$", "", what)
        return f"{self.action} of {what}"


_TRAILER = re.compile(r"^Factdesk-(Action|Action-Id|Reverts): (.+)$", re.M)


def _stacks(repo: Path, depth: int = 2000) -> tuple[list[ActionRecord], list[ActionRecord]]:
    try:
        _, tip = current_branch(repo)
    except Refused:
        return [], []
    if tip == ZERO:
        return [], []
    out = gitrepo.run_git(repo, "log", "--first-parent", f"-n{depth}", "--format=%x01%H%x00%s%x00%B",
                          "--fixed-strings", "--grep=Factdesk-Action-Id: ", tip, "--", check=False)
    records = []
    for chunk in out.split(b"\x01")[1:]:
        sha, subject, body = chunk.decode("utf-8", "replace").split("\x00", 2)
        trailers: dict[str, str] = {}
        for m in _TRAILER.finditer(body):
            trailers.setdefault(m.group(1), m.group(2).strip())
        if "Action-Id" in trailers:
            records.append((sha, subject, trailers))
    undo: list[ActionRecord] = []
    redo: list[ActionRecord] = []
    by_id: dict[str, ActionRecord] = {}
    for sha, subject, t in reversed(records):
        kind = t.get("Action", "")
        if kind == "undo":
            target = by_id.get(t.get("Reverts", ""))
            if target and target in undo:
                undo.remove(target)
                target.undone_by = sha
                redo.append(target)
        elif kind == "redo":
            target = by_id.get(t.get("Reverts", ""))
            if target and target in redo:
                redo.remove(target)
                target.commit = sha
                target.undone_by = None
                undo.append(target)
        else:
            rec = ActionRecord(t["Action-Id"], kind, subject, sha)
            by_id[rec.action_id] = rec
            undo.append(rec)
            redo.clear()
    return undo, redo


def _commit_changes(repo: Path, commit: str) -> list[tuple[str, str | None, str | None]]:
    """(path, blob before, blob after) for each file `commit` changed against its first parent."""
    out = gitrepo.run_git(repo, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", "--root",
                          "-m", "--first-parent", commit)
    return [(c.path, c.old_blob, c.new_blob) for c in gitrepo.raw_changes(out)]
