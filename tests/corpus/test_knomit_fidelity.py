"""Reading as knomit reads (issue 22): each difference found by running knomit's own read
code (`ParseFact` on yaml.v3 v3.0.1) side by side with factdesk over mutated facts. Each
case is either read as knomit reads it, or warned about where knomit cannot load a file
that factdesk reads (`knomit_unreadable`), or listed in docs/format.md."""

from __future__ import annotations

import json

import pytest

from factdesk.corpus.codec import parse_fact
from tests.conftest import Corpus

PATH = "kb/t/x/f.md"


def fact_file(front: str, rest: str = "# T\n\nBody\n") -> bytes:
    return ("---\ntype: observation\n" + front + "---\n" + rest).encode()


def found(data: bytes) -> list[tuple[str, str, int]]:
    return [(p.code, p.severity.value, p.line) for p in parse_fact(PATH, data).problems]


# --- 1. factdesk's envelope keys: knomit never reads them -----------------------------------

@pytest.mark.parametrize(("line", "key", "shape"), [
    ("claim_type: [a]", "claim_type", "list"),
    ("subject_ref: {a: b}", "subject_ref", "mapping"),
    ("claimant_agent_id: [x, y]", "claimant_agent_id", "list"),
    ("settle_by: {at: 2026-01-01}", "settle_by", "mapping"),
])
def test_a_wrong_shape_envelope_key_is_ignored_as_knomit_ignores_it(
        line: str, key: str, shape: str) -> None:
    """knomit loads the fact (the key is not one of its fields); factdesk refused it with
    `field_shape`. Now: read, the key taken as absent, with a warning at its line."""
    out = parse_fact(PATH, fact_file(line + "\ndomain: [a]\n"))
    assert out.fact is not None, out.problems
    assert getattr(out.fact.envelope, key) is None and out.fact.domain == ("a",)
    assert found(fact_file(line + "\n")) == [("envelope_shape", "warning", 3)]
    message = out.problems[0].message
    assert f"{key} must be a string, got a {shape}" in message and "knomit" in message


# --- 2. `motifs` not a list: a version difference --------------------------------------------

@pytest.mark.parametrize("line", ["motifs: abc-def", "motifs: {a: b}"])
def test_motifs_not_a_list_is_refused_as_knomits_motif_branch_refuses_it(line: str) -> None:
    """knomit v0.5.3 (no `motifs` field) ignores the key; knomit's motif branch, whose
    format factdesk reads, refuses the file. factdesk refuses it too, and says which
    knomit loads it."""
    out = parse_fact(PATH, fact_file(line + "\n"))
    assert out.fact is None
    assert [(p.code, p.line) for p in out.problems] == [("field_shape", 3)]
    message = out.problems[0].message
    assert "motif branch refuses" in message and "v0.5.3" in message and "ignores" in message


# --- 3. Go's strings.TrimSpace, not Python's str.strip ----------------------------------------

@pytest.mark.parametrize(("rest", "title", "body"), [
    ("# T\x1f\n\nbody\x1c\n", "T\x1f", "body\x1c"),  # kept at the ends, as Go keeps them
    ("# \x1e\n\nbody\n", "\x1e", "body"),  # a title Python's strip empties: knomit reads it
    ("#\x1d T \x1f\n", "\x1d T \x1f", ""),
    ("# T\u3000\xa0\x85\n\n\u2028body\u205f\n", "T", "body"),  # what both trim
])
def test_title_and_body_are_trimmed_as_go_trims_them(rest: str, title: str, body: str) -> None:
    """U+001C–U+001F are whitespace to Python's `str.strip`, not to Go's `unicode.IsSpace`
    (`strings.TrimSpace`): knomit keeps them at the ends of the title and body."""
    out = parse_fact(PATH, fact_file("", rest))
    assert out.fact is not None, out.problems
    assert (out.fact.title, out.fact.body) == (title, body)


@pytest.mark.parametrize("rest", ["\x1d# T\n\nbody\n", "\x1c\n# T\n"])
def test_a_separator_before_the_title_line_is_no_title_as_knomit_says(rest: str) -> None:
    """knomit trims the region after the frontmatter with Go's TrimSpace: a leading U+001D
    stays, and the first line does not start with `#` ("no title heading found")."""
    assert found(fact_file("", rest)) == [("missing_h1", "error", 4)]


def test_a_written_title_reads_back_as_written() -> None:
    from factdesk.corpus.writer import edit_text, serialize_fact

    data = serialize_fact({"type": "observation"}, "T\x1f", "body\x1c")
    fact = parse_fact(PATH, data).fact
    assert fact is not None and (fact.title, fact.body) == ("T\x1f", "body\x1c")
    edited = parse_fact(PATH, edit_text(data, title="U\x1e", body="b\x1d")).fact
    assert edited is not None and (edited.title, edited.body) == ("U\x1e", "b\x1d")


# --- 4. evidence_weight: .nan / .inf ---------------------------------------------------------

@pytest.mark.parametrize("value", [".nan", ".NaN", ".inf", "-.inf", "+.Inf", "!!float .nan"])
def test_a_nonfinite_evidence_weight_is_read_as_knomit_reads_it(value: str) -> None:
    """knomit has no check on evidence_weight: NaN and ±Inf load. factdesk reads the fact
    too, counts the weight as not recorded (nothing non-finite reaches SQLite, JSON or a
    sort), and warns at its line."""
    out = parse_fact(PATH, fact_file(f"evidence_weight: {value}\nsources: 2\n"))
    assert out.fact is not None, out.problems
    assert out.fact.evidence_weight is None and out.fact.sources == 2
    assert [(p.code, p.severity.value, p.line) for p in out.problems] == [
        ("evidence_weight_nonfinite", "warning", 3)]
    assert "knomit reads it" in out.problems[0].message


# --- 5. `!!null x`: yaml.v3 cannot decode text under a null tag -------------------------------

@pytest.mark.parametrize("line", [
    "domain: !!null x", "entities: [!!null x, a]", "confidence: !!null x", 'type: !!null "x"',
    "origin: !!null authored",
])
def test_text_under_a_null_tag_is_refused_as_knomit_refuses_it(line: str) -> None:
    """yaml.v3: "cannot decode !!str `x` as a !!null" — knomit refuses the file."""
    out = parse_fact(PATH, ("---\n" + line + "\n---\n# T\n").encode())
    assert out.fact is None
    assert [(p.code, p.line) for p in out.problems] == [("yaml_value", 2)]
    assert "as a !!null" in out.problems[0].message


@pytest.mark.parametrize(("line", "want"), [
    ("domain: !!null", ()), ('domain: !!null ""', ()), ("domain: !!null ~", ()),
    ('domain: [!!null "", a]', ("a",)), ("domain: [!!null null, a]", ("a",)),
])
def test_a_null_tag_on_a_null_is_null(line: str, want: tuple[str, ...]) -> None:
    out = parse_fact(PATH, fact_file(line + "\n"))
    assert out.fact is not None and out.fact.domain == want and not out.problems


def test_text_under_a_null_tag_outside_knomits_fields_costs_nothing() -> None:
    """An unknown key is never decoded by knomit; an envelope key is not read by it."""
    out = parse_fact(PATH, fact_file("note: !!null x\nclaim_type: !!null x\n"))
    assert out.fact is not None and out.fact.envelope.claim_type is None
    assert [(p.code, p.line) for p in out.problems] == [("envelope_shape", 4)]


# --- 6. `?` inside a flow item: yaml.v3 refuses it -------------------------------------------

@pytest.mark.parametrize(("front", "item"), [
    ("entities: [Is it safe?, x]\n", "Is it safe?"),
    ("domain: [a?b]\n", "a?b"),
    ("note: {q: why?}\n", "why?"),  # (a key knomit never decodes: the scanner still fails)
    ("refs: [x,\n  does it hold? maybe]\n", "does it hold? maybe"),
])
def test_a_question_mark_in_a_flow_item_is_read_and_said_knomit_unreadable(
        front: str, item: str) -> None:
    """yaml.v3 ends a plain scalar at `?` in a flow collection and then refuses the file
    ("did not find expected ',' or ']'"); libyaml reads the item whole. The form agents
    write most (`[Is it safe?, x]`): read, with a `knomit_unreadable` warning, since the
    agents' own knomit will not see the fact."""
    out = parse_fact(PATH, fact_file(front))
    assert out.fact is not None, out.problems
    assert [(p.code, p.severity.value, p.line) for p in out.problems] == [
        ("knomit_unreadable", "warning", 3 + front.split(item)[0].count("\n"))]
    message = out.problems[0].message
    assert message.startswith("knomit will not load this file: ") and repr(item) in message
    assert "the agents' own knomit will not see this fact" in message


@pytest.mark.parametrize("front", [
    "entities: ['Is it safe?', \"why?\"]\n", "title: Is it safe?\n", "domain:\n  - is it?\n",
])
def test_a_question_mark_knomit_reads_is_no_finding(front: str) -> None:
    out = parse_fact(PATH, fact_file(front))
    assert out.fact is not None and out.problems == ()


def test_check_says_which_facts_knomit_cannot_load(corpus: Corpus,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`factdesk check` lists the fact (a warning: factdesk serves it) and says why."""
    from factdesk.cli import main

    corpus.write("kb/t/x/abababab.md", fact_file("entities: [Is it safe?, x]\n"))
    assert main(["check", "--kb", str(corpus.root), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    found = [w for w in out["warnings"] if w["code"] == "knomit_unreadable"]
    assert [(w["path"], w["line"]) for w in found] == [("kb/t/x/abababab.md", 3)]
    assert "the agents' own knomit will not see this fact" in found[0]["message"]


# --- 7. `:` ending a flow item: yaml.v3 keeps it in the item ---------------------------------

@pytest.mark.parametrize(("front", "key", "want"), [
    ("entities: [TODO:]\n", "entities", ("TODO:",)),
    ("entities: [a, TODO:, x]\n", "entities", ("a", "TODO:", "x")),
    ("domain: [a:b:]\n", "domain", ("a:b:",)),
    ("refs: [x,\n  see:]\n", "refs", ("x", "see:")),
])
def test_a_colon_ending_a_flow_item_is_read_as_knomit_reads_it(
        front: str, key: str, want: tuple[str, ...]) -> None:
    """yaml.v3 keeps a `:` followed by `,` `]` or `}` in the plain scalar (`[TODO:]` is
    "TODO:"); libyaml refused the file ("found unexpected ':'")."""
    out = parse_fact(PATH, fact_file(front))
    assert out.fact is not None, out.problems
    assert getattr(out.fact, key) == want and out.problems == ()


def test_a_colon_ending_a_flow_map_value_and_the_forms_both_refuse() -> None:
    out = parse_fact(PATH, fact_file("note: {k: v:}\n"))
    assert out.fact is not None and out.fact.extra["note"] == {"k": "v:"}
    for front in ("domain: [a:?]\n", "domain: [a:[b]]\n", "domain: [a:{b}]\n"):
        assert [p.code for p in parse_fact(PATH, fact_file(front)).problems] == ["yaml_syntax"]


# --- 8. `...` (or `--- x`) inside the frontmatter: yaml.v3 reads the first document ----------

@pytest.mark.parametrize(("front", "line"), [
    ("domain: [a]\n...\nentities: [b]\n", 4),
    ("domain: [a]\n--- x\n", 4),
    ("domain: [a]\n...\n--- \nentities: [b]\n", 4),
    ("domain: [a]\n... \n[not, a, map]\n", 4),
])
def test_keys_after_a_document_end_are_dropped_as_knomit_drops_them(
        front: str, line: int) -> None:
    """knomit decodes the first YAML document only: the later keys are not read (libyaml
    refused the file: "expected a single document"). Read so, with a warning at the
    marker's line, since the writer surely meant those keys."""
    out = parse_fact(PATH, fact_file(front))
    assert out.fact is not None, out.problems
    assert out.fact.domain == ("a",) and out.fact.entities == ()
    assert [(p.code, p.severity.value, p.line) for p in out.problems] == [
        ("yaml_document_end", "warning", line)]
    assert "knomit" in out.problems[0].message


@pytest.mark.parametrize("front", ["domain: [a]\n...\n", "domain: [a]\n...\n# a comment\n"])
def test_a_document_end_with_nothing_after_it_is_no_finding(front: str) -> None:
    out = parse_fact(PATH, fact_file(front))
    assert out.fact is not None and out.fact.domain == ("a",) and out.problems == ()


def test_a_token_yaml_v3_cannot_scan_after_the_document_end_still_fails() -> None:
    """yaml.v3's scanner reads the token after `...` before it stops: both refuse."""
    assert [p.code for p in parse_fact(PATH, fact_file("domain: [a]\n...\n@x: [\n")).problems
            ] == ["yaml_syntax"]


def test_an_edit_of_a_file_with_a_document_end_lands_before_it() -> None:
    from factdesk.corpus.writer import edit_frontmatter

    data = fact_file("domain: [TODO:]\n...\nentities: [b]\n")
    edited = edit_frontmatter(data, {"sources": 3, "domain": ["x"]})
    assert edited == fact_file("domain: [x]\nsources: 3\n...\nentities: [b]\n")
    fact = parse_fact(PATH, edited).fact
    assert fact is not None and (fact.domain, fact.sources) == (("x",), 3)


# --- 9. U+FEFF inside the frontmatter, a tag before a comma, a BOM before the file ------------

def test_a_bom_starting_a_frontmatter_line_is_text_as_knomit_reads_it() -> None:
    """yaml.v3 reads a U+FEFF at the start of a line as text (its `is_bom` looks at the
    start of its buffer, not at the line): `\\ufeffdomain` is an unknown key, and `domain`
    is not set. libyaml skipped it and then refused the file. Read as knomit reads it, with
    a warning at the line."""
    out = parse_fact(PATH, fact_file("entities: [e]\n\ufeffdomain: [a]\n"))
    assert out.fact is not None, out.problems
    assert out.fact.domain == () and out.fact.extra == {"\ufeffdomain": ["a"]}
    assert [(p.code, p.severity.value, p.line) for p in out.problems] == [
        ("bom_in_frontmatter", "warning", 4)]
    fact = parse_fact(PATH, fact_file("domain: [a,\n\ufeffb]\n")).fact
    assert fact is not None and fact.domain == ("a", "\ufeffb")


@pytest.mark.parametrize("front", [
    "entities: [e]\n\ufeff\ndomain: [a]\n", "domain:\n\ufeff- a\n", "domain: [a]\n\ufeff# c\n",
    "domain:\n  - a\n\ufeff  - b\n",
])
def test_a_bom_starting_a_line_where_text_cannot_stand_fails_as_in_knomit(front: str) -> None:
    """yaml.v3: "could not find expected ':'" (libyaml read these, skipping the BOM)."""
    assert [p.code for p in parse_fact(PATH, fact_file(front)).problems] == ["yaml_syntax"]


def test_a_bom_opening_the_frontmatter_is_skipped_by_both() -> None:
    out = parse_fact(PATH, b"---\n\xef\xbb\xbftype: reference\n---\n# T\n")
    assert out.fact is not None and out.fact.type == "reference" and out.problems == ()


@pytest.mark.parametrize(("front", "want"), [
    ("domain: [!foo, a]\n", ("a",)),
    ("domain: [a, !foo, b]\n", ("a", "b")),
    ("domain: [!foo, null]\n", ("null",)),  # (under the custom tag `!foo,`: text, kept)
    ("domain: [!!str, a]\n", ("a",)),
    ("domain: [!foo,\n  b]\n", ("b",)),
    ("domain: [!foo, &x a]\n", ("a",)),
    ("domain: [!foo, ]\n", ("",)),
])
def test_a_tag_before_a_comma_tags_the_next_item_as_in_knomit(
        front: str, want: tuple[str, ...]) -> None:
    """yaml.v3 scans `,` as part of a tag (`!foo,`), which then tags the next item; libyaml
    ends the tag at the comma and reads an empty item (`['', 'a']`)."""
    out = parse_fact(PATH, fact_file(front))
    assert out.fact is not None, out.problems
    assert out.fact.domain == want and out.problems == ()


@pytest.mark.parametrize("front", ["domain: [!foo,a]\n", "domain: [!foo, !bar a]\n",
                                   "domain: [!foo,[x y], a]\n"])
def test_a_tag_running_into_the_next_item_fails_as_in_knomit(front: str) -> None:
    assert [p.code for p in parse_fact(PATH, fact_file(front)).problems] == ["yaml_syntax"]


def test_a_bom_before_the_file_is_read_and_said_knomit_unreadable() -> None:
    """knomit: "missing opening frontmatter delimiter" (its file must start with `---`).
    factdesk reads it (RELIABILITY A07) and now says knomit will not."""
    out = parse_fact(PATH, b"\xef\xbb\xbf" + fact_file(""))
    assert out.fact is not None and out.fact.title == "T"
    assert [(p.code, p.severity.value, p.line) for p in out.problems] == [
        ("knomit_unreadable", "warning", 1)]
    message = out.problems[0].message
    assert message.startswith("knomit will not load this file: ") and "byte-order mark" in message
    assert message.endswith("the agents' own knomit will not see this fact")


# --- neighbours found by running knomit's reader over mutated real facts ----------------------

@pytest.mark.parametrize(("line", "want"), [
    ("type: !foo, pattern", "pattern"),  # yaml.v3's tag is `!foo,` (libyaml: "did not find
    ("type: !foo[x] pattern", "pattern"),  # expected whitespace or line break")
    ("type: !foo,bar pattern", "pattern"),
    ("type: !![x] pattern", "pattern"),  # (libyaml: "did not find expected tag URI")
])
def test_a_tag_holding_a_comma_or_bracket_is_read_as_knomit_reads_it(line: str, want: str) -> None:
    out = parse_fact(PATH, ("---\n" + line + "\n---\n# T\n").encode())
    assert out.fact is not None, out.problems
    assert out.fact.type == want and out.problems == ()


@pytest.mark.parametrize(("line", "want"), [
    ("!!str type: reference", "reference"), ("!foo type: reference", "reference"),
    ("!!binary dHlwZQ==: reference", "reference"), ("!!null ~: reference", "observation"),
])
def test_a_tagged_key_is_decoded_as_knomit_decodes_it(line: str, want: str) -> None:
    """yaml.v3 decodes each key against its tag before matching it to a field: a null key
    is skipped, `!!binary` gives its text."""
    out = parse_fact(PATH, ("---\n" + line + "\n---\n# T\n").encode())
    assert out.fact is not None, out.problems
    assert out.fact.type == want and out.problems == ()


@pytest.mark.parametrize("line", ["!!null refs: [a]", "!!int type: reference"])
def test_a_key_its_tag_cannot_decode_fails_as_in_knomit(line: str) -> None:
    """yaml.v3: "cannot decode !!str `refs` as a !!null" (factdesk read the key `refs`)."""
    out = parse_fact(PATH, ("---\n" + line + "\n---\n# T\n").encode())
    assert [(p.code, p.line) for p in out.problems] == [("yaml_value", 2)]


@pytest.mark.parametrize(("front", "want"), [
    ("domain: [!fooagentic-,engineering, evaluation, x]\n", ("evaluation", "x")),
    ("domain: [!foo,a, b c, d]\n", ("b c", "d")),
    ("domain: [!foo,a b, c]\n", ("b", "c")),  # (the tag's end cuts the plain item `a b`)
    ("domain: [!foo,a, ]\n", ("",)),
    ("domain: [!foo,[x], a]\n", ("a",)),
])
def test_a_tag_scanned_on_through_commas_swallows_what_yaml_v3_swallows(
        front: str, want: tuple[str, ...]) -> None:
    out = parse_fact(PATH, fact_file(front))
    assert out.fact is not None, out.problems
    assert out.fact.domain == want and out.problems == ()


def test_binary_is_decoded_as_go_decodes_it() -> None:
    """Go's base64 skips line ends but not spaces, and a Go string holds any bytes: the
    text is shown with U+FFFD (as an invalid body is); a key so decoded is an unknown key."""
    fact = parse_fact(PATH, fact_file('domain: [!!binary  failover, !!binary "aGVs\\nbG8="]\n'
                                      "!!binary refs: [a]\n")).fact
    assert fact is not None and fact.domain[0].startswith("}\ufffd") and fact.domain[1] == "hello"
    assert fact.refs == ()
    assert [p.code for p in parse_fact(PATH, fact_file('domain: [!!binary "aGVs bG8="]\n')
                                       ).problems] == ["yaml_value"]


def test_the_token_after_a_document_start_is_scanned_as_in_yaml_v3() -> None:
    """`--- x` over `refs: [a]`: yaml.v3 scans on into the plain scalar `x refs` and fails
    ("mapping values are not allowed in this context")."""
    out = parse_fact(PATH, fact_file("domain: [a]\n--- x\nrefs: [a]\n"))
    assert [(p.code, p.line) for p in out.problems] == [("yaml_syntax", 5)]


def test_the_accept_editor_splits_the_title_as_knomit_reads_it() -> None:
    """The edit-then-accept editor prefills the title: knomit's, U+001F kept (a neighbour
    of item 3)."""
    pytest.importorskip("PySide6")
    from factdesk.gui.proposal_views import _split

    assert _split("---\ntype: observation\n---\n# T\x1f\n\nbody\n") == (
        "type: observation\n", "T\x1f", "body\n")
