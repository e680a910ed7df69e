"""Frontmatter YAML with knomit's yaml.v3 semantics, on PyYAML's C composer.

We never construct Python objects with PyYAML's YAML 1.1 rules (`yes` → True,
`2026-07-28` → date, `0123` → 83). Instead libyaml composes a node tree (fast, safe: no
object is ever built from a tag) and this module decodes the nodes into knomit's fixed
struct: list items keep their literal scalar text, quoted numbers are errors, duplicate
keys are errors, depth is bounded. Anchors, aliases and merge keys (`<<`) are read as
yaml.v3 reads them, with the expansion bounded (`MAX_EXPANSION`: an alias bomb is refused,
RELIABILITY A04); explicit tags are read as yaml.v3 resolves them (`!!float "0.5"` is a
number, `!!str 0.5` text, `!!binary` base64, a custom tag plain text), except the
`!!python/*` family, which is refused (A02). No tag ever constructs an object.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from datetime import date
from typing import NamedTuple

import yaml

from factdesk.corpus.yamlscan import (  # (re-exported: the names other modules import here)
    IMPLICIT,
    MERGE,
    SAFE_LOADER,
    UNREADABLE,
    UNREADABLE_END,
    Note,
    YamlError,
    compose_first,
    flow_questions,
)

__all__ = ["SAFE_LOADER", "UNREADABLE", "UNREADABLE_END", "Note", "YamlError"]
_IMPLICIT, _MERGE = IMPLICIT, MERGE

_CORE = "tag:yaml.org,2002:"
#: the explicit tags yaml.v3 resolves a scalar's text against (`resolvableTag`)
_RESOLVABLE = {"!!str", "!!bool", "!!int", "!!float", "!!null", "!!timestamp"}
_NULLS = {"", "~", "null", "Null", "NULL"}
_INT_RE = re.compile(r"^[-+]?(0|[1-9][0-9_]*|0[0-7_]+|0o[0-7_]+|0x[0-9a-fA-F_]+|0b[01_]+)$")
_FLOAT_RE = re.compile(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$")
_INF_NAN = {".inf": math.inf, ".Inf": math.inf, ".INF": math.inf, "-.inf": -math.inf,
            "-.Inf": -math.inf, "-.INF": -math.inf, "+.inf": math.inf,
            ".nan": math.nan, ".NaN": math.nan, ".NAN": math.nan}
MAX_DEPTH = 32
#: the most nodes aliases may add to a frontmatter beyond those written (A04: the 4-level
#: "lol" document, about 7,400 nodes, is read, as yaml.v3 reads it; one level more is not)
MAX_EXPANSION = 10_000


class Scalar(NamedTuple):
    # (named tuples, not dataclasses: a rebuild makes a million of them, and a tuple is
    # built in C)
    text: str
    style: str | None  # None = plain, "'" or '"' quoted, "|" / ">" block
    line: int
    start: int
    end: int
    #: the explicit tag, short form (`!!float`, `!!binary`, `!custom`), or None
    tag: str | None = None

    @property
    def is_null(self) -> bool:
        """A null as yaml.v3 decodes it: `~`, `null`, empty, or a null tag on one of those
        (`!!null x` is no null: yaml.v3 cannot decode it, and `resolved` says so)."""
        if self.tag is not None:
            return self.tag == "!!null" and self.text in _NULLS
        return self.style is None and self.text in _NULLS


class Entry(NamedTuple):
    """One top-level key: its raw value (Scalar, list of Scalar, or nested) and its spans."""

    key: str
    value: object
    line: int  # 1-based within the frontmatter text
    key_start: int
    value_start: int
    value_end: int
    flow: bool  # value is a scalar or a flow collection (single span)
    #: the value is shared with another place (an anchor, an alias, a merge key's map): an
    #: edit of its span would change more than this key, so the writer refuses it
    shared: bool = False


class _Walk:
    """One frontmatter's decoding: node visits (an alias visits its node again) and the
    count of nodes decoded, which `MAX_EXPANSION` bounds."""

    def __init__(self) -> None:
        self.visits: dict[int, int] = {}
        self.decoded = 0
        self.stack: set[int] = set()

    def shared(self, node: yaml.Node) -> bool:
        """Whether `node` or a node inside it is reached more than once."""
        todo, seen = [node], set()
        while todo:
            n = todo.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if self.visits.get(id(n), 0) > 1:
                return True
            if isinstance(n, yaml.SequenceNode):
                todo.extend(n.value)
            elif isinstance(n, yaml.MappingNode):
                for k, v in n.value:
                    todo.extend((k, v))
        return False


def compose_mapping(text: str) -> dict[str, Entry]:
    """Compose `text` (LF line endings) into top-level entries: factdesk's own YAML files
    (settings, messages, thresholds), one document only. A fact's frontmatter is read with
    `compose_document`, as knomit reads it."""
    entries, notes = compose_document(text)
    for note in notes:
        if note.code == "yaml_document_end":
            raise YamlError("yaml_syntax", "YAML: expected a single document (a second one "
                            f"starts at line {note.line})", note.line)
    return entries


def compose_document(text: str) -> tuple[dict[str, Entry], list[Note]]:
    """`compose_mapping`, with the notes on what knomit's yaml.v3 reads otherwise."""
    notes: list[Note] = []
    try:
        node = compose_first(text, notes)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        col = mark.column + 1 if mark else 0
        msg = f"{exc.problem or exc}" + (f" {exc.context}" if exc.context else "")
        code = "yaml_depth" if "depth" in msg or "nesting" in msg else "yaml_syntax"
        raise YamlError(code, f"YAML: {msg.strip()}", line, col) from None
    except yaml.YAMLError as exc:
        raise YamlError("yaml_syntax", f"YAML: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise YamlError("yaml_value", f"YAML: {exc}") from None
    if node is None:
        return {}, notes
    if "?" in text:
        notes.extend(flow_questions(node, text))
    if not isinstance(node, yaml.MappingNode):
        raise YamlError("frontmatter_not_mapping", "frontmatter must be a mapping",
                        node.start_mark.line + 1)
    # (only an alias (`*a`) shares a node, and only `<<` merges: a frontmatter with neither,
    # nearly every one, is decoded without keeping count)
    walk = _Walk() if "*" in text or "<<" in text else None
    out: dict[str, Entry] = {}
    values: dict[str, yaml.Node] = {}
    merged: list[tuple[yaml.Node, yaml.Node]] = []
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise YamlError("yaml_syntax", "mapping keys must be scalars",
                            key_node.start_mark.line + 1)
        if key_node.tag == _MERGE:
            assert walk is not None
            merged = _merge_pairs(value_node, walk)
            continue
        key = key_node.value if key_node.tag[0] == _IMPLICIT else _tagged_key(key_node)
        if key is None:  # (a null key: yaml.v3 matches it to no field)
            continue
        if key in out:
            raise YamlError(
                "yaml_duplicate_key",
                f'mapping key "{key}" already defined at line {out[key].line + 1}',
                key_node.start_mark.line + 1,
            )
        out[key] = _entry(key, key_node, value_node, walk)
        values[key] = value_node
    for key_node, value_node in merged:  # (yaml.v3: written keys win, then the first map)
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else repr(key_node)
        if key not in out:
            out[key] = _entry(key, key_node, value_node, walk)._replace(shared=True)
            values[key] = value_node
    if walk is not None:
        for key, value_node in values.items():
            if not out[key].shared and walk.shared(value_node):
                out[key] = out[key]._replace(shared=True)
    return out, notes


def _tagged_key(node: yaml.ScalarNode) -> str | None:
    """A top-level key written with a tag, as yaml.v3 decodes it into the field name it
    matches: its text (`!!str type`, `!foo type`), `!!binary`'s decoded text, None for a
    null; text its tag cannot decode (`!!null refs`, `!!int type`) fails the file."""
    line = node.start_mark.line + 1
    scalar = Scalar(node.value, node.style or None, line, node.start_mark.index,
                    node.end_mark.index, _short_tag(node.tag))
    try:
        tag, out = resolved(scalar, node.value)
    except FieldError as exc:
        raise YamlError("yaml_value", f"YAML: {exc.message.split(': ', 1)[-1]}", line) from None
    if tag == "!!null":
        return None
    return out if scalar.tag == "!!binary" and isinstance(out, str) else node.value


def _entry(key: str, key_node: yaml.Node, value_node: yaml.Node, walk: _Walk | None
           ) -> Entry:
    return Entry(
        key=key,
        value=_decode(value_node, walk, 1),
        line=key_node.start_mark.line + 1,
        key_start=key_node.start_mark.index,
        value_start=value_node.start_mark.index,
        value_end=value_node.end_mark.index,
        flow=isinstance(value_node, yaml.ScalarNode) or bool(
            getattr(value_node, "flow_style", False)),
    )


def _merge_pairs(value: yaml.Node, walk: _Walk) -> list[tuple[yaml.Node, yaml.Node]]:
    """The key/value pairs a merge key's value brings (a map, or a list of maps: the
    earlier map wins a key both have), as yaml.v3's `merge` takes them."""
    maps = value.value if isinstance(value, yaml.SequenceNode) else [value]
    pairs: list[tuple[yaml.Node, yaml.Node]] = []
    for item in maps:
        if not isinstance(item, yaml.MappingNode):
            raise YamlError("yaml_syntax", "YAML: map merge requires map or sequence of maps "
                            "as the value", item.start_mark.line + 1)
        _count(item, walk)
        for k, v in item.value:
            if isinstance(k, yaml.ScalarNode) and k.tag == _MERGE:
                pairs.extend(_merge_pairs(v, walk))
            else:
                pairs.append((k, v))
    seen: set[str] = set()
    out = []
    for k, v in pairs:
        name = k.value if isinstance(k, yaml.ScalarNode) else repr(k)
        if name not in seen:
            seen.add(name)
            out.append((k, v))
    return out


def _count(node: yaml.Node, walk: _Walk) -> None:
    """Count a visit of `node`, refusing an alias that expands too far (A04)."""
    walk.visits[id(node)] = walk.visits.get(id(node), 0) + 1
    walk.decoded += 1
    if walk.decoded - len(walk.visits) > MAX_EXPANSION:
        raise YamlError("yaml_alias", f"aliases expand the frontmatter past {MAX_EXPANSION} "
                        "more nodes than it writes (an alias bomb?)", node.start_mark.line + 1)


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_CORE):] if tag.startswith(_CORE) else tag


def _decode(node: yaml.Node, walk: _Walk | None, depth: int) -> object:
    """A node as Scalars, lists and dicts. `walk`: counting visits (a frontmatter with
    aliases or merge keys), else None."""
    if walk is not None:
        _count(node, walk)
        if id(node) in walk.stack:
            raise YamlError("yaml_alias", "an alias refers to the node that holds it",
                            node.start_mark.line + 1)
    if depth > MAX_DEPTH:
        raise YamlError("yaml_depth", f"frontmatter nested deeper than {MAX_DEPTH}",
                        node.start_mark.line + 1)
    tag = node.tag
    explicit = None
    if tag[0] != _IMPLICIT:
        if tag.startswith((_CORE + "python/", "!!python/")):
            # (yaml.v3 would read it as text; refused: PyYAML would build an object from it)
            raise YamlError("yaml_tag", f"tag {tag} is not allowed (it names Python code)",
                            node.start_mark.line + 1)
        explicit = _short_tag(tag)
    if isinstance(node, yaml.ScalarNode):
        return Scalar(node.value, node.style or None, node.start_mark.line + 1,
                      node.start_mark.index, node.end_mark.index, explicit)
    if walk is not None:
        walk.stack.add(id(node))
    try:
        if isinstance(node, yaml.SequenceNode):
            return [_decode(n, walk, depth + 1) for n in node.value]
        pairs: dict[str, object] = {}
        merged: list[tuple[yaml.Node, yaml.Node]] = []
        for k, v in node.value:
            if walk is not None and isinstance(k, yaml.ScalarNode) and k.tag == _MERGE:
                merged = _merge_pairs(v, walk)
                continue
            kd = _decode(k, walk, depth + 1)
            pairs[kd.text if isinstance(kd, Scalar) else repr(kd)] = _decode(v, walk, depth + 1)
        for k, v in merged:
            name = k.value if isinstance(k, yaml.ScalarNode) else repr(k)
            if name not in pairs:
                pairs[name] = _decode(v, walk, depth + 1)
        return pairs
    finally:
        if walk is not None:
            walk.stack.discard(id(node))


# --- yaml.v3's resolution of a scalar's text (resolve.go) ----------------------------------

_RESOLVE_MAP: dict[str, tuple[str, object]] = {
    **{w: ("!!bool", True) for w in ("true", "True", "TRUE")},
    **{w: ("!!bool", False) for w in ("false", "False", "FALSE")},
    **{w: ("!!null", None) for w in ("", "~", "null", "Null", "NULL")},
    **{w: ("!!float", math.nan) for w in (".nan", ".NaN", ".NAN")},
    **{w: ("!!float", math.inf) for w in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF")},
    **{w: ("!!float", -math.inf) for w in ("-.inf", "-.Inf", "-.INF")},
}
_MAP_HINTS = frozenset("yYnNtTfFoO~.+-0123456789")
_NUMBER_HINTS = frozenset("+-0123456789")
_YAML_STYLE_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_DOT_FLOAT = re.compile(r"^\.[0-9]+([eE][-+]?[0-9]+)?$")
_GO_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d{1,9})?"
    r"(?:Z|[-+]\d\d:\d\d))|(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d{1,9})?))?")
_DIGITS = {16: frozenset("0123456789abcdefABCDEF"), 10: frozenset("0123456789"),
           8: frozenset("01234567"), 2: frozenset("01")}


def go_int(text: str) -> int | None:
    """Go's `strconv.ParseInt(text, 0, 64)`, else `ParseUint` (a `0` prefix is octal:
    `01` is 1, `09` no integer), on text with its underscores removed; None if neither."""
    body, negative = text, False
    if body[:1] in ("+", "-"):
        negative, body = body[0] == "-", body[1:]
    if len(body) > 1 and body[0] == "0":
        prefix = body[1].lower()
        base, digits = {"x": (16, body[2:]), "o": (8, body[2:]), "b": (2, body[2:])}.get(
            prefix, (8, body[1:]))
    else:
        base, digits = 10, body
    if not digits or not set(digits) <= _DIGITS[base]:
        return None
    value = -int(digits, base) if negative else int(digits, base)
    if INT64[0] <= value <= INT64[1]:
        return value
    if not text.startswith(("+", "-")) and value < 2**64:  # ParseUint
        return value
    return None


def _go_timestamp(text: str) -> bool:
    match = _GO_TIMESTAMP.fullmatch(text)
    if match is None:
        return False
    year, month, day = (int(g) for g in match.groups()[:3])
    clock = [int(g) for g in match.groups()[3:] if g is not None]
    try:
        date(year, month, day)
    except ValueError:
        return False
    return not clock or (clock[0] < 24 and clock[1] < 60 and clock[2] < 60)


def resolve(text: str, *, timestamps: bool = True) -> tuple[str, object]:
    """(tag, value) yaml.v3 gives an untagged plain scalar (`resolve("", text)`): `!!null`,
    `!!bool`, `!!int`, `!!float`, `!!timestamp` (the value is then the text) or `!!str`."""
    hint = text[:1]
    if text == "" or hint in _MAP_HINTS:
        if (found := _RESOLVE_MAP.get(text)) is not None:
            return found
        if hint == ".":
            if _DOT_FLOAT.match(text):
                return "!!float", float(text)
        elif hint in _NUMBER_HINTS:
            if timestamps and _go_timestamp(text):
                return "!!timestamp", text
            plain = text.replace("_", "")
            if (number := go_int(plain)) is not None:
                return "!!int", number
            if _YAML_STYLE_FLOAT.match(plain) and math.isfinite(real := float(plain)):
                return "!!float", real  # (Go's ParseFloat fails past a float's range)
    return "!!str", text


def resolved(value: Scalar, key: str) -> tuple[str, object]:
    """(tag, value) of a scalar as yaml.v3's decoder sees it: quoted without a tag → text;
    plain → `resolve`; an explicit tag → resolved against it (`!!float "0.5"` → 0.5, an int
    under `!!float` becomes a float, `!!binary` → its base64 decoded, a custom tag → text),
    or a `FieldError` when the text is not of that tag (yaml.v3's "cannot decode")."""
    tag = value.tag
    if tag is None:
        if value.style is not None:
            return "!!str", value.text
        return resolve(value.text)
    if tag == "!!binary":
        try:  # (Go's decoder skips line ends, not spaces; a Go string holds any bytes)
            data = base64.b64decode(value.text.replace("\n", "").replace("\r", ""),
                                    validate=True)
            return "!!str", data.decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            raise FieldError("yaml_value", f"{key}: !!binary value contains invalid base64 "
                             "data", key) from None
    if tag not in _RESOLVABLE:
        return tag, value.text  # (a custom tag: yaml.v3 keeps the text)
    if tag == "!!str":
        return "!!str", value.text
    rtag, out = resolve(value.text, timestamps=tag == "!!timestamp")
    if rtag == tag:
        return rtag, out
    if tag == "!!float" and rtag == "!!int":
        assert isinstance(out, int)
        return "!!float", float(out)
    raise FieldError("yaml_value", f"{key}: cannot decode {rtag} `{value.text[:40]}` as a {tag}",
                     key)


#: a YAML timestamp (YAML 1.1 and the 1.2 core schema's readers resolve plain scalars like
#: this to dates; yaml.v3 keeps them as text when the field is a string)
_TIMESTAMP_RE = re.compile(  # (a bare date has two-digit month and day; YAML 1.1 §timestamp)
    r"(\d{4})-(\d\d)-(\d\d)|(\d{4})-(\d\d?)-(\d\d?)(?:[Tt]|[ \t]+)\d\d?:\d\d:\d\d"
    r"(?:\.\d*)?(?:[ \t]*(?:Z|[-+]\d\d?(?::\d\d)?))?")
_MAYBE_DATE_RE = re.compile(r"\d{4}-\d")


def impossible_dates(text: str, entries: dict[str, Entry]) -> list[tuple[str, Scalar]]:
    """(key, scalar) for each plain scalar, a top-level value or a list item, written as a
    date that does not exist (`2024-02-30`: RELIABILITY B07). knomit keeps it as text, but
    any YAML reader that resolves dates (PyYAML, most tools) fails on the file."""
    if not _MAYBE_DATE_RE.search(text):  # (nearly every file: one scan, no walk)
        return []
    out: list[tuple[str, Scalar]] = []
    for key, entry in entries.items():
        items = entry.value if isinstance(entry.value, list) else [entry.value]
        for item in items:
            if not isinstance(item, Scalar) or item.style is not None:
                continue
            match = _TIMESTAMP_RE.fullmatch(item.text)
            if match is None:
                continue
            year, month, day = (int(g) for g in match.groups() if g is not None)
            try:
                date(year, month, day)
            except ValueError:
                out.append((key, item))
    return out


# --- decoding into knomit's struct fields --------------------------------------------------


class FieldError(Exception):
    """A value knomit cannot decode into its field; `key` names the field (None: the
    title, which is not a key)."""

    def __init__(self, code: str, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.key = key


def as_string(value: object, key: str) -> str | None:
    """A string field (`kind`, `type`, …): any scalar's text (`!!binary` decoded); null →
    None."""
    if isinstance(value, Scalar):
        if value.is_null:
            return None
        return value.text if value.tag is None else _text(value, key)
    raise FieldError("field_shape", f"{key} must be a string, got a {_shape(value)}", key)


def _text(value: Scalar, key: str) -> str | None:
    """A tagged scalar's text as a string field takes it (checked against its tag)."""
    tag, out = resolved(value, key)
    if tag == "!!null":
        return None
    return out if value.tag == "!!binary" and isinstance(out, str) else value.text


def as_string_list(value: object, key: str) -> tuple[str, ...]:
    """A list field: items are literal scalar text; null items dropped; null → []."""
    if isinstance(value, Scalar):
        if value.is_null:
            return ()
        if value.tag is not None:  # (yaml.v3 checks a tag before the shape: `!!null x`)
            resolved(value, key)
        raise FieldError(
            f"{key}_shape" if key == "refs" else "field_shape",
            f"cannot unmarshal !!str `{value.text[:40]}` into []string ({key} must be a list)",
            key,
        )
    if isinstance(value, list):
        out: list[str] = []
        for item in value:
            if not isinstance(item, Scalar):
                raise FieldError(f"{key}_shape" if key == "refs" else "field_shape",
                                 f"{key} items must be strings, got a {_shape(item)}", key)
            if item.is_null:
                continue
            text = item.text if item.tag is None else _text(item, key)
            if text is not None:
                out.append(text)
        return tuple(out)
    raise FieldError(f"{key}_shape" if key == "refs" else "field_shape",
                     f"{key} must be a list, got a {_shape(value)}", key)


def as_float(value: object, key: str) -> float:
    """A float64 field: numbers as yaml.v3 resolves them (`01` is octal 1, `0_1` too,
    `!!float "0.5"` is 0.5, `.nan` is NaN); text, booleans and timestamps are errors."""
    if not isinstance(value, Scalar):
        raise FieldError(f"{key}_type", f"{key} must be a number, got a {_shape(value)}", key)
    tag, out = resolved(value, key)
    if tag == "!!null":
        return 0.0
    if tag in ("!!int", "!!float"):
        assert isinstance(out, (int, float))
        try:
            return float(out)
        except OverflowError:  # an integer past a float's range
            raise FieldError(f"{key}_range", f"{key} {value.text[:40]}… is too large a number",
                             key) from None
    if tag == "!!str" and value.tag is None and value.style is None and (
            _FLOAT_RE.match(value.text) or _INT_RE.match(value.text)):
        # digits yaml.v3 reads as neither (past a float's range: `1` and 400 zeros)
        raise FieldError(f"{key}_range", f"{key} {value.text[:40]}… is too large a number",
                         key)
    raise FieldError(f"{key}_type",
                     f"cannot unmarshal {tag} `{value.text[:40]}` into float64 ({key})", key)


INT64 = (-(2**63), 2**63 - 1)


def as_int(value: object, key: str) -> int:
    """An int field: integers (exactly), floats truncated (yaml.v3), null → 0; text is an
    error, and so is a number past Go's int64, which knomit cannot decode either (and the
    index could not hold: RELIABILITY I8)."""
    number = as_float(value, key)
    if not math.isfinite(number):
        raise FieldError(f"{key}_type", f"{key} must be a finite integer", key)
    exact = int(number)
    if abs(number) >= 2**53:  # past a float's exact integers: read the text exactly
        text = value.text if isinstance(value, Scalar) else ""
        if (whole := go_int(text.replace("_", ""))) is not None:
            exact = whole
        if not INT64[0] <= exact <= INT64[1]:
            raise FieldError(f"{key}_range", f"{key} {text[:40]} does not fit a 64-bit integer",
                             key)
    return exact


def _shape(value: object) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return "scalar"


def plain_value(value: object) -> object:
    """A JSON-friendly view of an unknown key's value (strings, lists, dicts)."""
    if isinstance(value, Scalar):
        return None if value.is_null else value.text
    if isinstance(value, list):
        return [plain_value(v) for v in value]
    if isinstance(value, dict):
        return {k: plain_value(v) for k, v in value.items()}
    return value
