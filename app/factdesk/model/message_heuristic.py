"""`message-in-memory`: a memory fact that is really an addressed message (issue 17).

Pure. A fact whose title (or, after a bare label like "Heads-up", its body's first line)
is written *to* someone — "@codex please …", "Note to claude-code: …", "codex, could you
…", "Question for ana: …" — is a communication with no claim of its own: it belongs in
the message store (`msg/`), and its fix is **move to messages**. Facts that merely name an
agent ("codex's migration PRs omit lock_timeout"), or are about messages ("Messages
between agents arrive out of order"), are claims and stay.

The cues, each one a way of addressing someone (quoted text is ignored):

    mention      the text opens with an @mention ("@codex …", "cc @codex: …"), not one that
                 names a handle ("@codex is the bot account"), or ends "/cc @codex"
    greeting     a greeting with a name ("Hey codex,", "Hi claude-code —", "Thanks codex …")
    label        "Note to X:", "Reminder for X:", "To X:", "FYI:", "FYI codex,", "Heads up
                 @x", "PSA:", "Signing off:", "Quick ask for X:", "Whoever picks this up:",
                 "… for the next session", …
    vocative     a name, then a pause, then a request or a word to them ("codex, could you
                 …", "codex — please …", "codex: your PR …", "claude-code, I left you …")
    handover     "Handing over … to X", "Passing … to X", "Over to you, X", "All yours, X"
    ping         "Pinging X about …"
    hold         a request to hold off, from the writer ("Please hold off … until I …",
                 "Don't run the backfill yet", "Do not deploy … until …, build-02"); a rule
                 with no writer or addressee in it ("Do not deploy on Fridays") is a claim
    asking       "Asking X to …"
    request      a request ("please", "can you", "let me know", …) with an addressee
                 (an @mention anywhere, a trailing ", codex?", "someone", "whoever", "team")
    sign-off     the body ends with a sign-off: "— codex", "Thanks, codex!", "Over to you,
                 codex."

Precision and recall on the held-out set (tests/fixtures/messages_heldout.yaml, written and
committed before the issue-22 tuning and never run during it) and on the issue-17 labelled
set are in docs/messages.md; the tuning set is tests/fixtures/messages_dev.yaml.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = r"@?[A-Za-z][\w.-]*"
#: words that follow "to"/"for"/a pinging verb and name no one
_NOT_A_NAME = (r"(?!(?:the|a|an|all|any|every|each|this|that|these|those|its|their|our|your|"
               r"it|them|his|her|work|main|prod|production|disk|memory)\b)")
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|`[^`\n]*`")
_MENTION_START = re.compile(
    r"^\s*(?:cc\s+)?@[A-Za-z][\w.-]*(?![\w.-])"
    r"(?!\s+(?:is|are|was|were|has|had|means|refers|stands)\b)",
    re.I)
_CC_END = re.compile(r"(?:^|\s)/?cc:?\s+(@[A-Za-z][\w.-]*)[\s.!]*$", re.I)
_GREETING = re.compile(
    rf"^\s*(?:hey|hi|hello|dear|yo|thanks|thank\s+you)\s+(?!to\b|for\b|the\b|a\b|an\b)({_NAME})",
    re.I)
_LABEL = re.compile(
    r"^\s*(?:(?:(?:quick\s+)?(?:note|message|reminder|request|question|ask|heads[- ]?up|handoff|"
    r"hand-off|hand-over|reply|ping|fyi|psa)\s+(?:to|for)\s+\S)"
    r"|(?:to|for)\s+@?[\w][\w .'-]{0,40}:"
    r"|(?:fyi|heads[- ]?up|psa|nb|signing\s+off)\s*[:!—–]"
    r"|(?:fyi|heads[- ]?up|psa)\s*,?\s+@?[A-Za-z][\w.-]*\s*[,:—–]"
    r"|(?:fyi|heads[- ]?up|ping)\s+@[A-Za-z]"
    r"|whoever\b[^:]{0,60}:)", re.I)
#: a label addressed to whoever comes next ("Status for the next session")
_NEXT = re.compile(r"\bfor\s+(?:the\s+next\s+(?:session|agent|run|shift|one)|whoever)\b", re.I)
_VOCATIVE = re.compile(
    rf"^\s*({_NAME})\s*(?:[,:—–]\s*(?:-\s*)?(?:please|pls|can|could|would|when|let|let's|you|"
    r"your|hold|stop|take|pick|ack|check|finish|rebase|review|do\s+not|don't|heads|fyi|thanks)"
    r"|[,—–]\s*(?:i|i'm|i've|i'll|we|we're))\b", re.I)  # ("Ana: I review …" is a speaker)
_HANDOVER = re.compile(
    rf"^\s*(?:(?:handing|passing|handed|passed)\s+(?:(?:off|over)\s+)?(?:[^,;:]{{0,60}}?\s)?"
    rf"to\s+{_NOT_A_NAME}({_NAME})\b"
    rf"|(?:over\s+to\s+you|all\s+yours|your\s+turn)\b[,:]?\s*({_NAME})?)", re.I)
_PING = re.compile(rf"^\s*(?:pinging|nudging|poking)\s+{_NOT_A_NAME}({_NAME})\b", re.I)
_HOLD = re.compile(
    r"^\s*(?:please\s+)?(?:hold\s+off|hold\b|don't|do\s+not|wait|stop|pause|stay\s+off|"
    r"keep\s+off|leave|sync\s+with\s+me)\b", re.I)
_WRITER = re.compile(r"\b(?:I|I'm|I've|I'll|my|me|mine)\b|\byet\b")
_TAIL_VOCATIVE = re.compile(rf",\s*({_NAME})\s*(?:[.!?]|\s[—–-]\s.*|;.*)?$")
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
#: the last line of a body that signs a message off ("— codex", "Thanks, codex!")
_SIGN_OFF = re.compile(
    rf"^\s*(?:(?:—|–|--?)\s*({_NAME})\s*\.?"
    rf"|(?:thanks|thank\s+you|cheers|regards|best|over\s+to\s+you|your\s+turn|all\s+yours)"
    rf"\s*,?\s+({_NAME})\s*[.!]*)\s*$", re.I)


@dataclass(frozen=True, slots=True)
class Addressed:
    """Why a text reads as a message: the cue and the words that show it."""

    cue: str
    evidence: str
    #: the agent it is addressed to, when the text names one
    to: str | None = None


def addressed(title: str, body: str = "") -> Addressed | None:
    """The first cue that `title` (or, after a bare label or one for whoever is next, the
    body's first line; or the body's sign-off) is an addressed message, or None for a
    claim."""
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    first = lines[0] if lines else ""
    labelled = _BARE_LABEL.match(title) or _NEXT.search(title)
    texts = [title] + ([first] if first and labelled else [])
    for text in texts:
        found = _cue(_QUOTED.sub(" ", text))
        if found is not None:
            return found
    if labelled and first:
        return Addressed("label", title.strip())
    if len(lines) > 1 and (m := _SIGN_OFF.match(_QUOTED.sub(" ", lines[-1]))):
        name = m.group(1) or m.group(2)
        return Addressed("sign-off", lines[-1], None if m.group(1) else _agent(name))
    return None


def _cue(text: str) -> Addressed | None:
    if m := _MENTION_START.match(text):
        return Addressed("mention", m.group(0).strip(), _agent(m.group(0)))
    if m := _CC_END.search(text):
        return Addressed("mention", m.group(0).strip(), _agent(m.group(1)))
    if m := _GREETING.match(text):
        return Addressed("greeting", m.group(0).strip(), _agent(m.group(1)))
    if m := _LABEL.match(text):
        return Addressed("label", m.group(0).strip(), _agent(text[m.end() - 1:]) or _label_to(text))
    if m := _VOCATIVE.match(text):
        return Addressed("vocative", m.group(0).strip(), _agent(m.group(1)))
    if m := _HANDOVER.match(text):
        name = m.group(1) or m.group(2)
        return Addressed("handover", m.group(0).strip(), _agent(name) if name else None)
    if m := _PING.match(text):
        return Addressed("ping", m.group(0).strip(), _agent(m.group(1)))
    if m := _HOLD.match(text):
        tail = _TAIL_VOCATIVE.search(text)
        if shown := (tail.group(1) if tail else None) or (
                w.group(0) if (w := _WRITER.search(text)) else None):
            return Addressed("hold", f"{m.group(0).strip()} … {shown}",
                             _agent(tail.group(1)) if tail else None)
    if m := _ASKING.match(text):
        return Addressed("asking", m.group(0).strip(), _agent(m.group(1)))
    if (r := _REQUEST.search(text)) and (a := _ADDRESSEE.search(text)):
        return Addressed("request", f"{r.group(0)} … {a.group(0).strip(' ,?!.')}",
                         _agent(a.group(0)))
    return None


_NOT_AGENTS = frozenset({"someone", "whoever", "team", "the", "self", "to", "for", "all",
                         "everyone", "agents"})

def _agent(text: str) -> str | None:
    m = re.search(r"@?([A-Za-z][\w.-]*)", text)
    if not m:
        return None
    name = m.group(1).rstrip(".-")
    return None if name.lower() in _NOT_AGENTS else name


def _label_to(text: str) -> str | None:
    m = re.search(r"\b(?:to|for)\s+(?:the\s+)?(@?[A-Za-z][\w.-]*)", text, re.I)
    return _agent(m.group(1)) if m else None
