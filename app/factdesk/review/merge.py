"""The review merge (issue 13; docs/review.md, "Decisions and the review merge"): when every
proposal of an agent branch up to some commit X is decided, a merge commit on the curated
branch records it, so that the agent's commits stay reachable (knomit pins refs to
commits), knomit's first-parent reading sees the curated result unchanged, and the next
review starts from the new merge base.

    parents   1: the curated tip (after the decision)   2: X
    tree      the curated tip's, with the files that come over undecided (review/carry.py:
              the agent's private `.knomit/<area>/<…>.md` state and its own messages) as
              they are at X, where the agent changed them since the merge base and the
              curated branch did not (a file both changed keeps the curated version, named
              in `Factdesk-Kept`). Every other path keeps the curated version: a file
              outside kb/ that the agent may not write undecided was decided like a fact
              (accepted: the decision wrote it; rejected: it never comes)
    author    curator+merge (knomit's reconcile token), committer the curator
    message   merge: <branch> into <curated> (review up to <X, 12 hex>)

              <what it records>

              Factdesk-Review-Merge: <branch>
              Factdesk-Reviewed-Up-To: <full sha of X>
              Factdesk-Kept: <path>                      (each, when any)
              Factdesk-Action-Id: <16 hex>

It is no decision (trust rule 2: a merge never is), has no `Factdesk-Action`, and goes
through the same write path (lock, journal with both parents, compare-and-swap, recovery).
When: automatically right after the decision that leaves every proposal of the branch
decided (`Review(merge_policy="branch")`, the default: a curator deciding 100 proposals in
order gets one merge, not 100), or after each decision that completes a prefix
(`merge_policy="prefix"`), and on demand for the decided prefix (`Review.merge_reviewed`).

X is the newest commit on the branch's first-parent line (within `curated..branch`) whose
every ancestor in the range is decided: each non-merge commit that changes facts (or files
decided like facts) has a decision in effect for each of them; a commit that changes only
what comes over undecided (its private state, its own messages) needs none; merges need
none. After a decision at least one decided commit must be in the prefix (job state and
messages alone never trigger a merge); on demand (`Review.merge_reviewed`, `factdesk
merge-reviewed`) a prefix of undecided-only commits is merged too, so that an agent's own
messages arrive without waiting for its next proposal.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING

from factdesk.corpus import githistory, gitrepo, gitreview
from factdesk.corpus.gitrepo import Commit
from factdesk.curation import CurationError
from factdesk.curation.base import read_file
from factdesk.curation.changes import inert, with_op
from factdesk.curation.gittree import tree_entries
from factdesk.curation.gitwrite import FileChange, commit_files, current_branch
from factdesk.review.carry import Carry

if TYPE_CHECKING:
    from factdesk.review.decide import Decided, Review

def reviewed_prefix(review: Review, tip: str, branch_tip: str, decided: Decided, *,
                    whole: bool = False, commits: Sequence[Commit] | None = None,
                    carry: Carry | None = None, undecided_only: bool = False) -> str | None:
    """X (module doc) for the branch whose tip is `branch_tip`, or None when no prefix with a
    decided commit is complete (`whole`: unless it is the whole branch; `undecided_only`:
    a prefix of commits that need no decision counts too). `commits`: `tip..branch_tip`,
    when the caller has listed them."""
    from factdesk.review.decide import AgentCommit

    if commits is None:
        commits = gitreview.range_commits(review.repo, f"{tip}..{branch_tip}")
    if not commits:
        return None
    by_sha = {c.sha: c for c in commits}
    ok: dict[str, bool] = {}
    has_fact: dict[str, bool] = {}
    reading = carry or Carry(review.repo)
    try:
        agents = [AgentCommit.of(c, review.root, reading) for c in commits]
    finally:
        if carry is None:
            reading.close()
    for c, agent in zip(commits, agents, strict=True):  # parents first
        inside = [p for p in c.parents if p in by_sha]
        needs = bool(agent.facts) and not agent.merge  # (job state alone needs no decision)
        ok[c.sha] = not (needs and decided.is_open(agent)) and all(ok[p] for p in inside)
        has_fact[c.sha] = (needs or (undecided_only and not agent.merge)
                           or any(has_fact[p] for p in inside))
    sha: str | None = branch_tip
    while sha is not None and sha in by_sha:
        if ok[sha]:
            return sha if has_fact[sha] and (sha == branch_tip or not whole) else None
        parents = by_sha[sha].parents
        sha = parents[0] if parents else None
    return None


def _blob(sha: str) -> str | None:
    return None if not sha or sha.strip("0") == "" else sha


def merge_message(branch: str, curated: str, upto: str, kept: Sequence[str], action_id: str) -> str:
    branch, curated = inert(branch), inert(curated.removeprefix("refs/heads/"))
    lines = [f"merge: {branch} into {curated} (review up to {upto[:12]})", "",
             f"Every proposal of {branch} up to {upto[:12]} is decided: the decisions are the "
             f"commits on {curated}'s first-parent line that name them. This merge keeps the "
             "agent's commits reachable; its tree is the curated result, with the agent's "
             "private files and its own messages as the agent wrote them.", "",
             f"Factdesk-Review-Merge: {branch}",
             f"Factdesk-Reviewed-Up-To: {upto}"]
    lines += [f"Factdesk-Kept: {inert(p)}" for p in kept]
    lines.append(f"Factdesk-Action-Id: {action_id}")
    return "\n".join(lines) + "\n"


def record_merge(review: Review, branch: str, branch_tip: str, decided: Decided, *,
                 whole: bool = False, undecided_only: bool = False) -> str | None:
    """Record the review merge of `branch` up to its decided prefix (`whole`: only when that
    is the whole branch; `undecided_only`: also a prefix of commits that need no decision),
    when there is one the curated branch does not reach yet. Returns the merge commit
    (None: nothing to record)."""
    with Carry(review.repo) as carry:
        return _record(review, branch, branch_tip, decided, carry, whole=whole,
                       undecided_only=undecided_only)


def _record(review: Review, branch: str, branch_tip: str, decided: Decided, carry: Carry, *,
            whole: bool, undecided_only: bool) -> str | None:
    from factdesk.review.decide import AgentCommit

    repo = review.repo
    ref, tip = current_branch(repo)
    if whole:  # (cheap first: the branch's newest commit must be decided for a whole merge)
        head = gitreview.one_commit(repo, branch_tip)
        if head is not None and len(head.parents) == 1:
            newest = AgentCommit.of(head, review.root, carry)
            if newest.facts and decided.is_open(newest):
                return None
    commits = gitreview.range_commits(repo, f"{tip}..{branch_tip}")
    upto = reviewed_prefix(review, tip, branch_tip, decided, whole=whole, commits=commits,
                           carry=carry, undecided_only=undecided_only)
    if upto is None or gitrepo.is_ancestor(repo, upto, tip):
        return None
    base = githistory.merge_base(repo, tip, upto)
    # each path outside kb/ that every agent commit up to X changed in a way that comes
    # over undecided (review/carry.py); any other path keeps the curated version
    ahead = {c.sha for c in gitreview.range_commits(repo, f"{tip}..{upto}")}
    allowed: dict[str, bool] = {}
    for c in commits:
        if c.sha not in ahead or len(c.parents) > 1:
            continue
        for ch in c.changes:
            if not ch.path.startswith(review.root + "/"):
                ok = carry.carried(c.sha, c.email, ch.path, _blob(ch.old_blob), _blob(ch.new_blob))
                allowed[ch.path] = allowed.get(ch.path, True) and ok
    theirs = [p for p in (gitreview.changed_files(repo, base, upto) if base else [])
              if allowed.get(p, False)]
    ours = set(gitreview.changed_files(repo, base, tip)) if base and theirs else set()
    kept = [p for p in theirs if p in ours]
    carried = [p for p in theirs if p not in ours]
    at_x = tree_entries(repo, upto, carried)
    at_tip = tree_entries(repo, tip, carried)
    changes = []
    with gitrepo.BlobReader(repo) as reader:
        for p in carried:
            new_blob = at_x[p][1] if p in at_x else None
            if p in at_x and not at_x[p][0].startswith("100"):
                continue  # (only a regular file comes over: no link, no submodule)
            if new_blob == (at_tip[p][1] if p in at_tip else None):
                continue
            new = reader.read(new_blob) if new_blob else None
            changes.append(FileChange(p, read_file(repo, p), new))
    action_id = secrets.token_hex(8)
    curator = review.curator
    done = commit_files(repo, changes, merge_message(branch, ref, upto, kept, action_id),
                        author=with_op(curator, "merge"), committer=curator,
                        action_id=action_id, expected_head=tip, allow_empty=True,
                        parents=[upto])
    if changes and review.curation.update_index:
        review.indexer.update(hint=[c.path for c in changes])
    return done.sha


def record_after(review: Review, decided: Decided) -> tuple[list[str], list[str]]:
    """After a decision (or the recovery of one): the review merge of every agent branch
    whose prefix is complete now and not merged yet — the branches the decision touched,
    and any whose merge a crash lost (the ref moved, the process died before its merge:
    issue 22). A merge that cannot be made leaves the decision standing and says why (the
    next decision tries again). Returns (merges, warnings)."""
    merges: list[str] = []
    warnings: list[str] = []
    for name, branch_tip in gitreview.agent_branches(review.repo):
        try:
            made = record_merge(review, name, branch_tip, decided,
                                whole=review.merge_policy == "branch")
        except (CurationError, OSError, gitrepo.GitError) as exc:
            warnings.append(f"the review merge of {inert(name)} was not recorded ({exc}); the "
                            "next decision records it")
            continue
        if made:
            merges.append(made)
    return merges, warnings
