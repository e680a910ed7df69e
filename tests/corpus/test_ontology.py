"""The ontology (FORMAT.md §1.5) and its JavaScript `validations` (§1.6): found at any of
its three rungs, read with problems instead of exceptions, rules run in a sandboxed V8
with knomit's 100 ms budget, in knomit's order and wording."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from factdesk.corpus.codec import parse_fact
from factdesk.corpus.ontology import (
    ONTOLOGY_PATHS,
    check_ontology,
    find_ontology,
    load_ontology,
    parse_ontology,
    rule_problems,
    shared_engine,
)
from factdesk.model.fact import Fact

ONTOLOGY = b"""id: team
name: Team knowledge
validations:
  - {name: has-domain, message: every fact needs a domain, rule: "fact.domain.length > 0"}
topics:
  gotchas:
    description: things that bit us
    validations:
      - {name: sourced, message: a gotcha cites a source, rule: "fact.sources >= 1"}
    children:
      db:
        validations:
          - {name: db-entity, message: name the database, rule: "fact.entities.includes('postgres')"}
  decisions:
"""


def _fact(path: str, extra: str = "") -> Fact:
    data = f"---\ntype: observation\nconfidence: 0.5\n{extra}---\n# A fact\n\nBody.\n".encode()
    fact = parse_fact(path, data).fact
    assert fact is not None
    return fact


def test_the_newest_rung_wins(tmp_path: Path) -> None:
    for rel in reversed(ONTOLOGY_PATHS):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(ONTOLOGY.replace(b"id: team", f"id: {rel[:3]}".encode()))
        assert find_ontology(tmp_path) == rel
        onto = load_ontology(tmp_path)
        assert onto is not None and onto.source == rel and onto.problems == []


def test_rules_run_root_first_then_down_the_topic_path_in_knomits_words() -> None:
    onto = parse_ontology(ONTOLOGY, ".knomit/ontology.yaml")
    engine = shared_engine()
    assert [scope for scope, _ in onto.rules_for("kb/gotchas/db/x.md")] == [
        "root", "gotchas", "gotchas/db"]
    assert [scope for scope, _ in onto.rules_for("kb/Gotchas/other/x.md")] == ["root", "gotchas"]
    assert [scope for scope, _ in onto.rules_for("kb/unknown/x.md")] == ["root"]
    failing = check_ontology(_fact("kb/gotchas/db/x.md"), onto, engine)
    assert [p.message for p in failing] == [
        'validation "has-domain" at root: every fact needs a domain',
        'validation "sourced" at gotchas: a gotcha cites a source',
        'validation "db-entity" at gotchas/db: name the database']
    good = _fact("kb/gotchas/db/x.md", "domain: [ops]\nsources: 2\nentities: [postgres]\n")
    assert check_ontology(good, onto, engine) == []


@pytest.mark.parametrize(("rule", "passes", "why"), [
    ("fact.path === 'kb/gotchas/db/x.md' && fact.origin === 'authored'", True, None),
    ("typeof require === 'undefined' && typeof process === 'undefined'", True, None),
    ("(fact.title = 'changed', fact.title === 'A fact')", True, None),  # read-only
    ("(function () { while (true) {} })()", False, "terminated by timeout"),
    ("1 +", False, "does not compile: SyntaxError"),
    # text that closes the wrapper to run at the top level when the rule is defined (it
    # hung the indexer for good): refused as a rule that does not compile
    ("1); } while (true) {} function z() { (1", False, "does not compile: SyntaxError"),
    ("undefinedName.length > 0", False, "ReferenceError"),
])
def test_a_rule_is_a_sandboxed_expression_with_a_100_ms_budget(
        rule: str, passes: bool, why: str | None) -> None:
    engine = shared_engine()
    fact = _fact("kb/gotchas/db/x.md")
    from factdesk.corpus.ontology import fact_for_js

    started = time.monotonic()
    ok, error = engine.passes(rule, fact_for_js(fact))
    assert ok is passes and (error is None if why is None else why in (error or "")), error
    assert time.monotonic() - started < 5  # cut off (at 100 ms), never left to run


def test_v8_starts_with_the_first_rule_and_ends_before_the_process_does() -> None:
    """A read whose checks all come from a cache holds an engine and runs no rule: V8
    (0.14 s with its import) must not start for it (issue 23 #1). A process that ran a
    rule ends: V8 left to the interpreter's teardown hung it one time in three, so the
    child runs five times. (In child processes: a second V8 context beside this process's
    shared one, alive on another thread, can crash it.)"""
    code = (
        "import sys\n"
        "from factdesk.corpus.ontology import RuleEngine\n"
        "engine = RuleEngine()\n"
        "assert engine._ctx is None and 'py_mini_racer' not in sys.modules\n"
        "assert engine.compiles('fact.domain.length > 0') is None\n"
        "assert engine._ctx is not None\n"
        "assert engine.compiles('fact.domain.length >') is not None\n")
    for _ in range(5):
        try:
            done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                  text=True, timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("a process that ran a rule did not end within 30 s")
        assert done.returncode == 0, done.stderr


def test_one_rule_cannot_change_what_the_next_one_sees() -> None:
    """knomit gives each rule a fresh VM; ours share one context, so everything reachable
    from the global object, and the global object itself, is frozen, and the compiled rules
    are out of reach. Each tampering rule runs first, then the rules that would see it."""
    engine = shared_engine()
    tamper = [
        "(Array.prototype.includes = function () { return true; }, true)",
        "(globalThis.Object = null, true)",  # every later rule failed
        "(JSON = {stringify: function () { return 'x'; }}, true)",  # mini-racer's own JSON
        "(Object.getPrototypeOf([][Symbol.iterator]()).next ="
        " function () { return {done: true}; }, true)",
        "(globalThis.__run = null, true)", "(Object.freeze = function (o) { return o; }, true)",
        "(Reflect.ownKeys = null, true)",
    ]
    for rule in tamper:
        engine.passes(rule, {})
    assert engine.passes("[1].includes(2)", {}) == (False, None)
    assert engine.passes("typeof Object.keys === 'function' && JSON.stringify(1) === '1'",
                         {}) == (True, None)
    assert engine.passes("(function () { var s = 0; for (var x of [1, 2, 3]) { s += x; } "
                         "return s === 6; })()", {}) == (True, None)
    assert engine.passes("fact.domain.includes('ops')", {"domain": ["ops"]}) == (True, None)
    counter = "(globalThis.n = (globalThis.n || 0) + 1) < 3"  # no state kept between rules
    assert [engine.passes(counter, {})[0] for _ in range(4)] == [True] * 4


@pytest.mark.parametrize(("data", "line", "words"), [
    (b"id: x\nname: y\ntopics:\n  a: [unclosed\n", 5, "does not parse"),
    (b"id: x\nname: y\nid: z\ntopics: {a: {}}\n", 3, "already defined"),
    (b"id: x\nname: y\nz: " + b"[" * 5000 + b"\n", 3, "does not parse"),  # raised RecursionError
    (b"name: y\ntopics: {a: {}}\n", 1, "missing id"),
    (b"id: x\nname: y\ntopics: {}\n", 1, "no topics"),
    (b"id: x\nname: y\ntopics: {Bad_Topic: {}}\n", 1, "lowercase kebab-case"),
])
def test_a_bad_ontology_is_a_problem_never_an_exception(data: bytes, line: int, words: str) -> None:
    onto = parse_ontology(data, ".knomit/ontology.yaml")
    [problem] = [p for p in onto.problems if p.severity == "error"]
    assert (problem.path, problem.line, problem.code) == (".knomit/ontology.yaml", line, "ontology")
    assert words in problem.message


def test_values_are_their_text_and_unknown_keys_are_warnings() -> None:
    """yaml.v3 semantics: `yes` and an impossible date are text in a string field (YAML
    1.1 made `yes` True and refused the whole file over `2024-02-30`)."""
    onto = parse_ontology(b"id: x\nname: yes\ncreated: 2024-02-30\ntopics:\n  a:\n"
                          b"    description: null\n    typo: 1\n  b:\n", ".knomit/ontology.yaml")
    assert (onto.name, onto.topics["a"].description, sorted(onto.topics)) == ("yes", "", ["a", "b"])
    assert [(str(p.severity), p.message) for p in onto.problems] == [
        ("warning", "unknown key 'created' at the root"), ("warning", "unknown key 'typo' under a")]


@pytest.mark.parametrize(("data", "words"), [
    (b"id: x\nname: y\ntopics:\n  t: {}\n? [a, b]\n: c\n", "a mapping key must be text"),
    # a cycle through an anchor, and 340 bytes that alias their way to 4^5 nodes (10 levels
    # of 10 would be 10^10: a hang)
    (b"id: x\nname: y\ntopics:\n  t: &a\n    children:\n      c: *a\n", "recursive node"),
    (b"id: x\nname: y\ntopics:\n  t: " + b"{children: {c: " * 40 + b"{}" + b"}}" * 40 + b"\n",
     "deeper than 32 levels"),
    (b"id: x\nname: y\nl0: &l0 {description: d}\n" + b"".join(
        f"l{i}: &l{i} {{children: {{{', '.join(f'k{j}: *l{i - 1}' for j in range(10))}}}}}\n"
        .encode() for i in range(1, 11)) + b"topics:\n  t: *l10\n", "more than 10,000 nodes"),
])
def test_an_ontology_that_would_stop_the_reader_is_an_error(data: bytes, words: str) -> None:
    """Each of these raised out of `index` and `check` (TypeError) or ran for ever."""
    started = time.monotonic()
    onto = parse_ontology(data, ".knomit/ontology.yaml")
    assert any(words in p.message and p.severity == "error" for p in onto.problems), onto.problems
    assert time.monotonic() - started < 5


def test_an_ontology_or_registry_behind_a_link_is_not_read(tmp_path: Path) -> None:
    """The configuration's folders as links to folders outside the repository: the
    ontology and the agents there are not the repository's (an outside `mallory` became a
    `user`); each is an error that names the link, and no older rung is taken instead."""
    from factdesk.corpus.registry_io import load_registry

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ontology.yaml").write_bytes(ONTOLOGY)
    (outside / "agents.yaml").write_bytes(b"agents:\n  mallory: {type: user}\n")
    repo = tmp_path / "repo"
    (repo / "domains").mkdir(parents=True)
    (repo / "domains/ontology.yaml").write_bytes(ONTOLOGY)  # an older rung, not taken
    (repo / ".knomit").symlink_to(outside)
    (repo / ".factdesk").symlink_to(outside)
    onto = load_ontology(repo)
    assert onto is not None and onto.source == ".knomit/ontology.yaml" and onto.topics == {}
    assert [p.message for p in onto.problems] == [
        "ontology .knomit is a symbolic link: not read"]
    registry = load_registry(repo)
    assert registry.agents == {} and [p.message for p in registry.problems] == [
        "agent registry .factdesk is a symbolic link: not read"]


def test_a_rule_that_does_not_compile_is_an_error_on_the_ontology() -> None:
    onto = parse_ontology(ONTOLOGY.replace(b'"fact.sources >= 1"', b'"fact.sources >="'),
                          ".knomit/ontology.yaml")
    assert [(p.path, p.code, p.message) for p in rule_problems(onto, shared_engine())] == [
        (".knomit/ontology.yaml", "ontology",
         'validation "sourced" at gotchas does not compile: SyntaxError: Unexpected token \')\'')]
