"""Read a fact file into a `Fact` (FORMAT.md §2.2) and classify every way it can be broken.

`parse_fact` never raises for bad content: it returns a `ParseOutcome` with the fact (or
None) and its problems, each with the file's path and a 1-based line (RELIABILITY I8).
Messages follow knomit's texts where knomit has one.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from factdesk.corpus import yamlv3
from factdesk.model.enums import (
    Kind,
    Severity,
    default_origin,
    is_legal_kind_type,
    is_legal_origin_for_type,
)
from factdesk.model.fact import ENVELOPE_KEYS, KNOMIT_KEYS, Envelope, Fact, Problem
from factdesk.model.motifs import MAX_MOTIFS, drop_invalid_motifs

BOM = b"\xef\xbb\xbf"
MAX_BYTES = 2 * 1024 * 1024
#: Go's `unicode.IsSpace`, the set `strings.TrimSpace` trims. Python's `str.strip` trims
#: U+001C–U+001F too, which knomit keeps at the ends of a title or body (issue 22)
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + (
    "\u2028\u2029\u202f\u205f\u3000")


def go_trim_space(text: str) -> str:
    """Go's `strings.TrimSpace` (knomit trims the title and body with it)."""
    return text.strip(GO_SPACE)


@dataclass(frozen=True, slots=True)
class ParseOutcome:
    path: str
    fact: Fact | None
    problems: tuple[Problem, ...] = ()
    #: for broken files: a best-effort title and raw text so they stay listed and searchable
    title: str = ""
    text: str = ""
    #: the kind and type of a broken file as written, when it has them (shown in its row)
    raw: dict[str, str] = field(default_factory=dict)
    #: a broken file whose only faults are values knomit cannot decode: the fact with those
    #: fields treated as missing, for its row (never checked or cited as a fact)
    salvaged: Fact | None = None


def _fail(path: str, code: str, msg: str, line: int = 1, **kw: object) -> ParseOutcome:
    prefix = f'ParseFact "{path}": '
    problem = Problem(path, line, code, Severity.ERROR, prefix + msg)
    return ParseOutcome(path, None, (problem,), **kw)  # type: ignore[arg-type]


def too_large(path: str, size: int) -> ParseOutcome:
    """A file over `MAX_BYTES` (its size known without reading it: a blob's header)."""
    return _fail(path, "too_large", f"file is {size} bytes (limit {MAX_BYTES})")


def decode_text(data: bytes) -> tuple[str | None, str | None, str]:
    """(text, error code, message): strict UTF-8 with an optional BOM, CRLF kept."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, "encoding_unsupported", "UTF-16 files are not supported (knomit reads UTF-8)"
    if data.startswith(BOM):
        data = data[len(BOM):]
    try:
        return data.decode("utf-8"), None, ""
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, "encoding", f"invalid UTF-8 at byte {exc.start} (line {line})"


def parse_fact(path: str, data: bytes, *, without: tuple[str, ...] = ()) -> ParseOutcome:
    """Parse one file's bytes. `path` is repo-relative POSIX. `without`: keys read as if
    the file had not written them (`("kind", "type")`: the fact a relabel can repair when
    those are its only faults, RELIABILITY B01)."""
    if not data:
        return _fail(path, "empty", "empty file")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _fail(path, "encoding_unsupported", "UTF-16 files are not supported")
    if len(data) > MAX_BYTES:  # (first: nothing of a huge file is decoded)
        return too_large(path, len(data))
    if b"\x00" in data[:8192]:
        return _nul_in_frontmatter(path, data) or _fail(path, "binary",
                                                        "binary file (NUL byte) named .md")
    text, code, msg = decode_text(data)
    lossy_at = None
    if code == "encoding" and (at := _body_only_invalid(data)) is not None:
        # knomit reads any bytes in the body (Go strings): the fact is read, the body lossy
        text = data.removeprefix(BOM).decode("utf-8", "replace").replace("\r\n", "\n")
        lossy_at = len(data.removeprefix(BOM)[:at].decode("utf-8", "replace").replace(
            "\r\n", "\n"))
    if text is None:
        assert code is not None
        lossy = data.decode("utf-8", "replace")
        return _fail(path, code, msg, text=lossy, title=_guess_title(lossy))
    problems: list[Problem] = []
    if "\r" in text:  # (most files have none: no copies of the text then)
        crlf = text.count("\r\n")
        if crlf != text.count("\r") or crlf != text.count("\n"):  # a lone CR, or CRLF and LF mixed
            problems.append(Problem(path, 1, "line_endings", Severity.WARNING,
                                    "mixed or lone CR line endings; writes to this file are "
                                    "refused"))
        text = text.replace("\r\n", "\n")
    if line := _conflict_line(text):
        return _fail(path, "conflict_markers", "merge-conflict markers in file", line,
                     text=text, title=_guess_title(text))
    if not text.startswith("---\n"):
        code = "no_frontmatter" if not text.startswith("---") else "unterminated_frontmatter"
        return _fail(path, code, "missing opening frontmatter delimiter", 1,
                     text=text, title=_guess_title(text))
    end = _frontmatter_end(text)
    if end < 0:
        return _fail(path, "unterminated_frontmatter", "missing closing frontmatter delimiter", 1,
                     text=text, title=_guess_title(text))
    front = text[4 : end + 1]
    region_start = end + 5
    region = text[region_start:]
    stripped = region.lstrip(GO_SPACE)
    leading = region[: len(region) - len(stripped)]
    title_line = 3 + front.count("\n") + leading.count("\n")
    try:
        entries, notes = yamlv3.compose_document(front)
    except yamlv3.YamlError as exc:
        where = f" (column {exc.column})" if exc.column else ""
        return _fail(path, exc.code, exc.message + where, exc.line + 1, text=text,
                     title=_guess_title(stripped))
    if without:
        entries = {k: e for k, e in entries.items() if k not in without}
    problems += [Problem(path, n.line + 1, n.code, Severity.WARNING, n.message) for n in notes]
    try:
        fact = _build(path, entries, stripped.rstrip(GO_SPACE), title_line, problems)
    except yamlv3.FieldError as exc:
        return _broken_fields(path, exc, entries, stripped, title_line, text)
    for key, scalar in yamlv3.impossible_dates(front, entries):
        if key != "settle_by":  # (the checker's E1 reports that one, as an error)
            problems.append(Problem(path, scalar.line + 1, "yaml_value", Severity.WARNING,
                                    f"{key}: {scalar.text} is not a date that exists; knomit "
                                    "keeps it as text, but YAML readers that resolve dates "
                                    "fail on this file (quote it, or fix the date)"))
    if not stripped.startswith("# "):  # (`## Title`, `#Title`: read, as knomit reads them)
        problems.append(Problem(path, title_line, "title_heading", Severity.WARNING,
                                "the title line is not written '# Title'; knomit reads it (it "
                                "strips every leading '#'), and its writer would rewrite the "
                                "line as '# Title'"))
    if "motifs" in entries and len(yamlv3.as_string_list(entries["motifs"].value, "motifs")
                                   ) != len(fact.motifs):
        problems.append(Problem(path, fact.line_of("motifs"), "motif", Severity.WARNING,
                                "motifs: entries dropped, as knomit drops them on read (at most "
                                f"{MAX_MOTIFS}, each a 2-4 word lowercase kebab-case phrase, no "
                                "duplicates)"))
    if "confidence" in entries and fact.confidence != fact.confidence:  # NaN
        problems.append(Problem(path, fact.line_of("confidence"), "confidence_nan",
                                Severity.WARNING, "confidence is .nan: knomit reads it (NaN "
                                "passes its range check); factdesk counts it as no confidence"))
        fact = dataclasses.replace(fact, confidence=0.0)
    if data.startswith(BOM):
        problems.append(Problem(path, 1, "knomit_unreadable", Severity.WARNING,
                                f"{yamlv3.UNREADABLE}it starts with a UTF-8 byte-order mark "
                                "(U+FEFF) before its '---' (\"missing opening frontmatter "
                                f"delimiter\"): remove the mark{yamlv3.UNREADABLE_END}"))
    if lossy_at is not None:
        line = text.count("\n", 0, lossy_at) + 1
        problems.append(Problem(path, line, "encoding", Severity.WARNING,
                                f"invalid UTF-8 in the body (line {line}): shown with U+FFFD; "
                                "knomit reads the bytes as they are, factdesk will not write "
                                "this file until it is fixed"))
    return ParseOutcome(path, fact, tuple(problems), title=fact.title)


def _broken_fields(path: str, first: yamlv3.FieldError, entries: dict[str, yamlv3.Entry],
                   region: str, title_line: int, text: str) -> ParseOutcome:
    """A file whose YAML parses but whose values knomit cannot decode: knomit refuses the
    fact, and so does the checker (one error per bad field, each at its line). The rest of
    it is still read (RELIABILITY B03, B10), each bad field treated as missing, so that its
    row keeps its domain, envelope and other fields; the kind and type are never guessed
    (when one of them is bad, only their raw text is kept)."""
    found = [first]
    rest = dict(entries)
    salvaged = None
    while (key := found[-1].key) in rest and key not in ("kind", "type"):
        del rest[key]
        try:
            salvaged = _build(path, rest, region.rstrip(GO_SPACE), title_line)
            break
        except yamlv3.FieldError as exc:
            found.append(exc)
    prefix = f'ParseFact "{path}": '
    problems = tuple(Problem(path, entries[e.key].line + 1 if e.key in entries
                             else title_line if e.code == "missing_h1" else 1, e.code,
                             Severity.ERROR, prefix + e.message) for e in found)
    raw = {k: e.value.text if isinstance(e.value, yamlv3.Scalar)  # (a list or map: as written)
           else text[4 + e.value_start : 4 + e.value_end].strip()
           for k, e in entries.items() if k in ("kind", "type")}
    return ParseOutcome(path, None, problems, title=_guess_title(region), text=text, raw=raw,
                        salvaged=salvaged)


def _build(path: str, entries: dict[str, yamlv3.Entry], region: str, title_line: int,
           warnings: list[Problem] | None = None) -> Fact:
    """The fact `entries` and the body region write; `warnings` (when given) gets the
    problems knomit would not have (an envelope key it never reads)."""
    def get(key: str) -> object | None:
        entry = entries.get(key)
        return entry.value if entry else None

    def string(key: str) -> str | None:
        value = get(key)
        return None if value is None else yamlv3.as_string(value, key)

    def strings(key: str) -> tuple[str, ...]:
        value = get(key)
        return () if value is None else yamlv3.as_string_list(value, key)

    try:
        motifs = strings("motifs")
    except yamlv3.FieldError as exc:  # (a version difference: docs/format.md)
        raise yamlv3.FieldError(exc.code, f"{exc.message}: knomit's motif branch refuses this "
                                "file too (knomit v0.5.3, which has no motifs, ignores the key)",
                                "motifs") from None
    kind = string("kind") or Kind.EPISTEMIC
    type_ = string("type") or ("observation" if kind == Kind.EPISTEMIC else "")
    if kind not in (Kind.EPISTEMIC, Kind.PRAGMATIC):
        if kind.strip().lower() in (Kind.EPISTEMIC, Kind.PRAGMATIC):  # RELIABILITY B02
            raise yamlv3.FieldError("kind_not_canonical", f'kind "{kind}" is not written as '
                                    f'knomit reads it: "{kind.strip().lower()}"', "kind")
        raise yamlv3.FieldError("unknown_kind",
                                f'invalid kind "{kind}": must be one of epistemic, pragmatic', "kind")
    if not is_legal_kind_type(kind, type_):
        if type_.strip().lower() != type_ and is_legal_kind_type(kind, type_.strip().lower()):
            raise yamlv3.FieldError("type_not_canonical", f'type "{type_}" is not written as '
                                    f'knomit reads it: "{type_.strip().lower()}"', "type")
        raise yamlv3.FieldError("unknown_type", f'invalid type "{type_}" for kind "{kind}"',
                                "type" if "type" in entries else "kind")
    confidence = yamlv3.as_float(get("confidence"), "confidence") if "confidence" in entries else 0.0
    if math.isinf(confidence):  # (NaN is read, as knomit reads it: `parse_fact` warns)
        raise yamlv3.FieldError("confidence_nonfinite", f"confidence {confidence} is not finite",
                                "confidence")
    if confidence < 0.0 or confidence > 1.0:  # (knomit's test, which NaN passes)
        raise yamlv3.FieldError("confidence_range", f"confidence {confidence:g} out of range [0,1]",
                                "confidence")
    sources = yamlv3.as_int(get("sources"), "sources") if "sources" in entries else 0
    if sources < 0:
        raise yamlv3.FieldError("sources_range", f"sources {sources} must be >= 0", "sources")
    weight = None
    if "evidence_weight" in entries:
        weight = yamlv3.as_float(get("evidence_weight"), "evidence_weight")
        if not math.isfinite(weight):  # (knomit has no check on this field: it loads)
            if warnings is not None:
                warnings.append(Problem(path, entries["evidence_weight"].line + 1,
                                        "evidence_weight_nonfinite", Severity.WARNING,
                                        f"evidence_weight is {weight}: knomit reads it (it "
                                        "checks nothing on this field); factdesk counts the "
                                        "weight as not recorded"))
            weight = None
    origin_raw = string("origin")
    origin = (origin_raw if origin_raw and is_legal_origin_for_type(origin_raw, type_)
              else default_origin(type_))
    lines = region.split("\n", 1)
    first = lines[0]
    if not first.startswith("#"):
        raise yamlv3.FieldError("missing_h1", "no title heading found")
    title = go_trim_space(first.lstrip("#"))
    if not title:
        raise yamlv3.FieldError("missing_h1", "empty title heading")
    body = go_trim_space(lines[1]) if len(lines) > 1 else ""
    envelope = Envelope(**{key: _envelope_value(path, entries, key, warnings)
                           for key in ENVELOPE_KEYS})
    # (knomit's `expires` has no field here yet: kept with the unknown keys, so that it is
    # shown and searchable as written rather than read and then shown nowhere)
    known = (set(KNOMIT_KEYS) | set(ENVELOPE_KEYS)) - {"expires"}
    extra = {k: yamlv3.plain_value(e.value) for k, e in entries.items() if k not in known}
    return Fact(
        path=path,
        title=title,
        body=body,
        kind=kind,
        type=type_,
        origin=origin,
        origin_raw=origin_raw,
        domain=strings("domain"),
        entities=strings("entities"),
        refs=strings("refs"),
        motifs=drop_invalid_motifs(motifs),
        confidence=confidence,
        sources=sources,
        evidence_weight=weight,
        envelope=envelope,
        extra=extra,
        key_lines={k: e.line + 1 for k, e in entries.items()},
        title_line=title_line,
    )


def _envelope_value(path: str, entries: dict[str, yamlv3.Entry], key: str,
                    warnings: list[Problem] | None) -> str | None:
    """An envelope key's text. knomit never reads factdesk's envelope keys (FORMAT §13),
    so a value it could not have decoded (a list, a map, `!!null x`) does not cost the fact:
    the key is taken as absent, with an `envelope_shape` warning."""
    entry = entries.get(key)
    if entry is None:
        return None
    try:
        return yamlv3.as_string(entry.value, key)
    except yamlv3.FieldError as exc:
        if warnings is not None:
            warnings.append(Problem(path, entry.line + 1, "envelope_shape", Severity.WARNING,
                                    f"{exc.message}: read as if absent (knomit does not read "
                                    "factdesk's envelope keys, so it loads this fact)"))
        return None


def _body_only_invalid(data: bytes) -> int | None:
    """The byte offset (after any BOM) of the first invalid UTF-8 sequence when it lies in
    the body, after the frontmatter's closing line; None when the frontmatter is not whole
    before it."""
    raw = data.removeprefix(BOM)
    try:
        raw.decode("utf-8")
        return None
    except UnicodeDecodeError as exc:
        first = exc.start
    head = raw[:first].decode("utf-8").replace("\r\n", "\n")
    if not head.startswith("---\n") or _frontmatter_end(head) < 0:
        return None
    return first


def _conflict_line(text: str) -> int:
    """The line of the first `<<<<<<<` marker when all three markers appear, in order,
    outside code fences (RELIABILITY A18); 0 when they do not."""
    if "<<<<<<<" not in text:
        return 0
    state = first = 0
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        if state == 0 and line.startswith("<<<<<<<"):
            state, first = 1, number
        elif state == 1 and line.startswith("======="):
            state = 2
        elif state == 2 and line.startswith(">>>>>>>"):
            return first
    return 0


def _frontmatter_end(text: str) -> int:
    """Where the closing `---` line of `text` (LF line endings, opening with `---\n`)
    starts, less its newline; -1 when there is none. knomit searches after the opening
    line, so `---\n---\n` does not close at once."""
    end = text.find("\n---\n", 3)
    if end == 3:
        end = text.find("\n---\n", 4)
    return end


def _nul_in_frontmatter(path: str, data: bytes) -> ParseOutcome | None:
    """RELIABILITY A20: a text file whose only NUL bytes sit inside its frontmatter is a
    YAML error at that line (YAML forbids the character), not a binary file (A19). The
    frontmatter is never handed to YAML; the listed text shows each NUL as U+FFFD."""
    text = decode_text(data)[0]
    if text is None:
        return None
    text = text.replace("\r\n", "\n")
    end = _frontmatter_end(text) if text.startswith("---\n") else -1
    nul = text.find("\x00")
    if not 0 < nul < end or "\x00" in text[end:]:
        return None
    return _fail(path, "yaml_syntax", "NUL byte in the frontmatter (YAML forbids it)",
                 text.count("\n", 0, nul) + 1, text=text.replace("\x00", "\ufffd"),
                 title=_guess_title(text[end + 5:]))


def _guess_title(text: str) -> str:
    for line in text.split("\n"):
        if line.startswith("#"):
            return go_trim_space(line.lstrip("#"))[:300]
    return ""
