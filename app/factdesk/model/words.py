"""Small English for messages: "an observation", "1 error" / "2 errors". Pure."""

from __future__ import annotations

#: words whose first vowel is said as "you": "a user", "a unique"
_YOU = ("user", "uni", "use", "usu")


def an(word: str) -> str:
    """`word` with its indefinite article: "an observation", "a report", "a user"."""
    vowel = word[:1].lower() in "aeiou" and not word.lower().startswith(_YOU)
    return ("an " if vowel else "a ") + word


def count(n: int, noun: str) -> str:
    """`1 error`, `2 errors` (nouns whose plural adds an s)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
