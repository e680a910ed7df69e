"""The reader: knomit's parse algorithm, yaml.v3 semantics, and every hostile input row."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factdesk.corpus.codec import parse_fact


#: the "lol" alias bomb, `levels` deep (9 ** levels leaves)
def lol(levels: int) -> bytes:
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return ("---\n" + "\n".join(lines) + "\n---\n# T\n").encode()


LOL_4, LOL_5 = lol(4), lol(5)
GOOD = b"---\ntype: observation\ndomain: [a]\nconfidence: 0.8\nsources: 1\n---\n# Title\n\nBody\n"


def codes(data: bytes) -> list[str]:
    return [p.code for p in parse_fact("kb/t/x/f.md", data).problems]


def test_good_fact_parses_all_fields() -> None:
    out = parse_fact("kb/t/x/f.md", GOOD)
    assert out.fact is not None and not out.problems
    f = out.fact
    assert (f.title, f.body, f.kind, f.type, f.origin) == ("Title", "Body", "epistemic",
                                                          "observation", "authored")
    assert f.confidence == 0.8 and f.sources == 1 and f.domain == ("a",)
    assert f.title_line == 7 and f.line_of("confidence") == 4


def test_sources_at_the_int64_limit_is_read_exactly() -> None:
    fact = parse_fact("kb/t/x.md", b"---\nsources: 9223372036854775807\n---\n# T\n").fact
    assert fact is not None and fact.sources == 2**63 - 1  # not rounded through a float


@pytest.mark.parametrize(("data", "code"), [
    (b"", "empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "binary"),
    (b"\xff\xfe-\x00-\x00", "encoding_unsupported"),
    (b"---\ntitle: caf\xe9\n---\n# T\n", "encoding"),
    (b"# Just markdown\n", "no_frontmatter"),
    (b"---\ntype: observation\n# T\n", "unterminated_frontmatter"),
    (b"---\n---\n# T\n", "unterminated_frontmatter"),
    (b"---\ntitle: [unclosed\n---\n# T\n", "yaml_syntax"),
    (b"---\nx: !!python/object/apply:os.system [\"touch /tmp/pwned\"]\n---\n# T\n", "yaml_tag"),
    # A04: a "billion laughs" is refused once its expansion passes MAX_EXPANSION nodes
    (LOL_5, "yaml_alias"),
    (b"---\na: &a [*a]\n---\n# T\n", "yaml_alias"),  # an alias inside its own anchor
    (b"---\nconfidence: !!str 0.5\n---\n# T\n", "confidence_type"),  # as knomit
    (b"---\nsources: !!int abc\n---\n# T\n", "yaml_value"),
    (b"---\n<<: [a, b]\n---\n# T\n", "yaml_syntax"),  # a merge needs maps
    (b"---\nx: !!python/object/new:os.system [ls]\n---\n# T\n", "yaml_tag"),
    (b"---\nx: " + b"[" * 10000 + b"\n---\n# T\n", "yaml_depth"),
    (b"---\ntype: observation\ntype: hypothesis\n---\n# T\n", "yaml_duplicate_key"),
    (b"---\n- a\n- b\n---\n# T\n", "frontmatter_not_mapping"),
    (b"---\ntype: factoid\n---\n# T\n", "unknown_type"),
    (b"---\nkind: pragmatic\ntype: observation\n---\n# T\n", "unknown_type"),
    (b"---\nkind: Pragmatic\ntype: policy\n---\n# T\n", "kind_not_canonical"),
    (b"---\nkind: pragmatic\ntype: Policy\n---\n# T\n", "type_not_canonical"),
    (b'---\ntype: " hypothesis "\n---\n# T\n', "type_not_canonical"),
    (b"---\nkind: persuasive\ntype: policy\n---\n# T\n", "unknown_kind"),
    (b"---\nconfidence: high\n---\n# T\n", "confidence_type"),
    (b'---\nconfidence: "0.8"\n---\n# T\n', "confidence_type"),
    (b"---\nconfidence: yes\n---\n# T\n", "confidence_type"),
    (b"---\nconfidence: 1.7\n---\n# T\n", "confidence_range"),
    (b"---\nconfidence: 80\n---\n# T\n", "confidence_range"),
    (b"---\nsources: -1\n---\n# T\n", "sources_range"),
    # past Go's int64 (knomit cannot decode it, and it crashed the index: SQLite's INTEGER)
    (b"---\nsources: 9223372036854775808\n---\n# T\n", "sources_range"),
    (b"---\nsources: 99999999999999999999999\n---\n# T\n", "sources_range"),
    (b"---\nsources: 1e23\n---\n# T\n", "sources_range"),
    (b"---\nsources: 1" + b"0" * 400 + b"\n---\n# T\n", "sources_range"),  # past a float
    (b"---\nconfidence: 1" + b"0" * 400 + b"\n---\n# T\n", "confidence_range"),
    (b"---\nrefs: kb/x.md\n---\n# T\n", "refs_shape"),
    (b"---\nrefs: [{a: 1}]\n---\n# T\n", "refs_shape"),
    (b"---\ntype: observation\n---\nno heading\n", "missing_h1"),
    (b"---\ntype: observation\n---\n#   \n", "missing_h1"),
    (b"---\ntype: observation\n---\n# T\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n",
     "conflict_markers"),
    (b"---\ntitle: \"a\x00b\"\n---\n# T\n", "yaml_syntax"),  # A20 (A19 is below)
    (b"---\ntype: observation\n---\n# T\n\nbody \x00 here\n", "binary"),
    (b"---\nx: !!python/name:os.system\n---\n# T\n", "yaml_tag"),  # A02
    (b"---\nconfidence: .inf\n---\n# T\n", "confidence_nonfinite"),  # B05
    (b"---\nconfidence: -.inf\n---\n# T\n", "confidence_nonfinite"),
    (b"---\nconfidence: -0.2\n---\n# T\n", "confidence_range"),  # B04
    (b"---\nconfidence: true\n---\n# T\n", "confidence_type"),  # B06: never a bool as 1.0
    (b"---\nconfidence: \xe2\x80\x8b\n---\n# T\n", "confidence_type"),
])
def test_bad_input_is_one_problem_with_a_code(data: bytes, code: str) -> None:
    out = parse_fact("kb/t/x/f.md", data)
    assert code in [p.code for p in out.problems]
    assert all(p.path == "kb/t/x/f.md" and p.line >= 1 for p in out.problems)


@pytest.mark.parametrize(("data", "line"), [
    # markers without git's space after them (this crashed `check` and `index` outright)
    (b"---\ntype: observation\n---\n# T\n<<<<<<<ours\na\n=======x\nb\n>>>>>>>theirs\n", 5),
    # in the frontmatter
    (b"---\n<<<<<<< HEAD\ntype: observation\n=======\ntype: hypothesis\n>>>>>>> b\n---\n# T\n", 2),
    # a fenced block before the real markers: its lone marker does not count
    (b"---\ntype: observation\n---\n# T\n```\n<<<<<<< x\n```\n<<<<<<< a\n=======\n>>>>>>> b\n", 8),
])
def test_conflict_markers_are_reported_at_their_first_line(data: bytes, line: int) -> None:
    out = parse_fact("kb/t/x/f.md", data)
    assert out.fact is None
    assert [(p.code, p.line) for p in out.problems] == [("conflict_markers", line)]


@pytest.mark.parametrize("data", [
    b"---\r\ntype: observation\r\n---\n# T\n\nBody\n",  # CRLF, then LF
    b"---\ntype: observation\n---\n# T\r\n",  # LF, then CRLF
    b"---\ntype: observation\n---\n# T\rBody\n",  # a lone CR
])
def test_mixed_line_endings_parse_with_a_warning(data: bytes) -> None:
    """RELIABILITY A09: parsed, with a warning; the writer refuses such files."""
    out = parse_fact("kb/t/x/f.md", data)
    assert out.fact is not None and out.fact.type == "observation"
    assert [(p.code, p.severity.value) for p in out.problems] == [("line_endings", "warning")]


def test_yaml_v3_semantics_for_lists_and_numbers() -> None:
    data = (b"---\nentities: [yes, 1.5, true, 2026-07-28, null, '0123']\n"
            b"confidence: .5\nsources: 1.7\n---\n# T\n")
    fact = parse_fact("kb/t/x/f.md", data).fact
    assert fact is not None
    assert fact.entities == ("yes", "1.5", "true", "2026-07-28", "0123")
    assert fact.confidence == 0.5 and fact.sources == 1


def test_bom_crlf_and_unknown_keys() -> None:
    data = b"\xef\xbb\xbf---\r\ntype: hypothesis\r\nx-agent: {a: [1, 2]}\r\n---\r\n# T\r\n\r\nB\r\n"
    out = parse_fact("kb/t/x/f.md", data)
    assert out.fact is not None and out.fact.type == "hypothesis"
    assert out.fact.extra == {"x-agent": {"a": ["1", "2"]}}
    assert out.fact.body == "B"


def test_conflict_marker_inside_code_fence_is_not_a_conflict() -> None:
    data = GOOD + b"```\n<<<<<<< a\n=======\n>>>>>>> b\n```\n"
    assert "conflict_markers" not in codes(data)


def test_horizontal_rule_in_body_is_body() -> None:
    fact = parse_fact("kb/t/x/f.md", GOOD + b"\n---\n\nmore\n").fact
    assert fact is not None and "---" in fact.body


def test_illegal_origin_degrades_like_knomit() -> None:
    fact = parse_fact("kb/t/x/f.md", b"---\ntype: pattern\norigin: distilled\n---\n# T\n").fact
    assert fact is not None and fact.origin == "authored" and fact.origin_raw == "distilled"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=4000))
def test_parser_is_total(data: bytes) -> None:
    out = parse_fact("kb/t/x/f.md", data)
    assert (out.fact is not None) or out.problems


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_parser_is_total_on_frontmatter_text(text: str) -> None:
    out = parse_fact("kb/t/x/f.md", ("---\n" + text + "\n---\n# T\n").encode())
    assert (out.fact is not None) or out.problems


@pytest.mark.parametrize(("value", "refused"), [
    ("=", False), ("<<", False), ("yes", False), ("!!binary aGVsbG8=", False),
    ("!!set {a: null}", False), ("!!omap [{a: 1}]", False), ("!include foo", False),
    ("!!python/name:os.system", True), ("!!python/object/apply:os.system [ls]", True),
    ("[!!python/name:os.system ]", True), ("{a: !!python/object:x.Y {}}", True)])
def test_only_the_python_tags_are_refused(value: str, refused: bool) -> None:
    """yaml.v3 reads any tag as text or as the type it names; the `!!python/*` family, which
    PyYAML's unsafe loaders would run, is refused (RELIABILITY A02) and nothing else (A03,
    deliberately as knomit: docs/format.md)."""
    from factdesk.corpus import yamlv3

    try:
        yamlv3.compose_mapping(f"a: {value}\n")
        got = False
    except yamlv3.YamlError as exc:
        got = exc.code == "yaml_tag"
    assert got == refused


@pytest.mark.parametrize(("data", "want"), [
    # issue 15: files knomit reads that factdesk refused
    (b"---\nbase: &b [x, y]\ndomain: *b\n---\n# T\n", {"domain": ("x", "y")}),
    (b"---\n_defaults: &d {type: hypothesis, confidence: 0.5}\n<<: *d\nconfidence: 0.25\n"
     b"---\n# T\n", {"type": "hypothesis", "confidence": 0.25}),  # written keys win
    (b"---\n<<: [{sources: 2}, {sources: 3, type: reference}]\n---\n# T\n",
     {"sources": 2, "type": "reference"}),  # the first map wins
    (b"---\ndomain: [!!binary aGVsbG8=, !custom b]\nx: !!set {a: null}\n---\n# T\n",
     {"domain": ("hello", "b")}),
    (b"---\nsources: 01\n---\n# T\n", {"sources": 1}),  # Go's ParseInt: octal
    (b"---\nsources: 0_1\n---\n# T\n", {"sources": 1}),
    (b"---\nsources: 010\n---\n# T\n", {"sources": 8}),
    (b"---\nsources: 09\n---\n# T\n", {"sources": 9}),  # no octal: a float, truncated
    (b"---\nsources: 0x10\n---\n# T\n", {"sources": 16}),
    (b'---\nconfidence: !!float "0.5"\nsources: !!int "3"\n---\n# T\n',
     {"confidence": 0.5, "sources": 3}),
    (b"---\nconfidence: !!float 1\n---\n# T\n", {"confidence": 1.0}),
    (b"---\ntype: !!str hypothesis\n---\n# T\n", {"type": "hypothesis"}),
    (LOL_4, {"type": "observation"}),  # ~7,400 nodes: yaml.v3 reads it, so does factdesk
])
def test_what_knomit_reads_is_read(data: bytes, want: dict[str, object]) -> None:
    out = parse_fact("kb/t/x/f.md", data)
    assert out.fact is not None, out.problems
    assert {k: getattr(out.fact, k) for k in want} == want
    assert [p for p in out.problems if p.severity.value == "error"] == []


@pytest.mark.parametrize(("data", "title", "code"), [
    (b"---\ntype: observation\n---\n## Second level\n", "Second level", "title_heading"),
    (b"---\ntype: observation\n---\n#Title\n\nBody\n", "Title", "title_heading"),
    (b"---\ntype: observation\n---\n### A #3 title ##\n", "A #3 title ##", "title_heading"),
    (b"---\nconfidence: .nan\nsources: 2\n---\n# T\n", "T", "confidence_nan"),
    (b"---\nconfidence: .NaN\n---\n# T\n", "T", "confidence_nan"),
    (b"---\ntype: observation\n---\n# T\n\nbody caf\xe9\n", "T", "encoding"),
])
def test_read_as_knomit_reads_with_a_warning(data: bytes, title: str, code: str) -> None:
    """knomit strips every leading `#` of the title line, lets NaN pass its range check,
    and keeps any bytes in the body: read, each with a warning of its own."""
    out = parse_fact("kb/t/x/f.md", data)
    assert out.fact is not None and out.fact.title == title
    assert [(p.code, p.severity.value) for p in out.problems] == [(code, "warning")]
    assert out.fact.confidence == 0.0 or code != "confidence_nan"  # (no confidence: not NaN)


def test_nothing_python_runs_and_an_alias_bomb_stays_bounded(tmp_path: Path) -> None:
    """A02, A04: a deeper "lol" (9 ** 9 leaves) is refused in bounded time and memory."""
    import subprocess
    import sys

    marker = tmp_path / "pwned"
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))\n"
        "from factdesk.corpus.codec import parse_fact\n"
        "from tests.corpus.test_codec import lol\n"
        "print([p.code for p in parse_fact('kb/x.md', lol(9)).problems])\n"
        f"print([p.code for p in parse_fact('kb/x.md', b'---\\nx: !!python/object/apply:os.system"
        f" [\"touch {marker}\"]\\n---\\n# T\\n').problems])\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=20,
                          text=True, cwd=Path(__file__).resolve().parents[2])
    assert proc.stdout.split("\n")[:2] == ["['yaml_alias']", "['yaml_tag']"], proc.stderr
    assert not marker.exists()


@pytest.mark.parametrize(("data", "code", "line"), [
    # A20: the NUL sits inside the frontmatter of a text file: a YAML error at its line
    (b"---\ntype: observation\nnote: \"a\x00b\"\n---\n# Kept title\n", "yaml_syntax", 3),
    (b"\xef\xbb\xbf---\r\ntype: observation\r\nnote: a\x00b\r\n---\r\n# Kept title\r\n",
     "yaml_syntax", 3),
    # A19: anything else with a NUL in its first 8 KiB is a binary file, never parsed
    (b"---\nnote: a\x00b\n---\n# Kept title\n\x00\n", "binary", 1),  # a NUL in the body too
    (b"---\nnote: a\x00b\n# no closing fence\n", "binary", 1),
    (b"---\nnote: \xff\x00\n---\n# Kept title\n", "binary", 1),  # not UTF-8 either
    (b"\x00---\nnote: a\n---\n# Kept title\n", "binary", 1),
])
def test_a_nul_byte_is_a_yaml_error_only_inside_a_text_files_frontmatter(
        data: bytes, code: str, line: int) -> None:
    out = parse_fact("kb/t/x/f.md", data)
    assert out.fact is None
    assert [(p.code, p.line) for p in out.problems] == [(code, line)]
    if code == "yaml_syntax":  # still listed by its title; no NUL reaches the index's text
        assert out.title == "Kept title" and "\x00" not in out.text and "\ufffd" in out.text
    else:
        assert out.text == ""


@pytest.mark.parametrize(("line", "warned"), [
    ("created: 2024-02-30", True),  # RELIABILITY B07
    ("created: 2023-13-01", True),
    ("seen_at: 2024-02-30T10:00:00Z", True),
    ("domain: [ops, 2024-04-31]", True),  # a list item is a scalar of its own
    ("created: 2024-02-29", False),  # a leap day exists
    ("created: '2024-02-30'", False),  # quoted: text to every YAML reader
    ("created: 2024-02-30 and more", False),  # not a timestamp at all
    ("created: 2024-2-30", False),  # a bare date needs two-digit month and day: plain text
    ("seen_at: 2024-2-30 10:00:00", True),  # with a time, one digit will do
    ("settle_by: 2024-02-30", False),  # the checker's E1 (an error) reports this one
])
def test_an_impossible_date_is_a_warning_at_its_line_and_the_fact_is_kept(
        line: str, warned: bool) -> None:
    data = f"---\ntype: observation\nconfidence: 0.5\n{line}\n---\n# T\n".encode()
    out = parse_fact("kb/t/x/f.md", data)
    assert out.fact is not None  # knomit keeps it as text: the fact is still read
    found = [(p.code, p.line, str(p.severity)) for p in out.problems]
    assert found == ([("yaml_value", 4, "warning")] if warned else [])


def test_a_fact_with_bad_values_is_broken_but_the_rest_of_it_is_read() -> None:
    """RELIABILITY B03, B10: knomit refuses the fact (an error per bad field, each at its
    line: only the first used to be reported), and the rest of it is still read, the bad
    fields as missing, for its row."""
    data = (b"---\ntype: hypothesis\nconfidence: high\ndomain: [ops, db]\nsources: many\n"
            b"refs: kb/a.md\nclaimant_type: tool\n---\n# Pools run dry\n\nBody.\n")
    out = parse_fact("kb/t/x/f.md", data)
    assert out.fact is None
    assert [(p.code, p.line) for p in out.problems] == [
        ("confidence_type", 3), ("sources_type", 5), ("refs_shape", 6)]
    kept = out.salvaged
    assert kept is not None and kept.title == "Pools run dry" and kept.body == "Body."
    assert (kept.type, kept.domain, kept.refs, kept.envelope.claimant_type) == (
        "hypothesis", ("ops", "db"), (), "tool")
    assert "confidence" not in kept.key_lines and "sources" not in kept.key_lines


@pytest.mark.parametrize("data", [
    b"---\ntype: factoid\ndomain: [a]\n---\n# T\n",  # the type is never guessed
    b"---\nkind: Pragmatic\ntype: policy\nconfidence: high\n---\n# T\n",
    b"---\ntype: observation\n---\nno heading\n",
])
def test_nothing_is_salvaged_when_the_kind_type_or_title_is_bad(data: bytes) -> None:
    out = parse_fact("kb/t/x/f.md", data)
    assert out.fact is None and out.salvaged is None and len(out.problems) == 1


@pytest.mark.parametrize(("data", "code"), [
    # RELIABILITY A15: one grammar, knomit's: the file opens with exactly `---` and a line
    # end, and the frontmatter closes at the first line that is exactly `---`; anything
    # else is a problem, never a guess
    (b"---\ntype: observation\n---\n# T\n", None),
    (b"---\r\ntype: observation\r\n---\r\n# T\r\n", None),
    # (read, A07; a warning that knomit will not: issue 22)
    (b"\xef\xbb\xbf---\ntype: observation\n---\n# T\n", "knomit_unreadable"),
    (b"--- \ntype: observation\n---\n# T\n", "unterminated_frontmatter"),  # trailing space
    (b"----\ntype: observation\n----\n# T\n", "unterminated_frontmatter"),
    (b"---\ntype: observation\n...\n# T\n", "unterminated_frontmatter"),  # YAML's own end
    (b"---\ntype: observation\n--- \n# T\n", "unterminated_frontmatter"),
    (b"---\ntype: observation\n---", "unterminated_frontmatter"),  # no line end after it
    (b"\n---\ntype: observation\n---\n# T\n", "no_frontmatter"),  # a leading blank line
    (b"+++\ntype = 'observation'\n+++\n# T\n", "no_frontmatter"),
])
def test_the_fence_grammar_is_one_rule(data: bytes, code: str | None) -> None:
    out = parse_fact("kb/t/x/f.md", data)
    assert [p.code for p in out.problems] == ([code] if code else [])
    assert (out.fact is None) == (code not in (None, "knomit_unreadable"))


def test_a_yaml_error_names_its_line_and_column() -> None:
    """RELIABILITY A01: where libyaml stopped, in the file's own line numbers."""
    out = parse_fact("kb/t/x/f.md", b"---\ntype: observation\nnote: a: b\n---\n# T\n")
    [problem] = out.problems
    assert (problem.code, problem.line) == ("yaml_syntax", 3)
    assert problem.message.endswith("mapping values are not allowed in this context (column 8)")


def test_keys_are_case_sensitive_and_refs_keep_their_literal_text() -> None:
    """RELIABILITY B02: `Type:` is another key, kept as written, not the type; B09: refs
    that YAML 1.1 would turn into numbers, booleans or sexagesimals stay text."""
    out = parse_fact("kb/t/x/f.md", b"---\nType: hypothesis\nrefs: [0123, NO, 1:20]\n---\n# T\n")
    assert out.fact is not None and out.problems == ()
    assert out.fact.type == "observation" and out.fact.extra == {"Type": "hypothesis"}
    assert out.fact.refs == ("0123", "NO", "1:20")


def test_an_exponent_is_a_number_as_yaml_v3_reads_it() -> None:
    """RELIABILITY B06 lists `1e-1` among strings to refuse (YAML 1.1); knomit's yaml.v3
    reads it as 0.1 (FORMAT.md §2.5), and factdesk follows knomit."""
    out = parse_fact("kb/t/x/f.md", b"---\nconfidence: 1e-1\n---\n# T\n")
    assert out.fact is not None and out.fact.confidence == 0.1 and out.problems == ()


def test_expires_is_kept_and_shown_not_swallowed() -> None:
    """The neighbour of issue 15's `motifs` defect: knomit's newer `expires` was a known key
    that no field took, so it was shown nowhere; it stays with the other fields."""
    out = parse_fact("kb/t/x/f.md", b"---\ntype: observation\nexpires: 2027-01-01T00:00:00Z\n"
                                    b"---\n# T\n")
    assert out.fact is not None and out.fact.extra == {"expires": "2027-01-01T00:00:00Z"}
