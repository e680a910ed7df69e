"""A hypothesis is never settled by its own derivative (issue 24 #2, rule R4): a fact from
which the hypothesis is reachable by following refs — any type, any depth — is no evidence
for it. The rule is one pure function (`model.derivation`); the queue's candidates, the
command line's `queue --candidates` and `settle --confirm` all ask it, on a real corpus."""

from __future__ import annotations

import json

import pytest

from factdesk.cli import main
from factdesk.model.derivation import derivation, standing
from tests.conftest import Corpus, git

HYP = "kb/gotchas/db/h1h1h1h1.md"
SYN = "kb/decisions/db/5a5a5a5a.md"  # a synthesis distilled from the prediction
ECHO = "kb/gotchas/db/6b6b6b6b.md"  # an observation citing that synthesis (depth 2)
OBS = "kb/gotchas/db/7c7c7c7c.md"  # an observation citing the hypothesis directly
FREE = "kb/gotchas/db/a1a1a1a1.md"  # the fixture's pool fact: no refs at all


def test_the_rule_follows_refs_of_any_type_at_any_depth() -> None:
    refs = {"a": ["b"], "b": ["c"], "c": ["h"], "o": ["h"], "p": ["h", "b"], "x": ["y"],
            "y": ["x"], "q": ["q", "h"]}
    assert derivation("a", "h", refs) == ("a", "b", "c", "h")
    assert derivation("x", "h", refs) is None  # a cycle that never reaches it
    assert derivation("o", "h", refs) == ("o", "h")
    # an observation's own ref to the hypothesis is the settlement link, not a derivation …
    assert derivation("o", "h", refs, observation=True) is None
    # … but a longer way to it still is
    assert derivation("p", "h", refs, observation=True) == ("p", "b", "c", "h")
    assert derivation("q", "h", refs, observation=True) is None  # (a self-reference: no way)
    assert derivation("A", "H", {"a": ["H"]}) == ("a", "h")  # paths compare lower-case
    syn = standing("s", "h", {"s": ["h"]}, type_="synthesis", kind="epistemic", cites=True)
    assert (syn.derived, syn.eligible) == (True, False) and "R4" in syn.why
    obs = standing("o", "h", {"o": ["h"]}, type_="observation", kind="epistemic", cites=True)
    assert (obs.derived, obs.eligible) == (False, True)
    guess = standing("g", "h", {}, type_="hypothesis", kind="epistemic", cites=False)
    assert (guess.derived, guess.eligible) == (False, False) and "R4" in guess.why


def _corpus(corpus: Corpus) -> str:
    corpus.fact(HYP, title="The pool will run dry at 300 clients", type="hypothesis",
                body="Settles by 2026-12-31: pool errors at 300 clients.")
    corpus.commit("learn: a hypothesis")
    corpus.fact(SYN, title="Pool sizing is the cheapest lever", type="synthesis", refs=HYP,
                body="Distilled from the pool-size prediction.")
    corpus.fact(ECHO, title="The pool lever was written up", refs=SYN,
                body="Seen in the synthesis, 3 times.")
    corpus.fact(OBS, title="The pool ran dry at 300 clients in the load test", refs=HYP,
                body="Load test 2026-11, 300 clients.")
    corpus.commit("learn: a synthesis from the prediction and two observations")
    return str(corpus.root)


def test_queue_candidates_json_marks_derived_candidates(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    kb = _corpus(corpus)
    assert main(["queue", "--candidates", "--format", "json", "--kb", kb]) == 0
    items = json.loads(capsys.readouterr().out)["items"]
    (item,) = items
    got = {c["path"]: c for c in item["candidates"]}
    assert set(got) == {SYN, OBS}  # (ECHO does not cite it: only a similarity finds it)
    for c in got.values():
        assert set(c) >= {"path", "score", "derived", "eligible", "why"}
    assert (got[SYN]["derived"], got[SYN]["eligible"]) == (True, False)
    assert "refs reach it" in got[SYN]["why"] and "R4" in got[SYN]["why"]
    assert (got[OBS]["derived"], got[OBS]["eligible"]) == (False, True)
    assert item["candidates"][0]["path"] == OBS  # the eligible first
    # without --candidates the items stay as they were
    assert main(["queue", "--format", "json", "--kb", kb]) == 0
    assert "candidates" not in json.loads(capsys.readouterr().out)["items"][0]


def test_settle_confirm_refuses_a_derivative_naming_the_rule(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    kb = _corpus(corpus)
    head = git(corpus.root, "rev-parse", "HEAD")
    for derived in (SYN, ECHO):  # directly, and through the synthesis
        code = main(["settle", HYP, "--confirm", derived, "--reason", "it says so", "--kb", kb,
                     "--format", "json"])
        out = json.loads(capsys.readouterr().out)
        assert code == 1 and out["rule"] == "R4", out
        assert "derived from the hypothesis" in out["message"]
        assert git(corpus.root, "rev-parse", "HEAD") == head
    assert (corpus.root / HYP).exists()
    # evidence that does not lean on the prediction settles it
    assert main(["settle", HYP, "--confirm", FREE, "--reason", "the load test", "--kb", kb]) == 0
    assert not (corpus.root / HYP).exists()
