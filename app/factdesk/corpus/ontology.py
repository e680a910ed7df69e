"""The ontology (`.knomit/ontology.yaml` and its legacy rungs) and its JavaScript rules.

Rules are boolean JavaScript expressions evaluated against a read-only `fact` object
with knomit's 100 ms budget (FORMAT.md §1.6), in an embedded V8 (mini-racer) that has no
`process`, `require`, file system or network.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from factdesk.model.enums import Severity
from factdesk.model.fact import Fact, Problem

ONTOLOGY_PATHS = (".knomit/ontology.yaml", ".domains/ontology.yaml", "domains/ontology.yaml")
RULE_TIMEOUT_MS = 100
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


def find_ontology(repo: Path) -> Path | None:
    """The ontology file, newest rung first."""
    for rel in ONTOLOGY_PATHS:
        candidate = repo / rel
        if candidate.is_file() and not candidate.is_symlink():
            return candidate
    return None


def load_ontology(repo: Path) -> Ontology | None:
    path = find_ontology(repo)
    if path is None:
        return None
    rel = path.relative_to(repo).as_posix()
    return parse_ontology(path.read_bytes(), rel)


def parse_ontology(data: bytes, rel: str) -> Ontology:
    try:
        doc = yaml.load(data.decode("utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506,TID251
    except (yaml.YAMLError, UnicodeDecodeError, ValueError) as exc:
        onto = Ontology(id="", name="", source=rel)
        onto.problems.append(Problem(rel, _line_of(exc), "ontology", Severity.ERROR,
                                     f"ontology does not parse: {exc}"))
        return onto
    doc = doc if isinstance(doc, dict) else {}
    onto = Ontology(id=str(doc.get("id") or ""), name=str(doc.get("name") or ""),
                    description=str(doc.get("description") or ""), source=rel)
    for key in ("id", "name"):
        if not doc.get(key):
            onto.problems.append(Problem(rel, 1, "ontology", Severity.ERROR, f"missing {key}"))
    onto.validations = _validations(doc.get("validations"), rel, onto)
    topics = doc.get("topics") or {}
    if not isinstance(topics, dict) or not topics:
        onto.problems.append(Problem(rel, 1, "ontology", Severity.ERROR, "no topics"))
        topics = {}
    onto.topics = {str(k): _node(v, rel, onto, depth=0, name=str(k)) for k, v in topics.items()}
    return onto


def _node(raw: object, rel: str, onto: Ontology, depth: int, name: str) -> Node:
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
        description=str(raw.get("description") or ""),
        validations=_validations(raw.get("validations"), rel, onto),
        children={str(k): _node(v, rel, onto, depth + 1, str(k))
                  for k, v in (children.items() if isinstance(children, dict) else [])},
    )


def _validations(raw: object, rel: str, onto: Ontology) -> list[Validation]:
    out: list[Validation] = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and item.get("rule"):
            out.append(Validation(str(item.get("name", "")), str(item.get("message", "")),
                                  str(item["rule"])))
    return out


def _line_of(exc: Exception) -> int:
    mark = getattr(exc, "problem_mark", None)
    return int(mark.line) + 1 if mark is not None else 1


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys (the ontology is YAML we only read)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[object, object]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"mapping key {key!r} already defined", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


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


class RuleEngine:
    """Compiles each distinct rule once into a function and evaluates it per fact."""

    def __init__(self) -> None:
        from py_mini_racer import MiniRacer  # heavy: import only when rules exist

        self._ctx = MiniRacer()
        self._ctx.eval("delete globalThis.process; delete globalThis.require;")
        self._compiled: dict[str, str | Exception] = {}
        self._lock = threading.Lock()

    def _function(self, rule: str) -> str | Exception:
        name = self._compiled.get(rule)
        if name is None:
            fname = f"__rule{len(self._compiled)}"
            src = (f"function {fname}(f) {{ var fact = Object.freeze(f); "
                   f"return !!({rule}\n); }}")
            try:
                self._ctx.eval(src)
                name = fname
            except Exception as exc:
                name = exc
            self._compiled[rule] = name
        return name

    def passes(self, rule: str, fact_js: dict[str, object]) -> tuple[bool, str | None]:
        with self._lock:  # one caller at a time (the GUI's worker and the CLI may share it)
            return self._passes(rule, fact_js)

    def _passes(self, rule: str, fact_js: dict[str, object]) -> tuple[bool, str | None]:
        fname = self._function(rule)
        if isinstance(fname, Exception):
            return False, f"rule does not compile: {fname}"
        try:
            result = self._ctx.call(fname, fact_js, timeout=RULE_TIMEOUT_MS)
        except Exception as exc:
            return False, f"rule failed: {type(exc).__name__}: {exc}"
        return bool(result), None


_shared: RuleEngine | None = None
_shared_lock = threading.Lock()


def shared_engine() -> RuleEngine:
    """The process's one V8 context for ontology rules. py_mini_racer crashes (SIGSEGV)
    when a second context is created while one lives on another thread, so every indexer
    in a process shares this one; starting it costs ~50 ms, once."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = RuleEngine()
        return _shared


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

