"""The published corpus (../shared/corpora): read all, report only what is really wrong."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.corpus.codec import parse_fact
from factdesk.corpus.gitrepo import BlobReader, repo_ids
from factdesk.model.weight import evidence_weight

pytestmark = pytest.mark.realcorpus

PRINCIPLES = 14


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(list(args))
    return code, json.loads(capsys.readouterr().out)


def test_check_reports_only_real_errors(real_corpus: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    code, out = run_json(capsys, "check", "--kb", str(real_corpus), "--format", "json")
    assert code == 1 and out["facts"] == 264
    codes = {e["code"] for e in out["errors"]}
    assert codes == {"ontology-rule", "R1"}
    rule_paths = {e["path"] for e in out["errors"] if e["code"] == "ontology-rule"}
    assert len(rule_paths) == PRINCIPLES and all(p.startswith("kb/principles/") for p in rule_paths)
    names = {e["message"].split('"')[1] for e in out["errors"] if e["code"] == "ontology-rule"}
    assert names == {"must-have-designer-entity", "must-be-pragmatic-policy"}
    r1 = [e for e in out["errors"] if e["code"] == "R1"]
    assert len(r1) == 1 and "pragmatic policy" in r1[0]["message"]
    warnings = {w["code"] for w in out["warnings"]}
    assert {"ref-retracted", "ref-self", "sources-zero", "R2"} <= warnings
    assert sum(w["code"] == "ref-retracted" for w in out["warnings"]) == 5
    assert sum(w["code"] == "sources-zero" for w in out["warnings"]) == 16
    assert all(e["line"] >= 1 and e["path"].startswith("kb/") for e in out["errors"])


def test_search_finds_the_confused_deputy_fact_first(real_corpus: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_json(capsys, "search", "confused deputy", "--kb", str(real_corpus),
                         "--format", "json")
    assert code == 0
    assert "confused-deputy" in out["results"][0]["title"]
    assert set(out["results"][0]) >= {"id", "path", "title", "type", "score"}


def test_show_synthesis_reports_both_weights(real_corpus: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_json(capsys, "show", "kb/principles/ai/agents/security/f269c82f.md",
                         "--kb", str(real_corpus), "--format", "json")
    assert code == 0 and out["type"] == "synthesis"
    assert out["evidence_weight"] == pytest.approx(0.869281, abs=1e-6)
    assert out["evidence_weight_computed"] is not None
    assert out["evidence_weight_computed"] != out["evidence_weight"]
    assert out["attribution"].endswith(out["title"]) and "(" in out["attribution"]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True
                          ).stdout.decode()


def test_every_synthesis_weight_matches_the_corpus_it_was_written_in(real_corpus: Path) -> None:
    """R2 exactly as knomit: computed over the tree just before the commit that wrote the
    weight, each of the 32 syntheses' recorded weight is reproduced within 1e-9."""
    ids = repo_ids(real_corpus)
    synths = []
    for path in sorted((real_corpus / "kb").rglob("*.md")):
        rel = path.relative_to(real_corpus).as_posix()
        fact = parse_fact(rel, path.read_bytes()).fact
        assert fact is not None
        if fact.evidence_weight is not None:
            synths.append(fact)
    assert len(synths) == 32
    trees: dict[str, dict[str, object]] = {}
    with BlobReader(real_corpus) as reader:
        for fact in synths:
            commits = _git(real_corpus, "log", "--format=%H", "--full-history", "--reverse",
                           "--", fact.path).split()
            writer = None
            for sha in commits:  # the last commit that set the weight to its current value
                data = reader.read(f"{sha}:{fact.path}")
                then = parse_fact(fact.path, data).fact if data else None
                previous = writer
                if then is not None and then.evidence_weight == fact.evidence_weight:
                    writer = writer or sha
                else:
                    writer = None
                del previous
            assert writer is not None, fact.path
            parent = _git(real_corpus, "rev-parse", f"{writer}^").strip()
            if parent not in trees:
                names = _git(real_corpus, "ls-tree", "-r", "--name-only", parent, "--", "kb")
                tree = {}
                for name in names.split():
                    blob = reader.read(f"{parent}:{name}")
                    parsed = parse_fact(name, blob).fact if blob else None
                    if parsed is not None:
                        tree[name.lower()] = parsed
                trees[parent] = tree
            written = parse_fact(fact.path, reader.read(f"{writer}:{fact.path}") or b"").fact
            assert written is not None
            lookup = trees[parent].get
            computed = evidence_weight(written, lookup, ids)  # type: ignore[arg-type]
            assert computed == pytest.approx(fact.evidence_weight, abs=1e-9), fact.path
