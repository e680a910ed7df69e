"""Frontmatter YAML with knomit's yaml.v3 semantics, on PyYAML's C composer.

We never construct Python objects with PyYAML's YAML 1.1 rules (`yes` → True,
`2026-07-28` → date, `0123` → 83). Instead libyaml composes a node tree (fast, safe: no
object is ever built from a tag) and this module decodes the nodes into knomit's fixed
struct: list items keep their literal scalar text, quoted numbers are errors, duplicate
keys are errors, anchors/aliases and non-core tags are refused, depth is bounded.
"""

from __future__ import annotations

import math
import re
from datetime import date
from typing import NamedTuple

import yaml

try:  #: libyaml's loader, for every YAML file factdesk composes (the pure one without it)
    SAFE_LOADER: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml missing
    SAFE_LOADER = yaml.SafeLoader

_CORE = "tag:yaml.org,2002:"
_ALLOWED_TAGS = {
    _CORE + t for t in ("str", "int", "float", "bool", "null", "timestamp", "seq", "map")
}
_NULLS = {"", "~", "null", "Null", "NULL"}
_INT_RE = re.compile(r"^[-+]?(0|[1-9][0-9_]*|0[0-7_]+|0o[0-7_]+|0x[0-9a-fA-F_]+|0b[01_]+)$")
_FLOAT_RE = re.compile(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$")
_INF_NAN = {".inf": math.inf, ".Inf": math.inf, ".INF": math.inf, "-.inf": -math.inf,
            "-.Inf": -math.inf, "-.INF": -math.inf, "+.inf": math.inf,
            ".nan": math.nan, ".NaN": math.nan, ".NAN": math.nan}
MAX_DEPTH = 32


class YamlError(Exception):
    """A frontmatter decoding error with a problem code and a 1-based frontmatter line."""

    def __init__(self, code: str, message: str, line: int = 1, column: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line
        self.column = column


class Scalar(NamedTuple):
    # (named tuples, not dataclasses: a rebuild makes a million of them, and a tuple is
    # built in C)
    text: str
    style: str | None  # None = plain, "'" or '"' quoted, "|" / ">" block
    line: int
    start: int
    end: int

    @property
    def is_null(self) -> bool:
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


_TAG_OF_KIND = {yaml.ScalarNode: _CORE + "str", yaml.SequenceNode: _CORE + "seq",
                yaml.MappingNode: _CORE + "map"}


#: the two plain scalars YAML 1.1 gives a tag outside the core schema: `<<` (merge keys,
#: which yaml.v3 would expand) and `=` (the "value" key); facts with them are refused
_SPECIAL_PLAIN = {"<<": "tag:yaml.org,2002:merge", "=": "tag:yaml.org,2002:value"}


class _Composer(SAFE_LOADER):  # type: ignore[misc]
    """The C loader without PyYAML's implicit-tag resolution: that runs YAML 1.1's regular
    expressions over every plain scalar (`yes` → bool …) to choose a tag we never use, since
    scalars are decoded from their text here. Explicit tags are kept, and checked."""

    def resolve(self, kind: type, value: object, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode and implicit[0] and value in _SPECIAL_PLAIN:
            return _SPECIAL_PLAIN[value]  # still refused, as PyYAML's resolver made them
        return _TAG_OF_KIND[kind]

    # (the path-based resolvers these keep track of are never registered)
    def descend_resolver(self, current_node: object, current_index: object) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


def compose_mapping(text: str) -> dict[str, Entry]:
    """Compose `text` (the frontmatter, LF line endings) into top-level entries."""
    try:
        node = yaml.compose(text, Loader=_Composer)
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
        return {}
    if not isinstance(node, yaml.MappingNode):
        raise YamlError("frontmatter_not_mapping", "frontmatter must be a mapping",
                        node.start_mark.line + 1)
    seen_nodes: set[int] = set()
    out: dict[str, Entry] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise YamlError("yaml_syntax", "mapping keys must be scalars",
                            key_node.start_mark.line + 1)
        key = key_node.value
        if key in out:
            raise YamlError(
                "yaml_duplicate_key",
                f'mapping key "{key}" already defined at line {out[key].line + 1}',
                key_node.start_mark.line + 1,
            )
        value = _decode(value_node, seen_nodes, 1)
        out[key] = Entry(
            key=key,
            value=value,
            line=key_node.start_mark.line + 1,
            key_start=key_node.start_mark.index,
            value_start=value_node.start_mark.index,
            value_end=value_node.end_mark.index,
            flow=isinstance(value_node, yaml.ScalarNode) or bool(value_node.flow_style),
        )
    return out


def _decode(node: yaml.Node, seen: set[int], depth: int) -> object:
    if id(node) in seen:
        raise YamlError("yaml_alias", "anchors and aliases are not allowed in facts",
                        node.start_mark.line + 1)
    seen.add(id(node))
    if depth > MAX_DEPTH:
        raise YamlError("yaml_depth", f"frontmatter nested deeper than {MAX_DEPTH}",
                        node.start_mark.line + 1)
    if node.tag not in _ALLOWED_TAGS:
        raise YamlError("yaml_tag", f"tag {node.tag} is not allowed (core types only)",
                        node.start_mark.line + 1)
    if isinstance(node, yaml.ScalarNode):
        return Scalar(node.value, node.style or None, node.start_mark.line + 1,
                      node.start_mark.index, node.end_mark.index)
    if isinstance(node, yaml.SequenceNode):
        return [_decode(n, seen, depth + 1) for n in node.value]
    pairs: dict[str, object] = {}
    for k, v in node.value:
        kd = _decode(k, seen, depth + 1)
        pairs[kd.text if isinstance(kd, Scalar) else repr(kd)] = _decode(v, seen, depth + 1)
    return pairs


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
    """A string field (`kind`, `type`, …): any scalar's text; null → None."""
    if isinstance(value, Scalar):
        return None if value.is_null else value.text
    raise FieldError("field_shape", f"{key} must be a string, got a {_shape(value)}", key)


def as_string_list(value: object, key: str) -> tuple[str, ...]:
    """A list field: items are literal scalar text; null items dropped; null → []."""
    if isinstance(value, Scalar):
        if value.is_null:
            return ()
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
            if not item.is_null:
                out.append(item.text)
        return tuple(out)
    raise FieldError(f"{key}_shape" if key == "refs" else "field_shape",
                     f"{key} must be a list, got a {_shape(value)}", key)


def as_float(value: object, key: str) -> float:
    """A float64 field: plain numbers only; quoted text, booleans and words are errors."""
    if not isinstance(value, Scalar):
        raise FieldError(f"{key}_type", f"{key} must be a number, got a {_shape(value)}", key)
    if value.is_null:
        return 0.0
    text = value.text
    if value.style is None:
        if text in _INF_NAN:
            return _INF_NAN[text]
        if _FLOAT_RE.match(text) or _INT_RE.match(text):
            try:
                return float(int(text.replace("_", ""), 0)) if _INT_RE.match(text) else float(
                    text.replace("_", ""))
            except ValueError:
                pass
            except OverflowError:  # an integer past a float's range (over 308 digits)
                raise FieldError(f"{key}_range", f"{key} {text[:40]}… is too large a number",
                                 key) from None
    raise FieldError(f"{key}_type", f"cannot unmarshal !!str `{text[:40]}` into float64 ({key})",
                     key)


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
        if _INT_RE.match(text):
            exact = int(text.replace("_", ""), 0)
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
