"""Which facts may settle a hypothesis (rule R4, reality outranks prediction; issue 24 #2).

A fact from which the hypothesis is reachable by following refs — through facts of any type,
at any depth — is derived from the prediction, and a prediction's own derivative is not
evidence for it (the synthesis "Pool sizing is the cheapest lever…", distilled from the
pool-size prediction, must not confirm it). One link is not a derivation: an observation's
own ref to the hypothesis it settles is the settlement link itself (knomit writes it when an
observation lands on a hypothesis, FORMAT §6.6, and `confirm` writes it), so an observation
citing the hypothesis directly stays evidence — unless it also reaches it by a longer way.

Pure: the caller hands in the refs (`src → targets`, local fact paths, compared lower-case
as the refs table stores them); the settlement panel, `factdesk queue --candidates` and
`factdesk settle --confirm` all ask here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: the rule a refusal names
RULE = "R4"

#: facts that record reality first-hand: their direct ref to a hypothesis is the settlement link
OBSERVATION = "observation"


def derivation(candidate: str, hypothesis: str, refs: Mapping[str, Iterable[str]], *,
               observation: bool = False) -> tuple[str, ...] | None:
    """The shortest chain `candidate → … → hypothesis` by refs (lower-cased paths), or None
    when the hypothesis is not reachable from the candidate.

    `observation`: the candidate is an observation, so its own direct ref to the hypothesis
    is the settlement link and not followed (a longer chain still counts). The candidate is
    never passed through again (a cycle back through it is no other way)."""
    start, goal = candidate.lower(), hypothesis.lower()
    if start == goal:
        return None
    before: dict[str, str] = {start: ""}
    todo = deque([start])
    while todo:
        node = todo.popleft()
        for target in refs.get(node, ()):
            target = target.lower()
            if node == start and target == goal and observation:
                continue
            if target in before:
                continue
            before[target] = node
            if target == goal:
                chain = [goal]
                while before[chain[-1]]:
                    chain.append(before[chain[-1]])
                return tuple(reversed(chain))
            todo.append(target)
    return None


@dataclass(frozen=True, slots=True)
class Standing:
    """Whether a candidate may settle a hypothesis, and why (in words a curator reads)."""

    derived: bool  #: its refs reach the hypothesis (`chain`)
    eligible: bool  #: it may confirm it
    why: str
    chain: tuple[str, ...] = ()


def standing(candidate: str, hypothesis: str, refs: Mapping[str, Iterable[str]], *,
             type_: str | None, kind: str | None, cites: bool,
             titles: Mapping[str, str] | None = None) -> Standing:
    """The candidate's standing as evidence for the hypothesis: a derivative of it (refs that
    reach it), a hypothesis (in a settlement the non-hypothesis wins) or a pragmatic fact
    (a rule, not evidence) cannot confirm it; anything else can."""
    chain = derivation(candidate, hypothesis, refs, observation=type_ == OBSERVATION)
    if chain is not None:
        return Standing(True, False, f"derived from the hypothesis: its refs reach it "
                        f"({_chain_text(chain, titles)}); a prediction's own derivative is not "
                        f"evidence for it ({RULE})", chain)
    if type_ == "hypothesis":
        return Standing(False, False, f"itself a hypothesis: in a settlement the non-hypothesis "
                        f"wins ({RULE})")
    if kind == "pragmatic":
        return Standing(False, False, f"{type_ or 'a pragmatic fact'}: only evidence settles a "
                        f"prediction ({RULE})")
    if cites:
        return Standing(False, True, "cites the hypothesis directly (the settlement link) and "
                        "is not derived from it")
    return Standing(False, True, "a near-duplicate observation written after it (R4)")


def _chain_text(chain: tuple[str, ...], titles: Mapping[str, str] | None) -> str:
    """`a.md → b.md → the hypothesis`, with a title for each fact in between when known."""
    names = []
    for i, path in enumerate(chain):
        if i == len(chain) - 1:
            names.append("the hypothesis")
        elif i == 0:
            names.append("it")
        else:
            title = (titles or {}).get(path)
            names.append(f"{path} ({title})" if title else path)
    return " → ".join(names)
