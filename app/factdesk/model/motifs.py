"""knomit's `motifs` (its motif branch, FORMAT.md §2.8): at most 3 per fact, each a 2–4
word lowercase kebab-case phrase, no duplicates. On read, what would be refused on write
is dropped (knomit's `DropInvalidMotifs`), never failing the fact. Pure."""

from __future__ import annotations

import re

MAX_MOTIFS = 3
_WORD = re.compile(r"[a-z0-9]+")


def valid_motif(motif: str) -> bool:
    """A 2–4 word kebab-case phrase of lowercase letters and digits."""
    words = motif.split("-")
    return 2 <= len(words) <= 4 and all(_WORD.fullmatch(w) for w in words)


def drop_invalid_motifs(motifs: tuple[str, ...]) -> tuple[str, ...]:
    """The motifs knomit keeps on read, in order: well-formed, first of duplicates, at most
    `MAX_MOTIFS`."""
    out: list[str] = []
    for motif in motifs:
        if valid_motif(motif) and motif not in out:
            out.append(motif)
            if len(out) == MAX_MOTIFS:
                break
    return tuple(out)
