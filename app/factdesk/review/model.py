"""What proposal review reads and says: branches, proposals, the facts each one changes,
and the problems each proposed version would bring if accepted. Plain frozen records:
`review.proposals` builds them from git, `review.checks` fills in problems, the CLI prints
them as JSON (`as_dict`) and the GUI shows them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from factdesk.model.visible import utf8_safe

Change = Literal["added", "modified", "deleted"]
Status = Literal["open", "accepted", "rejected", "partial"]
#: knomit's operation tokens (FORMAT §5), read from the agent commit author's `+op`
OPS = ("learn", "update", "retract", "subsume", "discover", "review")
#: the kinds of work a proposal's subject names
KINDS = ("distill", "dedup", "merge", "learn", "update", "discover", "retract")


@dataclass(frozen=True, slots=True)
class ReviewProblem:
    """One finding on a proposed fact version, as if it were accepted (`check`'s codes)."""

    code: str
    severity: Literal["error", "warning"]
    message: str
    #: True when the proposal introduces it; False when the curated version has it already
    new: bool
    line: int = 0


@dataclass(frozen=True, slots=True)
class ProposedFact:
    """One fact (a file under kb/) a proposal adds, modifies or deletes."""

    path: str
    change: Change
    #: the blob ids: before (the proposal commit's parent) and after (None: absent)
    old_blob: str | None
    new_blob: str | None
    #: the curated branch changed this fact since the merge base
    conflict: bool = False
    #: None until checked (`review.checks`), then every finding
    problems: tuple[ReviewProblem, ...] | None = None
    #: this fact's own decision, when a decision took only some facts of its proposal
    status: Status = "open"
    #: the proposed version's evidence weight: as recorded in it, and computed as if
    #: accepted (None: it records none / carries none; filled by `review.checks`)
    evidence_weight: float | None = None
    evidence_weight_computed: float | None = None
    #: the branch's earlier open proposals this version needs (it cites facts only they
    #: add or change), oldest first (filled by `review.checks`)
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ProposedFile:
    """A file outside kb/ a proposal changes that an agent may not write undecided (the
    ontology, the registry, another sender's message, anything but its private state and
    its own messages: `review.carry`): decided like a fact, never carried by the merge."""

    path: str
    change: Change
    old_blob: str | None
    new_blob: str | None
    #: `review.carry.FILE_KINDS`: ontology, registry, curators, message, file
    kind: str
    #: what it changes, in words (an ontology change: the rules that appear and disappear)
    summary: tuple[str, ...] = ()
    status: Status = "open"


@dataclass(frozen=True, slots=True)
class Proposal:
    """One non-merge agent commit in `curated..agent/*` (or one a decision names)."""

    sha: str
    branch: str
    subject: str
    #: knomit's operation token from the author (`learn`, `subsume` …; "" when none)
    op: str
    #: the kind of work its subject names (`distill`, `dedup` …; "" when none)
    kind: str
    author_name: str
    author_email: str
    #: author time, seconds since the epoch
    time: int
    facts: tuple[ProposedFact, ...]
    #: files outside kb/ it touches that come over undecided (the agent's private state,
    #: `.knomit/<area>/<…>.md`, and its own messages: `review.carry`): shown, never
    #: checked; they reach the curated branch with the review merge
    other_files: tuple[str, ...] = ()
    #: the other files outside kb/ it changes: decided like its facts
    files: tuple[ProposedFile, ...] = ()
    status: Status = "open"
    #: a decision overrode a rule or a conflict to accept it (the reason is in the commit)
    overridden: bool = False
    #: the decision commit(s) that decided it, newest first
    decided_by: tuple[str, ...] = ()
    #: its position on its branch, oldest first (0-based)
    index: int = 0


@dataclass(frozen=True, slots=True)
class Branch:
    """An `agent/*` branch, local (`agent/x`) or remote-tracking (`origin/agent/x`)."""

    name: str
    #: the agent id (from the branch's commits' author; the branch name's tail otherwise)
    agent: str
    #: commits in `curated..branch` (merges included)
    ahead: int
    #: the merge base with the curated branch
    base: str
    tip: str
    #: open proposals on it
    open: int = 0


@dataclass(frozen=True, slots=True)
class NetFact:
    """What the branch as a whole would change about one fact (merge base → tip)."""

    path: str
    change: Change
    #: the proposals that touch it, oldest first
    proposals: tuple[str, ...] = ()
    conflict: bool = False


@dataclass(frozen=True, slots=True)
class Queue:
    """Every proposal waiting on (or decided by) the curated branch."""

    #: the checked-out branch (normally `main`) and its tip
    curated: str
    tip: str
    branches: tuple[Branch, ...]
    #: in branch order, branches one after the other
    proposals: tuple[Proposal, ...]
    #: per branch name: the net view
    net: dict[str, tuple[NetFact, ...]] = field(default_factory=dict)
    #: path → blob at the curated tip, for every kb/ path a listed proposal changes that
    #: the tip holds (absent: the tip has no such file): what a bulk accept applies onto
    tip_blobs: dict[str, str] = field(default_factory=dict)

    def find(self, ref: str) -> Proposal:
        """The proposal whose sha is `ref` or starts with it (unique); LookupError naming
        the ambiguity or absence otherwise."""
        hits = [p for p in self.proposals if p.sha.startswith(ref.lower())] if len(ref) >= 4 else []
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise LookupError(f"{ref}: no proposal has this id (a full or unique abbreviated "
                              "sha of an agent commit)")
        raise LookupError(f"{ref}: {len(hits)} proposals start with it; give more of the sha")


# -- JSON (the `factdesk proposals` contract; fields may be added, never renamed) --------------
# (a path that is not UTF-8 shows each such byte as `\xNN`: the JSON is always valid UTF-8,
# and `--path` takes that form back)


def problem_dict(p: ReviewProblem) -> dict[str, object]:
    return {"code": p.code, "severity": p.severity, "message": p.message, "new": p.new,
            "line": p.line}


def fact_dict(f: ProposedFact) -> dict[str, object]:
    return {"path": utf8_safe(f.path), "change": f.change, "conflict": f.conflict,
            "problems": [problem_dict(p) for p in f.problems or ()],
            "checked": f.problems is not None, "status": f.status,
            "old_blob": f.old_blob, "new_blob": f.new_blob,
            "evidence_weight": f.evidence_weight,
            "evidence_weight_computed": f.evidence_weight_computed,
            "depends_on": list(f.depends_on)}


def file_dict(f: ProposedFile) -> dict[str, object]:
    return {"path": utf8_safe(f.path), "change": f.change, "kind": f.kind,
            "summary": [utf8_safe(line) for line in f.summary],
            "status": f.status, "old_blob": f.old_blob, "new_blob": f.new_blob}


def proposal_dict(p: Proposal) -> dict[str, object]:
    return {"id": p.sha, "branch": p.branch, "subject": p.subject, "op": p.op, "kind": p.kind,
            "status": p.status, "overridden": p.overridden,
            "facts": [fact_dict(f) for f in p.facts],
            "other_files": [utf8_safe(o) for o in p.other_files], "files": [file_dict(f) for f in p.files],
            "author": p.author_name,
            "author_email": p.author_email, "time": p.time, "index": p.index,
            "decided_by": list(p.decided_by)}


def branch_dict(b: Branch, net: tuple[NetFact, ...] = ()) -> dict[str, object]:
    counts = {c: sum(1 for n in net if n.change == c) for c in ("added", "modified", "deleted")}
    return {"name": b.name, "agent": b.agent, "ahead": b.ahead, "base": b.base, "tip": b.tip,
            "open": b.open, "net": counts,
            "conflicts": sum(1 for n in net if n.conflict)}
