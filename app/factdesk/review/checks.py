"""What a curator needs to decide a proposal: each proposed fact version checked as if it
were accepted onto the curated branch, together with the branch's earlier open
proposals it depends on (issue 13).

"As if accepted" is the indexed corpus (the curated branch's facts) with these versions in
place: the proposal's own (a deleted fact: gone, so refs to it read as refs to a
retracted fact) and, for every fact they cite — directly or down their lineage — that an
earlier open proposal of the same branch adds or changes, that proposal's version (it
is a dependency: `ProposedFact.depends_on`). Every check of `factdesk check` runs
(`index.review_reads.check_proposed`: the parse, R1, R2, R3, H1, A1 with the claimant
mismatch — the creator of a fact the proposal adds is the agent commit's author —, E1,
the ref rules and the ontology's), and two of review's own:

- `ref-branch` (warning): the version cites a fact only the branch has, named with the
  open proposal that adds it (accept that one first, or with it);
- `ref-retracted` (warning) on a deletion that leaves citations behind (knomit keeps refs
  to retracted facts valid, so it is no error; `check` will flag the citing facts).

Each finding is `new` unless the curated version of the same fact already has it (same
code and message). Near-duplicates come from the semantic layer only when asked
(`near_duplicates`), never on the badge path: it may load a model."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from factdesk.corpus import githistory, gitrepo
from factdesk.corpus.codec import MAX_BYTES
from factdesk.corpus.gitpaths import git_refuses
from factdesk.index import check_cache, review_reads
from factdesk.index.curation_reads import stored_repo_ids
from factdesk.index.writing import RuleSetting
from factdesk.model.enums import Severity
from factdesk.model.fact import Problem
from factdesk.model.refs import local_targets
from factdesk.review.model import Proposal, Queue, ReviewProblem

if TYPE_CHECKING:
    import sqlite3

    from factdesk.index.indexer import Indexer

#: how deep the dependency walk follows citations through the branch's own versions
#: (evidence weight's lineage walk is as deep)
MAX_DEPTH = 10


@dataclass
class _Env:
    """What the checks of one queue share: an open index connection, the rule setting,
    one blob reader."""

    conn: sqlite3.Connection
    setting: RuleSetting
    reader: gitrepo.BlobReader
    repo: Path
    #: blob → bytes read (a branch's versions are read once per run)
    blobs: dict[str, bytes | None]
    #: the checks kept by agent commit (`index.check_cache`) and the stamp of what they read
    cache: check_cache.CheckCache | None = None
    stamp: str = ""

    def still(self) -> bool:
        """The corpus the checks read is the one they started on (an update landing
        meanwhile: what was checked is not kept)."""
        return check_cache.review_stamp(self.conn, self.repo, self.setting) == self.stamp

    def read(self, blob: str | None) -> bytes | None:
        if blob is None:
            return None
        if blob not in self.blobs:
            try:
                self.blobs[blob] = self.reader.read(blob, limit=MAX_BYTES)
            except gitrepo.BlobTooLarge:
                self.blobs[blob] = b"\x00" * (MAX_BYTES + 1)  # (the parse says "too large")
        return self.blobs[blob]


def check_proposal(indexer: Indexer, queue: Queue, sha: str) -> Proposal:
    """The proposal `sha` names (full or unique prefix) with every fact's `problems`,
    evidence weights and dependencies filled. Reads the index as it is (the caller keeps
    it up to date: `indexer.update()`); LookupError when no proposal has that id."""
    proposal = queue.find(sha)
    with _environment(indexer) as env:
        earlier = _branch_versions(queue, proposal)
        return _cached(env, queue, proposal, earlier)


def check_all(indexer: Indexer, queue: Queue, *, only_open: bool = False
              ) -> Iterator[Proposal]:
    """Every proposal of the queue checked, one at a time, in queue order (for the GUI's
    badges: each is yielded as soon as it is checked). `only_open`: the open (and partly
    accepted) ones only. What the cache holds for the same inputs is served from it
    (`index.check_cache`); the rest is checked and kept."""
    with _environment(indexer) as env:
        running: dict[str, _Versions] = {}
        last: dict[str, int] = {}
        wanted = [p for p in queue.proposals
                  if not only_open or p.status in ("open", "partial")]
        keys = {}
        for proposal in queue.proposals:  # (every one: the chain holds the decided ones too)
            earlier = running.setdefault(proposal.branch, _Versions())
            if proposal.index <= last.get(proposal.branch, -1):  # (never so from load_queue)
                earlier = running[proposal.branch] = _branch_versions(queue, proposal)
            last[proposal.branch] = proposal.index
            keys[proposal.sha] = earlier.key(env.stamp, proposal.sha)
            earlier.take(proposal)
        kept = env.cache.get_many({p.sha: keys[p.sha] for p in wanted}) if env.cache else {}
        running.clear()
        last.clear()
        for proposal in queue.proposals:
            earlier = running.setdefault(proposal.branch, _Versions())
            if proposal.index <= last.get(proposal.branch, -1):
                earlier = running[proposal.branch] = _branch_versions(queue, proposal)
            last[proposal.branch] = proposal.index
            if not only_open or proposal.status in ("open", "partial"):
                found = kept.get(proposal.sha)
                served = _from_kept(proposal, found) if found is not None else None
                yield served if served is not None else _cached(
                    env, queue, proposal, earlier, keys[proposal.sha])
            earlier.take(proposal)


def _cached(env: _Env, queue: Queue, proposal: Proposal, earlier: _Versions,
            key: str | None = None) -> Proposal:
    """`proposal` checked: from the cache when it holds this key, else checked and kept."""
    key = key or earlier.key(env.stamp, proposal.sha)
    if env.cache is not None:
        found = env.cache.get_many({proposal.sha: key}).get(proposal.sha)
        served = _from_kept(proposal, found) if found is not None else None
        if served is not None:
            return served
    checked = _check(env, queue, proposal, earlier)
    if env.cache is not None and env.stamp:
        if env.still():
            env.cache.put(proposal.sha, key, _to_kept(checked))
        else:
            env.cache.drop()
            env.stamp = ""  # (nothing more is kept in this run)
    return checked


def _to_kept(p: Proposal) -> dict[str, object]:
    """What `_check` added to a proposal, as JSON."""
    return {"facts": [[f.path, [[x.code, x.severity, x.message, x.new, x.line]
                                for x in f.problems or ()],
                       list(f.depends_on), f.evidence_weight, f.evidence_weight_computed]
                      for f in p.facts],
            "files": [[f.path, list(f.summary)] for f in p.files]}


def _from_kept(p: Proposal, data: dict[str, object]) -> Proposal | None:
    """`p` with what the cache kept for it; None when that does not fit it (a miss)."""
    try:
        facts = {str(path): (problems, depends, ew, ewc)
                 for path, problems, depends, ew, ewc in data["facts"]}  # type: ignore[attr-defined]
        files = {str(path): tuple(str(x) for x in summary)
                 for path, summary in data["files"]}  # type: ignore[attr-defined]
        if set(facts) != {f.path for f in p.facts} or set(files) != {f.path for f in p.files}:
            return None
        out = []
        for f in p.facts:
            problems, depends, ew, ewc = facts[f.path]
            out.append(replace(
                f, problems=tuple(ReviewProblem(str(c), sev, str(m), bool(n), int(line))
                                  for c, sev, m, n, line in problems),
                depends_on=tuple(str(d) for d in depends),
                evidence_weight=None if ew is None else float(ew),
                evidence_weight_computed=None if ewc is None else float(ewc)))
        return replace(p, facts=tuple(out),
                       files=tuple(replace(f, summary=files[f.path]) for f in p.files))
    except (KeyError, TypeError, ValueError):
        return None


class _environment:
    """One connection, one blob reader, one rule setting for a run of checks."""

    def __init__(self, indexer: Indexer) -> None:
        self.indexer = indexer

    def __enter__(self) -> _Env:
        conn = self.indexer.connect(readonly=True)
        try:
            reader = gitrepo.BlobReader(self.indexer.repo)
        except BaseException:
            conn.close()
            raise
        setting = self.indexer.rule_setting()
        self.env = _Env(conn, setting, reader, self.indexer.repo, {},
                        check_cache.CheckCache(self.indexer.repo))
        self.env.stamp = check_cache.review_stamp(conn, self.indexer.repo, setting)
        return self.env

    def __exit__(self, *exc: object) -> None:
        if self.env.cache is not None:
            self.env.cache.close()
        self.env.reader.close()
        self.env.conn.close()


def _branch_versions(queue: Queue, proposal: Proposal) -> _Versions:
    """path → (blob, proposal) of the newest version the branch's earlier open proposals
    wrote of each fact (None: deleted)."""
    out = _Versions()
    for p in queue.proposals:
        if p.branch == proposal.branch and p.index < proposal.index:
            out.take(p)
    return out


class _Versions(dict[str, tuple[str | None, Proposal]]):
    """`_branch_versions`' answer, with the open proposal that added each path, and the
    digest of the proposals it was made from (`check_cache.chain`)."""

    def __init__(self) -> None:
        super().__init__()
        self.added: dict[str, Proposal] = {}
        self.chain = ""

    def take(self, p: Proposal) -> None:
        """The branch's next proposal `p` in place (what it writes, in the chain)."""
        for f in p.facts:
            if f.status == "open":
                self[f.path] = (f.new_blob, p)
                if f.change == "added":
                    self.added[f.path] = p
        self.chain = check_cache.chain(self.chain, p.sha, ((f.path, f.status, f.new_blob,
                                                             f.change) for f in p.facts))

    def key(self, stamp: str, sha: str) -> str:
        return check_cache.key_of(stamp, sha, self.chain)


def _ontology_findings(env: _Env, proposal: Proposal) -> Proposal:
    """Each ontology change of the proposal with what it does to the curated branch's
    findings (`review_reads.rule_findings`) added to its summary."""
    from factdesk.corpus.ontology import parse_ontology, shared_engine
    from factdesk.review.carry import rule_diff

    files = []
    for f in proposal.files:
        data = env.read(f.new_blob) if f.kind == "ontology" else None
        if data is not None:
            old = env.read(f.old_blob)
            new = parse_ontology(data, f.path)
            gone, come = rule_diff(parse_ontology(old, f.path) if old is not None else None, new)
            engine = env.setting.engine or shared_engine()
            added, removed = review_reads.rule_findings(env.conn, engine, new, gone, come)
            f = replace(f, summary=(*f.summary, f"on the curated branch: {added} finding"
                                    f"{'s' if added != 1 else ''} would appear, {removed} "
                                    "would disappear"))
        files.append(f)
    return replace(proposal, files=tuple(files))


def _check(env: _Env, queue: Queue, proposal: Proposal, earlier: _Versions) -> Proposal:
    if any(f.kind == "ontology" for f in proposal.files):
        proposal = _ontology_findings(env, proposal)
    if not proposal.facts:
        return proposal
    own = {f.path: f.new_blob for f in proposal.facts}
    versions: dict[str, bytes | None] = {p: env.read(b) for p, b in own.items()}
    creators = {f.path: proposal.author_email for f in proposal.facts if f.change == "added"}
    repo_id = env.setting.repo_id or stored_repo_ids(env.conn)

    # the dependency walk: facts the versions cite that only earlier open proposals have
    # in this form; which proposal each fact's lineage needs
    needs: dict[str, set[str]] = {p: set() for p in own}
    #: sha → its place on the branch (the order `depends_on` lists them in)
    order: dict[str, int] = {}
    #: cited path → the curated branch already has the branch's version
    live_cache: dict[str, bool] = {}
    frontier = [(p, p, 0) for p in own]
    parsed_refs: dict[str, list[str]] = {}
    while frontier:
        path, root, depth = frontier.pop()
        data = versions.get(path)
        if data is None or depth >= MAX_DEPTH:
            continue
        if path not in parsed_refs:
            parsed_refs[path] = _refs_of(path, data, repo_id)
        for target in parsed_refs[path]:
            hit = earlier.get(target)
            if hit is None or hit[0] is None or target in own:
                continue  # (a deletion is no version this one needs)
            if target not in live_cache:
                live_cache[target] = review_reads.live_blob(env.conn, target) == hit[0]
            if live_cache[target]:
                continue  # the curated branch has this very version already
            needs[root].add(hit[1].sha)
            order[hit[1].sha] = hit[1].index
            if target not in versions:
                versions[target] = env.read(hit[0])
                if hit[1].facts and any(f.path == target and f.change == "added"
                                        for f in hit[1].facts):
                    creators.setdefault(target, hit[1].author_email)
                frontier.append((target, root, depth + 1))
    checked = review_reads.check_proposed(env.conn, env.setting, versions, list(own), creators)
    before = review_reads.indexed_problems(env.conn, [f.path for f in proposal.facts
                                                      if f.change != "added"])
    only_branch = _branch_only(env, earlier, parsed_refs, own, live_cache)
    deleted = [f.path for f in proposal.facts if f.change == "deleted"]
    citing = review_reads.citing(env.conn, deleted) if deleted else {}

    facts = []
    for f in proposal.facts:
        result = checked.get(f.path)
        found: list[ReviewProblem] = []
        if why := git_refuses(f.path):  # (never overridable: review/decide.py)
            found.append(ReviewProblem("git_path", "error", f"git refuses this path: {why}; "
                                       "it can only be rejected", True))
        if result is not None:
            old = {(p.code, p.message) for p in before.get(f.path, ())}
            found.extend(ReviewProblem(p.code, _severity(p), p.message,
                                       (p.code, p.message) not in old, p.line)
                         for p in result.problems)
            for target in parsed_refs.get(f.path, ()):
                if target in only_branch:
                    adder = only_branch[target]
                    found.append(ReviewProblem(
                        "ref-branch", "warning",
                        f"cites {target}, which only the branch has: proposal "
                        f"{adder.sha[:10]} ({adder.subject[:60]}) adds it and is still open; "
                        "accept it first or with this one", True, _refs_line(result)))
        if f.change == "deleted":
            left = _citations_left(citing.get(f.path.lower(), []), f.path, versions, repo_id,
                                   parsed_refs)
            if left:
                found.append(ReviewProblem(
                    "ref-retracted", "warning",
                    f"deleting it leaves {len(left)} citation{'s' if len(left) != 1 else ''} "
                    f"behind: {', '.join(left[:5])}{' …' if len(left) > 5 else ''} (knomit "
                    "keeps refs to retracted facts valid; check will warn on them)", True))
        depends = tuple(sorted(needs.get(f.path, ()), key=order.__getitem__))
        facts.append(replace(
            f, problems=tuple(found), depends_on=depends,
            evidence_weight=result.weight_recorded if result else None,
            evidence_weight_computed=result.weight_computed if result else None))
    return replace(proposal, facts=tuple(facts))


def _severity(p: Problem) -> Literal["error", "warning"]:
    return "error" if p.severity == Severity.ERROR else "warning"


def _refs_line(result: review_reads.CheckedVersion) -> int:
    return result.fact.line_of("refs") if result.fact is not None else 0


def _refs_of(path: str, data: bytes, repo_id: frozenset[str] | None) -> list[str]:
    from factdesk.corpus.codec import parse_fact

    fact = parse_fact(path, data).fact
    if fact is None:
        return []
    return [t for t in local_targets(fact.refs, repo_id) if t != path.lower()]


def _branch_only(env: _Env, earlier: Mapping[str, tuple[str | None, Proposal]],
                 parsed_refs: Mapping[str, list[str]], own: Mapping[str, str | None],
                 cache: dict[str, bool]) -> dict[str, Proposal]:
    """Cited facts the curated branch lacks and an earlier open proposal adds."""
    wanted = sorted({t for refs in parsed_refs.values() for t in refs
                     if t in earlier and earlier[t][0] is not None and t not in own})
    live = review_reads.live_paths(env.conn, wanted) if wanted else set()
    return {t: _adder(earlier, t) for t in wanted if t not in live}


def _adder(earlier: Mapping[str, tuple[str | None, Proposal]], path: str) -> Proposal:
    """The open proposal that adds `path` on the branch (the newest version's writer when
    none of them adds it: the curated branch had it and an open one deleted it)."""
    return getattr(earlier, "added", {}).get(path) or earlier[path][1]


def _citations_left(sources: Sequence[str], path: str, versions: Mapping[str, bytes | None],
                    repo_id: frozenset[str] | None, parsed: dict[str, list[str]]) -> list[str]:
    """The citing facts that still cite `path` once these versions are in place."""
    left = []
    target = path.lower()
    for src in sorted(sources):
        if src in versions:
            data = versions[src]
            if data is None:
                continue
            if src not in parsed:
                parsed[src] = _refs_of(src, data, repo_id)
            if target not in parsed[src]:
                continue
        left.append(src)
    return left


# -- the diff and near-duplicates (on demand) ---------------------------------------------------


def proposal_diff(repo: Path, queue: Queue, proposal: Proposal,
                  path: str | None = None) -> str:
    """The unified diff of each proposed version (or only `path`'s) against the curated
    branch's version of the same fact; a fact the curated branch lacks is all added."""
    facts = [f for f in proposal.facts if path is None or f.path == path]
    curated = githistory.blobs_at(repo, queue.tip, [f.path for f in facts]) if queue.tip else {}
    parts = []
    for f in facts:
        text = gitrepo.diff_versions(repo, f.path, curated.get(f.path), f.new_blob,
                                     ("curated", "proposed"))
        if text is None:
            continue
        if not text:
            text = f"(no change: the curated branch already has this version of {f.path})\n"
        elif f.path not in curated:
            text = f"(new: the curated branch has no {f.path})\n" + text
        parts.append(text)
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class NearDuplicate:
    """A fact already on the curated branch close to a proposed version."""

    path: str
    similar: str
    score: float


def near_duplicates(indexer: Indexer, proposal: Proposal, *, k: int = 3,
                    session: object | None = None) -> list[NearDuplicate] | None:
    """The facts on the curated branch whose embedding is within the model's duplicate
    threshold of a proposed version (added or modified), best first; None when the corpus
    has no semantic index (nothing was ever embedded: `factdesk embed`) or no model can be
    loaded. This may load the embedding model: call it off the GUI thread and not for
    badges. `session`: a loaded `semantic.search.SemanticSession` to reuse."""
    from factdesk.corpus.codec import parse_fact
    from factdesk.semantic.backends import ModelUnavailable, fact_text
    from factdesk.semantic.search import SemanticSession, session_for
    from factdesk.semantic.store import store_path
    from factdesk.semantic.thresholds import duplicate_threshold

    if session is None and not store_path(indexer.repo).exists():
        return None
    try:
        sem = session if isinstance(session, SemanticSession) else session_for(indexer)
    except ModelUnavailable:
        return None
    if len(sem.vectors()) == 0:
        return None
    limit = duplicate_threshold(sem.model_id)
    out: list[NearDuplicate] = []
    with gitrepo.BlobReader(indexer.repo) as reader:
        for f in proposal.facts:
            if f.new_blob is None:
                continue
            data = reader.read(f.new_blob, limit=MAX_BYTES)
            fact = parse_fact(f.path, data).fact if data else None
            if fact is None:
                continue
            for hit in sem.similar_to_text(fact_text(fact.title, fact.body), k + 1):
                if hit.path != f.path and hit.score >= limit:
                    out.append(NearDuplicate(f.path, hit.path, hit.score))
    return sorted(out, key=lambda d: -d.score)


def problem_counts(proposal: Proposal) -> tuple[int, int]:
    """(errors, warnings) the proposal brings (new ones), once checked."""
    errors = warnings = 0
    for f in proposal.facts:
        for p in f.problems or ():
            if p.new:
                errors += p.severity == "error"
                warnings += p.severity == "warning"
    return errors, warnings
