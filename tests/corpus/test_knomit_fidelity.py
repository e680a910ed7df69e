"""Reading as knomit reads (issue 22): each difference found by running knomit's own read
code (`ParseFact` on yaml.v3 v3.0.1) side by side with factdesk over mutated facts. Each
case is either read as knomit reads it, or warned about where knomit cannot load a file
that factdesk reads (`knomit_unreadable`), or listed in docs/format.md."""

from __future__ import annotations

import pytest

from factdesk.corpus.codec import parse_fact

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
