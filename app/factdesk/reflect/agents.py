"""Agents as first-class citizens (issue 16): one record per agent with its facts, its
authority findings, the curators' corrections of its work, its last activity and its track
record as calibration (`reflect.calibration`). Read-only; docs/agents.md defines each figure.

Who is listed: every claimant of a fact in the index (registered or not), every agent in
the registry, the author of every `agent/*` branch's commits, and every person who
committed on the curated branch (its first-parent line). An identity is named by its
registry id (matched by e-mail without the `+op` part), else knomit's `<id>@agents.knomit.io`
id, else the commit's author name.

`agent_records(indexer, ...)` gathers the inputs (the index, the cached transition walk,
the curators' decisions, the agent branches) and calls the pure `build_records`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from factdesk.corpus import githistory, gitrepo
from factdesk.corpus.registry_io import load_registry
from factdesk.corpus.yamlv3 import FieldError, Scalar, YamlError, compose_mapping, resolved
from factdesk.fsio import NotRegular, TooLarge, read_regular
from factdesk.index import agents_reads
from factdesk.index.agents_cache import cached, version_key
from factdesk.index.indexer import Indexer
from factdesk.model.enums import FactType
from factdesk.model.registry import Registry, agent_id_from_email
from factdesk.reflect.cache import cached_walk
from factdesk.reflect.calibration import (
    OUTCOME_VALUE,
    Bin,
    Prediction,
    brier,
    reliability,
    settled,
)
from factdesk.reflect.model import MOVE, Transition
from factdesk.reflect.queue import open_hypotheses
from factdesk.reflect.stats import decisive

if TYPE_CHECKING:
    import sqlite3

#: curator actions that correct an agent's fact (undone ones do not count)
CORRECTIONS = frozenset({"relabel", "retract"})
#: bump when a record's shape or a definition changes (the cache key includes it)
VERSION = 3
_CONFIDENCE = re.compile(rb"(?m)^confidence:[ \t]*[\"']?([0-9.eE+-]+)[\"']?[ \t]*(?:#.*)?$")


# -- suggestion thresholds (a settings file) ------------------------------------------------


@dataclass(frozen=True, slots=True)
class Thresholds:
    """When the record suggests a type change (docs/agents.md, "Suggestions")."""

    promote: Mapping[str, str] = field(default_factory=lambda: {"tool": "persona"})
    demote: Mapping[str, str] = field(default_factory=lambda: {"persona": "tool"})
    min_settled: int = 10  #: settled predictions needed before any suggestion
    promote_max_brier: float = 0.15
    promote_max_correction_rate: float = 0.05
    promote_min_user_facts: int = 5  #: facts about subject_kind user (tool → persona)
    demote_min_brier: float = 0.35
    demote_min_correction_rate: float = 0.25

    def as_dict(self) -> dict[str, object]:
        return {"promote": dict(self.promote), "demote": dict(self.demote),
                "min_settled": self.min_settled, "promote_max_brier": self.promote_max_brier,
                "promote_max_correction_rate": self.promote_max_correction_rate,
                "promote_min_user_facts": self.promote_min_user_facts,
                "demote_min_brier": self.demote_min_brier,
                "demote_min_correction_rate": self.demote_min_correction_rate}


SETTINGS_NAME = "agent-suggestions.yaml"


class SettingsError(ValueError):
    pass


def default_settings_file() -> Path:
    """`agent-suggestions.yaml` in factdesk's data folder (the identity file's folder:
    `$FACTDESK_DATA_DIR`, else the platform's)."""
    from factdesk.core import Settings

    return Settings.resolve().data_dir / SETTINGS_NAME


def load_thresholds(path: Path | None) -> Thresholds:
    """The thresholds in `path` (YAML, the keys of `Thresholds`); the defaults for those
    it does not set, and all of them when there is no file. A bad file is a SettingsError
    naming the key."""
    if path is None:
        return Thresholds()
    try:
        data = read_regular(path, limit=1 << 16)
    except FileNotFoundError:
        return Thresholds()
    except (NotRegular, TooLarge, OSError) as exc:
        raise SettingsError(f"{path}: {exc}") from None
    try:
        raw = {k: e.value for k, e in compose_mapping(data.decode("utf-8")).items()}
    except (YamlError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: not a mapping of thresholds: {exc}") from None
    base = Thresholds()
    values: dict[str, object] = {}
    for key, value in raw.items():
        if key in ("promote", "demote"):
            if not isinstance(value, dict) or not all(
                    isinstance(v, Scalar) for v in value.values()):
                raise SettingsError(f"{path}: {key} must map a type to a type")
            values[key] = {str(k): v.text for k, v in value.items()}
        elif key in base.as_dict():
            want = type(getattr(base, key))
            try:
                tag, number = resolved(value, key) if isinstance(value, Scalar) else ("", None)
            except FieldError:
                tag, number = "", None
            if tag not in ("!!int", "!!float") or (want is int and tag != "!!int"):
                raise SettingsError(f"{path}: {key} must be {'a whole' if want is int else 'a'} "
                                    "number")
            values[key] = want(number)
        else:
            raise SettingsError(f"{path}: unknown key {key!r} (one of {', '.join(base.as_dict())})")
    return Thresholds(**values)  # type: ignore[arg-type]


# -- the record -----------------------------------------------------------------------------


@dataclass(slots=True)
class AgentRecord:
    id: str
    type: str | None = None  #: the registry's (None: unregistered)
    registered: bool = False
    retired: bool = False
    emails: set[str] = field(default_factory=set)
    branches: set[str] = field(default_factory=set)
    #: why it is listed: claimant / registry / branch / committer
    roles: set[str] = field(default_factory=set)
    facts: int = 0  #: live facts it claims at HEAD
    retracted_facts: int = 0  #: retracted facts it claimed
    by_claim_type: dict[str, int] = field(default_factory=dict)
    by_subject_kind: dict[str, int] = field(default_factory=dict)
    authority_findings: int = 0  #: A1 findings on its live facts
    corrections: int = 0
    corrected: list[dict[str, str]] = field(default_factory=list)  #: {commit, action, path}
    user_facts: int = 0  #: live facts about subject_kind user
    user_corrections: int = 0
    commits: int = 0  #: commits it authored (any branch the index knows)
    last_activity: int | None = None  #: newest of its commits' times (epoch seconds)
    confirmed: int = 0  #: including promotions in place
    refuted: int = 0
    promoted: int = 0
    open: int = 0
    overdue: int = 0
    withdrawn: int = 0
    predictions: list[Prediction] = field(default_factory=list)
    suggestion: dict[str, object] | None = None

    @property
    def claimed(self) -> int:
        return self.facts + self.retracted_facts

    @property
    def correction_rate(self) -> float:
        return self.corrections / self.claimed if self.claimed else 0.0

    @property
    def settled(self) -> int:
        return len(settled(self.predictions))

    @property
    def brier(self) -> float | None:
        return brier(self.predictions)

    @property
    def bins(self) -> list[Bin]:
        return reliability(self.predictions)

    def as_dict(self) -> dict[str, object]:
        b = self.brier
        return {
            "id": self.id, "type": self.type, "registered": self.registered,
            "retired": self.retired, "facts": self.facts,
            "hypotheses": {"confirmed": self.confirmed, "refuted": self.refuted,
                           "promoted": self.promoted, "open": self.open,
                           "overdue": self.overdue},
            "brier": None if b is None else round(b, 6), "settled": self.settled,
            "corrections": self.corrections, "correction_rate": round(self.correction_rate, 6),
            "suggestion": self.suggestion,
            "roles": sorted(self.roles), "emails": sorted(self.emails),
            "branches": sorted(self.branches), "retracted_facts": self.retracted_facts,
            "by_claim_type": dict(sorted(self.by_claim_type.items())),
            "by_subject_kind": dict(sorted(self.by_subject_kind.items())),
            "authority_findings": self.authority_findings,
            "user_facts": self.user_facts, "user_corrections": self.user_corrections,
            "withdrawn": self.withdrawn, "commits": self.commits,
            "last_activity": self.last_activity,
            "reliability": [x.as_dict() for x in self.bins],
            "corrected": self.corrected,
        }


# -- inputs (plain data, so build_records stays pure) -------------------------------------------


@dataclass(frozen=True, slots=True)
class FactRow:
    path: str
    status: str
    claimant: str | None
    claim_type: str | None
    subject_kind: str | None
    type: str | None


@dataclass(frozen=True, slots=True)
class CommitRow:
    author: str
    email: str
    time: int | None
    first_parent: bool


@dataclass(frozen=True, slots=True)
class OpenHyp:
    path: str
    claimant: str | None
    overdue: bool


@dataclass(frozen=True, slots=True)
class Correction:
    commit: str
    action: str
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Inputs:
    registry: Registry
    facts: Sequence[FactRow]
    findings: Mapping[str, int]  #: path → A1 findings
    commits: Sequence[CommitRow]
    #: (branch, author name, author e-mail, newest commit time) of agent branches' authors
    branches: Sequence[tuple[str, str, str, int]]
    transitions: Sequence[Transition]
    open_hyps: Sequence[OpenHyp]
    corrections: Sequence[Correction]
    first_confidence: Mapping[str, float | None]  #: hypothesis path → first version's


def identity_id(registry: Registry, email: str, name: str) -> str:
    agent = registry.agent_for_email(email)
    if agent is not None:
        return agent.id
    return agent_id_from_email(email) or name or email


def count_proposals(registry: Registry, proposals: Iterable[tuple[str, str, str]]
                    ) -> tuple[dict[str, int], dict[str, int]]:
    """(open, rejected) proposals per agent id, from (status, author e-mail, author name)
    of each proposal (the review queue's: `reflect` may not import `review`, so the views
    read the queue and hand the tuples here). A proposal counts for the identity its
    author names, as everyone in the records is named (`identity_id`)."""
    opened: dict[str, int] = {}
    rejected: dict[str, int] = {}
    for status, email, name in proposals:
        table = opened if status == "open" else rejected if status == "rejected" else None
        if table is not None:
            who = identity_id(registry, email, name)
            table[who] = table.get(who, 0) + 1
    return opened, rejected


def build_records(inp: Inputs, thresholds: Thresholds | None = None) -> list[AgentRecord]:
    """The records, sorted by id (pure)."""
    reg = inp.registry
    records: dict[str, AgentRecord] = {}

    def rec(agent_id: str, role: str) -> AgentRecord:
        r = records.get(agent_id)
        if r is None:
            r = records[agent_id] = AgentRecord(agent_id)
        r.roles.add(role)
        return r

    for agent in reg.agents.values():
        r = rec(agent.id, "registry")
        if agent.email:
            r.emails.add(agent.email)
        if agent.branch:
            r.branches.add(agent.branch)
    claimant_of: dict[str, str] = {}
    for f in inp.facts:
        if not f.claimant:
            continue
        claimant_of[f.path] = f.claimant
        r = rec(f.claimant, "claimant")
        if f.status == "retracted":
            r.retracted_facts += 1
            continue
        if f.status != "live":
            continue
        r.facts += 1
        ct = f.claim_type or "(none)"
        sk = f.subject_kind or "(none)"
        r.by_claim_type[ct] = r.by_claim_type.get(ct, 0) + 1
        r.by_subject_kind[sk] = r.by_subject_kind.get(sk, 0) + 1
        if f.subject_kind == "user":
            r.user_facts += 1
        r.authority_findings += inp.findings.get(f.path, 0)
    subject_of = {f.path: f.subject_kind for f in inp.facts}
    for branch, name, email, when in inp.branches:
        r = rec(identity_id(reg, email, name), "branch")
        r.branches.add(branch)
        r.emails.add(email)
        if r.last_activity is None or when > r.last_activity:
            r.last_activity = when
    for c in inp.commits:
        agent_id = identity_id(reg, c.email, c.author)
        known = records.get(agent_id)
        if known is None and not c.first_parent:
            continue  # an agent branch's author is listed through its branch
        r = rec(agent_id, "committer") if c.first_parent or known is None else known
        r.commits += 1
        r.emails.add(c.email)
        if c.time is not None and (r.last_activity is None or c.time > r.last_activity):
            r.last_activity = c.time
    for corr in inp.corrections:
        for path in corr.paths:
            who = claimant_of.get(path)
            if who is None:
                continue
            r = records[who]
            r.corrections += 1
            r.corrected.append({"commit": corr.commit, "action": corr.action, "path": path})
            if subject_of.get(path) == "user":
                r.user_corrections += 1
    _calibrate(inp, rec)
    for agent in reg.agents.values():
        r = records[agent.id]
        r.type = agent.type or None
        r.registered = True
        r.retired = agent.retired
    out = sorted(records.values(), key=lambda r: r.id)
    th = thresholds or Thresholds()
    for r in out:
        r.suggestion = suggest(r, th)
    return out


def _origin(path: str, moved_from: Mapping[str, str]) -> str:
    seen = set()
    while path in moved_from and path not in seen:
        seen.add(path)
        path = moved_from[path]
    return path


def _calibrate(inp: Inputs, rec: object) -> None:
    make = rec  # rec(agent_id, role) -> AgentRecord
    moved_from = {t.new_path: t.path for t in inp.transitions
                  if t.kind == MOVE and t.new_path and t.from_type == FactType.HYPOTHESIS}
    won = decisive(inp.transitions)
    for path, t in won.items():
        who = t.claimant or "(unknown)"
        r = make(who, "claimant")  # type: ignore[operator]
        outcome = t.outcome
        if outcome in ("confirmed", "promoted"):
            r.confirmed += 1
            if outcome == "promoted":
                r.promoted += 1
        elif outcome == "refuted":
            r.refuted += 1
        else:
            r.withdrawn += 1
        conf = inp.first_confidence.get(_origin(path, moved_from))
        r.predictions.append(Prediction(path, conf, OUTCOME_VALUE.get(outcome or "")))
    for h in inp.open_hyps:
        if h.path in won:
            continue
        r = make(h.claimant or "(unknown)", "claimant")  # type: ignore[operator]
        r.open += 1
        if h.overdue:
            r.overdue += 1
        conf = inp.first_confidence.get(_origin(h.path, moved_from))
        r.predictions.append(Prediction(h.path, conf, None))


def suggest(r: AgentRecord, th: Thresholds) -> dict[str, object] | None:
    """A promotion or demotion the record supports, with the figures and thresholds it
    rests on; never applied on its own. None without enough settled predictions."""
    if not r.registered or r.retired or r.type is None or r.settled < max(1, th.min_settled):
        return None
    b = r.brier
    assert b is not None
    evidence = {"settled": r.settled, "brier": round(b, 4),
                "correction_rate": round(r.correction_rate, 4), "user_facts": r.user_facts,
                "user_corrections": r.user_corrections}
    up = th.promote.get(r.type)
    if (up and b <= th.promote_max_brier and r.correction_rate <= th.promote_max_correction_rate
            and r.user_facts >= th.promote_min_user_facts):
        return {"action": "promote", "from": r.type, "to": up, "evidence": evidence,
                "thresholds": {"min_settled": th.min_settled, "max_brier": th.promote_max_brier,
                               "max_correction_rate": th.promote_max_correction_rate,
                               "min_user_facts": th.promote_min_user_facts}}
    down = th.demote.get(r.type)
    if down and (b >= th.demote_min_brier or r.correction_rate >= th.demote_min_correction_rate):
        return {"action": "demote", "from": r.type, "to": down, "evidence": evidence,
                "thresholds": {"min_settled": th.min_settled, "min_brier": th.demote_min_brier,
                               "min_correction_rate": th.demote_min_correction_rate}}
    return None


# -- gathering the inputs ---------------------------------------------------------------------


def agent_branches(repo: Path) -> list[tuple[str, str, str, int]]:
    """(branch, author name, author e-mail, its newest commit's time there) of each author
    of commits on `agent/*` branches (local or remote-tracking) not on HEAD's history (for
    a branch merged already: its tip's author)."""
    out: dict[tuple[str, str, str], int] = {}
    for ref, _sha in githistory.agent_refs(repo):
        short = ref.removeprefix("refs/heads/")
        if ref.startswith("refs/remotes/"):
            short = ref.removeprefix("refs/remotes/").split("/", 1)[-1]
        if not short.startswith("agent/"):
            continue
        for name, email, when in githistory.authors_only_in(repo, ref):
            key = (short, name, email)
            out[key] = max(out.get(key, 0), when)
    return sorted((*k, t) for k, t in out.items())


def first_confidences(repo: Path, conn: sqlite3.Connection, paths: Iterable[str]
                      ) -> dict[str, float | None]:
    """The confidence of each path's first version (the blob its first addition wrote)."""
    wanted = set(paths)
    blobs: dict[str, str] = {}
    for path, blob in agents_reads.added_blobs(conn):
        if path in wanted and path not in blobs and blob:
            blobs[path] = blob
    out: dict[str, float | None] = dict.fromkeys(wanted)
    if not blobs:
        return out
    with gitrepo.BlobReader(repo) as reader:
        for path, blob in blobs.items():
            data = reader.read(blob)
            out[path] = confidence_in(data) if data else None
    return out


def confidence_in(data: bytes) -> float | None:
    """The `confidence:` of a file's frontmatter, if it is a number in 0..1."""
    if not data.startswith(b"---"):
        return None
    end = data.find(b"\n---", 3)
    m = _CONFIDENCE.search(data, 0, end if end > 0 else len(data))
    if m is None:
        return None
    try:
        value = float(m.group(1))
    except ValueError:
        return None
    return value if 0.0 <= value <= 1.0 else None


def gather(indexer: Indexer, conn: sqlite3.Connection, today: date,
           actions: Sequence[tuple[str, str]] = (), registry: Registry | None = None) -> Inputs:
    """The inputs over the index `conn` (up to date). `actions`: the curators' actions in
    effect, (commit, action) — `curation.registry_ops.actions_in_effect` (the curation layer
    knows which commits are curators' decisions)."""
    repo = indexer.repo
    registry = registry if registry is not None else load_registry(repo)
    facts = [FactRow(*row) for row in agents_reads.fact_claims(conn)]
    findings = agents_reads.authority_findings(conn)
    commits = [CommitRow(a or "", e or "", t, bool(fp)) for a, e, t, fp in agents_reads.commit_authors(conn)]
    has_head = gitrepo.head_sha(repo) is not None
    transitions = cached_walk(repo).transitions if has_head else []
    queue = open_hypotheses(conn, today)
    open_hyps = [OpenHyp(i.path, i.claimant, i.overdue) for i in queue]
    corrections: list[Correction] = []
    for commit, action in actions:
        if action not in CORRECTIONS:
            continue
        paths = agents_reads.changed_not_added(conn, commit)
        corrections.append(Correction(commit, action, paths))
    hyp_paths = {t.path for t in transitions if t.outcome is not None}
    hyp_paths |= {t.path for t in transitions if t.kind == MOVE}
    hyp_paths |= {h.path for h in open_hyps}
    return Inputs(registry, facts, findings, commits, agent_branches(repo) if has_head else [],
                  transitions, open_hyps, corrections,
                  first_confidences(repo, conn, hyp_paths))


def agent_records(indexer: Indexer, conn: sqlite3.Connection, *, today: date | None = None,
                  actions: Sequence[tuple[str, str]] = (),
                  thresholds: Thresholds | None = None) -> list[AgentRecord]:
    """Every agent's record over the index `conn` (up to date) and the corpus's history."""
    return build_records(gather(indexer, conn, today or date.today(), actions), thresholds)


def cached_records(indexer: Indexer, *, today: date, thresholds: Thresholds,
                   actions: Callable[[], Sequence[tuple[str, str]]]
                   ) -> tuple[list[dict[str, object]], bool]:
    """Every agent's record as JSON-able dicts (`AgentRecord.as_dict`), from the index's
    cache when it holds this index version's, and whether it did. The index must be up to
    date (`Indexer.update`). `actions`: the curators' actions in effect, asked for only on a
    cache miss (`curation.registry_ops.actions_in_effect`). For the GUI: run it on a
    worker thread; a cached answer costs one small read (bench/agents_bench.py)."""
    repo = indexer.repo
    branches = "\n".join(f"{ref} {sha}" for ref, sha in githistory.agent_refs(repo))
    extra = [f"v{VERSION}", f"today={today.isoformat()}",
             json.dumps(thresholds.as_dict(), sort_keys=True), branches]
    with closing(indexer.connect()) as conn:
        key = version_key(conn, extra)

        def compute() -> list[dict[str, object]]:
            with closing(indexer.connect(readonly=True)) as ro:
                found = agent_records(indexer, ro, today=today, thresholds=thresholds,
                                      actions=actions() if gitrepo.head_sha(repo) else ())
            return [r.as_dict() for r in found]

        data, hit = cached(conn, key, compute)
    assert isinstance(data, list)
    return data, hit
