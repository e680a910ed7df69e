"""The plan → commit → change-set machinery every curation operation shares.

An operation builds a `Plan` (the new bytes of each file, the field changes, the commit's
subject); `run_plan` checks the reason, previews or commits it through
`gitwrite.commit_files`, updates the index and returns a frozen `ChangeSet`. The commit
message (`message`) is the audit trail: subject, reason, then the `Factdesk-*` trailers.
"""

from __future__ import annotations

import dataclasses
import difflib
import errno
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from factdesk.corpus.codec import parse_fact
from factdesk.curation.gitwrite import (
    Committed,
    Failed,
    FileChange,
    Identity,
    Refused,
    commit_files,
    finish_sync,
    with_warning,
)
from factdesk.errors import FactdeskError
from factdesk.fsio import WriteFailed
from factdesk.index import DatabaseError
from factdesk.index.indexer import Indexer, IndexStats


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field of one file, before and after."""

    path: str
    field: str
    old: object
    new: object

    def trailer(self) -> str:
        """The `Factdesk-Change:` value: one inert line (`inert`)."""
        return inert(f"{self.path} {self.field}: {show(self.old)} → {show(self.new)}")


@dataclass(frozen=True, slots=True)
class FileDiff:
    """One file's unified diff (`new_path` for a rename)."""

    path: str
    new_path: str | None
    diff: str


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """What an action changed (or, for a preview, would change): a frozen record."""

    action: str
    action_id: str
    subject: str
    reason: str
    fields: tuple[FieldChange, ...]
    files: tuple[FileDiff, ...]
    commit: str | None = None
    index: IndexStats | None = None
    rebased: bool = False
    paths_after: tuple[str, ...] = ()
    #: every file the action wrote or deleted (an index update hint)
    paths_touched: tuple[str, ...] = ()
    committed: Committed | None = None

    def finish(self, repo: Path) -> None:
        """Complete a commit made with `defer_index_sync` (`finish_change`)."""
        finish_change(repo, self)

    @property
    def preview(self) -> bool:
        return self.commit is None

    @property
    def short_sha(self) -> str:
        return self.commit[:12] if self.commit else ""

    def as_dict(self) -> dict[str, object]:
        return {
            "action": self.action, "action_id": self.action_id, "subject": self.subject,
            "reason": self.reason, "commit": self.commit,
            "fields": [{"path": f.path, "field": f.field, "old": f.old, "new": f.new}
                       for f in self.fields],
            "files": [{"path": f.path, "new_path": f.new_path, "diff": f.diff} for f in self.files],
            "paths": list(self.paths_after),
        }


def finish_change(repo: Path, change: ChangeSet) -> None:
    """Sync git's own index for a commit made with `defer_index_sync` (a no-op otherwise).
    Runs git under the writer lock: call it off the GUI thread."""
    if change.committed is not None and change.committed.pending_sync:
        finish_sync(repo, change.committed)


@dataclass(frozen=True, slots=True)
class Plan:
    """An operation's decided effect, before anything is written."""

    action: str
    subject: str
    changes: tuple[FileChange, ...]
    fields: tuple[FieldChange, ...]
    moves: Mapping[str, str] = field(default_factory=dict)
    #: (token, value) pairs written `Factdesk-<token>: <value>` after the action id; values are made inert
    extra_trailers: tuple[tuple[str, str], ...] = ()

    def renamed(self, action: str) -> Plan:
        """The same plan under another action name (`relabel: …` becomes `<action>: …`)."""
        subject = self.subject.replace(f"{self.action}: ", f"{action}: ", 1)
        return dataclasses.replace(self, action=action, subject=subject)


#: what `inert` escapes: every C0/C1 control character and DEL (newlines, ESC …), the
#: Unicode line and paragraph separators, the bidirectional overrides and isolates, and
#: lone surrogates (a non-UTF-8 byte of a file name, read with `surrogateescape`: `\xNN`)
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: a reason line git or factdesk could mistake for a trailer (`Token: value`)
_TRAILER_LIKE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*:")


def inert(text: str) -> str:
    """`text` as one inert line for a commit subject or trailer value (issue 15 #2): every
    control character escaped (`\\n`, `\\x1b`, `\\u2028`), so that no value can end a line,
    start one that reads as a trailer, or drive a terminal. Idempotent."""
    def escape(m: re.Match[str]) -> str:
        ch = m.group(0)
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # (the byte surrogateescape read: as visible.SURROGATES)
            return f"\\x{code - 0xDC00:02x}"
        return _NAMED.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")

    return _UNSAFE.sub(escape, text)


def show(value: object) -> str:
    """A field value as a subject or trailer shows it (long text cut at 80 characters)."""
    if value is None:
        return "(none)"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "…"


def short(text: str, limit: int = 72) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def with_op(identity: Identity, op: str) -> Identity:
    """`ana@example.org` → `ana+relabel@example.org` (any earlier `+op` replaced)."""
    local, at, domain = identity.email.partition("@")
    return Identity(identity.name, f"{local.split('+', 1)[0]}+{op}{at}{domain}")


def unified_diff(path: str, old: bytes | None, new: bytes | None, new_path: str | None = None) -> str:
    a = old.decode("utf-8", "replace").splitlines(keepends=True) if old is not None else []
    b = new.decode("utf-8", "replace").splitlines(keepends=True) if new is not None else []
    return "".join(difflib.unified_diff(a, b, f"a/{path}" if old is not None else "/dev/null",
                                        f"b/{new_path or path}" if new is not None else "/dev/null",
                                        n=1))


def subject_for(action: str, changes: Sequence[FileChange], fields: Sequence[FieldChange]) -> str:
    """`relabel: <title> (observation → hypothesis)`, `edit: 3 facts (confidence: …)`."""
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
    olds = {show(f.old) for f in by_field[key]}
    news = {show(f.new) for f in by_field[key]}
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


def message(plan: Plan, action_id: str, reason: str) -> str:
    """The commit message: subject, reason, then one final trailer block (the only place
    `trust.decision_in` reads). Every value is one inert line; a reason that reads like a
    trailer is prefixed in the body paragraph, so that paragraph is never a trailer block."""
    reason = inert(reason)
    body = f"Reason — {reason}" if _TRAILER_LIKE.match(reason) else reason
    lines = [inert(plan.subject), "", body, ""]
    lines.append(f"Factdesk-Action: {inert(plan.action)}")
    lines.append(f"Factdesk-Action-Id: {action_id}")
    lines.extend(f"Factdesk-{inert(token)}: {inert(value)}" for token, value in plan.extra_trailers)
    for f in plan.fields:
        if f.field in ("content",):
            continue
        lines.append(f"Factdesk-Change: {f.trailer()}")
    lines.append(f"Factdesk-Reason: {reason}")
    return "\n".join(lines) + "\n"


def file_diffs(plan: Plan) -> tuple[FileDiff, ...]:
    """The plan's diffs, a move shown once, as a rename, with its new side."""
    diffs = []
    renamed = {new: old for old, new in plan.moves.items()}
    for c in plan.changes:
        if c.path in plan.moves:
            continue
        if c.path in renamed:
            source = next(x for x in plan.changes if x.path == renamed[c.path])
            text = (f"rename {renamed[c.path]} → {c.path}\n"
                    + unified_diff(renamed[c.path], source.old, c.new, new_path=c.path))
            diffs.append(FileDiff(renamed[c.path], c.path, text))
            continue
        diffs.append(FileDiff(c.path, None, unified_diff(c.path, c.old, c.new)))
    return tuple(diffs)


def run_plan(plan: Plan, reason: str, *, repo: Path, curator: Identity | None, indexer: Indexer | None,
             expected_head: str | None, preview: bool, defer_sync: bool,
             author: Identity | None = None, allow_empty: bool = False) -> ChangeSet:
    """Preview or commit `plan` (one commit, authored `curator+<action>`), then update the
    index (unless `indexer` is None) and return what changed. (`curator`: None only for a
    preview, which needs no identity.) `author`: another author than the curator (an
    accepted proposal keeps its agent's: review/decide.py); `allow_empty`: a commit that
    changes no file (a rejection, or its undo)."""
    reason = inert(" ".join(reason.split()))
    if not reason:
        raise Refused("a reason is required: say why, for the next reader of the history")
    action_id = secrets.token_hex(8)
    result = ChangeSet(plan.action, action_id, inert(plan.subject), reason, plan.fields, file_diffs(plan),
                       paths_after=tuple(c.path for c in plan.changes if c.new is not None),
                       paths_touched=tuple(c.path for c in plan.changes))
    if preview:
        return result
    assert curator is not None
    try:
        committed = commit_files(repo, list(plan.changes), message(plan, action_id, reason),
                                 author=author or with_op(curator, plan.action), committer=curator,
                                 action_id=action_id, expected_head=expected_head,
                                 defer_sync=defer_sync, allow_empty=allow_empty)
    except Failed as exc:  # the files were put back; an immutable or read-only file or
        # folder is the user's to fix, and gets its hint
        cause = exc.__cause__
        if isinstance(cause, OSError) and cause.errno in (errno.EPERM, errno.EACCES, errno.EROFS):
            raise Refused(f"{exc} — is the file or its folder read-only or immutable "
                          "(chattr +i)?", rule="write") from None
        raise
    except WriteFailed as exc:
        # (raised while the files are replaced, before the branch moves; gitwrite has put
        # the old bytes back): a read-only or immutable (`chattr +i`) file or folder
        raise Refused(f"{exc.strerror or exc} — is the file or its folder read-only or "
                      "immutable (chattr +i)? Nothing was committed", rule="write") from None
    index = None
    if indexer is not None:
        try:
            index = indexer.update(hint=list(result.paths_touched))
        except (DatabaseError, OSError, FactdeskError) as exc:  # the ref moved: committed
            committed = with_warning(committed, f"committed as {committed.sha[:12]}, but the "
                                     f"index could not be brought up to date ({exc}); the "
                                     "next command does it")
    return dataclasses.replace(result, committed=committed, commit=committed.sha,
                               rebased=committed.rebased, index=index)
