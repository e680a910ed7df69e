"""Reading and writing message files (FORMAT.md §14): `msg/<yyyy>/<mm>/<8 hex>.md`.

The same YAML rules as facts (`yamlv3`: yaml.v3 semantics, unknown keys kept), the same
hostile-file rules (`fsio.read_regular`), and the minimal-diff writer for edits
(`writer.edit_frontmatter`). Findings use the checker's `Problem` with these codes:

    M1  a required key (from, to, sent, delivery) is missing or empty        error
    M2  an unknown delivery state                                           error
    M3  a referenced fact that does not exist                               error
    M4  a reply to an unknown message                                       error
    M5  a bad file name (not msg/<yyyy>/<mm>/<8 hex>.md)                    error
    M6  unreadable: encoding, frontmatter, YAML, or a key of the wrong shape error
    M7  `sent` is not an RFC 3339 time                                      error
    M8  the name is not the hash of from, sent and body (or the folder is
        not the month of `sent`)                                            warning
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from factdesk.corpus import yamlv3
from factdesk.corpus.codec import MAX_BYTES, decode_text
from factdesk.corpus.writer import render_value
from factdesk.fsio import NotRegular, TooLarge, read_regular
from factdesk.model.enums import Severity
from factdesk.model.fact import Problem
from factdesk.model.messages import (
    DELIVERY_STATES,
    MESSAGE_KEYS,
    MSG_ROOT,
    PATH_RE,
    REQUIRED_KEYS,
    SENT_RE,
    Message,
    message_name,
)

CODES: dict[str, str] = {
    "M1": "missing required key", "M2": "unknown delivery state", "M3": "reference to a missing fact",
    "M4": "reply to an unknown message", "M5": "bad file name", "M6": "unreadable message",
    "M7": "sent is not an RFC 3339 time", "M8": "name does not match the content",
}


@dataclass(frozen=True, slots=True)
class MessageOutcome:
    """One file read as a message: the message (None when unreadable) and its findings."""

    path: str
    message: Message | None
    problems: tuple[Problem, ...] = ()
    #: the body text even of an unreadable file (for search), else ""
    text: str = ""


def _problem(path: str, line: int, code: str, message: str,
             severity: Severity = Severity.ERROR) -> Problem:
    return Problem(path, line, code, severity, message)


def parse_message(path: str, data: bytes) -> MessageOutcome:
    """Parse one message file's bytes (`path` repo-relative POSIX). File-local findings
    only; `cross_check` adds those that need the other files (M3, M4)."""
    problems: list[Problem] = []
    if not PATH_RE.match(path):
        problems.append(_problem(path, 1, "M5", "a message file is named msg/<yyyy>/<mm>/<8 hex>.md "
                                 "(lower-case hex)"))
    if len(data) > MAX_BYTES:
        return MessageOutcome(path, None, (*problems, _problem(
            path, 1, "M6", f"{len(data):,} bytes: larger than the {MAX_BYTES:,} a message may be")))
    text, _code, why = decode_text(data)
    if text is None:
        return MessageOutcome(path, None, (*problems, _problem(path, 1, "M6", why)))
    text = text.replace("\r\n", "\n")
    if not text.startswith("---\n"):
        return MessageOutcome(path, None, (*problems, _problem(
            path, 1, "M6", "missing opening frontmatter delimiter")), text)
    end = text.find("\n---\n", 3)
    if end == 3:
        end = text.find("\n---\n", 4)
    if end < 0 and text.endswith("\n---"):
        end = len(text) - 4
    if end < 0:
        return MessageOutcome(path, None, (*problems, _problem(
            path, 1, "M6", "missing closing frontmatter delimiter")), text)
    front, body = text[4 : end + 1], text[end + 5 :].strip()
    try:
        entries = yamlv3.compose_mapping(front)
    except yamlv3.YamlError as exc:
        return MessageOutcome(path, None, (*problems, _problem(
            path, exc.line + 1, "M6", exc.message)), body)
    lines = {k: e.line + 1 for k, e in entries.items()}
    values: dict[str, object] = {}
    for key in MESSAGE_KEYS:
        entry = entries.get(key)
        if entry is None:
            continue
        try:
            if key in ("to", "referenced_memory_ids"):
                if isinstance(entry.value, yamlv3.Scalar) and not entry.value.is_null:
                    one = yamlv3.as_string(entry.value, key)
                    values[key] = (one,) if one else ()
                else:
                    values[key] = yamlv3.as_string_list(entry.value, key)
            else:
                values[key] = yamlv3.as_string(entry.value, key)
        except yamlv3.FieldError as exc:
            problems.append(_problem(path, lines[key], "M6", exc.message))
    for key in REQUIRED_KEYS:
        if not values.get(key):
            problems.append(_problem(path, lines.get(key, 1), "M1",
                                     f"{key} is required" + (" (it is empty)" if key in entries else "")))
    delivery = str(values.get("delivery") or "")
    if delivery and delivery not in DELIVERY_STATES:
        problems.append(_problem(path, lines["delivery"], "M2",
                                 f"delivery {delivery!r} is not one of {', '.join(DELIVERY_STATES)}"))
    sent = str(values.get("sent") or "")
    if sent and not _rfc3339(sent):
        problems.append(_problem(path, lines["sent"], "M7",
                                 f"sent {sent!r} is not an RFC 3339 time (2026-11-02T09:14:00Z)"))
    sender = str(values.get("from") or "")
    m = PATH_RE.match(path)
    if m and sender and sent and _rfc3339(sent):
        want = message_name(sender, sent, body)
        if m.group(3) != want:
            problems.append(_problem(path, 1, "M8", f"the name is not the hash of from, sent and "
                                     f"body ({want}.md); fine for a hand-written message",
                                     Severity.WARNING))
        elif (m.group(1), m.group(2)) != (sent[:4], sent[5:7]):
            problems.append(_problem(path, lines["sent"], "M8",
                                     f"sent {sent} is not in the folder's month", Severity.WARNING))
    extra = {k: yamlv3.plain_value(e.value) for k, e in entries.items() if k not in MESSAGE_KEYS}
    message = Message(
        path=path, sender=sender, to=tuple(values.get("to") or ()),  # type: ignore[arg-type]
        sent=sent, delivery=delivery, body=body,
        context_explanation=values.get("context_explanation"),  # type: ignore[arg-type]
        referenced_memory_ids=tuple(values.get("referenced_memory_ids") or ()),  # type: ignore[arg-type]
        in_reply_to=values.get("in_reply_to"),  # type: ignore[arg-type]
        extra=extra, key_lines=lines)
    return MessageOutcome(path, message, tuple(problems), body)


def _rfc3339(text: str) -> bool:
    if not SENT_RE.match(text):
        return False
    try:
        datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return True


def cross_check(messages: Iterable[Message], fact_exists: Mapping[str, object] | set[str],
                message_paths: set[str]) -> list[Problem]:
    """The findings that need other files: a referenced fact that does not exist (M3), a
    reply to a message that does not exist (M4)."""
    out = []
    for m in messages:
        for ref in m.referenced_memory_ids:
            if ref not in fact_exists:
                out.append(_problem(m.path, m.line_of("referenced_memory_ids"), "M3",
                                    f"references {ref}, which is no fact of kb/"))
        if m.in_reply_to and m.in_reply_to not in message_paths:
            out.append(_problem(m.path, m.line_of("in_reply_to"), "M4",
                                f"in reply to {m.in_reply_to}, which is no message of msg/"))
    return out


# -- the files -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Seen:
    """A file under msg/ as the stat comparison sees it."""

    path: str
    size: int
    mtime_ns: int


def scan(repo: Path) -> Iterator[Seen]:
    """Every `.md` entry under `msg/` (folders that are links are never followed).
    (Strings, not `Path`s: this runs before every read, over every message.)"""
    root = repo / MSG_ROOT
    if not root.is_dir() or root.is_symlink():
        return
    stack = [(str(root), MSG_ROOT)]
    while stack:
        folder, rel = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if not entry.name.startswith("."):
                    stack.append((entry.path, f"{rel}/{entry.name}"))
            elif entry.name.endswith(".md"):
                st = entry.stat(follow_symlinks=False)
                # a link, a FIFO or a device named .md is yielded too (never opened here):
                # `read_message` reports it (M6) without following or blocking
                size = st.st_size if entry.is_file(follow_symlinks=False) else -1
                yield Seen(f"{rel}/{entry.name}", size, st.st_mtime_ns)


def read_message(repo: Path, rel: str) -> MessageOutcome:
    """Read and parse one message file; a FIFO, a device or a huge file is a finding."""
    try:
        data = read_regular(repo / rel, limit=MAX_BYTES + 1)
    except (NotRegular, TooLarge, OSError) as exc:
        return MessageOutcome(rel, None, (_problem(rel, 1, "M6", f"cannot be read: {exc}"),))
    return parse_message(rel, data)


def serialize_message(fields: Mapping[str, object], body: str) -> bytes:
    """A new message file: the known keys in their order, then any others; lists in flow
    style, strings quoted only where YAML needs it (`writer.render_value`)."""
    lines = ["---"]
    order = [k for k in MESSAGE_KEYS if k in fields] + [k for k in fields if k not in MESSAGE_KEYS]
    for key in order:
        value = fields[key]
        if value is None or value == () or value == []:
            continue
        if key == "sent":  # a timestamp: written plain, as agents write it
            lines.append(f"sent: {value}")
            continue
        lines.append(f"{key}: {render_value(key, value)}")  # type: ignore[arg-type]
    lines.append("---")
    text = "\n".join(lines) + "\n"
    if body.strip():
        text += body.strip() + "\n"
    return text.encode("utf-8")


def fields_of(message: Message) -> dict[str, object]:
    """A message's keys as `serialize_message` takes them (unknown keys left out)."""
    return {"from": message.sender, "to": list(message.to), "sent": message.sent,
            "delivery": message.delivery, "context_explanation": message.context_explanation,
            "referenced_memory_ids": list(message.referenced_memory_ids),
            "in_reply_to": message.in_reply_to}


__all__ = ["CODES", "MessageOutcome", "Seen", "cross_check", "fields_of", "parse_message",
           "read_message", "scan", "serialize_message"]
