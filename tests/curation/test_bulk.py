"""A bulk relabel of 500 facts on a generated corpus: one commit, exactly the changed
lines, knomit's parse rules read every result, undo restores every byte."""

from __future__ import annotations

import subprocess
from pathlib import Path

from factdesk.core import open_corpus
from factdesk.corpus.codec import parse_fact
from factdesk.curation import Curation


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout


def test_bulk_relabel_of_500_facts_is_one_commit(generated_corpus, copy_tree, tmp_path: Path) -> None:
    repo = copy_tree(generated_corpus[0], tmp_path / "kb")
    ix = open_corpus(repo)
    ix.update()
    conn = ix.connect(readonly=True)
    paths = [r[0] for r in conn.execute(
        "SELECT path FROM facts WHERE status = 'live' AND errors = 0 AND kind = 'epistemic' "
        "AND type IN ('observation', 'concept', 'pattern', 'process', 'reference', 'principle') "
        "AND (claimant_type IS NULL OR claimant_type != 'view') ORDER BY path LIMIT 500")]
    conn.close()
    assert len(paths) == 500
    before = {p: (repo / p).read_bytes() for p in paths}
    head = git(repo, "rev-parse", "HEAD").strip()
    result = Curation(ix).relabel(paths, {"type": "insight"}, "these are insights")
    assert git(repo, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    assert sorted(git(repo, "show", "--name-only", "--format=", "HEAD").split()) == sorted(paths)
    assert result.subject.startswith("relabel: 500 facts (")
    diff = git(repo, "show", "--format=", "--unified=0", "HEAD").splitlines()
    changed = [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    # only the type line (and a claim type the new type forbids: none here) changes
    assert all(line[1:].startswith(("type: ", "claim_type: ", "origin: ")) for line in changed)
    for p in paths:
        fact = parse_fact(p, (repo / p).read_bytes()).fact
        assert fact is not None and fact.type == "insight"
    Curation(ix).undo()
    assert {p: (repo / p).read_bytes() for p in paths} == before
    assert git(repo, "status", "--porcelain") == ""
