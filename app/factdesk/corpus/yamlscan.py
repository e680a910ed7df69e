"""libyaml's node tree of a YAML text, tokenised as knomit's yaml.v3 (v3.0.1) tokenises it.

libyaml (PyYAML's C loader, 0.2.5 and later) and yaml.v3 (a Go port of an older libyaml)
split some texts into tokens differently; running knomit's own `ParseFact` over mutated
real facts found each case (issue 22, docs/format.md). `compose_first` hands libyaml a
text in which the characters yaml.v3 reads otherwise are replaced by stand-ins of the same
length (so every span stays that of the text) and puts them back in the scalars after:

* a `:` followed by `,` `]` `}` inside a flow item stays in it (`[TODO:]` is "TODO:");
* `,` `[` `]` `'` … after a tag are tag characters up to a blank (`[!foo, a]` is `[a]`);
* a U+FEFF starting a line is text (yaml.v3's `is_bom` looks at its buffer, not the line);
* only the first YAML document is read (a `...` line ends it), as `yaml.Unmarshal` does.

`flow_questions` finds what yaml.v3 cannot read at all and libyaml can: a `?` in a flow
item. `YamlError` and `Note` carry what is found.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import yaml

try:  #: libyaml's loader, for every YAML file factdesk composes (the pure one without it)
    SAFE_LOADER: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml missing
    SAFE_LOADER = yaml.SafeLoader


#: the tags `Composer` gives nodes written without one (never a real tag)
IMPLICIT = "?"


class YamlError(Exception):
    """A frontmatter decoding error with a problem code and a 1-based frontmatter line."""

    def __init__(self, code: str, message: str, line: int = 1, column: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line
        self.column = column


TAG_OF_KIND = {yaml.ScalarNode: IMPLICIT + "str", yaml.SequenceNode: IMPLICIT + "seq",
                yaml.MappingNode: IMPLICIT + "map"}
MERGE = IMPLICIT + "merge"


class Composer(SAFE_LOADER):  # type: ignore[misc]
    """The C loader without PyYAML's implicit-tag resolution: that runs YAML 1.1's regular
    expressions over every plain scalar (`yes` → bool …) to choose a tag we never use, since
    scalars are decoded from their text here. A node written without a tag gets a `?` tag
    (so an explicit `!!str` stays told apart); explicit tags are kept, and checked."""

    def resolve(self, kind: type, value: object, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode and implicit[0] and value == "<<":
            return MERGE  # (a merge key where it is a key)
        return TAG_OF_KIND[kind]

    # (the path-based resolvers these keep track of are never registered)
    def descend_resolver(self, current_node: object, current_index: object) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


class Note(NamedTuple):
    """Something knomit reads differently from what the text suggests (a warning): `code`,
    the 1-based frontmatter line, and the message."""

    code: str
    line: int
    message: str


#: the start of a `knomit_unreadable` warning's message (and its end, after the reason)
UNREADABLE = "knomit will not load this file: "
UNREADABLE_END = "; the agents' own knomit will not see this fact"


#: how many `:` a frontmatter may have masked (`_compose`) before its error stands
_MAX_MASKED = 64


def compose_first(text: str, notes: list[Note]) -> yaml.Node | None:
    """libyaml's node tree of `text`'s first YAML document, tokenised where yaml.v3
    tokenises otherwise: a `:` followed by `,` `]` or `}` inside a plain scalar in a flow
    collection stays in the scalar (`[TODO:]` is "TODO:"; libyaml refuses it: "found
    unexpected ':'"). Such a colon is given to libyaml as a private-use character of the
    same length, put back in every scalar after; the spans stay those of `text`. So is a
    U+FEFF starting a line after the first: libyaml skips it there, yaml.v3 reads it as
    text (its `is_bom` looks at the start of its buffer, not at the line). And yaml.v3
    scans `,` `[` `]` into a tag (`!foo,`), where libyaml ends it: those are handed to
    libyaml as `;`, a tag character to both (`_tag_runs`)."""
    masked = text
    colon = None
    table: dict[int, str] = {}
    if "\ufeff" in text[1:] and (line_bom := text.find("\n\ufeff")) >= 0:
        bom = _unused_char(text)
        table[ord(bom)] = "\ufeff"
        masked = text.replace("\n\ufeff", "\n" + bom)
        line = text.count("\n", 0, line_bom) + 2
        notes.append(Note("bom_in_frontmatter", line, f"line {line} starts with a U+FEFF "
                          "(byte-order mark): knomit reads it as part of the text (a key "
                          "written after it is not that key), and so does factdesk; remove "
                          "it"))
    for _ in range(_MAX_MASKED):
        found: list[Note] = []
        try:
            node = _first_document(masked, found)
        except yaml.MarkedYAMLError as exc:
            at = exc.problem_mark.index if exc.problem_mark else -1
            if exc.context in ("while scanning a tag", "while parsing a tag") and (
                    masked[at:at + 1] in (",", "[", "]")):
                # (`!foo,`: yaml.v3 scans `,` `[` `]` as tag characters, libyaml stops; any
                # tag holding one is a custom tag, read as its text: `;` stands in)
                masked = masked[:at] + ";" + masked[at + 1:]
                continue
            if exc.problem != "found unexpected ':'" or masked[at:at + 1] != ":" or (
                    masked[at + 1:at + 2] not in (",", "]", "}")):
                raise
            if colon is None:
                colon = _unused_char(text, *map(chr, table))
                table[ord(colon)] = ":"
            masked = masked[:at] + colon + masked[at + 1:]
            continue
        runs = _tag_runs(node, masked) if node is not None and "!" in text else []
        if not runs:
            break
        for start, stop in runs:
            masked = masked[:start] + ";" * (stop - start) + masked[stop:]
    else:
        raise YamlError("yaml_syntax", "YAML: too many characters read otherwise by knomit's "
                        "yaml.v3 (`:` ending flow items, tags before commas)")
    notes.extend(found)
    if table and node is not None:
        _unmask(node, table)
    return node


#: the characters yaml.v3 scans into a tag after its handle (`yaml_parser_scan_tag_uri`)
_TAG_CHARS = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-"
                       ";/?:@&=+$,.!~*'()[]%")


def _tag_runs(node: yaml.Node, text: str) -> list[tuple[int, int]]:
    """Where yaml.v3 scans a tag on through a `,` that ended it for libyaml: in a flow
    collection, an empty node under a tag with a `,` right after it (`[!foo, a]`). yaml.v3
    takes `,` `[` `]` `'` … as tag characters up to a blank: the spans from the comma to
    there, which `_compose` hands to libyaml as `;` (a tag character to both), so that the
    tag tags what follows it, as in yaml.v3 (`[a]`, not `['', 'a']`)."""
    runs: list[tuple[int, int]] = []
    todo: list[tuple[yaml.Node, bool]] = [(node, False)]
    seen: set[int] = set()
    while todo:
        n, flow = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, yaml.ScalarNode):
            end = n.end_mark.index
            if (flow and n.tag[0] != IMPLICIT and n.value == "" and not n.style
                    and text[end:end + 1] == ","):
                run = end
                while text[run:run + 1] and text[run] in _TAG_CHARS:
                    run += 1
                runs.append((end, run))
        elif isinstance(n, yaml.SequenceNode):
            todo.extend((c, flow or bool(n.flow_style)) for c in n.value)
        elif isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                todo.extend(((k, flow or bool(n.flow_style)), (v, flow or bool(n.flow_style))))
    return runs


_DOCUMENT_MARK = re.compile(r"^(?:\.\.\.|---)(?:[ \t]|$)", re.MULTILINE)


def _first_document(text: str, notes: list[Note]) -> yaml.Node | None:
    """The first YAML document of `text`, as yaml.v3's `Unmarshal` decodes only that one:
    whatever follows a `...` (or a `--- x`) line is not read, once the token after it
    scans (yaml.v3's scanner reads that far: an error there still fails). A later document
    is noted (`yaml_document_end`): its keys are surely meant."""
    loader = Composer(text)
    try:
        node = loader.get_node() if loader.check_node() else None
        try:
            more = loader.check_node()
        except yaml.parser.ParserError:  # (libyaml wants `---` before a second document;
            more = True                  # a scanner error there fails yaml.v3 too)
    finally:
        loader.dispose()
    if more:
        end = node.end_mark.index if node is not None else 0
        mark = _DOCUMENT_MARK.search(text, end)
        line = text.count("\n", 0, mark.start()) + 1 if mark else 1
        if mark:
            _scan_past_the_end(text[mark.start():], line)
        notes.append(Note("yaml_document_end", line, "the keys after this line are not read: "
                          "it ends the YAML document, and knomit (yaml.v3) reads the first "
                          "document only (remove the line to have them read)"))
    return node


def _scan_past_the_end(rest: str, line: int) -> None:
    """yaml.v3's scanner reads the marker ending the first document and two tokens after it
    before it stops: a scanner error there fails the file (`--- x` over `refs: [a]` is the
    plain scalar `x refs`, then a `:`)."""
    try:
        for count, _token in enumerate(yaml.scan(rest, Loader=SAFE_LOADER)):
            if count >= 3:  # (the stream start, the marker, two tokens)
                break
    except yaml.MarkedYAMLError as exc:
        at = exc.problem_mark.line if exc.problem_mark else 0
        raise YamlError("yaml_syntax", f"YAML: {exc.problem or exc} (after the end of the "
                        "first YAML document, which knomit's yaml.v3 still scans)",
                        line + at) from None


def _unused_char(text: str, *taken: str) -> str:
    """A private-use character that `text` does not hold."""
    for code in range(0xE000, 0xF900):
        if chr(code) not in text and chr(code) not in taken:
            return chr(code)
    raise YamlError("yaml_syntax", "YAML: no private-use character is free to tokenise with")


def _unmask(node: yaml.Node, table: dict[int, str]) -> None:
    """Put the masked characters back in every scalar of `node` (keys too)."""
    todo, seen = [node], set()
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, yaml.ScalarNode):
            n.value = n.value.translate(table)
        elif isinstance(n, yaml.SequenceNode):
            todo.extend(n.value)
        elif isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                todo.extend((k, v))


def flow_questions(node: yaml.Node, text: str) -> list[Note]:
    """A `?` inside a plain scalar in a flow collection (`[Is it safe?, x]`): libyaml reads
    the item whole, yaml.v3 ends the scalar there and refuses the file ("did not find
    expected ',' or ']'"), whichever key holds it."""
    todo: list[tuple[yaml.Node, bool]] = [(node, False)]
    seen: set[int] = set()
    while todo:
        n, flow = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, yaml.ScalarNode):
            if flow and not n.style and "?" in n.value:
                at = text.find("?", n.start_mark.index)
                return [Note("knomit_unreadable", text.count("\n", 0, at) + 1,
                             f"{UNREADABLE}its YAML reader (yaml.v3) ends the flow item "
                             f"{n.value[:80]!r} at the '?' and refuses the frontmatter (quote "
                             f"the item){UNREADABLE_END}")]
        elif isinstance(n, yaml.SequenceNode):
            todo.extend((c, flow or bool(n.flow_style)) for c in reversed(n.value))
        elif isinstance(n, yaml.MappingNode):
            for k, v in reversed(n.value):
                todo.extend(((v, flow or bool(n.flow_style)), (k, flow or bool(n.flow_style))))
    return []
