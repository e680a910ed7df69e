"""The review merge (issue 13; docs/review.md, "Decisions and the review merge"): when every
proposal of an agent branch up to some commit X is decided, a merge commit on the curated
branch records it, so that the agent's commits stay reachable (knomit pins refs to
commits), knomit's first-parent reading sees the curated result unchanged, and the next
review starts from the new merge base.

    parents   1: the curated tip (after the decision)   2: X
    tree      the curated tip's, with the agent's files outside kb/ (its `.knomit/jobs/`
              state) as they are at X, where the agent changed them since the merge base
              and the curated branch did not (a file both changed keeps the curated
              version, named in `Factdesk-Kept`); `.factdesk/` (the curators' own files)
              never comes over
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
every ancestor in the range is decided: each non-merge commit that changes facts has a
decision in effect for each of them; a commit that changes no fact (only the agent's own
state) needs none; merges need none. At least one decided fact commit must be in the
prefix: job-state commits alone never trigger a merge.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING

from factdesk.corpus import githistory, gitrepo, gitreview
from factdesk.curation import CurationError
from factdesk.curation.base import read_file
from factdesk.curation.changes import inert, with_op
from factdesk.curation.gittree import tree_entries
from factdesk.curation.gitwrite import FileChange, commit_files, current_branch

if TYPE_CHECKING:
    from factdesk.review.decide import Decided, Review

#: folders of the agent's tree that never come over with a review merge (the curators' own)
NEVER_CARRIED = (".factdesk/",)


def reviewed_prefix(review: Review, tip: str, branch_tip: str, decided: Decided, *,
                    whole: bool = False) -> str | None:
    """X (module doc) for the branch whose tip is `branch_tip`, or None when no prefix with a
    decided fact commit is complete (`whole`: unless it is the whole branch)."""
    from factdesk.review.decide import AgentCommit

    commits = gitreview.range_commits(review.repo, f"{tip}..{branch_tip}")
    if not commits:
        return None
    by_sha = {c.sha: c for c in commits}
    ok: dict[str, bool] = {}
    has_fact: dict[str, bool] = {}
    for c in commits:  # parents first
        agent = AgentCommit.of(c, review.root)
        inside = [p for p in c.parents if p in by_sha]
        needs = bool(agent.facts) and not agent.merge  # (job state alone needs no decision)
        ok[c.sha] = not (needs and decided.is_open(agent)) and all(ok[p] for p in inside)
        has_fact[c.sha] = (bool(agent.facts) and not agent.merge) or any(has_fact[p] for p in inside)
    sha: str | None = branch_tip
    while sha is not None and sha in by_sha:
        if ok[sha]:
            return sha if has_fact[sha] and (sha == branch_tip or not whole) else None
        parents = by_sha[sha].parents
        sha = parents[0] if parents else None
    return None


def merge_message(branch: str, curated: str, upto: str, kept: Sequence[str], action_id: str) -> str:
    branch, curated = inert(branch), inert(curated.removeprefix("refs/heads/"))
    lines = [f"merge: {branch} into {curated} (review up to {upto[:12]})", "",
             f"Every proposal of {branch} up to {upto[:12]} is decided: the decisions are the "
             f"commits on {curated}'s first-parent line that name them. This merge keeps the "
             "agent's commits reachable; its tree is the curated result, with the agent's "
             "files outside kb/ as the agent wrote them.", "",
             f"Factdesk-Review-Merge: {branch}",
             f"Factdesk-Reviewed-Up-To: {upto}"]
    lines += [f"Factdesk-Kept: {inert(p)}" for p in kept]
    lines.append(f"Factdesk-Action-Id: {action_id}")
    return "\n".join(lines) + "\n"


def record_merge(review: Review, branch: str, branch_tip: str, decided: Decided, *,
                 whole: bool = False) -> str | None:
    """Record the review merge of `branch` up to its decided prefix (`whole`: only when that
    is the whole branch), when there is one the curated branch does not reach yet. Returns
    the merge commit (None: nothing to record)."""
    repo = review.repo
    ref, tip = current_branch(repo)
    upto = reviewed_prefix(review, tip, branch_tip, decided, whole=whole)
    if upto is None or gitrepo.is_ancestor(repo, upto, tip):
        return None
    base = githistory.merge_base(repo, tip, upto)
    theirs = [p for p in (gitreview.changed_files(repo, base, upto) if base else [])
              if not p.startswith(review.root + "/") and not p.startswith(NEVER_CARRIED)]
    ours = set(gitreview.changed_files(repo, base, tip)) if base and theirs else set()
    kept = [p for p in theirs if p in ours]
    carried = [p for p in theirs if p not in ours]
    at_x = tree_entries(repo, upto, carried)
    at_tip = tree_entries(repo, tip, carried)
    changes = []
    with gitrepo.BlobReader(repo) as reader:
        for p in carried:
            new_blob = at_x[p][1] if p in at_x else None
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


def record_after(review: Review, decided_shas: Sequence[str], decided: Decided
                 ) -> tuple[list[str], list[str]]:
    """After a decision on `decided_shas`: the review merge of each branch that holds them,
    when its prefix is complete now. A merge that cannot be made leaves the decision
    standing and says why (the next decision tries again). Returns (merges, warnings)."""
    merges: list[str] = []
    warnings: list[str] = []
    branches = dict(gitreview.agent_branches(review.repo))
    names: list[str] = []
    for sha in decided_shas:
        for name in gitreview.agent_branches_with(review.repo, sha):
            if name not in names:
                names.append(name)
    for name in names:
        if name not in branches:
            continue
        try:
            sha = record_merge(review, name, branches[name], decided,
                               whole=review.merge_policy == "branch")
        except (CurationError, OSError, gitrepo.GitError) as exc:
            warnings.append(f"the review merge of {inert(name)} was not recorded ({exc}); the "
                            "next decision records it")
            continue
        if sha:
            merges.append(sha)
    return merges, warnings
