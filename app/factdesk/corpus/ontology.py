"""The ontology (`.knomit/ontology.yaml` and its legacy rungs) and its JavaScript rules.

Rules are boolean JavaScript expressions evaluated against a read-only `fact` object
with knomit's 100 ms budget (FORMAT.md §1.6), in an embedded V8 (mini-racer) that has no
`process`, `require`, file system or network.
"""

from __future__ import annotations

import atexit
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from factdesk.fsio import read_config
from factdesk.model.enums import Severity
from factdesk.model.fact import Fact, Problem

ONTOLOGY_PATHS = (".knomit/ontology.yaml", ".domains/ontology.yaml", "domains/ontology.yaml")
RULE_TIMEOUT_MS = 100
#: the topic tree's limits (a real ontology has tens of topics, a few levels deep)
MAX_NODES = 10_000
MAX_DEPTH = 32
_KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Validation:
    name: str
    message: str
    rule: str


@dataclass
class Node:
    description: str = ""
    validations: list[Validation] = field(default_factory=list)
    children: dict[str, Node] = field(default_factory=dict)


@dataclass
class Ontology:
    id: str
    name: str
    description: str = ""
    validations: list[Validation] = field(default_factory=list)
    topics: dict[str, Node] = field(default_factory=dict)
    source: str = ONTOLOGY_PATHS[0]
    problems: list[Problem] = field(default_factory=list)

    def rules_for(self, path: str, root: str = "kb") -> list[tuple[str, Validation]]:
        """(scope, rule) pairs for a fact path: root rules, then each declared node's."""
        out = [("root", v) for v in self.validations]
        parts = path.split("/")[1:-1] if path.startswith(root + "/") else []
        nodes = self.topics
        scope: list[str] = []
        for part in parts:
            match = next((k for k in nodes if k.lower() == part.lower()), None)
            if match is None:
                break
            scope.append(match)
            node = nodes[match]
            out.extend(("/".join(scope), v) for v in node.validations)
            nodes = node.children
        return out


def find_ontology(repo: Path) -> str | None:
    """The repo-relative path of the ontology file, newest rung first (a link counts as
    there: `load_ontology` says it is not read, rather than taking an older rung)."""
    for rel in ONTOLOGY_PATHS:
        if os.path.lexists(repo / rel) and not os.path.isdir(repo / rel):
            return rel
    return None


def ontology_bytes(repo: Path) -> tuple[str, bytes | None, str | None] | None:
    """(path, bytes, why not read) of the ontology, or None when there is none."""
    rel = find_ontology(repo)
    if rel is None:
        return None
    data, why = read_config(repo, rel)
    return rel, data, why


def load_ontology(repo: Path) -> Ontology | None:
    found = ontology_bytes(repo)
    if found is None:
        return None
    rel, data, why = found
    if data is None:
        onto = Ontology(id="", name="", source=rel)
        onto.problems.append(Problem(rel, 1, "ontology", Severity.ERROR,
                                     f"ontology {why or 'is gone'}"))
        return onto
    return parse_ontology(data, rel)


def parse_ontology(data: bytes, rel: str) -> Ontology:
    try:
        doc = yaml.load(data.decode("utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506,TID251
    except (yaml.YAMLError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        onto = Ontology(id="", name="", source=rel)
        onto.problems.append(Problem(rel, _line_of(exc), "ontology", Severity.ERROR,
                                     f"ontology does not parse: {exc}"))
        return onto
    doc = doc if isinstance(doc, dict) else {}
    onto = Ontology(id=_str(doc.get("id")), name=_str(doc.get("name")),
                    description=_str(doc.get("description")), source=rel)
    for key in doc:
        if key not in ("id", "name", "description", "topics", "validations"):
            onto.problems.append(Problem(rel, 1, "ontology", Severity.WARNING,
                                         f"unknown key {key!r} at the root"))
    for key in ("id", "name"):
        if not _str(doc.get(key)):
            onto.problems.append(Problem(rel, 1, "ontology", Severity.ERROR, f"missing {key}"))
    onto.validations = _validations(doc.get("validations"), rel, onto)
    topics = doc.get("topics") or {}
    if not isinstance(topics, dict) or not topics:
        onto.problems.append(Problem(rel, 1, "ontology", Severity.ERROR, "no topics"))
        topics = {}
    budget = [MAX_NODES, 0]  # (nodes left, whether the cut was said)
    onto.topics = {str(k): _node(v, rel, onto, depth=0, name=str(k), budget=budget)
                   for k, v in topics.items()}
    return onto


def _node(raw: object, rel: str, onto: Ontology, depth: int, name: str,
          budget: list[int]) -> Node:
    # anchors repeated (`c: *a` under `&a`, or a few levels of several aliases each) make a
    # small file a tree of billions of nodes, or a cycle: the tree is cut, and said to be
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        if not budget[1]:  # (said once)
            budget[1] = 1
            onto.problems.append(Problem(rel, 1, "ontology", Severity.ERROR,
                                         f"the topic tree is deeper than {MAX_DEPTH} levels or "
                                         f"has more than {MAX_NODES:,} nodes (repeated "
                                         "anchors?); the rest is not read"))
        return Node()
    if depth <= 1 and not _KEBAB.match(name):
        onto.problems.append(Problem(rel, 1, "ontology", Severity.ERROR,
                                     f"topic key {name!r} must be lowercase kebab-case"))
    if not isinstance(raw, dict):
        return Node()
    for key in raw:
        if key not in ("description", "children", "validations"):
            onto.problems.append(Problem(rel, 1, "ontology", Severity.WARNING,
                                         f"unknown key {key!r} under {name}"))
    children = raw.get("children") or {}
    return Node(
        description=_str(raw.get("description")),
        validations=_validations(raw.get("validations"), rel, onto),
        children={str(k): _node(v, rel, onto, depth + 1, str(k), budget)
                  for k, v in (children.items() if isinstance(children, dict) else [])},
    )


def _validations(raw: object, rel: str, onto: Ontology) -> list[Validation]:
    out: list[Validation] = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and item.get("rule"):
            out.append(Validation(_str(item.get("name")), _str(item.get("message")),
                                  _str(item["rule"])))
    return out


def _str(value: object) -> str:
    """A string field's text (a null, or no value, is empty, as yaml.v3 leaves it)."""
    if value is None or value in ("~", "null", "Null", "NULL"):
        return ""
    return value if isinstance(value, str) else ""


def _line_of(exc: Exception) -> int:
    mark = getattr(exc, "problem_mark", None)
    return int(mark.line) + 1 if mark is not None else 1


try:
    _BaseLoader: type = yaml.CBaseLoader
except AttributeError:  # pragma: no cover - libyaml missing
    _BaseLoader = yaml.BaseLoader


class _UniqueKeyLoader(_BaseLoader):  # type: ignore[misc]
    """Every scalar is its text, as yaml.v3 decodes into knomit's string fields (YAML 1.1
    would make `yes` a bool and refuse `2024-02-30` outright); duplicate keys refused."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[object, object]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):  # (`? [a, b]`: a key that is not text, unhashable)
                raise yaml.constructor.ConstructorError(
                    None, None, "a mapping key must be text", key_node.start_mark)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"mapping key {key!r} already defined", key_node.start_mark)
            seen.add(key)
        mapping: dict[object, object] = super().construct_mapping(node, deep=deep)
        return mapping


def fact_for_js(fact: Fact) -> dict[str, object]:
    """Exactly the fields knomit exposes to rules (origin resolved)."""
    return {
        "kind": fact.kind,
        "type": fact.type,
        "domain": list(fact.domain),
        "entities": list(fact.entities),
        "refs": list(fact.refs),
        "title": fact.title,
        "body": fact.body,
        "path": fact.path.lower(),
        "confidence": fact.confidence,
        "sources": fact.sources,
        "origin": fact.resolved_origin,
        "evidence_weight": fact.evidence_weight or 0,
    }


#: the sandbox, set up once per context. Each rule is compiled by `new Function` from its
#: text passed as data (never spliced into source that runs at the top level, where a
#: rule like `1); } while (true) {} function z() { (1` ran unbounded as the rule was
#: defined), kept where rules cannot reach it, and run on a frozen copy of the fact.
#: Then everything reachable from the global object (the built-ins, their prototypes, the
#: iterator and generator prototypes) and the global object itself are frozen: knomit
#: gives each rule a fresh VM, and ours share one, so no rule may change what the next one
#: sees (`Object = null`, `JSON = {}`, a patched iterator, a counter kept in a global).
#: Rules run in sloppy mode, as in knomit: a write to something frozen is ignored.
_SANDBOX = """
delete globalThis.process; delete globalThis.require;
(function () {
  var freeze = Object.freeze, isFrozen = Object.isFrozen, getProto = Object.getPrototypeOf;
  var ownNames = Object.getOwnPropertyNames, ownSymbols = Object.getOwnPropertySymbols;
  var describe = Object.getOwnPropertyDescriptor, define = Object.defineProperty;
  var rules = [];
  function fixed(name, value) {
    define(globalThis, name, {value: value, writable: false, configurable: false});
  }
  fixed("__compile", function (src) {
    rules.push(new Function("fact", "return !!(" + src + "\\n);"));
    return rules.length - 1;
  });
  fixed("__run", function (i, f) { return rules[i](freeze(f)); });
  function harden(root) {
    var todo = [root];
    while (todo.length) {
      var o = todo.pop();
      if (o === null || (typeof o !== "object" && typeof o !== "function") || isFrozen(o)) {
        continue;
      }
      freeze(o);
      todo.push(getProto(o));
      var keys = ownNames(o).concat(ownSymbols(o));
      for (var k = 0; k < keys.length; k++) {
        var d = describe(o, keys[k]);
        if (d) { todo.push(d.value, d.get, d.set); }
      }
    }
  }
  harden([][Symbol.iterator]());
  harden(new Map().entries());
  harden(new Set().values());
  harden(""[Symbol.iterator]());
  harden("x".matchAll(/x/g));
  harden(function* () {});
  harden((function* () {})());
  harden(async function () {});
  harden(globalThis);
})();
"""


class RuleEngine:
    """Compiles each distinct rule once into a function and evaluates it per fact."""

    def __init__(self) -> None:
        #: V8, started by the first rule compiled (0.14 s with its import): a read whose
        #: checks all come from a cache never starts it (`proposals`: issue 23 #1)
        self._ctx: Any = None
        self._compiled: dict[str, int | Exception] = {}
        self._lock = threading.Lock()

    def _function(self, rule: str) -> int | Exception:
        index = self._compiled.get(rule)
        if index is None:
            if self._ctx is None:
                from py_mini_racer import MiniRacer  # heavy: import only when rules run

                ctx = MiniRacer()
                ctx.eval(_SANDBOX)
                self._ctx = ctx
                atexit.register(self.close)
            try:
                index = int(self._ctx.call("__compile", rule, timeout=RULE_TIMEOUT_MS))
            except Exception as exc:
                index = exc
            self._compiled[rule] = index
        return index

    def close(self) -> None:
        """Free V8 (at the latest at exit, while its thread still runs: left to the
        interpreter's teardown, freeing it hung the process one time in three)."""
        with self._lock:
            ctx, self._ctx = self._ctx, None
            self._compiled.clear()
        if ctx is not None:
            ctx.close()

    def compiles(self, rule: str) -> str | None:
        """None, or why the rule does not compile (knomit refuses such an ontology)."""
        with self._lock:
            index = self._function(rule)
        return None if isinstance(index, int) else _first_line(index)

    def passes(self, rule: str, fact_js: dict[str, object]) -> tuple[bool, str | None]:
        with self._lock:  # one caller at a time (the GUI's worker and the CLI may share it)
            return self._passes(rule, fact_js)

    def _passes(self, rule: str, fact_js: dict[str, object]) -> tuple[bool, str | None]:
        index = self._function(rule)
        if isinstance(index, Exception):
            return False, f"rule does not compile: {_first_line(index)}"
        try:
            result = self._ctx.call("__run", index, fact_js, timeout=RULE_TIMEOUT_MS)
        except Exception as exc:
            return False, f"rule failed: {type(exc).__name__}: {_first_line(exc)}"
        return bool(result), None


def _first_line(exc: Exception) -> str:
    """V8's message without its source excerpt (`<anonymous>:2: SyntaxError: …`)."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return next((line for line in reversed(lines) if "Error" in line), lines[0] if lines else
                type(exc).__name__)


_shared: RuleEngine | None = None
_shared_lock = threading.Lock()


def shared_engine() -> RuleEngine:
    """The process's one V8 context for ontology rules. py_mini_racer crashes (SIGSEGV)
    when a second context is created while one lives on another thread, so every indexer
    in a process shares this one; V8 starts with the first rule it compiles."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = RuleEngine()
        return _shared


def rule_problems(onto: Ontology, engine: RuleEngine) -> list[Problem]:
    """A rule that does not compile makes the ontology invalid for knomit (FORMAT.md §1.5):
    one error on the ontology file per such rule, beside the facts it then fails."""
    out: list[Problem] = []
    pending: list[tuple[str, list[Validation], dict[str, Node]]] = [
        ("root", onto.validations, onto.topics)]
    while pending:
        scope, validations, children = pending.pop()
        for validation in validations:
            if why := engine.compiles(validation.rule):
                out.append(Problem(onto.source, 1, "ontology", Severity.ERROR,
                                   f'validation "{validation.name}" at {scope} does not '
                                   f"compile: {why}"))
        prefix = "" if scope == "root" else scope + "/"
        pending.extend((prefix + name, node.validations, node.children)
                       for name, node in sorted(children.items(), reverse=True))
    return out


def check_ontology(fact: Fact, onto: Ontology, engine: RuleEngine) -> list[Problem]:
    """Every failing rule, in knomit's order (knomit itself stops at the first)."""
    rules = onto.rules_for(fact.path)
    if not rules:
        return []
    payload = fact_for_js(fact)
    out = []
    for scope, validation in rules:
        ok, error = engine.passes(validation.rule, payload)
        if not ok:
            detail = f" ({error})" if error else ""
            out.append(Problem(fact.path, 1, "ontology-rule", Severity.ERROR,
                               f'validation "{validation.name}" at {scope}: '
                               f"{validation.message}{detail}"))
    return out


def topic_problems(fact: Fact, onto: Ontology) -> list[Problem]:
    parts = fact.path.split("/")
    if len(parts) < 4:
        return [Problem(fact.path, 1, "ontology-path", Severity.WARNING,
                        "fact path has no category (kb/<topic>/<category>/<id>.md)")]
    if parts[1] not in onto.topics:
        return [Problem(fact.path, 1, "ontology-path", Severity.WARNING,
                        f"topic {parts[1]!r} is not in the ontology")]
    return []

