"""The agent registry `.factdesk/agents.yaml` (FORMAT.md §13): read by shape, every
fault a `registry` problem with its line, never an exception; what can be read is used."""

from __future__ import annotations

from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.corpus.registry_io import REGISTRY_PATH, load_registry, parse_registry
from factdesk.model.registry import SEEDED_TYPES
from tests.conftest import Corpus, git

GOOD = b"""agent_types:
  reviewer: {description: reads and comments}
agents:
  claude-code: {type: tool, email: claude-code@agents.knomit.io}
  ana: {type: user, email: ana@example.org, branch: agent/ana}
"""


def test_a_good_registry_reads_without_problems() -> None:
    reg = parse_registry(GOOD)
    assert reg.problems == ()
    assert reg.agent_types == {**SEEDED_TYPES, "reviewer": "reads and comments"}
    assert reg.type_of("claude-code") == "tool" and reg.agents["ana"].branch == "agent/ana"
    assert reg.agent_for_email("claude-code+learn@agents.knomit.io") == reg.agents["claude-code"]


@pytest.mark.parametrize(("data", "line", "severity", "words"), [
    # each of these raised out of `index` and `check` (ValueError, AttributeError,
    # RecursionError), or was read as an empty registry without a word
    (b"agents:\n  a: {type: tool}\ncreated: 2024-02-30\n", 3, "warning", "unknown key 'created'"),
    (b"agents: [a, b]\n", 1, "error", "agents: must be a mapping"),
    (b"x: " + b"[" * 5000 + b"\n", 1, "error", "does not parse"),
    (b"agents:\n  a: {type: tool\n", 3, "error", "does not parse"),
    (b"agents:\n  a: tool\n", 2, "error", "agents.a: must be a mapping"),
    (b"agents:\n  a: {type: [tool]}\n", 2, "error", "agents.a.type: must be text"),
    (b"agents:\n  a: {email: a@example.org}\n", 2, "warning", "agents.a: no type"),
    (b"- just\n- a list\n", 1, "error", "must be a mapping"),
    (b"agents:\n  a: {type: tool}\n  \xff: x\n", 3, "error", "is not UTF-8"),
])
def test_a_bad_registry_is_a_problem_at_its_line(data: bytes, line: int, severity: str,
                                                words: str) -> None:
    reg = parse_registry(data)
    assert [(p.path, p.line, p.code, str(p.severity)) for p in reg.problems] == [
        (REGISTRY_PATH, line, "registry", severity)]
    assert words in reg.problems[0].message
    assert dict(reg.agent_types) == SEEDED_TYPES  # (the seeded types are always there)


def test_what_can_be_read_is_used() -> None:
    reg = parse_registry(b"agents:\n  good: {type: peer}\n  bad: [x]\n  also: {type: tool}\n")
    assert [p.line for p in reg.problems] == [3]
    assert (reg.type_of("good"), reg.type_of("also"), reg.type_of("bad")) == ("peer", "tool", None)


def test_check_reports_a_broken_registry_and_still_checks_the_facts(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    corpus.write(REGISTRY_PATH, b"agents: [claude-code]\n")
    git(corpus.root, "add", "-A")  # (a person's commit: an agent's change to the registry
    git(corpus.root, "commit", "-qm", "config: a registry in the wrong shape",  # is not
        author="ana", email="ana@example.org")  # applied, issue 16)
    assert main(["check", "--kb", str(corpus.root)]) == 1
    out, err = capsys.readouterr()
    assert f"{REGISTRY_PATH}:1: error [registry] agent registry agents: must be a mapping" in out
    assert "3 facts: 1 error, 0 warnings" in out + err  # the facts were all read and checked


def test_a_linked_registry_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_bytes(GOOD)
    (tmp_path / ".factdesk").mkdir()
    (tmp_path / REGISTRY_PATH).symlink_to(outside)
    reg = load_registry(tmp_path)
    assert reg.agents == {} and [p.message for p in reg.problems] == [
        f"agent registry {REGISTRY_PATH} is a symbolic link: not read"]


def test_nulls_are_no_value_and_odd_names_are_said() -> None:
    """`email: ~` is no e-mail (it was the text "~"), `type: null` no type; a merge key
    `<<` is not an agent named "<<"; a type the registry does not define is warned."""
    reg = parse_registry(b"agents:\n  a: {type: tool, email: ~}\n  b: {type: null}\n"
                         b"  <<: {type: user}\n  c: {type: robot}\n? [x]\n: 1\n")
    assert reg.agents["a"].email is None and reg.agents["b"].type == "" and "<<" not in reg.agents
    assert [(p.line, str(p.severity), p.message) for p in reg.problems] == [
        (3, "warning", "agent registry agents.b: no type (one of peer, persona, tool, user, view)"),
        (4, "error", "agent registry agents: a name must be text (merge keys `<<` are not read)"),
        (6, "error", "agent registry a key must be text"),
        (1, "warning",
         "agent registry agents.c: type 'robot' is not one of peer, persona, tool, user, view"),
    ]
