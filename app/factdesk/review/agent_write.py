"""An agent writes typed memory through factdesk (issue 26): a proposed fact, checked by the
rules of `check` and review *before* it is written, lands as one commit on the agent's own
`agent/<id>` branch, where a curator decides it like any other proposal.

- **Identity** (`agent_identity`): the server is started for one agent id; its type comes
  from the registry (`.factdesk/agents.yaml`): unregistered → `unverified` (no
  `claimant_type` is written: every reader takes an absent type as unverified); an id the
  registry types `user` is refused (a person is no agent), and so is a retired one. The
  claimant of every fact written here is that id, whatever the arguments say.
- **Checks**: the version is checked as review checks a proposal (`review_reads.
  check_proposed`: the parse, R1, R3, H1, A1 with the claimant mismatch, E1, the ref rules,
  the ontology's), with the agent's own earlier versions of the facts it cites in place. Every
  error refuses, and so does every warning but the harmless ones (`ALLOWED`); the refusal is
  an `AgentWriteRefused` whose text starts with the rule's code in brackets and says how to
  write it legally. Nothing is written then.
- **The commit**: objects, tree and commit only (`gittree.commit_files_on`), then a
  compare-and-swap `update-ref refs/heads/agent/<id> NEW OLD` (`gittree.swap_ref`), retried
  from the new tip when another writer moved it. The work tree, git's index and the
  checked-out branch are never touched; git runs under gitrepo's rules (no program from the
  repository's config, K01). Author `<id> <<id>+learn@agents.knomit.io>`, committer
  `<id> <<id>@agents.knomit.io>` (knomit's form, FORMAT §5.2).
- **Limits** (`Limits`): the title, the body, list sizes and a per-agent write rate (in
  memory, per server process); bad input is refused in words (`[input] …`).
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from factdesk.corpus import githistory, gitrepo
from factdesk.corpus.codec import MAX_BYTES, parse_fact
from factdesk.corpus.messages import parse_message, serialize_message
from factdesk.corpus.registry_io import load_registry
from factdesk.corpus.writer import FieldValue, WriteRefused, serialize_fact
from factdesk.curation import gittree
from factdesk.curation.writetypes import Identity
from factdesk.index import review_reads
from factdesk.model.authority import forbidden_reason
from factdesk.model.enums import ClaimantType
from factdesk.model.enums import Severity as _Severity
from factdesk.model.fact import Problem
from factdesk.model.messages import message_path
from factdesk.model.refs import local_targets
from factdesk.model.words import an
from factdesk.review.agent_input import (
    ID_RE,
    SEGMENT_RE,
    AgentWriteRefused,
    Limits,
    RateLimit,
    confidence_arg,
    items_arg,
    line_arg,
    optional_line,
    origin_arg,
    text_arg,
    type_and_kind,
    verdict,
)
from factdesk.review.proposals import load_queue

if TYPE_CHECKING:
    import sqlite3

    from factdesk.index.indexer import Indexer

_T = TypeVar("_T")

AGENT_DOMAIN = "agents.knomit.io"
UNVERIFIED = "unverified"

@dataclass(frozen=True, slots=True)
class AgentIdentity:
    id: str
    #: the registry's type, or `unverified`
    type: str

    @property
    def branch(self) -> str:
        return f"agent/{self.id}"

    def author(self, op: str) -> Identity:
        return Identity(self.id, f"{self.id}+{op}@{AGENT_DOMAIN}")

    @property
    def committer(self) -> Identity:
        return Identity(self.id, f"{self.id}@{AGENT_DOMAIN}")


def agent_identity(repo: Path, agent_id: str) -> AgentIdentity:
    """The identity a server started with `--agent agent_id` writes under (module doc)."""
    if not ID_RE.fullmatch(agent_id) or ".." in agent_id or agent_id.endswith((".", ".lock")):
        raise AgentWriteRefused("identity", f"{agent_id!r} is no agent id: letters, digits, "
                                "'.', '_' and '-' only (at most 100, no '..'), as knomit names "
                                "agent/<id> branches")
    registry = load_registry(repo)
    agent = registry.agents.get(agent_id)
    if agent is None:
        return AgentIdentity(agent_id, UNVERIFIED)
    if agent.type == ClaimantType.USER:
        raise AgentWriteRefused("identity", f"{agent_id} is registered as a user (a person) in "
                                ".factdesk/agents.yaml: a person is no agent; start the server "
                                "with an agent's id")
    if agent.retired:
        raise AgentWriteRefused("identity", f"{agent_id} was retired by a curator "
                                "(.factdesk/agents.yaml): it writes nothing")
    return AgentIdentity(agent_id, agent.type)


class AgentWriter:
    """The writes of one agent on one corpus (one per MCP server)."""

    def __init__(self, indexer: Indexer, identity: AgentIdentity, *,
                 limits: Limits | None = None) -> None:
        self.indexer = indexer
        self.repo = Path(indexer.repo)
        self.identity = identity
        self.limits = limits or Limits()
        self.rate = RateLimit(self.limits.per_minute)
        #: the curated HEAD this writer last brought the index up to (`read`)
        self._indexed_head: str | None = None

    def read(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """`work` over the index, brought up to date with the curated branch's commits only:
        what the curator has not committed is no part of what a proposal is checked
        against, and looking at every file of a 100,000-fact work tree would cost seconds
        a write (`Indexer.read`'s `hint`). While HEAD stays where this writer last brought
        the index up to, the index is read as it is (no update: ~70 ms a write at 100,000
        facts), with `Indexer.read`'s repairs all the same."""
        head = gitrepo.head_sha(self.repo)
        moved = head is None or head != self._indexed_head
        out = self.indexer.read(work, hint=(), update=moved)
        self._indexed_head = head if self.indexer.stale is None else None
        return out

    # -- propose_fact ---------------------------------------------------------------------------

    def propose_fact(self, title: str, body: str, type: str, kind: str | None = None,
                     origin: str | None = None, confidence: float | None = None,
                     refs: Sequence[str] | None = None, domain: Sequence[str] | None = None,
                     entities: Sequence[str] | None = None, claim_type: str | None = None,
                     subject_kind: str | None = None, subject_ref: str | None = None,
                     settle_by: str | None = None, settlement: str | None = None,
                     topic: str | None = None, category: str | None = None) -> dict[str, Any]:
        """Propose a new fact (module doc) → `{sha, branch, path, topic, topic_from,
        claimant_agent_id, claimant_type, warnings}`."""
        self.rate.take()
        lim = self.limits
        title = line_arg("title", title, lim.title_chars)
        body = text_arg("body", body, multiline=True)
        if len(body.encode("utf-8")) > lim.body_bytes:
            raise AgentWriteRefused("input", f"the body is {len(body.encode('utf-8'))} bytes; "
                                    f"at most {lim.body_bytes} (split it into several facts)")
        type_, kind = type_and_kind(type, kind)
        origin = origin_arg(origin)
        confidence = confidence_arg(0.7 if confidence is None else confidence)
        lists = {name: items_arg(name, value, lim) for name, value in
                 (("refs", refs), ("domain", domain), ("entities", entities))}
        envelope = {name: optional_line(name, value, lim.item_chars) for name, value in
                    (("claim_type", claim_type), ("subject_kind", subject_kind),
                     ("subject_ref", subject_ref), ("settle_by", settle_by))}
        envelope["settlement"] = optional_line("settlement", settlement, lim.settlement_chars)
        topic_name, topic_from, folder = self._place(optional_line("topic", topic, 64),
                                                     optional_line("category", category, 200),
                                                     lists["domain"])
        fields: dict[str, FieldValue] = {
            "kind": kind, "type": type_, "domain": lists["domain"], "confidence": confidence,
            "sources": 1, "origin": origin, "entities": lists["entities"], "refs": lists["refs"],
            **{k: v for k, v in envelope.items() if k != "settlement"},
            "settlement": envelope["settlement"],
            # the claimant is the server's agent, whatever the arguments said
            "claimant_agent_id": self.identity.id,
            "claimant_type": None if self.identity.type == UNVERIFIED else self.identity.type,
        }
        try:
            data = serialize_fact(fields, title, body)
        except (WriteRefused, TypeError) as exc:
            raise AgentWriteRefused("input", str(exc)) from None
        if len(data) > MAX_BYTES:
            raise AgentWriteRefused("input", f"the fact is {len(data)} bytes; at most {MAX_BYTES}")
        author = self.identity.author("learn")

        def make(base: str) -> tuple[dict[str, bytes | None], str]:
            path = self._free_path(base, folder)
            return {path: data}, path

        def check(files: Mapping[str, bytes | None], base: str) -> list[Problem]:
            (path,) = files
            return self.check_version(path, data, base, author.email)

        sha, path, warnings = self.write(make, check, f"learn: {title}", author)
        return {"sha": sha, "branch": self.identity.branch, "path": path, "topic": topic_name,
                "topic_from": topic_from, "claimant_agent_id": self.identity.id,
                "claimant_type": self.identity.type, "warnings": warnings}

    def _place(self, topic: str | None, category: str | None,
               domain: Sequence[str]) -> tuple[str, str, str]:
        """(topic, where it came from, the folder `kb/<topic>/<category>`): the `topic` given,
        else `domain[0]`'s first segment (FORMAT §1.4: it must be a top-level topic of the
        ontology); the category given, else the rest of `domain[0]`, `domain[1]` or
        `uncategorized`."""
        first = domain[0].strip().strip("/").lower() if domain else ""
        if topic is not None:
            name, source = topic.strip().lower(), "topic"
            rest = first.partition("/")[2] if first.partition("/")[0] == name else ""
        elif first:
            name, _, rest = first.partition("/")
            source = "domain"
        else:
            raise AgentWriteRefused("topic", "no topic: give `topic` (a top-level topic of "
                                    ".knomit/ontology.yaml) or a `domain` whose first entry "
                                    "starts with one")
        topics = self._topics()
        if not SEGMENT_RE.fullmatch(name) or (topics is not None and name not in topics):
            known = f": one of {', '.join(sorted(topics))}" if topics else ""
            raise AgentWriteRefused("topic", f"topic {name!r} (from {source}) is not a top-level "
                                    f"topic of .knomit/ontology.yaml{known}")
        cat = (category if category is not None else
               rest or (domain[1] if len(domain) > 1 else "") or "uncategorized")
        segments = cat.strip().strip("/").lower().split("/")
        if len(segments) > 6 or not all(SEGMENT_RE.fullmatch(s) for s in segments):
            raise AgentWriteRefused("input", f"category {cat!r} is no folder path: lower-case "
                                    "letters, digits, '-' and '_' per segment, at most 6 "
                                    "segments, no '.' or '..'")
        return name, source, "/".join(["kb", name, *segments])

    def _topics(self) -> frozenset[str] | None:
        onto = self.indexer.rule_setting().ontology
        return frozenset(onto.topics) if onto is not None and onto.topics else None

    def _free_path(self, base: str, folder: str) -> str:
        """`<folder>/<8 hex>.md` that `base`'s tree does not hold (a fresh random name)."""
        for _ in range(8):
            path = f"{folder}/{secrets.token_hex(4)}.md"
            if not gittree.tree_entries(self.repo, base, [path]):
                return path
        raise AgentWriteRefused("input", f"no free file name under {folder}")

    # -- the check --------------------------------------------------------------------------------

    def check_version(self, path: str, data: bytes, base: str, author_email: str,
                      others: Mapping[str, bytes | None] | None = None) -> list[Problem]:
        """The findings of `data` at `path` as if accepted onto the curated branch, with the
        agent's own versions (at `base`) of the facts it cites that the curated branch lacks,
        and `others` (the same commit's other changes; None: a deletion) in place."""
        outcome = parse_fact(path, data)
        setting = self.indexer.rule_setting()
        others = others or {}
        targets = ([t for t in local_targets(outcome.fact.refs, setting.repo_id)
                    if t != path.lower() and t not in others]
                   if outcome.fact is not None else [])

        def work(conn: sqlite3.Connection) -> dict[str, review_reads.CheckedVersion]:
            versions: dict[str, bytes | None] = {path: data, **others}
            missing = sorted(set(targets) - review_reads.live_paths(conn, targets))
            versions.update(self.versions_at(base, missing))
            return review_reads.check_proposed(conn, setting, versions, [path],
                                               {path: author_email}, twins=False)

        checked = self.read(work)
        found = list(checked[path].problems) if path in checked else list(outcome.problems)
        fact = outcome.fact
        if self.identity.type == UNVERIFIED and fact is not None and fact.envelope.subject_kind:
            # (the table has no row for an absent type: an unverified writer is held to a
            # tool's, so it cannot canonically claim the user's identity either)
            why = forbidden_reason(ClaimantType.TOOL, fact.envelope.subject_kind,
                                   fact.claim_type or "")
            if why:
                found.append(Problem(path, fact.line_of("subject_kind"), "A1", _Severity.ERROR,
                                     f"an unverified agent may not make "
                                     f"{an(fact.claim_type or '')} about "
                                     f"{fact.envelope.subject_kind}: {why}"))
        return found

    def versions_at(self, rev: str, paths: Sequence[str]) -> dict[str, bytes | None]:
        """path → bytes in commit `rev`, for those of `paths` it has."""
        entries = gittree.tree_entries(self.repo, rev, list(paths)) if paths else {}
        if not entries:
            return {}
        reader = gitrepo.BlobReader(self.repo)
        try:
            return {p: reader.read(blob, limit=MAX_BYTES) for p, (_mode, blob) in entries.items()}
        finally:
            reader.close()

    # -- send_message -------------------------------------------------------------------------

    def send_message(self, to: Sequence[str], body: str, context_explanation: str,
                     referenced_memory_ids: Sequence[str] | None = None,
                     in_reply_to: str | None = None) -> dict[str, Any]:
        """A message from this agent (FORMAT §14: `msg/<yyyy>/<mm>/<8 hex>.md`, `from` the
        server's id, delivery `queued`), one commit on `agent/<id>` → `{sha, branch, path}`.
        Checked first as review's carry rule checks an agent's own message (it parses with
        no error of its own) and every referenced id is a live fact (M3)."""
        self.rate.take()
        lim = self.limits
        recipients = items_arg("to", to, lim)
        if not recipients:
            raise AgentWriteRefused("input", "to is empty: name at least one agent id (or curator)")
        for who in recipients:
            if not ID_RE.fullmatch(who) or ".." in who:
                raise AgentWriteRefused("input", f"to: {who!r} is no agent id")
        body = text_arg("body", body, multiline=True)
        if not body.strip() or len(body.encode("utf-8")) > lim.body_bytes:
            raise AgentWriteRefused("input", f"the body must hold text, at most {lim.body_bytes} "
                                    "bytes")
        why = line_arg("context_explanation", context_explanation, lim.settlement_chars)
        refs = items_arg("referenced_memory_ids", referenced_memory_ids, lim)
        reply = optional_line("in_reply_to", in_reply_to, lim.item_chars)
        sent = now_rfc3339()
        fields: dict[str, object] = {
            "from": self.identity.id, "to": recipients, "sent": sent, "delivery": "queued",
            "context_explanation": why, "referenced_memory_ids": refs, "in_reply_to": reply}
        try:
            path = message_path(self.identity.id, sent, body)
            data = serialize_message(fields, body)
        except (ValueError, TypeError) as exc:
            raise AgentWriteRefused("input", str(exc)) from None

        def make(base: str) -> tuple[dict[str, bytes | None], str]:
            if gittree.tree_entries(self.repo, base, [path]):
                raise AgentWriteRefused("input", f"{path} exists: this message was sent already")
            return {path: data}, path

        def check(files: Mapping[str, bytes | None], base: str) -> list[Problem]:
            found = list(parse_message(path, data).problems)
            wanted = [r for r in refs if r.startswith("kb/")]
            live = self.read(lambda conn: review_reads.live_paths(conn, wanted))
            own = set(gittree.tree_entries(self.repo, base, [r for r in wanted if r not in live]))
            found += [Problem(path, 1, "M3", _Severity.ERROR,
                              f"referenced_memory_ids: {r} is no fact of kb/: name live facts")
                      for r in refs if r not in live and r not in own]
            return found

        sha, path, _warnings = self.write(make, check, f"message: to {', '.join(recipients)}",
                                           self.identity.author("message"))
        return {"sha": sha, "branch": self.identity.branch, "path": path, "sent": sent}

    # -- my_proposals -------------------------------------------------------------------------

    def my_proposals(self, status: str = "all", limit: int = 50) -> dict[str, Any]:
        """This agent's proposals on `agent/<id>`, newest first, with their status (open,
        accepted, rejected, partial) and, once decided, the curator's reason →
        `{"branch", "proposals": [{"sha", "subject", "status", "time", "facts": [{"path",
        "change", "status"}], "decided_by", "reason"}]}`. A read: no rate, nothing written."""
        if status not in ("all", "open", "accepted", "rejected", "partial"):
            raise AgentWriteRefused("input", f"status {status!r}: one of all, open, accepted, "
                                    "rejected, partial")
        queue = load_queue(self.repo, branch=self.identity.branch)
        mine = [p for p in queue.proposals if status in ("all", p.status)]
        mine = sorted(mine, key=lambda p: p.time, reverse=True)[:max(1, min(limit, 500))]
        return {"branch": self.identity.branch, "proposals": [
            {"sha": p.sha, "subject": p.subject, "status": p.status, "time": p.time,
             "facts": [{"path": f.path, "change": f.change, "status": f.status}
                       for f in p.facts],
             "decided_by": p.decided_by[0] if p.decided_by else None,
             "reason": self._reason(p.decided_by[0]) if p.decided_by else None}
            for p in mine]}

    def _reason(self, commit: str) -> str | None:
        """The `Factdesk-Reason` a decision commit records (data: handed over as text)."""
        message = githistory.commit_message(self.repo, commit)
        found = [v.strip() for k, v in githistory.trailer_lines(message) or ()
                 if k == "Factdesk-Reason"]
        return found[-1] if found else None

    # -- the commit ---------------------------------------------------------------------------

    def write(self, make: Callable[[str], tuple[dict[str, bytes | None], str]],
               check: Callable[[Mapping[str, bytes | None], str], list[Problem]],
               message: str | Callable[[], str], author: Identity) -> tuple[str, str, list[str]]:
        """Check, then commit `make(base)`'s files on `agent/<id>` by compare-and-swap,
        retried from the new tip when another writer moved the branch first."""
        ref = f"refs/heads/{self.identity.branch}"
        checked: list[bytes | None] | None = None
        for attempt in range(40):
            tip, base = self.base(ref)
            files, path = make(base)
            contents = sorted(files.values(), key=lambda data: (data is not None, data or b""))
            if contents != checked:
                # (checked again when another writer changed what this one rewrites: a new
                # file's fresh random name alone does not)
                warnings = verdict(check(files, base))
                checked = contents
            text = message if isinstance(message, str) else message()
            sha = gittree.commit_files_on(self.repo, base, files, text, author=author,
                                          committer=self.identity.committer)
            if gittree.swap_ref(self.repo, ref, sha, tip, f"factdesk mcp: {text[:200]}"):
                return sha, path, warnings
            time.sleep(random.uniform(0.005, 0.03) * min(attempt + 1, 8))  # noqa: S311 (jitter)
        raise AgentWriteRefused("busy", f"{self.identity.branch} kept moving under other writers "
                                "(40 tries): nothing was written; write again")

    def base(self, ref: str) -> tuple[str | None, str]:
        """(the branch's tip or None, the commit to build on): its own tip, or the curated
        tip when the branch is absent or fully merged into it."""
        curated, curated_tip = githistory.checked_out_branch(self.repo)
        if curated == self.identity.branch:
            raise AgentWriteRefused("branch", f"{self.identity.branch} is the curator's checked-"
                                    "out branch; factdesk never moves it under the work tree")
        tip = gittree.ref_tip(self.repo, ref)
        if tip is not None and (curated_tip is None
                                or not gitrepo.is_ancestor(self.repo, tip, curated_tip)):
            return tip, tip
        if curated_tip is None:
            raise AgentWriteRefused("branch", "the curated branch has no commit yet")
        return tip, curated_tip


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
