"""`message-in-memory`: a memory fact that is really an addressed message (issue 17).

Pure. A fact whose title (or, after a bare label like "Heads-up", its body's first line)
is written *to* someone — "@codex please …", "Note to claude-code: …", "codex, could you
…", "Question for ana: …" — is a communication with no claim of its own: it belongs in
the message store (`msg/`), and its fix is **move to messages**. Facts that merely name an
agent ("codex's migration PRs omit lock_timeout"), or are about messages ("Messages
between agents arrive out of order"), are claims and stay.

The cues, each one a way of addressing someone (quoted text is ignored):

    mention      the text opens with an @mention ("@codex …", "cc @codex: …")
    greeting     a greeting with a name ("Hey codex,", "Hi claude-code —", "Thanks codex …")
    label        "Note to X:", "Reminder for X:", "Question for X:", "To X:", "For X:", …
    vocative     a name, then a pause, then a request ("codex, could you …", "codex — please …")
    asking       "Asking X to …"
    request      a request ("please", "can you", "let me know", …) with an addressee
                 (an @mention anywhere, a trailing ", codex?", "someone", "whoever", "team")

Precision and recall on the labelled set (tests/fixtures/messages_labelled.yaml, never
used for tuning) are in docs/messages.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = r"@?[A-Za-z][\w.-]*"
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|`[^`\n]*`")
_MENTION_START = re.compile(r"^\s*(?:cc\s+)?@[A-Za-z][\w.-]*", re.I)
_GREETING = re.compile(
    rf"^\s*(?:hey|hi|hello|dear|yo|thanks|thank\s+you)\s+(?!to\b|for\b|the\b|a\b|an\b)({_NAME})",
    re.I)
_LABEL = re.compile(
    r"^\s*(?:(?:note|message|reminder|request|question|heads[- ]up|handoff|hand-off|reply|ping|fyi)"
    r"\s+(?:to|for)\s+\S|(?:to|for)\s+@?[\w][\w .'-]{0,40}:)", re.I)
_VOCATIVE = re.compile(
    rf"^\s*({_NAME})\s*[,:—–]\s*(?:-\s*)?(?:please|pls|can|could|would|when|let|you|hold|stop|take|"
    r"pick|ack|check|finish|rebase|review|do\s+not|don't)\b", re.I)
_ASKING = re.compile(rf"^\s*asking\s+({_NAME})\s+to\b", re.I)
_REQUEST = re.compile(
    r"\b(?:please|pls|can\s+you|could\s+you|would\s+you|can\s+someone|could\s+someone|"
    r"let\s+me\s+know|lmk|when\s+you\s+get\s+a\s+chance|shout\s+if|let's)\b", re.I)
_ADDRESSEE = re.compile(
    r"(?<![\w.])@[A-Za-z][\w.-]*|,\s*@?[A-Za-z][\w-]*\s*[?!.]?\s*$|\b(?:someone|whoever|team)\b",
    re.I)
#: a title that is only a label, its message in the body ("Heads-up", "Handoff note")
_BARE_LABEL = re.compile(
    r"^\s*(?:heads[- ]up|ping|handoff(?:\s+note)?|hand-off|fyi|note|reminder|request|question)"
    r"\s*[:!.]?\s*$", re.I)


@dataclass(frozen=True, slots=True)
class Addressed:
    """Why a text reads as a message: the cue and the words that show it."""

    cue: str
    evidence: str
    #: the agent it is addressed to, when the text names one
    to: str | None = None


def addressed(title: str, body: str = "") -> Addressed | None:
    """The first cue that `title` (or, after a bare label, the body's first line) is an
    addressed message, or None for a claim."""
    first = next((line.strip() for line in body.splitlines() if line.strip()), "")
    texts = [title] + ([first] if first and _BARE_LABEL.match(title) else [])
    for text in texts:
        found = _cue(_QUOTED.sub(" ", text))
        if found is not None:
            return found
    return None


def _cue(text: str) -> Addressed | None:
    if m := _MENTION_START.match(text):
        return Addressed("mention", m.group(0).strip(), _agent(m.group(0)))
    if m := _GREETING.match(text):
        return Addressed("greeting", m.group(0).strip(), _agent(m.group(1)))
    if m := _LABEL.match(text):
        return Addressed("label", m.group(0).strip(), _agent(text[m.end() - 1:]) or _label_to(text))
    if m := _VOCATIVE.match(text):
        return Addressed("vocative", m.group(0).strip(), _agent(m.group(1)))
    if m := _ASKING.match(text):
        return Addressed("asking", m.group(0).strip(), _agent(m.group(1)))
    if (r := _REQUEST.search(text)) and (a := _ADDRESSEE.search(text)):
        return Addressed("request", f"{r.group(0)} … {a.group(0).strip(' ,?!.')}",
                         _agent(a.group(0)))
    return None


_NOT_AGENTS = frozenset({"someone", "whoever", "team", "the", "self", "to", "for"})


def _agent(text: str) -> str | None:
    m = re.search(r"@?([A-Za-z][\w.-]*)", text)
    if not m:
        return None
    name = m.group(1).rstrip(".-")
    return None if name.lower() in _NOT_AGENTS else name


def _label_to(text: str) -> str | None:
    m = re.search(r"\b(?:to|for)\s+(?:the\s+)?(@?[A-Za-z][\w.-]*)", text, re.I)
    return _agent(m.group(1)) if m else None
