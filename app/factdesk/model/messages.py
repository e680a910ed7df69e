"""Agent messages (FORMAT.md §14): addressed communications kept apart from memory.

Pure: the message record, the delivery states, the file-name rule and the threads the
Messages view groups them in. Reading files is `corpus.messages`; the index of messages is
`index.messages`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

#: the folder of the message store, beside `kb/` (knomit never reads it)
MSG_ROOT = "msg"
#: the delivery states, in the order a message passes through them
DELIVERY_STATES: tuple[str, ...] = ("queued", "delivered", "read", "acknowledged")
#: the keys every message must have
REQUIRED_KEYS: tuple[str, ...] = ("from", "to", "sent", "delivery")
#: the keys factdesk reads, in the order it writes them
MESSAGE_KEYS: tuple[str, ...] = ("from", "to", "sent", "delivery", "context_explanation",
                                 "referenced_memory_ids", "in_reply_to")
#: `msg/<yyyy>/<mm>/<8 hex>.md`
PATH_RE = re.compile(r"^msg/(\d{4})/(0[1-9]|1[0-2])/([0-9a-f]{8})\.md$")
#: RFC 3339 (a `T` or a space between date and time; `Z` or an offset)
SENT_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


@dataclass(frozen=True, slots=True)
class Message:
    """One message file, frozen. `path` is repo-relative POSIX (`msg/2026/11/1a2b3c4d.md`)."""

    path: str
    sender: str
    to: tuple[str, ...]
    sent: str
    delivery: str
    body: str = ""
    context_explanation: str | None = None
    referenced_memory_ids: tuple[str, ...] = ()
    in_reply_to: str | None = None
    #: keys factdesk does not read, as plain values (kept byte for byte in the file)
    extra: Mapping[str, object] = field(default_factory=dict)
    #: 1-based line of each frontmatter key in the file
    key_lines: Mapping[str, int] = field(default_factory=dict)

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, 1)

    @property
    def first_line(self) -> str:
        """The body's first non-empty line (a list's or a heading's marker removed)."""
        for line in self.body.splitlines():
            text = line.strip().lstrip("#>-* ").strip()
            if text:
                return text
        return ""

    def as_dict(self) -> dict[str, object]:
        """The JSON shape of `factdesk messages` (issue 17)."""
        return {"path": self.path, "from": self.sender, "to": list(self.to), "sent": self.sent,
                "delivery": self.delivery, "context_explanation": self.context_explanation,
                "referenced_memory_ids": list(self.referenced_memory_ids),
                "in_reply_to": self.in_reply_to}


def message_name(sender: str, sent: str, body: str) -> str:
    """The 8 hex a message file is named by: the first 8 hex of the SHA-256 of `from`,
    `sent` (as written) and the body (stripped), joined by newlines (docs/messages.md)."""
    digest = hashlib.sha256(f"{sender}\n{sent}\n{body.strip()}".encode()).hexdigest()
    return digest[:8]


def message_path(sender: str, sent: str, body: str) -> str:
    """`msg/<yyyy>/<mm>/<8 hex>.md` for a message sent at `sent` (RFC 3339)."""
    m = SENT_RE.match(sent)
    if not m:
        raise ValueError(f"sent {sent!r} is not an RFC 3339 time")
    return f"msg/{m.group(1)}/{m.group(2)}/{message_name(sender, sent, body)}.md"


def participants(message: Message) -> frozenset[str]:
    """The (unordered) set of agents a message is between: its sender and recipients."""
    return frozenset((message.sender, *message.to))


@dataclass(frozen=True, slots=True)
class Thread:
    """An `in_reply_to` chain: its root's path and the messages, oldest first."""

    root: str
    pair: frozenset[str]
    messages: tuple[Message, ...]

    @property
    def last_delivery(self) -> str:
        return self.messages[-1].delivery


def threads(messages: Iterable[Message]) -> dict[frozenset[str], list[Thread]]:
    """Messages grouped by the unordered set of agents they are between, then into
    `in_reply_to` chains (a reply to an unknown message starts its own chain), each
    chain oldest first, chains newest last. What the Messages tab shows."""
    by_path = {m.path: m for m in messages}

    def root_of(m: Message) -> str:
        seen = {m.path}
        while m.in_reply_to in by_path and m.in_reply_to not in seen:
            m = by_path[m.in_reply_to]
            seen.add(m.path)
        return m.path

    chains: dict[str, list[Message]] = {}
    for m in by_path.values():
        chains.setdefault(root_of(m), []).append(m)
    out: dict[frozenset[str], list[Thread]] = {}
    for root, chain in chains.items():
        chain.sort(key=lambda m: (m.sent, m.path))
        pair = participants(by_path[root])
        out.setdefault(pair, []).append(Thread(root, pair, tuple(chain)))
    for group in out.values():
        group.sort(key=lambda t: (t.messages[-1].sent, t.root))
    return out
