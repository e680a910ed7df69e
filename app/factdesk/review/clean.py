"""What "clean" means, once (issue 24 #4): the proposals "Accept all clean" takes.

A proposal of a branch is **clean** when it is a `kb/` fact proposal by the branch's agent
with no new error, no conflict and no open proposal it depends on:

- it decides facts under `kb/` only: a proposal touching anything outside `kb/` that needs
  a decision (the ontology, the registry, another sender's message … `Proposal.files`) is
  never clean — it waits for a decision of its own, whole;
- it is by the branch's agent (`Branch.agent`); one by another author on the branch is
  named, never taken and never dropped silently;
- every open fact of it is checked (`review.checks`: as if accepted) and brings no new
  error; none is in conflict, none has a path that can never be written;
- every earlier open proposal it depends on — one whose version of a fact it builds on,
  or one adding or changing a fact it cites (`ProposedFact.depends_on`) — is clean too:
  they are taken together, in branch order; one building on a proposal that stays open
  stays open with it;
- and it applies on what the curated tip holds (`Queue.tip_blobs`) with the clean ones
  before it in place (a version the agent started from that the curated branch no longer
  holds is a conflict).

A proposal with no open fact and no open file (the agent's own state or messages only)
needs no decision: it comes over with the review merge and is counted apart (`carried`).

Pure: `clean_set` reads the queue's records (with the checks the caller has); the CLI's
`accept --all-clean`, `Review.accept_all_clean` (which commits exactly `taken`), the
Proposals tab's preview and its badges all ask it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from factdesk.corpus.gitpaths import git_refuses
from factdesk.curation.changes import inert
from factdesk.model.registry import agent_id_from_email
from factdesk.model.words import count
from factdesk.review.model import Proposal, ProposedFact, ProposedFile, Queue

CLEAN = "clean"
ERROR = "error"
CONFLICT = "conflict"
DEPENDS = "depends"
OUTSIDE = "outside"
AUTHOR = "author"
PATH = "path"
UNCHECKED = "unchecked"
#: what a verdict says in a word (the badges, the preview's tally)
KIND_WORDS = {ERROR: "with an error", CONFLICT: "in conflict", DEPENDS: "building on one that "
              "stays open", OUTSIDE: "with files outside kb/", AUTHOR: "by another author",
              PATH: "with a path that can never be written", UNCHECKED: "not checked yet"}


@functools.lru_cache(maxsize=1 << 16)  # (asked again for each proposal at every re-read)
def unwritable(path: str) -> str | None:
    """Why a proposed path can never be accepted (None: it can): a name that is not UTF-8,
    or one the write path refuses (an empty, `.`, `..` or `.git` segment …). Such a path is
    rejected like any other, and blocks nothing else (issue 22)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "the name is not UTF-8 (shown with \\xNN escapes): factdesk writes no such file"
    if why := git_refuses(path):
        return f"git refuses this path on some platform ({why}); no override takes it"
    return None


@dataclass(frozen=True, slots=True)
class Verdict:
    """One open proposal's standing for "Accept all clean": `kind` CLEAN or why not."""

    sha: str
    kind: str
    why: str = ""

    @property
    def clean(self) -> bool:
        return self.kind == CLEAN


@dataclass(frozen=True, slots=True)
class CleanSet:
    """The clean proposals of one branch, and why each other open one is not."""

    branch: str
    agent: str
    #: the clean proposals, in branch order: what one accept commit takes
    taken: tuple[str, ...] = ()
    #: sha → the kb/ facts it takes (its open ones)
    paths: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: every open proposal that needs a decision, by sha, in branch order
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    #: open proposals that need no decision (the agent's own state or messages only)
    carried: tuple[str, ...] = ()

    @property
    def left(self) -> tuple[Verdict, ...]:
        """The open proposals that are not clean (they stay open), each with why."""
        return tuple(v for v in self.verdicts.values() if not v.clean)

    @property
    def others(self) -> tuple[Verdict, ...]:
        """Those by another author than the branch's agent: named, never taken."""
        return tuple(v for v in self.verdicts.values() if v.kind == AUTHOR)

    def tally(self) -> str:
        """`28 proposals stay open: 3 with an error, 25 building on one that stays open`."""
        return tally(self.left)

    def as_dict(self) -> dict[str, object]:
        return {"branch": self.branch, "agent": self.agent, "clean": list(self.taken),
                "left": [{"id": v.sha, "kind": v.kind, "why": v.why} for v in self.left],
                "carried": list(self.carried)}


def tally(left: Iterable[Verdict]) -> str:
    """The verdicts of the proposals left open, counted by kind, in words ("" for none)."""
    kinds: dict[str, int] = {}
    for v in left:
        if not v.clean:
            kinds[v.kind] = kinds.get(v.kind, 0) + 1
    if not kinds:
        return ""
    parts = ", ".join(f"{n} {KIND_WORDS.get(k, k)}" for k, n in kinds.items())
    n = sum(kinds.values())
    return f"{count(n, 'proposal')} {'stays' if n == 1 else 'stay'} open: {parts}"


def agent_of(proposal: Proposal) -> str:
    """Who wrote it, whatever its `+op`: the agent id knomit encodes in the e-mail, else the
    e-mail itself (a person's commit on an agent branch)."""
    return agent_id_from_email(proposal.author_email) or proposal.author_email.lower()


def clean_set(queue: Queue, branch: str, checked: Mapping[str, Proposal] | None = None
              ) -> CleanSet:
    """The clean proposals of `branch` (module doc) and a verdict on every other open one.

    `checked`: sha → the proposal with its checks (`review.checks`), where the queue's own
    records have none yet; a proposal not checked is `unchecked` (never clean), and so is
    one depending on it."""
    record = next((b for b in queue.branches if b.name == branch), None)
    agent = record.agent if record is not None else branch.rsplit("/", 1)[-1]
    checked = checked or {}
    view: dict[str, str | None] = {}  # path → the version the clean ones before leave
    left_by: dict[str, Verdict] = {}  # path → the last open proposal writing it, not taken
    verdicts: dict[str, Verdict] = {}
    taken: list[str] = []
    paths: dict[str, tuple[str, ...]] = {}
    carried: list[str] = []
    seen: set[str] = set()
    for listed in queue.proposals:
        if listed.branch != branch or listed.sha in seen or listed.status not in ("open", "partial"):
            continue
        seen.add(listed.sha)
        p = _with_checks(checked.get(listed.sha), listed)
        facts = [f for f in p.facts if f.status == "open"]
        files = [f for f in p.files if f.status == "open"]
        if not facts and not files:
            carried.append(p.sha)
            continue
        verdict = _own(p, facts, files, agent) or _depends(p, facts, verdicts) \
            or _applies(p, facts, view, left_by, queue.tip_blobs)
        if verdict is None:
            verdict = Verdict(p.sha, CLEAN)
            taken.append(p.sha)
            paths[p.sha] = tuple(f.path for f in facts)
            for f in facts:
                view[f.path] = f.new_blob
                left_by.pop(f.path, None)
        else:
            for f in facts:
                left_by[f.path] = verdict
        verdicts[p.sha] = verdict
    return CleanSet(branch, agent, tuple(taken), paths, verdicts, tuple(carried))


def _with_checks(checked: Proposal | None, listed: Proposal) -> Proposal:
    """The listed proposal (its status as read now) with the checks found for its facts."""
    if checked is None:
        return listed
    found = {f.path: f for f in checked.facts}
    return replace(listed, facts=tuple(
        replace(f, problems=found[f.path].problems, depends_on=found[f.path].depends_on)
        if f.path in found else f for f in listed.facts))


def _own(p: Proposal, facts: list[ProposedFact], files: list[ProposedFile], agent: str
         ) -> Verdict | None:
    """Why the proposal itself is not clean (None: it is, as far as it alone goes)."""
    if files:
        names = ", ".join(inert(f.path) for f in files[:3])
        return Verdict(p.sha, OUTSIDE, f"changes {count(len(files), 'file')} outside kb/ ({names}"
                       f"{' …' if len(files) > 3 else ''}): decided on its own, never clean")
    if agent_of(p) != agent:
        return Verdict(p.sha, AUTHOR, f"by {inert(p.author_name)} <{inert(p.author_email)}>, "
                       f"not the branch's agent {agent}: decide it on its own")
    for f in facts:
        if why := unwritable(f.path):
            return Verdict(p.sha, PATH, f"{inert(f.path)}: {why}")
    if any(f.problems is None and f.change != "deleted" for f in facts):
        return Verdict(p.sha, UNCHECKED, "not checked yet")
    errors = sorted({q.code for f in facts for q in f.problems or ()
                     if q.new and q.severity == "error"})
    if errors:
        return Verdict(p.sha, ERROR, f"✗ {' '.join(errors)}: an error accepting it would bring")
    conflicted = [f.path for f in facts if f.conflict]
    if conflicted:
        return Verdict(p.sha, CONFLICT, f"conflict: the curated branch changed "
                       f"{inert(conflicted[0])} since the agent read it")
    return None


def _depends(p: Proposal, facts: list[ProposedFact], verdicts: Mapping[str, Verdict]
             ) -> Verdict | None:
    """An earlier open proposal whose facts its versions cite, still open: it waits too."""
    for f in facts:
        for sha in f.depends_on:
            before = verdicts.get(sha)
            if before is not None and not before.clean:
                return _behind(p.sha, before, f"cites what {sha[:10]} adds or changes")
    return None


def _applies(p: Proposal, facts: list[ProposedFact], view: Mapping[str, str | None],
             left_by: Mapping[str, Verdict], tip: Mapping[str, str]) -> Verdict | None:
    """Whether each version applies on what the curated tip and the clean ones before it
    leave (a bulk accept never takes one with another's changes silently)."""
    for f in facts:
        now = view[f.path] if f.path in view else tip.get(f.path)
        if now in (f.old_blob, f.new_blob):
            continue
        before = left_by.get(f.path)
        if before is not None:
            return _behind(p.sha, before, f"builds on {before.sha[:10]}'s version of "
                           f"{inert(f.path)}")
        return Verdict(p.sha, CONFLICT, f"conflict: the curated branch holds another version of "
                       f"{inert(f.path)} than the one the agent changed")
    return None


def _behind(sha: str, before: Verdict, what: str) -> Verdict:
    if before.kind == UNCHECKED:
        return Verdict(sha, UNCHECKED, f"{what}, not checked yet")
    root = "" if before.kind == DEPENDS else f" ({before.why})"
    return Verdict(sha, DEPENDS, f"{what}, which stays open{root}")
