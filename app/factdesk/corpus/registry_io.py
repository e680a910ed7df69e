"""Read the agent registry `.factdesk/agents.yaml` into the model's `Registry`.

Bad input never stops a reader: what is wrong becomes a `registry` problem on the file,
with its line, and whatever could be read is used (the seeded types always are).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import yaml

from factdesk.corpus.registry_trust import effective_bytes
from factdesk.corpus.yamlv3 import SAFE_LOADER
from factdesk.fsio import read_config
from factdesk.model.enums import Severity
from factdesk.model.fact import Problem
from factdesk.model.registry import SEEDED_TYPES, Agent, Registry

REGISTRY_PATH = ".factdesk/agents.yaml"


def load_registry(repo: Path) -> Registry:
    """The registry in effect: the work tree's file, or — when agents changed it on the
    curated branch — the last curator's version of it (`registry_trust`)."""
    data, why = read_config(repo, REGISTRY_PATH)
    if why:
        return Registry(problems=(_problem(1, why),))
    found = effective_bytes(repo, data, parse_registry)
    data = found.data
    registry = Registry() if data is None else parse_registry(data)
    if found.problems:
        registry = replace(registry, problems=registry.problems + found.problems)
    return registry


def parse_registry(data: bytes) -> Registry:
    """The registry in `data`. Only the node tree is composed (no value is constructed by
    YAML 1.1's rules, so `created: 2024-02-30` or `yes` is just text), then read by shape."""
    problems: list[Problem] = []
    try:
        node = yaml.compose(data.decode("utf-8"), Loader=SAFE_LOADER)
    except UnicodeDecodeError as exc:
        return Registry(problems=(_problem(data[: exc.start].count(b"\n") + 1,
                                           f"is not UTF-8 (byte {exc.start})"),))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        return Registry(problems=(_problem(mark.line + 1 if mark else 1,
                                           f"does not parse: {exc.problem or exc}"),))
    except (yaml.YAMLError, RecursionError) as exc:
        return Registry(problems=(_problem(1, f"does not parse: {exc}"),))
    if node is None:
        return Registry()
    if not isinstance(node, yaml.MappingNode):
        return Registry(problems=(_problem(_line(node), "must be a mapping (agent_types, agents)"),))
    types = dict(SEEDED_TYPES)
    agents: dict[str, Agent] = {}
    rows: dict[str, dict[tuple[str, str], str]] = {}
    for key_node, value in node.value:
        key = _text(key_node)
        if key is None:
            problems.append(_problem(_line(key_node), "a key must be text"))
            continue
        if key not in ("agent_types", "agents"):
            problems.append(_problem(_line(key_node), f"unknown key {key!r}", Severity.WARNING))
            continue
        entries = _mapping(value, key, problems)
        for name_node, body in entries:
            name = _text(name_node)
            if not name or _is_null(name_node) or name_node.tag.endswith(":merge"):
                problems.append(_problem(_line(name_node), f"{key}: a name must be text "
                                         "(merge keys `<<` are not read)"))
                continue
            if not isinstance(body, yaml.MappingNode) and key == "agents":
                problems.append(_problem(_line(body), f"agents.{name}: must be a mapping "
                                         "(type, email, branch)"))
                continue
            fields = {_text(k): v for k, v in _mapping(body, f"{key}.{name}", problems)}
            if key == "agent_types":
                types[name] = _field(fields, "description", f"{key}.{name}", problems) or ""
                if "authority" in fields:
                    rows[name] = _authority_rows(name, fields["authority"], problems)
                continue
            type_ = _field(fields, "type", f"{key}.{name}", problems)
            if "type" not in fields or _is_null(fields["type"]):
                problems.append(_problem(_line(body), f"agents.{name}: no type (one of "
                                         f"{', '.join(sorted(types))})", Severity.WARNING))
            where = f"{key}.{name}"
            agents[name] = Agent(name, type_ or "", _field(fields, "email", where, problems),
                                 _field(fields, "branch", where, problems),
                                 retired="retired" in fields and not _is_null(fields["retired"]))
    for name, agent in agents.items():  # (the types may come after the agents)
        if agent.type and agent.type not in types:
            problems.append(_problem(_line(node), f"agents.{name}: type {agent.type!r} is not "
                                     f"one of {', '.join(sorted(types))}", Severity.WARNING))
    for name in [n for n in rows if n in SEEDED_TYPES]:
        del rows[name]
        problems.append(_problem(_line(node), f"agent_types.{name}: a seeded type's authority "
                                 "rows are fixed; its `authority` is not read", Severity.WARNING))
    return Registry(agent_types=types, agents=agents, problems=tuple(problems),
                    authority_rows=rows)


#: the verdicts an added type's authority row may give (model.authority.Authority)
VERDICTS = ("ground_truth", "attributed", "forbidden")


def _authority_rows(name: str, node: yaml.Node, problems: list[Problem]
                    ) -> dict[tuple[str, str], str]:
    """`authority: {<subject kind>|"*": {<claim type>|"*": <verdict>}}` of an added type."""
    out: dict[tuple[str, str], str] = {}
    where = f"agent_types.{name}.authority"
    for subject_node, claims in _mapping(node, where, problems):
        subject = _text(subject_node)
        for claim_node, verdict_node in _mapping(claims, f"{where}.{subject}", problems):
            claim = _text(claim_node)
            verdict = _text(verdict_node)
            if not subject or not claim or verdict not in VERDICTS:
                problems.append(_problem(_line(verdict_node), f"{where}.{subject}.{claim}: "
                                         f"must be one of {', '.join(VERDICTS)}"))
                continue
            out[(subject, claim)] = verdict
    return out


def _mapping(node: yaml.Node, where: str, problems: list[Problem]
             ) -> list[tuple[yaml.Node, yaml.Node]]:
    """The pairs of a mapping node; a null is empty; anything else is a problem."""
    if isinstance(node, yaml.MappingNode):
        return list(node.value)
    if not _is_null(node):
        problems.append(_problem(_line(node), f"{where}: must be a mapping"))
    return []


def _is_null(node: yaml.Node) -> bool:
    """A plain `~`, `null` or nothing: YAML's null, which reads as no value."""
    return (isinstance(node, yaml.ScalarNode) and not node.style
            and node.value in ("", "~", "null", "Null", "NULL"))


def _field(fields: dict[str | None, yaml.Node], key: str, where: str,
           problems: list[Problem]) -> str | None:
    node = fields.get(key)
    if node is None:
        return None
    if not isinstance(node, yaml.ScalarNode):
        problems.append(_problem(_line(node), f"{where}.{key}: must be text"))
        return None
    return None if _is_null(node) else node.value or None


def _text(node: yaml.Node) -> str | None:
    return node.value if isinstance(node, yaml.ScalarNode) else None


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _problem(line: int, message: str, severity: Severity = Severity.ERROR) -> Problem:
    return Problem(REGISTRY_PATH, line, "registry", severity, f"agent registry {message}")
