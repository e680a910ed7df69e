"""What an agent's write is checked against before anything else (issue 26): its input
(text, lines, lists, limits, a write rate) and the rules' findings turned into a verdict —
the harmless warnings let through, every other finding a refusal whose text starts with
the rule's code in brackets and says how to write it legally (docs/mcp.md)."""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from factdesk.errors import FactdeskError
from factdesk.model.enums import FactType, Kind, Origin
from factdesk.model.enums import Severity as _Severity
from factdesk.model.fact import Problem

#: warnings that do not refuse a write: an 8-hex name another folder has too (knomit's names
#: are not unique), a citation of a retracted fact (a settlement's link), a recorded weight
ALLOWED = frozenset({"dup_id", "ref-retracted", "R2", "sources-zero"})

PRAGMATIC_TYPES = frozenset({FactType.POLICY.value, FactType.HEURISTIC.value})

ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
SEGMENT_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


class AgentWriteRefused(FactdeskError):
    """A write refused, nothing written; `str()` starts with `[code]`."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(f"[{code}] {text}")
        self.code = code


@dataclass(frozen=True, slots=True)
class Limits:
    title_chars: int = 200
    body_bytes: int = 64 * 1024
    list_items: int = 64
    item_chars: int = 512
    settlement_chars: int = 2000
    #: writes per agent per minute (in memory, per server process)
    per_minute: int = 600



class RateLimit:
    """At most `per_minute` writes in any 60 s (a sliding window, in memory)."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self._times: deque[float] = deque()
        self._lock = threading.Lock()

    def take(self) -> None:
        with self._lock:
            now = self.clock()
            while self._times and now - self._times[0] >= 60:
                self._times.popleft()
            if len(self._times) >= self.per_minute:
                wait = 60 - (now - self._times[0])
                raise AgentWriteRefused("rate", f"more than {self.per_minute} writes in a "
                                        f"minute: wait {wait:.0f} s and write again")
            self._times.append(now)



# -- what refuses, and how to write it legally ----------------------------------------------------

_ADVICE = {
    "A1": "write what you can vouch for: as a report (claim_type report, \"X reports Y\") or "
          "about a subject you may speak for; the claimant is always the server's agent",
    "R1": "a synthesis may cite only epistemic facts that are no hypotheses: cite the "
          "observations, or record it as a hypothesis with a settlement",
    "R3": "a discovered fact may not cite a discovered fact: cite the facts it was "
          "discovered from, or write it as authored",
    "E1": "use one of the values named",
    "origin": "omit origin: the type's default applies",
    "ontology-path": "use a top-level topic of .knomit/ontology.yaml",
    "ontology-rule": "write it as the topic's rule asks, or under another topic",
    "ref-broken": "cite kb/… paths of facts that exist (on the curated branch or your own)",
    "ref-malformed": "cite kb/… paths of facts, or URLs",
    "ref-self": "a fact may not cite itself",
}


def verdict(problems: Sequence[Problem]) -> list[str]:
    """The warnings that let a write through, or AgentWriteRefused naming each finding that
    refuses it, the first one's code in brackets."""
    blocking = [p for p in problems if _blocks(p)]
    if not blocking:
        return [f"[{p.code}] {p.message}" for p in problems]
    texts = [_refusal(p) for p in blocking]
    first = blocking[0]
    more = "".join(f"; also [{p.code}] {t}" for p, t in zip(blocking[1:], texts[1:], strict=True))
    raise AgentWriteRefused(first.code, texts[0] + more)


def _blocks(p: Problem) -> bool:
    if p.severity == _Severity.ERROR:
        return True
    if p.code in ALLOWED:
        return False
    # an unregistered claimant is allowed to write (as unverified)
    return not (p.code == "A1" and "not in the agent registry" in p.message)


def _refusal(p: Problem) -> str:
    if p.code == "H1" and "no settlement criterion" in p.message:
        return ("a hypothesis needs a settlement criterion: record it with settle_by "
                "(YYYY-MM-DD) and settlement (the threshold or observable that settles it)")
    if p.code == "H1":
        return f"{p.message}: give a settle_by date that is not past"
    advice = _ADVICE.get(p.code) or _ADVICE.get(p.code.split("-")[0]) or ""
    return f"{p.message}: {advice}" if advice else p.message


# -- input ---------------------------------------------------------------------------------------


def text_arg(name: str, value: object, *, multiline: bool = False) -> str:
    if not isinstance(value, str):
        raise AgentWriteRefused("input", f"{name} must be text, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise AgentWriteRefused("input", f"{name} holds a lone surrogate at character "
                                f"{exc.start + 1}: it is not text; send valid Unicode") from None
    bad = next((c for c in value if (ord(c) < 32 and not (multiline and c in "\n\t"))
                or c in "\x7f\u2028\u2029"), None)
    if bad is not None or (multiline and "\r" in value):
        raise AgentWriteRefused("input", f"{name} holds a control character "
                                f"(U+{ord(bad or chr(13)):04X}): "
                                + ("line breaks are \\n" if multiline else "one line of text"))
    return value


def line_arg(name: str, value: object, limit: int) -> str:
    text = text_arg(name, value).strip()
    if not text:
        raise AgentWriteRefused("input", f"{name} is empty")
    if len(text) > limit:
        raise AgentWriteRefused("input", f"{name} is {len(text)} characters; at most {limit}")
    return text


def optional_line(name: str, value: object, limit: int) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return line_arg(name, value, limit)


def items_arg(name: str, value: object, lim: Limits) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise AgentWriteRefused("input", f"{name} must be a list of text, got "
                                f"{type(value).__name__}")
    if len(value) > lim.list_items:
        raise AgentWriteRefused("input", f"{name} has {len(value)} entries; at most "
                                f"{lim.list_items}")
    return [line_arg(f"{name}[{i}]", v, lim.item_chars) for i, v in enumerate(value)]


def type_and_kind(type_: object, kind: object) -> tuple[str, str]:
    """A knomit type and the kind that goes with it (derived from the type when absent)."""
    typed = line_arg("type", type_, 40)
    kinded = optional_line("kind", kind, 40)
    if typed not in {t.value for t in FactType}:
        raise AgentWriteRefused("type", f"unknown type {typed!r}: one of "
                                f"{', '.join(t.value for t in FactType)}")
    if kinded is None:
        kinded = Kind.PRAGMATIC.value if typed in PRAGMATIC_TYPES else Kind.EPISTEMIC.value
    if kinded not in {k.value for k in Kind} or \
            (kinded == Kind.PRAGMATIC) != (typed in PRAGMATIC_TYPES):
        raise AgentWriteRefused("type", f"type {typed!r} does not go with kind {kinded!r}: "
                                "policy and heuristic are pragmatic, every other type "
                                "epistemic")
    return typed, kinded


def origin_arg(origin: object) -> str | None:
    found = optional_line("origin", origin, 40)
    if found is not None and found not in {o.value for o in Origin}:
        raise AgentWriteRefused("origin", f"unknown origin {found!r}: one of authored, "
                                "distilled, discovered (or omit it)")
    return found


def confidence_arg(confidence: object) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) \
            or not 0 <= confidence <= 1:
        raise AgentWriteRefused("input", f"confidence must be a number from 0 to 1, got "
                                f"{confidence!r}")
    return float(confidence)


def fact_path_arg(name: str, value: object) -> str:
    """A `kb/….md` path of a fact, refused in words when it is anything else (another
    folder, `..`, an absolute path, a URL)."""
    path = line_arg(name, value, 512)
    parts = path.split("/")
    if parts[0] != "kb" or len(parts) < 3 or not path.endswith(".md") or \
            {"", ".", ".."} & set(parts) or "\\" in path:
        raise AgentWriteRefused("input", f"{name} {path!r} is no fact path: give the kb/….md "
                                "path search and show return")
    return path
