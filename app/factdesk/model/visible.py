"""Corpus text made safe to show: characters that act instead of being seen become their
code points (`⟨U+202E⟩`). Pure functions; the raw text is never changed, and search still
matches it. The GUI shows every label through `visible`, the CLI's text output through
`for_terminal` (RELIABILITY A23, I5: content is inert)."""

from __future__ import annotations


def _escapes(codes: object) -> dict[int, str]:
    return {code: f"⟨U+{code:04X}⟩" for code in codes}  # type: ignore[attr-defined]


#: characters that change how text around them reads without being seen ("Trojan
#: source"): bidirectional overrides and isolates, and zero-width spaces. (Zero-width
#: joiners are left alone: emoji sequences and several scripts need them; so are the
#: implicit marks U+200E, U+200F and U+061C, which Hebrew and Arabic text uses and which
#: do not reorder what is around them.)
INVISIBLE = _escapes((*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200B, 0x2060, 0xFEFF,
                      0x180E))

#: lone surrogates: a file name that is not UTF-8 (git's bytes read with `surrogateescape`)
#: shows each such byte as `\xNN`; any other lone surrogate as its code point. No UTF-8
#: output (a terminal, JSON) can carry them as they are (issue 22)
SURROGATES = {c: (f"\\x{c - 0xDC00:02x}" if 0xDC80 <= c <= 0xDCFF else f"⟨U+{c:04X}⟩")
              for c in range(0xD800, 0xE000)}
INVISIBLE |= SURROGATES

#: and for a terminal, every control character but the newline and the tab: an escape
#: sequence in a title could retitle the window, clear the screen or fake output
TERMINAL = INVISIBLE | _escapes(c for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))
                                if c not in (0x09, 0x0A))


def visible(text: str) -> str:
    """`text` with each invisible control shown as its code point."""
    return text.translate(INVISIBLE)


def for_terminal(text: str) -> str:
    """`text` as a terminal may print it: invisible and control characters shown as their
    code points, lines (CRLF ones too) and tabs kept; a lone CR is shown."""
    return text.replace("\r\n", "\n").translate(TERMINAL)


def utf8_safe(text: str) -> str:
    """`text` as valid UTF-8 can carry it: each lone surrogate escaped (`SURROGATES`: a
    non-UTF-8 byte of a file name as `\\xNN`), everything else as it is."""
    return text.translate(SURROGATES)
