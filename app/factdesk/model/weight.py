"""Evidence weight, rule R2, exactly as knomit computes it (FORMAT.md §6.4).

    S = Σ confidence_i × sources_i over contributing facts;  weight = S / (S + 1)

Contributors come from a depth-limited (10) DFS over local refs, de-duplicated by path:
a hypothesis contributes nothing and is not traversed; an authored fact is terminal and
contributes its own c×s; a distilled or discovered fact is traversed into its own local
refs and contributes its own c×s only when none of them resolves.
"""

from __future__ import annotations

from collections.abc import Callable

from factdesk.model.enums import FactType, Origin
from factdesk.model.fact import Fact
from factdesk.model.refs import RepoIds, local_targets

MAX_DEPTH = 10
Lookup = Callable[[str], Fact | None]


def evidence_sum(fact: Fact, lookup: Lookup, repo_id: RepoIds) -> float:
    """S for `fact`: the pooled confidence × sources of its contributing evidence."""
    visited: set[str] = {fact.path.lower()}
    total = 0.0

    def visit(path: str, depth: int) -> bool:
        """Add `path`'s contribution; return whether it resolved."""
        nonlocal total
        if depth > MAX_DEPTH or path in visited:
            return False
        target = lookup(path)
        if target is None:
            return False
        visited.add(path)
        if target.type == FactType.HYPOTHESIS:
            return True
        if target.resolved_origin == Origin.AUTHORED:
            total += target.confidence * target.sources
            return True
        resolved_any = False
        for child in local_targets(target.refs, repo_id):
            resolved_any = visit(child, depth + 1) or resolved_any
        if not resolved_any:
            total += target.confidence * target.sources
        return True

    for ref in local_targets(fact.refs, repo_id):
        visit(ref, 1)
    return total


def evidence_weight(fact: Fact, lookup: Lookup, repo_id: RepoIds) -> float:
    """The weight knomit would record for `fact` now: S / (S + 1), 0 without evidence."""
    s = evidence_sum(fact, lookup, repo_id)
    return s / (s + 1.0) if s > 0 else 0.0


#: Recorded and computed weights further apart than this are stale (rule R2).
WEIGHT_TOLERANCE = 1e-9


def is_stale(recorded: float | None, computed: float | None) -> bool:
    """Rule R2: a recorded weight that no longer matches the weight computed now."""
    return recorded is not None and computed is not None and abs(recorded - computed) > WEIGHT_TOLERANCE


def is_weighted(fact: Fact) -> bool:
    """Facts that carry an evidence weight: derived ones (synthesis, distilled, discovered)."""
    return fact.type == FactType.SYNTHESIS or fact.resolved_origin != Origin.AUTHORED
