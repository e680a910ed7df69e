"""What an agent branch brings to the curated branch without a decision (issue 22;
docs/review.md, "What comes over undecided").

Outside `kb/` only two things come over with the review merge undecided:

- the agent's private files, the paths knomit lets agents write (FORMAT §1.3,
  `IsWritablePrivatePath`): `.knomit/<area>/<…>.md`, `<area>` without a `.`, at least two
  segments under `.knomit/`, no segment empty, `.` or holding `..` — never a loose file
  directly in `.knomit/` (`ontology.yaml` is the server's);
- the agent's own messages (FORMAT §14): a new, well-formed message file whose `from` is
  the commit author's agent id and the id of every agent branch that holds the commit; or
  a change to `delivery` alone, moving forward, on a message whose `to` holds that id.

Every other change outside `kb/` — the ontology, the registry and the curators' files in
`.factdesk/`, another sender's message, `.gitattributes`, anything — is a *file* of its
proposal, decided like a fact (accepted: the decision commit writes it; rejected: the
curated version stays). The review merge never carries it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from types import TracebackType

from factdesk.corpus import gitrepo
from factdesk.corpus.messages import parse_message
from factdesk.corpus.ontology import ONTOLOGY_PATHS, Ontology, parse_ontology
from factdesk.corpus.registry_io import REGISTRY_PATH
from factdesk.model.enums import Severity
from factdesk.model.messages import DELIVERY_STATES, MSG_ROOT, Message
from factdesk.model.registry import agent_id_from_email

#: the kinds of a proposed file outside kb/ (what the queue shows)
FILE_KINDS = ("ontology", "registry", "curators", "message", "file")
#: a message or an ontology larger than this is described by its size only
_DESCRIBE_LIMIT = 1 << 20


def writable_private(path: str) -> bool:
    """knomit's `IsWritablePrivatePath`: `.knomit/<area>/<…>.md` (module doc)."""
    if not path.startswith(".knomit/") or not path.endswith(".md"):
        return False
    parts = path.split("/")[1:]
    if len(parts) < 2 or any(s in ("", ".") or ".." in s for s in parts):
        return False
    return "." not in parts[0]


def branch_id(branch: str) -> str:
    """The agent id of `agent/<id>` or `<remote>/agent/<id>`."""
    return branch.rsplit("agent/", 1)[-1]


def file_kind(path: str) -> str:
    """What a file outside kb/ is, for the queue (FILE_KINDS)."""
    if path.lower() in ONTOLOGY_PATHS:
        return "ontology"
    if path == REGISTRY_PATH:
        return "registry"
    if path.startswith(".factdesk/"):
        return "curators"
    if path.startswith(f"{MSG_ROOT}/"):
        return "message"
    return "file"


def _message(path: str, data: bytes | None) -> Message | None:
    """The message of a well-formed file (no error of its own), else None."""
    if data is None or len(data) > _DESCRIBE_LIMIT:
        return None
    outcome = parse_message(path, data)
    if outcome.message is None or any(p.severity == Severity.ERROR for p in outcome.problems):
        return None
    return outcome.message


def own_message(agent: str, path: str, old: bytes | None, new: bytes | None) -> bool:
    """Whether the change `old` → `new` of the message file `path` is `agent`'s own
    (module doc). `old`/`new` None: the file is absent before/after."""
    after = _message(path, new)
    if after is None:
        return False  # (a deletion, or not well-formed)
    if old is None:
        return after.sender == agent
    before = _message(path, old)
    if before is None or new is None or agent not in before.to:
        return False
    if after.delivery not in DELIVERY_STATES or before.delivery not in DELIVERY_STATES:
        return False
    if DELIVERY_STATES.index(after.delivery) <= DELIVERY_STATES.index(before.delivery):
        return False  # (forward only)
    # the delivery line alone changed: every other line of the file is the same
    was, now = old.split(b"\n"), new.split(b"\n")
    line = before.line_of("delivery") - 1
    return (len(was) == len(now) and after.line_of("delivery") - 1 == line
            and all(a == b for i, (a, b) in enumerate(zip(was, now, strict=True)) if i != line))


class Carry:
    """Sorts agent commits' changes outside kb/ into carried (module doc) and decided,
    reading message blobs when it must (one `git cat-file --batch`, started on first use;
    close it: `with Carry(...) as carry`). `ids(sha)`: the ids of the agent branches that
    hold a commit (default: asked of git, for the few commits that need it)."""

    def __init__(self, repo: Path, ids: Callable[[str], Collection[str]] | None = None) -> None:
        self.repo = repo
        self._ids = ids
        self._reader: gitrepo.BlobReader | None = None

    def read(self, blob: str | None) -> bytes | None:
        if blob is None:
            return None
        if self._reader is None:
            self._reader = gitrepo.BlobReader(self.repo)
        try:
            return self._reader.read(blob, limit=_DESCRIBE_LIMIT)
        except gitrepo.BlobTooLarge:
            return None

    def branch_ids(self, sha: str) -> set[str]:
        if self._ids is not None:
            return set(self._ids(sha))
        from factdesk.corpus.gitreview import agent_branches_with

        return {branch_id(b) for b in agent_branches_with(self.repo, sha)}

    def carried(self, sha: str, author_email: str, path: str, old_blob: str | None,
                new_blob: str | None) -> bool:
        """Whether this change of a file outside kb/ comes over undecided."""
        if writable_private(path):
            return True
        if file_kind(path) != "message":
            return False
        agent = agent_id_from_email(author_email)
        if not agent or self.branch_ids(sha) != {agent}:
            return False
        return own_message(agent, path, self.read(old_blob), self.read(new_blob))

    def split(self, sha: str, author_email: str,
              changes: Iterable[tuple[str, str | None, str | None]]) -> tuple[list[str], list[str]]:
        """(decided, carried) paths of one commit's changes outside kb/ ((path, old blob,
        new blob) each)."""
        decided: list[str] = []
        carried: list[str] = []
        for path, old, new in changes:
            (carried if self.carried(sha, author_email, path, old, new) else decided).append(path)
        return decided, carried

    def describe(self, path: str, old_blob: str | None, new_blob: str | None) -> tuple[str, ...]:
        """What a decided file's change does, in words (the queue shows it)."""
        kind = file_kind(path)
        verb = "adds" if old_blob is None else ("deletes" if new_blob is None else "changes")
        if kind == "ontology":
            return describe_ontology(path, self.read(old_blob), self.read(new_blob))
        if kind == "registry":
            return (f"{verb} the agent registry (who is an agent, who a curator)",)
        if kind == "curators":
            return (f"{verb} a file of the curators' own ({path})",)
        if kind == "message":
            msg = _message(path, self.read(new_blob if new_blob else old_blob))
            if msg is None:
                return (f"{verb} a message file that is not a well-formed message",)
            return (f"{verb} a message from {msg.sender} to {', '.join(msg.to)} "
                    f"({msg.delivery}), not the agent's own",)
        return (f"{verb} {path}, outside kb/ (not a fact, not the agent's private state)",)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> Carry:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def ontology_rules(onto: Ontology) -> dict[tuple[str, str], str]:
    """(scope, name) → the rule of every validation of an ontology."""
    out = {("root", v.name): v.rule for v in onto.validations}
    pending = [("", onto.topics)]
    while pending:
        prefix, nodes = pending.pop()
        for key, node in nodes.items():
            scope = prefix + key
            out.update({(scope, v.name): v.rule for v in node.validations})
            pending.append((scope + "/", node.children))
    return out


def rule_diff(before: Ontology | None, after: Ontology
              ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(gone, come): the (scope, name) of each rule an ontology change deletes or rewrites,
    and of each rule it adds or rewrites."""
    was = ontology_rules(before) if before else {}
    now = ontology_rules(after)
    gone = sorted(k for k in was if k not in now or now[k] != was[k])
    come = sorted(k for k in now if k not in was or now[k] != was[k])
    return gone, come


def describe_ontology(path: str, old: bytes | None, new: bytes | None) -> tuple[str, ...]:
    """The rules an ontology change makes appear, disappear or change, and its topics."""
    before = parse_ontology(old, path) if old is not None else None
    after = parse_ontology(new, path) if new is not None else None
    if after is None:
        return ("deletes the ontology: every rule and topic disappears",)
    lines = []
    if any(p.severity == Severity.ERROR for p in after.problems):
        lines.append("the new ontology has errors: "
                     + "; ".join(p.message for p in after.problems[:3]))
    was = ontology_rules(before) if before else {}
    now = ontology_rules(after)
    lines += [f"rule removed: {name} at {scope}" for (scope, name) in sorted(set(was) - set(now))]
    lines += [f"rule added: {name} at {scope}" for (scope, name) in sorted(set(now) - set(was))]
    lines += [f"rule changed: {name} at {scope}" for (scope, name) in sorted(set(was) & set(now))
              if was[(scope, name)] != now[(scope, name)]]
    old_topics = set(before.topics) if before else set()
    lines += [f"topic removed: {t}" for t in sorted(old_topics - set(after.topics))]
    lines += [f"topic added: {t}" for t in sorted(set(after.topics) - old_topics)]
    return tuple(lines) or ("changes the ontology's text only (no rule or topic)",)
