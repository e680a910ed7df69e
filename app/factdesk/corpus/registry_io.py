"""Read the agent registry `.factdesk/agents.yaml` into the model's `Registry`."""

from __future__ import annotations

from pathlib import Path

import yaml

from factdesk.model.registry import SEEDED_TYPES, Agent, Registry

REGISTRY_PATH = ".factdesk/agents.yaml"


def load_registry(repo: Path) -> Registry:
    path = repo / REGISTRY_PATH
    if not path.is_file() or path.is_symlink():
        return Registry()
    try:
        doc = yaml.safe_load(path.read_text("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError):
        return Registry()
    if not isinstance(doc, dict):
        return Registry()
    types = dict(SEEDED_TYPES)
    for key, value in (doc.get("agent_types") or {}).items():
        desc = value.get("description", "") if isinstance(value, dict) else ""
        types[str(key)] = str(desc)
    agents = {}
    for key, value in (doc.get("agents") or {}).items():
        if isinstance(value, dict):
            agents[str(key)] = Agent(str(key), str(value.get("type", "")),
                                     value.get("email"), value.get("branch"))
    return Registry(agent_types=types, agents=agents)
