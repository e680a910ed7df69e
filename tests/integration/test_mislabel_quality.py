"""The mislabel heuristics against ground truth: the generator's planted defects and decoys,
and the demo corpus's planted cases. Recall 1.0 on every planted kind a heuristic covers, no
decoy flagged by the heuristic it imitates, no finding outside the ground truth."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from factdesk.core import open_corpus
from factdesk.corpus.registry_io import load_registry
from factdesk.curation.dismissals import facts_from_index
from factdesk.demo import build_demo_corpus, resource_root
from factdesk.model.fact import Fact
from factdesk.model.mislabels import MislabelContext, Suggestion, suggest_all

#: heuristic code -> the generator's planted kind it should find (make_corpus.py PLANT_KINDS)
PLANTED_KIND: dict[str, str] = {
    "hedged-observation": "mislabel_hedged_observation",
    "imperative-epistemic": "mislabel_imperative_epistemic",
    "tool-asserts-user": "authority_tool_asserts_user",
    "claimant-mismatch": "claimant_mismatch",
    "single-source-synthesis": "synthesis_single_source",
    "observation-without-refs": "observation_without_refs",
    "persona-without-refs": "persona_without_refs",
}
#: heuristic code -> the demo corpus's planted case (resources/demo/history.yaml `planted`)
DEMO_CASE: dict[str, str] = {
    "hedged-observation": "hedged_observation",
    "imperative-epistemic": "rule_typed_as_evidence",
    "tool-asserts-user": "tool_asserts_user_identity",
    "claimant-mismatch": "claimant_mismatch",
    "single-source-synthesis": "synthesis_single_source",
    "observation-without-refs": "observation_without_refs",
    "persona-without-refs": "persona_without_refs",
    "legacy-envelope": "legacy_claim_type",
    "message-in-memory": "message_in_memory",
}


@dataclass
class Row:
    """One heuristic's score on one corpus."""

    code: str
    truth: str
    expected: set[str] = field(default_factory=set)
    found: set[str] = field(default_factory=set)
    #: findings on files outside the ground truth that are still correct by construction
    #: (the generator's malformed files, facts whose `claim_type: legacy` is explicit)
    explained: set[str] = field(default_factory=set)
    decoys_flagged: set[str] = field(default_factory=set)

    @property
    def tp(self) -> int:
        return len(self.found & self.expected)

    @property
    def false_pos(self) -> set[str]:
        return self.found - self.expected - self.explained

    @property
    def precision(self) -> float:
        judged = len(self.found - self.explained)
        return self.tp / judged if judged else 1.0

    @property
    def recall(self) -> float:
        return self.tp / len(self.expected) if self.expected else 1.0


def index_suggestions(repo: Path, *, include_no_envelope: bool = False
                      ) -> tuple[list[Fact], list[Suggestion]]:
    """Open (and index) a corpus, read its facts back from the index, run every heuristic."""
    ix = open_corpus(repo)
    ix.update()
    conn = ix.connect(readonly=True)
    conn.row_factory = sqlite3.Row
    facts, _, creators = facts_from_index(conn)
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    ctx = MislabelContext(repo_id=frozenset(str(meta.get("repo_id") or "").split()) or None,
                          registry=load_registry(repo), creators=creators,
                          include_no_envelope=include_no_envelope)
    return facts, suggest_all(facts, ctx)


def score_generated(facts: Iterable[Fact], suggestions: list[Suggestion],
                    manifest: Mapping[str, Any]) -> list[Row]:
    """Per-heuristic scores against a make_corpus.py manifest."""
    legacy = {f.path for f in facts if f.envelope.claim_type == "legacy"}
    malformed = {m["path"] for m in manifest.get("malformed", [])}
    decoys: dict[str, str] = {p: k for k, ps in manifest["decoys"].items() for p in ps}
    rows: dict[str, Row] = {}
    for code, kind in PLANTED_KIND.items():
        rows[code] = Row(code, kind, expected=set(manifest["planted"].get(kind, [])))
    rows["legacy-envelope"] = Row("legacy-envelope", "claim_type: legacy at HEAD", expected=legacy)
    for s in suggestions:
        row = rows.setdefault(s.code, Row(s.code, "(none planted)"))
        row.found.add(s.path)
        if s.path in malformed:
            row.explained.add(s.path)
        if decoys.get(s.path) == row.truth:
            row.decoys_flagged.add(s.path)
    return list(rows.values())


def score_demo(suggestions: list[Suggestion], planted: Mapping[str, list[str]]) -> list[Row]:
    """Per-heuristic scores against the demo corpus's planted cases (paths live on main)."""
    rows = {code: Row(code, case, expected={p for p in planted.get(case, [])})
            for code, case in DEMO_CASE.items()}
    for s in suggestions:
        rows.setdefault(s.code, Row(s.code, "(none planted)")).found.add(s.path)
    return list(rows.values())


def demo_planted() -> dict[str, list[str]]:
    plan = yaml.safe_load((resource_root() / "resources/demo/history.yaml").read_text("utf-8"))
    return {k: list(v) for k, v in plan["planted"].items()}


# ---------------------------------------------------------------- tests


def test_generated_corpus_recall_and_decoys(generated_corpus: tuple[Path, dict[str, Any]]) -> None:
    repo, manifest = generated_corpus
    facts, suggestions = index_suggestions(repo)
    rows = score_generated(facts, suggestions, manifest)
    for row in rows:
        if row.code in PLANTED_KIND:
            assert row.expected, f"the generator planted no {row.truth}; the test proves nothing"
        assert row.recall == 1.0, (row.code, sorted(row.expected - row.found))
        assert not row.false_pos, (row.code, sorted(row.false_pos))
        assert not row.decoys_flagged, (row.code, sorted(row.decoys_flagged))
    # no decoy is flagged at all, except for an explicit `claim_type: legacy` it happens to carry
    legacy = {f.path for f in facts if f.envelope.claim_type == "legacy"}
    decoys = {p for ps in manifest["decoys"].values() for p in ps}
    flagged = {(s.path, s.code) for s in suggestions if s.path in decoys}
    assert all(code == "legacy-envelope" and path in legacy for path, code in flagged), flagged
    # the view-written facts are not mislabels a relabel can fix (A1 reports them)
    assert not {s.path for s in suggestions} & set(manifest["planted"]["authority_view_writes"])


def test_demo_corpus_finds_every_planted_mislabel(tmp_path: Path) -> None:
    repo = build_demo_corpus(tmp_path / "demo")
    _, suggestions = index_suggestions(repo)
    rows = score_demo(suggestions, demo_planted())
    for row in rows:
        assert row.expected, row.code
        assert row.found == row.expected, (row.code, row.found ^ row.expected)
    hedges = {s.path: s.explanation for s in suggestions if s.code == "hedged-observation"}
    assert "'probably' in the title" in hedges["kb/gotchas/ledger-api/deploys/ae0dab5c.md"]
    assert "'i think' in the title" in hedges["kb/gotchas/ledger-api/webhooks/d8a797e5.md"]


@pytest.mark.realcorpus
def test_real_corpus_queue_is_short(real_corpus: Path) -> None:
    """No ground truth here: the 264 published facts give at most a handful of suggestions,
    and the one rule phrased as a pattern is among them."""
    _, suggestions = index_suggestions(real_corpus)
    found = {(s.path, s.code) for s in suggestions}
    assert ("kb/conventions/ai/agents/reliability/throttle-signals/604dd231.md",
            "imperative-epistemic") in found
    assert len(found) <= 5, sorted(found)
