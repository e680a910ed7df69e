"""The registry family (issue 16): register an agent, change its type (promote, demote),
retire it, add an agent type with its authority row. Each is one commit to
`.factdesk/agents.yaml`, with a required reason, undoable like every other action.

The file is edited in place at the positions YAML's composer reports, so every other byte
(comments, order, quoting, flow or block style) stays as it was. A registry in a shape
these edits cannot place a change in (a flow-style `agents: {…}`, an anchor or alias on
the entry) is refused with a message that says so; a curator then edits it by hand.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Mapping
from pathlib import Path

import yaml

from factdesk.corpus.registry_io import REGISTRY_PATH, VERDICTS, load_registry, parse_registry
from factdesk.corpus.registry_trust import CODE as TRUST_CODE
from factdesk.corpus.yamlv3 import SAFE_LOADER
from factdesk.curation.base import CurationBase, read_file
from factdesk.curation.changes import ChangeSet, FieldChange, Plan
from factdesk.curation.gitwrite import FileChange, Refused
from factdesk.curation.trust import trusted_decisions
from factdesk.curation.undo import replay
from factdesk.model.enums import ClaimType, SubjectKind
from factdesk.model.registry import Registry, strip_op

#: the registry actions (also in `trust.ACTIONS`, so undo trusts them)
REGISTRY_ACTIONS = ("register", "set-type", "retire", "add-type")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$")
_TYPE = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
HEADER = ("# factdesk agent registry (FORMAT.md §13): agent types and agents.\n"
          "# Only curators' changes count (docs/agents.md).\n")


class RegistryOps(CurationBase):
    """register, set_type, retire, add_type."""

    def register(self, agent_id: str, agent_type: str, reason: str, *, email: str | None = None,
                 branch: str | None = None, preview: bool = False) -> ChangeSet:
        """Add an unknown claimant to the registry with its type, git e-mail and branch."""
        _check_name(agent_id, "agent id")
        old, text, reg = self._registry_text()
        if agent_id in reg.agents:
            raise Refused(f"{agent_id} is registered already (as {reg.agents[agent_id].type}); "
                          "use set-type to change its type", rule="registry")
        self._check_type(agent_type, reg.agent_types)
        fields = [("type", agent_type)]
        if email:
            fields.append(("email", _quote(email)))
        if branch:
            fields.append(("branch", _quote(branch)))
        entry = "{" + ", ".join(f"{k}: {v}" for k, v in fields) + "}"
        new = add_entry(text, "agents", f"{_key(agent_id)}: {entry}")
        plan = Plan("register", f"register: {agent_id} as {agent_type}",
                    (FileChange(REGISTRY_PATH, old, new.encode("utf-8")),),
                    (FieldChange(REGISTRY_PATH, f"agents.{agent_id}", None, agent_type),))
        return self._run(plan, reason, None, preview)

    def set_type(self, agent_id: str, agent_type: str, reason: str, *,
                 preview: bool = False) -> ChangeSet:
        """Change a registered agent's type (a promotion or demotion)."""
        old, text, reg = self._registry_text()
        agent = reg.agents.get(agent_id)
        if agent is None:
            raise Refused(f"{agent_id} is not registered; register it first", rule="registry")
        self._check_type(agent_type, reg.agent_types)
        if agent.type == agent_type:
            raise Refused(f"{agent_id} is {agent_type} already", rule="registry")
        new = set_field(text, agent_id, "type", agent_type)
        plan = Plan("set-type", f"set-type: {agent_id} {agent.type or '(none)'} → {agent_type}",
                    (FileChange(REGISTRY_PATH, old, new.encode("utf-8")),),
                    (FieldChange(REGISTRY_PATH, f"agents.{agent_id}.type", agent.type or None,
                                 agent_type),))
        return self._run(plan, reason, None, preview)

    def retire(self, agent_id: str, reason: str, *, preview: bool = False,
               today: _dt.date | None = None) -> ChangeSet:
        """Mark a registered agent retired (`retired: <date>`): listed, never suggested."""
        old, text, reg = self._registry_text()
        agent = reg.agents.get(agent_id)
        if agent is None:
            raise Refused(f"{agent_id} is not registered", rule="registry")
        if agent.retired:
            raise Refused(f"{agent_id} is retired already", rule="registry")
        day = (today or _dt.date.today()).isoformat()
        new = set_field(text, agent_id, "retired", f'"{day}"')
        plan = Plan("retire", f"retire: {agent_id}",
                    (FileChange(REGISTRY_PATH, old, new.encode("utf-8")),),
                    (FieldChange(REGISTRY_PATH, f"agents.{agent_id}.retired", None, day),))
        return self._run(plan, reason, None, preview)

    def add_type(self, name: str, description: str, rows: Mapping[tuple[str, str], str],
                 reason: str, *, preview: bool = False) -> ChangeSet:
        """Add an agent type with its row in the authority table: {(subject kind | "*",
        claim type | "*"): ground_truth | attributed | forbidden}; what it does not list is
        attributed."""
        if not _TYPE.match(name):
            raise Refused(f"type name {name!r}: lower-case letters, digits, - and _",
                          rule="registry")
        old, text, reg = self._registry_text()
        if name in reg.agent_types:
            raise Refused(f"agent type {name} exists already", rule="registry")
        subjects = {s.value for s in SubjectKind} | {"*"}
        claims = {c.value for c in ClaimType} | {"*"}
        by_subject: dict[str, dict[str, str]] = {}
        for (subject, claim), verdict in rows.items():
            if subject not in subjects or claim not in claims or verdict not in VERDICTS:
                raise Refused(f"authority row {subject}:{claim}={verdict}: subject one of "
                              f"{', '.join(sorted(subjects))}; claim type one of "
                              f"{', '.join(sorted(claims))}; verdict one of {', '.join(VERDICTS)}",
                              rule="registry")
            by_subject.setdefault(subject, {})[claim] = verdict
        lines = [f"{name}:", f"  description: {_quote(' '.join(description.split()))}"]
        if by_subject:
            lines.append("  authority:")
            for subject, claim_rows in sorted(by_subject.items()):
                inner = ", ".join(f"{_key(c)}: {v}" for c, v in sorted(claim_rows.items()))
                lines.append(f"    {_key(subject)}: {{{inner}}}")
        new = add_entry(text, "agent_types", "\n".join(lines))
        plan = Plan("add-type", f"add-type: {name}",
                    (FileChange(REGISTRY_PATH, old, new.encode("utf-8")),),
                    (FieldChange(REGISTRY_PATH, f"agent_types.{name}", None,
                                 ", ".join(f"{s}:{c}={v}" for (s, c), v in sorted(rows.items()))
                                 or "attributed"),))
        return self._run(plan, reason, None, preview)

    # -- helpers ------------------------------------------------------------------------------

    def _registry_text(self) -> tuple[bytes | None, str, Registry]:
        return registry_text(self.repo)

    @staticmethod
    def _check_type(agent_type: str, types: Mapping[str, str]) -> None:
        if agent_type not in types:
            raise Refused(f"unknown agent type {agent_type!r} (one of {', '.join(sorted(types))}; "
                          "add-type adds one)", rule="registry")


def registry_text(repo: Path) -> tuple[bytes | None, str, Registry]:
    """The registry file's bytes (None: none yet), its text and what it says; Refused when
    a registry action cannot edit it (not UTF-8, an agent's pending change, an error)."""
    old = read_file(repo, REGISTRY_PATH)
    try:
        text = old.decode("utf-8") if old is not None else ""
    except UnicodeDecodeError:
        raise Refused(f"{REGISTRY_PATH} is not UTF-8; fix it by hand", rule="registry") from None
    pending = [p for p in load_registry(repo).problems if p.code == TRUST_CODE]
    if pending:  # (an edit of this file would adopt the agent's change as the curator's)
        raise Refused(f"{pending[0].message}. Revert that change, or make it yours by "
                      "editing and committing the file by hand, before a registry action",
                      rule=TRUST_CODE)
    reg = parse_registry(old) if old is not None else parse_registry(b"")
    bad = [p for p in reg.problems if p.severity == "error"]
    if bad:
        raise Refused(f"{REGISTRY_PATH}: {bad[0].message}; fix it first", rule="registry")
    return old, text, reg


def user_entry(repo: Path, email: str) -> tuple[str, FileChange] | None:
    """The curator as a `user` in the registry (issue 24 #3): (their id, the file change
    that registers them), or None when they are registered already, when the corpus keeps
    no registry of agents (there is no A1 finding to avoid, and one person's entry would
    put every other claimant in the wrong), or when the file cannot be edited now. The id
    is the e-mail's local part, or the whole e-mail when another agent holds that id."""
    try:
        old, text, reg = registry_text(repo)
    except Refused:
        return None
    bare = strip_op(email)
    if not reg.agents or reg.agent_for_email(bare) is not None or not _NAME.match(bare):
        return None
    local = bare.partition("@")[0]
    agent_id = local if _NAME.match(local) and local not in reg.agents else bare
    if agent_id in reg.agents or "user" not in reg.agent_types:
        return None
    new = add_entry(text, "agents", f"{_key(agent_id)}: {{type: user, email: {_quote(bare)}}}")
    return agent_id, FileChange(REGISTRY_PATH, old, new.encode("utf-8"))


def actions_in_effect(repo: Path) -> list[tuple[str, str]]:
    """(commit, action) of every curator's action in effect on the branch (trusted, not
    undone), oldest first: what `reflect.agents` counts as corrections."""
    undo, _ = replay(trusted_decisions(repo))
    return [(a.commit, a.action) for a in undo]


# -- minimal-diff YAML edits (pure) ------------------------------------------------------------


def _check_name(name: str, what: str) -> None:
    if not _NAME.match(name):
        raise Refused(f"{what} {name!r}: letters, digits and . _ @ + - only", rule="registry")


def _quote(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is YAML's)."""
    return json.dumps(text, ensure_ascii=False)


def _key(name: str) -> str:
    return name if re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", name) and name not in (
        "y", "n", "yes", "no", "on", "off", "true", "false", "null") else _quote(name)


def _compose(text: str) -> yaml.MappingNode | None:
    try:
        node = yaml.compose(text, Loader=SAFE_LOADER) if text.strip() else None
    except yaml.YAMLError as exc:
        raise Refused(f"{REGISTRY_PATH} does not parse ({exc}); fix it first",
                      rule="registry") from None
    if node is not None and not isinstance(node, yaml.MappingNode):
        raise Refused(f"{REGISTRY_PATH} is not a mapping; fix it first", rule="registry")
    return node


def _top(node: yaml.MappingNode | None, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    for k, v in node.value if node is not None else ():
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return k, v
    return None


def add_entry(text: str, section: str, entry: str) -> str:
    """`text` with `entry` (one or more lines, unindented) added as the last item of the
    top-level block mapping `section` (created at the end when absent)."""
    node = _compose(text)
    found = _top(node, section)
    body = "\n".join("  " + line for line in entry.split("\n")) + "\n"
    if found is None or _is_empty(found[1]):
        if found is not None:  # `section:` with no value, or `section: {}` / `~`
            k, v = found
            start = k.start_mark.index
            line_end = text.find("\n", v.end_mark.index)
            line_end = len(text) if line_end < 0 else line_end + 1
            return text[:start] + f"{section}:\n" + body + text[line_end:]
        base = text if text else HEADER
        if base and not base.endswith("\n"):
            base += "\n"
        return base + f"{section}:\n" + body
    _, value = found
    if not isinstance(value, yaml.MappingNode) or value.flow_style:
        raise Refused(f"{REGISTRY_PATH}: {section} is not a block mapping; add the entry by hand",
                      rule="registry")
    indent = value.value[0][0].start_mark.column
    body = "\n".join(" " * indent + line for line in entry.split("\n")) + "\n"
    at = _after_last_line(text, value)
    return text[:at] + _newline_at_end(text, at) + body + text[at:]


def set_field(text: str, agent_id: str, key: str, value: str) -> str:
    """`text` with `agents.<agent_id>.<key>` set to the YAML text `value`: the old value's
    characters replaced, or the key added to the entry (flow or block)."""
    node = _compose(text)
    found = _top(node, "agents")
    entry = None
    if found is not None and isinstance(found[1], yaml.MappingNode):
        for k, v in found[1].value:
            if isinstance(k, yaml.ScalarNode) and k.value == agent_id:
                entry = v
    if not isinstance(entry, yaml.MappingNode) or getattr(entry, "anchor", None):
        raise Refused(f"{REGISTRY_PATH}: agents.{agent_id} is not a mapping factdesk can edit; "
                      "edit it by hand", rule="registry")
    for k, v in entry.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            if not isinstance(v, yaml.ScalarNode) or v.style in ("|", ">"):
                raise Refused(f"{REGISTRY_PATH}: agents.{agent_id}.{key} is not a one-line "
                              "value; edit it by hand", rule="registry")
            return text[:v.start_mark.index] + value + text[v.end_mark.index:]
    if entry.flow_style:
        close = entry.end_mark.index - 1
        if text[close] != "}":
            raise Refused(f"{REGISTRY_PATH}: agents.{agent_id}: cannot place {key}",
                          rule="registry")
        sep = ", " if entry.value else ""
        # after the last value (before any spaces preceding the brace)
        at = entry.value[-1][1].end_mark.index if entry.value else close
        return text[:at] + f"{sep}{key}: {value}" + text[at:]
    indent: int = entry.value[0][0].start_mark.column
    at = _after_last_line(text, entry)
    return text[:at] + _newline_at_end(text, at) + " " * indent + f"{key}: {value}\n" + text[at:]


def _newline_at_end(text: str, at: int) -> str:
    return "\n" if at == len(text) and text and not text.endswith("\n") else ""


def _is_empty(node: yaml.Node) -> bool:
    if isinstance(node, yaml.MappingNode):
        return not node.value
    return isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null") and not node.style


def _after_last_line(text: str, mapping: yaml.MappingNode) -> int:
    """The index just after the line holding the end of `mapping`'s last value."""
    last: yaml.Node = mapping.value[-1][1]
    while not getattr(last, "flow_style", True) and last.value:  # a nested block collection:
        last = last.value[-1][1] if isinstance(last, yaml.MappingNode) else last.value[-1]
    end = last.end_mark.index  # (its own end mark runs on over the comments after it)
    if end > 0 and text[end - 1] == "\n":  # (block scalars end after their newline)
        return end
    nl = text.find("\n", end)
    if nl < 0:
        return len(text)  # no newline at the end: the caller's text starts a new line
    return nl + 1
