"""The review queue (issue 13): every `agent/*` branch, local or remote-tracking, compared
with the curated branch (the checked-out one) from their merge base.

One proposal per non-merge agent commit in `curated..agent/*`, oldest first, plus every
agent commit a curator's decision names (so an undone decision reopens its proposal even
after the review merge made the commit reachable from the curated branch). Git only, no
checks (`review.checks` adds those): a few git processes per branch, whatever the number
of proposals (`githistory.range_log` reads a branch's whole range in one `git log`).

A fact's **conflict**: the curated branch changed it since the merge base to a version
the agent never proposed on this branch (the curator's own change — an accepted agent
version is no conflict, so accepting a branch's first proposal does not put its later
ones in conflict).

The second source, `awaiting_attestation`: `distilled` and `discovered` facts already on
the curated branch that no curator attested (DESIGN §5: "facts awaiting review")."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from factdesk.corpus import githistory, gitrepo
from factdesk.corpus.githistory import RangeCommit
from factdesk.corpus.gitrepo import RawChange
from factdesk.corpus.registry_io import REGISTRY_PATH, load_registry
from factdesk.curation.trust import trusted_decisions
from factdesk.fsio import read_config
from factdesk.index import check_cache, decision_log
from factdesk.model.registry import Registry, agent_id_from_email, op_token
from factdesk.review.carry import Carry, branch_id, file_kind
from factdesk.review.model import (
    Branch,
    Change,
    NetFact,
    Proposal,
    ProposedFact,
    ProposedFile,
    Queue,
)
from factdesk.review.status import Decisions, fact_status, proposal_status, read_decisions

if TYPE_CHECKING:
    from factdesk.index.indexer import Indexer

ROOT = "kb"
AGENT_PREFIX = "agent/"

#: the kind of work a subject names (FORMAT §5.3's catalogue), first match wins
_KIND_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), kind) for pattern, kind in (
        (r"^synthesize-review: distill\b", "distill"),
        (r"^synthesize-review: merge\b", "merge"),
        (r"^synthesize-review: (retract|subsumed by)\b", "retract"),
        (r"^synthesize-review: update\b", "update"),
        (r"^dedup:", "dedup"),
        (r"^discover-(forward|backward):", "discover"),
        (r"^learn:", "learn"),
        (r"^(update|create|edit):", "update"),
        (r"^(retract\b|manual-review: retract\b)", "retract"),
        (r"^merge:", "merge"),
    ))


def kind_of(subject: str) -> str:
    """The kind of work a knomit subject names (`distill`, `dedup` …), "" when none."""
    for pattern, kind in _KIND_RULES:
        if pattern.search(subject):
            return kind
    return ""


def is_fact_file(path: str) -> bool:
    """A file under kb/ (a fact, for review: everything else is the agent's own state)."""
    return path.startswith(f"{ROOT}/")


def branch_agent(ref: str) -> str | None:
    """`agent/x` for `refs/heads/agent/x`; `origin/agent/x` for a remote-tracking ref whose
    branch part starts with `agent/`; None for every other ref."""
    if ref.startswith("refs/heads/agent/"):
        return ref[len("refs/heads/"):]
    if ref.startswith("refs/remotes/"):
        remote, _, rest = ref[len("refs/remotes/"):].partition("/")
        if rest.startswith(AGENT_PREFIX) and remote:
            return f"{remote}/{rest}"
    return None


@dataclass(frozen=True, slots=True)
class _BranchRead:
    name: str
    tip: str
    base: str
    commits: list[RangeCommit]
    net: list[RawChange]
    #: path → blob at the curated tip, for every kb/ path the curated branch changed
    #: since the base (None: deleted there)
    curated_changed: dict[str, str | None]
    #: it came from the cache (`index.check_cache`), not from git
    kept: bool = False


def _read_key(world: str, sha: str, tip: str) -> str:
    return f"{sha} {tip} {world}"


def _read_json(r: _BranchRead) -> dict[str, object]:
    return {"base": r.base,
            "commits": [[c.sha, list(c.parents), c.author_name, c.author_email, c.time,
                         c.subject, [_change_json(ch) for ch in c.changes]] for c in r.commits],
            "net": [_change_json(ch) for ch in r.net],
            "curated_changed": r.curated_changed}


def _change_json(ch: RawChange) -> list[object]:
    return [ch.status, ch.old_blob, ch.new_blob, ch.path, ch.new_path, ch.old_mode, ch.new_mode]


def _kept_read(kept: check_cache.CheckCache, world: str, name: str, sha: str,
               tip: str) -> _BranchRead | None:
    """The branch's read as kept for these two tips, or None (not kept, or not readable)."""
    data = kept.read(_read_key(world, sha, tip))
    if not isinstance(data, dict):
        return None
    try:
        commits = [RangeCommit(str(s), tuple(map(str, parents)), str(an), str(ae), int(t),
                               str(subj), tuple(RawChange(*ch) for ch in changes))
                   for s, parents, an, ae, t, subj, changes in data["commits"]]
        net = [RawChange(*ch) for ch in data["net"]]
        changed = {str(k): (None if v is None else str(v))
                   for k, v in dict(data["curated_changed"]).items()}
        return _BranchRead(name, sha, str(data["base"]), commits, net, changed, kept=True)
    except (KeyError, TypeError, ValueError):
        return None


def load_queue(repo: Path, *, branch: str | None = None,
               registry: Registry | None = None) -> Queue:
    """The review queue of `repo`'s checked-out branch; `branch`: only that agent branch
    (its name as listed: `agent/x` or `origin/agent/x`). `registry`: the corpus's, read
    from the work tree when None (the trust rule reads it). Git only: quick."""
    repo = Path(repo).resolve()
    curated, tip = githistory.checked_out_branch(repo)
    if tip is None:
        return Queue(curated, "", (), ())
    refs = [(name, sha) for ref, sha in githistory.agent_branch_refs(repo)
            if (name := branch_agent(ref)) is not None]
    if branch is not None:
        refs = [(n, s) for n, s in refs if n == branch]
    # the queue is a function of these: the same state answers from memory (the window,
    # the Agents tab and sync all ask; a fetch, a decision or an agent commit changes it)
    key = (str(repo), curated, tip, tuple(refs), branch,
           None if registry is not None else _registry_stamp(repo))
    if registry is None:
        with _CACHE_LOCK:
            if key in _CACHE:
                return _CACHE[key]
    queue = _load(repo, curated, tip, refs, branch, registry)
    if registry is None:
        with _CACHE_LOCK:
            _CACHE[key] = queue
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.pop(next(iter(_CACHE)))
    return queue


_CACHE: dict[tuple[object, ...], Queue] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 8


def _registry_stamp(repo: Path) -> str:
    """The agent registry as the work tree holds it (the trust rule reads it)."""
    data, why = read_config(repo, REGISTRY_PATH)
    return gitrepo.blob_id(data) if data is not None else (why or "")


def _load(repo: Path, curated: str, tip: str, refs: list[tuple[str, str]],
          branch: str | None, registry: Registry | None) -> Queue:
    # the git reads are independent: they run side by side (each thread waits on its git
    # process, so the interpreter's lock is free meanwhile)
    world = decision_log.world_stamp(repo)
    with check_cache.CheckCache(repo) as kept, \
            ThreadPoolExecutor(max_workers=4, thread_name_prefix="review-queue") as pool:
        found = pool.submit(_decisions, repo, tip, registry)
        reads = [_kept_read(kept, world, name, sha, tip) or
                 _read_branch(pool, repo, name, sha, tip) for name, sha in refs]
        for r in reads:
            if r.tip and not r.kept:
                kept.keep_read(_read_key(world, r.tip, tip), _read_json(r))
        decisions = found.result()

    listed = {c.sha for r in reads for c in r.commits}
    decided_elsewhere = sorted(decisions.named - listed)
    extra = _decided_commits(repo, decided_elsewhere, reads, branch is not None)

    # the ids of the agent branches that hold each commit (an agent's own message must be
    # on its own branch only: review.carry)
    ids_of: dict[str, set[str]] = {}
    for r in reads:
        for c in (*r.commits, *extra.get(r.name, ())):
            ids_of.setdefault(c.sha, set()).add(branch_id(r.name))
    for c in extra.get("", ()):  # (its branch is gone: it was read as its author's)
        ids_of.setdefault(c.sha, {agent_id_from_email(c.author_email) or ""})
    with Carry(repo, ids=lambda sha: ids_of.get(sha, ())) as carry:
        queue = _build(curated, tip, reads, extra, decisions, carry)
    paths = list(dict.fromkeys(f.path for p in queue.proposals for f in p.facts))
    return replace(queue, tip_blobs=_tip_blobs(repo, world, tip, paths))


def _tip_blobs(repo: Path, world: str, tip: str, paths: Sequence[str]) -> dict[str, str]:
    """path → blob at the curated tip for those of `paths` it holds: what a commit's tree
    holds never changes, so the paths read before for this tip are kept (`check_cache`,
    "" for absent) and only the others are read from git."""
    key = f"tree {tip} {world}"
    with check_cache.CheckCache(repo) as kept:
        data = kept.read(key)
        known = ({str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {})
        missing = [p for p in paths if p not in known]
        if missing:
            found = githistory.object_ids(repo, tip, missing)
            known.update({p: found.get(p, "") for p in missing})
            kept.keep_read(key, known)
    return {p: known[p] for p in paths if known.get(p)}


def _build(curated: str, tip: str, reads: Sequence[_BranchRead],
           extra: dict[str, list[RangeCommit]], decisions: Decisions, carry: Carry) -> Queue:
    branches: list[Branch] = []
    proposals: list[Proposal] = []
    net: dict[str, tuple[NetFact, ...]] = {}
    seen: set[str] = set()
    for r in reads:  # (local branches first: `agent_branch_refs` lists refs/heads before remotes)
        own = [c for c in extra.get(r.name, ()) if len(c.parents) <= 1]
        # the range's proposals after the decided ones it no longer holds (older); a commit
        # two branches hold (a local branch and its remote-tracking twin) is listed once
        commits = [c for c in own + [c for c in r.commits if len(c.parents) <= 1]
                   if c.sha not in seen]
        seen.update(c.sha for c in commits)
        agent_blobs = _agent_blobs(r.commits)
        made = [_proposal(c, r, i, decisions, agent_blobs, carry) for i, c in enumerate(commits)]
        proposals.extend(made)
        net[r.name] = _net(r, made, agent_blobs)
        agent = next((a for c in r.commits if (a := agent_id_from_email(c.author_email))),
                     None) or r.name.rsplit(AGENT_PREFIX, 1)[-1]
        branches.append(Branch(r.name, agent, len(r.commits), r.base, r.tip,
                               sum(1 for p in made if p.status == "open")))
    # decided agent commits no agent branch reaches any more (deleted after the review
    # merge): still listed, under no branch, so an undone decision shows its proposal
    orphans = [c for c in extra.get("", ()) if len(c.parents) <= 1 and c.sha not in seen]
    nowhere = _BranchRead("", "", "", [], [], {})
    proposals.extend(_proposal(c, nowhere, i, decisions, {}, carry) for i, c in enumerate(orphans))
    return Queue(curated, tip, tuple(branches), tuple(proposals), net)


def _decisions(repo: Path, tip: str, registry: Registry | None) -> Decisions:
    registry = registry if registry is not None else load_registry(repo)
    return read_decisions(trusted_decisions(repo, tip, registry=registry))


def _read_branch(pool: ThreadPoolExecutor, repo: Path, name: str, sha: str,
                 tip: str) -> _BranchRead:
    commits = pool.submit(githistory.range_log, repo, sha, tip)
    base = githistory.merge_base(repo, tip, sha) or ""
    net = pool.submit(githistory.tree_diff, repo, base, sha) if base else None
    changed = githistory.tree_diff(repo, base, tip, ROOT) if base else []
    return _BranchRead(name, sha, base, commits.result(), net.result() if net else [],
                       {c.path: c.new_blob for c in changed})


def _decided_commits(repo: Path, shas: Sequence[str], reads: Sequence[_BranchRead],
                     only_branch: bool) -> dict[str, list[RangeCommit]]:
    """The agent commits decisions name that no branch range holds (merged by a review
    merge), by the branch that reaches them (the first listed), oldest first."""
    if not shas:
        return {}
    found = githistory.commits_named(repo, shas)
    left = {c.sha for c in found}
    out: dict[str, list[RangeCommit]] = {}
    owner: dict[str, str] = {}
    for r in reads:
        if not left:
            break
        for sha in githistory.reachable_from(repo, r.tip, left):
            owner[sha] = r.name
        left -= set(owner)
    for c in found:
        if c.sha in owner:
            out.setdefault(owner[c.sha], []).append(c)
        elif not only_branch:  # (its branch is gone: listed under no branch)
            out.setdefault("", []).append(c)
    return out


def _agent_blobs(commits: Iterable[RangeCommit]) -> dict[str, set[str]]:
    """path → every version (blob) the branch's commits wrote of it."""
    out: dict[str, set[str]] = {}
    for c in commits:
        for ch in c.changes:
            if ch.new_blob:
                out.setdefault(ch.path, set()).add(ch.new_blob)
    return out


def _conflict(r: _BranchRead, path: str, agent_blobs: dict[str, set[str]]) -> bool:
    if path not in r.curated_changed:
        return False
    now = r.curated_changed[path]
    return now is None or now not in agent_blobs.get(path, set())


def _change(old: str | None, new: str | None) -> Change:
    return "added" if old is None else ("deleted" if new is None else "modified")


def _proposal(c: RangeCommit, r: _BranchRead, index: int, decisions: Decisions,
              agent_blobs: dict[str, set[str]], carry: Carry) -> Proposal:
    verdict = decisions.verdicts.get(c.sha)
    facts = []
    outside = {}
    for ch in c.changes:
        if not is_fact_file(ch.path):
            outside[ch.path] = ch
            continue
        facts.append(ProposedFact(ch.path, _change(ch.old_blob, ch.new_blob), ch.old_blob,
                                  ch.new_blob, conflict=_conflict(r, ch.path, agent_blobs),
                                  status=fact_status(verdict, ch.path)))
    decided, others = carry.split(c.sha, c.author_email,
                                  [(ch.path, ch.old_blob, ch.new_blob) for ch in outside.values()])
    files = [ProposedFile(ch.path, _change(ch.old_blob, ch.new_blob), ch.old_blob, ch.new_blob,
                          file_kind(ch.path), carry.describe(ch.path, ch.old_blob, ch.new_blob),
                          fact_status(verdict, ch.path))
             for ch in (outside[p] for p in decided)]
    return Proposal(
        sha=c.sha, branch=r.name, subject=c.subject, op=op_token(c.author_email) or "",
        kind=kind_of(c.subject), author_name=c.author_name, author_email=c.author_email,
        time=c.time, facts=tuple(facts), other_files=tuple(others), files=tuple(files),
        status=proposal_status(verdict, [f.path for f in facts] + [f.path for f in files]),
        overridden=bool(verdict and verdict.overridden),
        decided_by=verdict.decided_by if verdict else (), index=index)


def _net(r: _BranchRead, made: Sequence[Proposal],
         agent_blobs: dict[str, set[str]]) -> tuple[NetFact, ...]:
    touching: dict[str, list[str]] = {}
    for p in made:
        for f in p.facts:
            touching.setdefault(f.path, []).append(p.sha)
    out = []
    for ch in r.net:
        if not is_fact_file(ch.path):
            continue
        out.append(NetFact(ch.path, _change(ch.old_blob, ch.new_blob),
                           tuple(touching.get(ch.path, ())),
                           _conflict(r, ch.path, agent_blobs)))
    return tuple(out)


def net_other_files(repo: Path, queue: Queue, branch: str) -> list[str]:
    """The files outside kb/ the branch as a whole changes (merge base → tip): the agent's
    own state and messages, which the review merge brings as the agent wrote them, and the
    files decided like facts (`Proposal.files`)."""
    b = next((b for b in queue.branches if b.name == branch), None)
    if b is None or not b.base:
        return []
    return [c.path for c in githistory.tree_diff(repo, b.base, b.tip)
            if not is_fact_file(c.path)]


def with_facts(proposal: Proposal, facts: Sequence[ProposedFact]) -> Proposal:
    """The same proposal with other fact records (checked ones)."""
    return replace(proposal, facts=tuple(facts))


# -- the second source: derived facts already on the curated branch --------------------------


@dataclass(frozen=True, slots=True)
class Awaiting:
    """A `distilled` or `discovered` fact on the curated branch no curator attested."""

    path: str
    title: str
    type: str
    origin: str
    #: who wrote it (the creating commit's author e-mail), "" when unknown
    creator: str
    created_at: int | None


def awaiting_attestation(indexer: Indexer, *, limit: int | None = None,
                         rows: Sequence[tuple[str, str, str, str, str, str, int]] | None = None
                         ) -> list[Awaiting]:
    """The live `distilled`/`discovered` facts of the indexed corpus whose current version
    no curator attested (an attestation by a trusted decision, of this very version: an
    agent's later edit makes it wait again), newest first. `rows`: `derived_facts` as the
    caller read them (with the index brought up to date once); None: read here."""
    from factdesk.index.review_reads import derived_facts
    from factdesk.recall import Attestations

    attested = Attestations(indexer.repo).current()
    if rows is None:
        rows = indexer.read(derived_facts)
    out = []
    for path, title, typ, origin, blob, creator, created in rows:
        seen = attested.get(path)
        if seen is not None and (not seen[0] or seen[0] == blob):
            continue
        out.append(Awaiting(path, title, typ or "", origin or "", creator or "", created))
        if limit is not None and len(out) >= limit:
            break
    return out
