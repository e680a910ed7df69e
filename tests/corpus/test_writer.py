"""The writer: unchanged writes are byte-identical, edits touch only their own line."""

from __future__ import annotations

import difflib
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factdesk.corpus.codec import parse_fact
from factdesk.corpus.writer import (
    WriteRefused,
    edit_frontmatter,
    edit_text,
    go_g,
    render_item,
    serialize_fact,
)


def changed_lines(a: bytes, b: bytes) -> list[str]:
    diff = difflib.ndiff(a.decode().splitlines(True), b.decode().splitlines(True))
    return [d for d in diff if d.startswith(("+ ", "- "))]


def all_versions(repo: Path) -> dict[str, bytes]:
    """Every fact file at the tip of main and of the agent branch."""
    out: dict[str, bytes] = {}
    for ref in ("main", "agent/mindev.local-8ef0cd32"):
        names = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", ref,
                                "--", "kb"], capture_output=True, check=True).stdout.decode()
        for name in names.split():
            data = subprocess.run(["git", "-C", str(repo), "show", f"{ref}:{name}"],
                                  capture_output=True, check=True).stdout
            out[f"{ref}:{name}"] = data
    return out


@pytest.mark.realcorpus
def test_real_corpus_round_trip_and_one_line_edits(real_corpus: Path) -> None:
    versions = all_versions(real_corpus)
    assert len(versions) >= 264 + 289
    for key, data in versions.items():
        assert edit_frontmatter(data, {}) == data, key
        fact = parse_fact(key.split(":", 1)[1], data).fact
        assert fact is not None, key
        new_conf = 0.5 if fact.confidence != 0.5 else 0.6
        edited = edit_frontmatter(data, {"confidence": new_conf})
        assert changed_lines(data, edited) == [f"- confidence: {go_g(fact.confidence)}\n",
                                               f"+ confidence: {go_g(new_conf)}\n"], key
        again = parse_fact("kb/x.md", edited).fact
        assert again is not None and again.confidence == new_conf
        assert again.refs == fact.refs and again.body == fact.body


@pytest.mark.realcorpus
def test_canonical_serialisation_reproduces_knomit_files(real_corpus: Path) -> None:
    """FORMAT.md §9.7: 241 of 264 files re-serialise byte-for-byte; the rest are syntheses
    without an origin line, to which knomit's writer adds `origin: distilled`."""
    same = 0
    files = sorted((real_corpus / "kb").rglob("*.md"))
    for path in files:
        data = path.read_bytes()
        fact = parse_fact(path.relative_to(real_corpus).as_posix(), data).fact
        assert fact is not None
        fields = {"kind": fact.kind, "type": fact.type, "domain": list(fact.domain),
                  "confidence": fact.confidence, "sources": fact.sources,
                  "evidence_weight": fact.evidence_weight,
                  "origin": (fact.origin if fact.origin != "authored" or fact.type == "synthesis"
                             else None),
                  "entities": list(fact.entities), "refs": list(fact.refs)}
        out = serialize_fact(fields, fact.title, fact.body)
        if out == data:
            same += 1
        else:
            assert fact.type == "synthesis" and fact.origin_raw is None, path
            assert changed_lines(data, out) == [f"+ origin: {fact.origin}\n"], path
    assert same == 241 and len(files) == 264


def test_edit_keeps_bom_crlf_comments_and_unknown_keys() -> None:
    data = (b"\xef\xbb\xbf---\r\ntype: observation  # typed by hand\r\nx-agent: {a: 1}\r\n"
            b"refs:\r\n  - kb/a.md\r\n---\r\n# T\r\n\r\nbody\r\n")
    out = edit_frontmatter(data, {"type": "hypothesis"})
    assert out == data.replace(b"type: observation", b"type: hypothesis")
    out = edit_frontmatter(data, {"claim_type": "hypothesis"})
    assert out.count(b"\r\n") == data.count(b"\r\n") + 1 and b"\nclaim_type: hypothesis\r\n" in out
    out = edit_frontmatter(data, {"refs": ["kb/a.md", "kb/b.md"]})
    assert b"refs: [kb/a.md, kb/b.md]\r\n---" in out and out.startswith(b"\xef\xbb\xbf")


def test_quoting_matches_yaml_v3() -> None:
    assert render_item("https://x.y/z") == "'https://x.y/z'"
    assert render_item("2026-07-28") == '"2026-07-28"'
    # yaml.v3 v3.0.1's node encoder (knomit's SerializeFact) quotes only what its own
    # resolver would read as another type: YAML 1.1's booleans and `<<` stay plain
    assert [render_item(w) for w in ("yes", "on", "no", "y", "off", "<<", "=")] == [
        "yes", "on", "no", "y", "off", "<<", "="]
    assert [render_item(w) for w in ("true", "01", "0_1", "09", "0x1F", ".nan", "~", "")] == [
        '"true"', '"01"', '"0_1"', '"09"', '"0x1F"', '".nan"', '"~"', '""']
    assert render_item("2026-13-45") == "2026-13-45"  # (not a date yaml.v3 can parse)
    assert render_item("AWS Builders' Library") == "AWS Builders' Library"
    assert render_item("#tag") == "'#tag'"
    assert [go_g(v) for v in (1.0, 0.85, 0.0, 1e-05)] == ["1", "0.85", "0", "1e-05"]


keys = st.sampled_from(["type", "confidence", "domain", "claim_type", "x-agent"])


@settings(max_examples=200, deadline=None)
@given(bom=st.booleans(), eol=st.sampled_from(["\n", "\r\n"]),
       conf=st.floats(0, 1, allow_nan=False), comment=st.booleans(),
       tags=st.lists(st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "Zs"]),
                             min_size=1, max_size=12), max_size=4))
def test_edit_locality_property(bom: bool, eol: str, conf: float, comment: bool,
                                tags: list[str]) -> None:
    lines = ["---", "type: observation" + ("  # note" if comment else ""), "domain: [a]",
             "confidence: 0.5", "x-agent: keep me", "---", "# Title", "", "Body ---", ""]
    data = (b"\xef\xbb\xbf" if bom else b"") + eol.join(lines).encode()
    out = edit_frontmatter(data, {"confidence": conf, "domain": tags or ["z"]})
    fact = parse_fact("kb/t/x/f.md", out).fact
    assert fact is not None
    assert fact.confidence == float(go_g(conf)) and fact.domain == tuple(tags or ["z"])
    assert fact.extra == {"x-agent": "keep me"} and fact.body == "Body ---"
    assert out.startswith(b"\xef\xbb\xbf") == bom
    changed = changed_lines(data.removeprefix(b"\xef\xbb\xbf").decode().replace("\r", "").encode(),
                            out.removeprefix(b"\xef\xbb\xbf").decode().replace("\r", "").encode())
    assert len(changed) <= 4
    assert all(line[2:].startswith(("confidence: ", "domain: ")) for line in changed)


def test_serialize_fact_writes_a_mapping_as_a_mapping() -> None:
    """Issue 15: an unknown key's map was written as the list of its keys."""
    data = serialize_fact({"type": "observation", "x-agent": {"run": "7", "tags": ["a", "on"]}},
                          "T", "")
    assert b"x-agent: {run: \"7\", tags: [a, on]}\n" in data
    fact = parse_fact("kb/t/x/f.md", data).fact
    assert fact is not None and fact.extra == {"x-agent": {"run": "7", "tags": ["a", "on"]}}


def test_an_edit_of_a_value_shared_through_yaml_anchors_is_refused() -> None:
    data = (b"---\n_d: &d {type: hypothesis}\n<<: *d\nlist: &l [a]\ndomain: *l\n"
            b"confidence: 0.5\n---\n# T\n")
    for key in ("type", "domain", "list"):
        with pytest.raises(WriteRefused, match="anchor, alias or merge key"):
            edit_frontmatter(data, {key: "x" if key == "type" else ["x"]})
    out = edit_frontmatter(data, {"confidence": 0.75})  # a key of its own: edited as ever
    assert out == data.replace(b"0.5", b"0.75")


def test_edit_text_finds_the_title_knomit_reads() -> None:
    """The title is the first line of the body region when it starts with `#` (`## T`,
    `#T`), never an `# H1` further down the body."""
    data = b"---\ntype: observation\n---\n## Old\n\n# Section\n\ntext\n"
    assert edit_text(data, title="New") == b"---\ntype: observation\n---\n# New\n\n# Section\n\ntext\n"
    with pytest.raises(WriteRefused):
        edit_text(b"---\ntype: observation\n---\nno title\n\n# Section\n", title="New")


def test_a_file_that_is_not_utf8_is_refused_in_words() -> None:
    data = b"---\ntype: observation\n---\n# T\n\nbody caf\xe9\n"
    assert parse_fact("kb/t/x/f.md", data).fact is not None  # (read, as knomit reads it)
    with pytest.raises(WriteRefused, match="not UTF-8"):
        edit_frontmatter(data, {"type": "insight"})
    with pytest.raises(WriteRefused, match="not UTF-8"):
        edit_text(data, title="New")
