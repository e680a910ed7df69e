"""Write facts back with minimal diffs, and new facts in knomit's canonical form (§2.6).

`edit_frontmatter` changes only the spans of the edited keys: comments, key order,
quoting, unknown keys, a BOM and CRLF line endings survive (RELIABILITY I2, A07, A08,
A21, A22). Writing with no edits gives back the input bytes exactly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal

from factdesk.corpus import yamlv3
from factdesk.corpus.codec import BOM, GO_SPACE, go_trim_space
from factdesk.model.fact import ENVELOPE_KEYS, KNOMIT_KEYS

#: Canonical key order: knomit's nine (and its newer keys), then factdesk's envelope.
KEY_ORDER: tuple[str, ...] = KNOMIT_KEYS + ENVELOPE_KEYS
FieldValue = str | int | float | Sequence[str] | Mapping[str, object] | None

_INDICATORS = tuple("#&*!|>'\"%@`")


class WriteRefused(Exception):
    """The edit cannot be made without changing bytes we did not mean to change."""


def go_g(value: float) -> str:
    """Go's `%g` (shortest representation), as knomit writes numbers."""
    if value == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(float(value))).normalize().as_tuple()
    assert isinstance(exponent, int)
    nd = len(digits)
    dp = nd + exponent
    exp = dp - 1
    text = "".join(str(d) for d in digits)
    if exp < -4 or exp >= 6:  # strconv: shortest %g switches to %e at exponent 6
        mant = text[0] + ("." + text[1:] if nd > 1 else "")
        out = f"{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    elif dp <= 0:
        out = "0." + "0" * (-dp) + text
    elif dp >= nd:
        out = text + "0" * (dp - nd)
    else:
        out = text[:dp] + "." + text[dp:]
    return ("-" if sign else "") + out


def render_item(item: str) -> str:
    """One string in a flow sequence, quoted exactly as yaml.v3 would (FORMAT.md §2.6): double
    quotes when the plain text would resolve to another type (yaml.v3's `resolve`: null,
    booleans, numbers, timestamps; YAML 1.1's `yes`/`on`/`y` and `<<` stay plain), single
    quotes when the emitter cannot write it plain."""
    if any(ch in item for ch in "\n\t\r") or not item.isprintable():
        escaped = item.replace("\\", "\\\\").replace('"', '\\"')
        escaped = escaped.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
        return f'"{escaped}"'
    if yamlv3.resolve(item)[0] != "!!str":
        return f'"{item}"'
    needs_single = (
        any(ch in item for ch in ",[]{}?:")
        or item.startswith(_INDICATORS)
        or item.startswith("- ")
        or item != item.strip()
        or " #" in item
    )
    if needs_single:
        return "'" + item.replace("'", "''") + "'"
    return item


def _render_flow(value: object) -> str:
    """Any value of an unknown key (text, lists, maps: `codec`'s `plain_value`) in flow
    style, as yaml.v3 writes it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_g(value)
    if isinstance(value, str):
        return render_item(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{render_item(str(k))}: {_render_flow(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_render_flow(v) for v in value) + "]"
    raise TypeError(f"cannot write a {type(value).__name__} as a frontmatter value")


def render_value(key: str, value: FieldValue) -> str:
    """The text after `key: ` for a canonical value."""
    if isinstance(value, bool):
        raise TypeError(f"{key}: booleans are not fact values")
    if isinstance(value, int) and key == "sources":
        return str(value)
    if isinstance(value, (int, float)):
        return go_g(float(value))
    if isinstance(value, str):
        if key == "settle_by" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return value
        return render_item(value)
    if value is None:
        raise TypeError("None means delete the key")
    if isinstance(value, Mapping):  # (an unknown key's map: was written as its keys' list)
        return _render_flow(value)
    return "[" + ", ".join(_render_flow(v) for v in value) + "]"


def edit_frontmatter(data: bytes, changes: Mapping[str, FieldValue]) -> bytes:
    """Apply `{key: new value or None to delete}` to a fact file's bytes, surgically."""
    bom = data.startswith(BOM)
    text = _decode(data[len(BOM):] if bom else data)
    crlf = "\r\n" in text
    if crlf:
        if "\r" in text.replace("\r\n", "") or "\n" in text.replace("\r\n", ""):
            raise WriteRefused("mixed line endings: the edit could not keep them")
        text = text.replace("\r\n", "\n")
    elif "\r" in text:
        raise WriteRefused("lone CR line endings: the edit could not keep them")
    if not text.startswith("---\n"):
        raise WriteRefused("no frontmatter to edit")
    end = text.find("\n---\n", 3)
    if end == 3:
        end = text.find("\n---\n", 4)
    if end < 0:
        raise WriteRefused("unterminated frontmatter")
    front = text[4 : end + 1]
    entries = yamlv3.compose_document(front)[0]  # (a fact's frontmatter, as knomit reads it)
    edits: list[tuple[int, int, str]] = []
    for key, value in changes.items():
        entry = entries.get(key)
        if entry is not None and entry.shared:
            raise WriteRefused(f"{key} is shared through a YAML anchor, alias or merge key: "
                               "an edit would change more than this key (edit it by hand)")
        if entry is not None:
            line_start = front.rfind("\n", 0, entry.key_start) + 1
            value_end = _trim_end(front, entry.value_end)
            line_end = front.find("\n", value_end)
            line_end = len(front) if line_end < 0 else line_end + 1
            if value is None:
                edits.append((line_start, line_end, ""))
            elif entry.flow:
                edits.append((entry.value_start, value_end, render_value(key, value)))
            else:
                colon = front.index(":", entry.key_start) + 1
                edits.append((colon, value_end, " " + render_value(key, value)))
        elif value is not None:
            pos = _insert_position(front, entries, key)
            edits.append((pos, pos, f"{key}: {render_value(key, value)}\n"))
    for start, stop, new in sorted(edits, reverse=True):
        front = front[:start] + new + front[stop:]
    out = "---\n" + front + text[end + 1 :]
    if crlf:
        out = out.replace("\n", "\r\n")
    encoded = out.encode("utf-8")
    return BOM + encoded if bom else encoded


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WriteRefused(f"the file is not UTF-8 (byte {exc.start}): fix it first") from None


def _trim_end(front: str, index: int) -> int:
    while index > 0 and front[index - 1] in " \n":
        index -= 1
    return index


def _insert_position(front: str, entries: Mapping[str, yamlv3.Entry], key: str) -> int:
    """Where a new key goes: after the nearest present key that precedes it canonically."""
    order = {k: i for i, k in enumerate(KEY_ORDER)}
    rank = order.get(key, len(KEY_ORDER))
    before = [e for k, e in entries.items() if order.get(k, len(KEY_ORDER)) <= rank]
    if not before:
        return 0
    last = max(before, key=lambda e: e.value_end)
    value_end = _trim_end(front, last.value_end)
    line_end = front.find("\n", value_end)
    return len(front) if line_end < 0 else line_end + 1


def serialize_fact(fields: Mapping[str, FieldValue], title: str, body: str) -> bytes:
    """A new fact in knomit's canonical form: fixed key order, flow lists, `%g` numbers."""
    if "\n" in title or not go_trim_space(title):
        raise WriteRefused("a title must be one non-empty line")
    lines = ["---"]
    for key in KEY_ORDER:
        value = fields.get(key)
        if value is None:
            continue
        if key == "kind" and value == "epistemic":
            continue
        if key == "evidence_weight" and not (isinstance(value, (int, float)) and value > 0):
            continue
        if key in ("motifs",) and not value:
            continue
        lines.append(f"{key}: {render_value(key, value)}")
    extra = [k for k in fields if k not in KEY_ORDER]
    for key in extra:
        lines.append(f"{key}: {render_value(key, fields[key])}")
    lines.append("---")
    lines.append(f"# {go_trim_space(title)}")
    text = "\n".join(lines) + "\n"
    if go_trim_space(body):
        text += "\n" + go_trim_space(body) + "\n"
    return text.encode("utf-8")


def edit_text(data: bytes, *, title: str | None = None, body: str | None = None) -> bytes:
    """Replace the H1 title line and/or the body after it, keeping the frontmatter bytes,
    the BOM and the line endings exactly."""
    if title is not None and ("\n" in title or "\r" in title or not go_trim_space(title)):
        raise WriteRefused("a title must be one non-empty line")
    bom = data.startswith(BOM)
    text = _decode(data[len(BOM):] if bom else data)
    crlf = "\r\n" in text
    if crlf:
        text = text.replace("\r\n", "\n")
    if not text.startswith("---\n"):
        raise WriteRefused("no frontmatter: the title cannot be located")
    end = text.find("\n---\n", 3)
    if end < 0:
        raise WriteRefused("unterminated frontmatter")
    head, rest = text[: end + 5], text[end + 5 :]
    # knomit's title: the first line of the trimmed body region, if it starts with `#`
    # (`## Title` and `#Title` too; an `# H1` further down the body is not the title)
    m = re.compile(r"#[^\n]*").match(rest, len(rest) - len(rest.lstrip(GO_SPACE)))
    if m is None:
        raise WriteRefused("the fact has no H1 title line")
    before, old_title, after = rest[: m.start()], m.group(0), rest[m.end():]
    new_title = f"# {go_trim_space(title)}" if title is not None else old_title
    if body is not None:
        stripped = body.strip("\n")
        after = "\n\n" + stripped + "\n" if go_trim_space(stripped) else "\n"
    out = head + before + new_title + after
    if crlf:
        out = out.replace("\n", "\r\n")
    encoded = out.encode("utf-8")
    return BOM + encoded if bom else encoded
