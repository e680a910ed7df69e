"""The curation commands: the same validation and commits as the GUI, text and JSON out."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.corpus.codec import parse_fact
from tests.conftest import Corpus, git

A = "kb/gotchas/db/a1a1a1a1.md"
B = "kb/gotchas/db/b2b2b2b2.md"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_relabel_json_then_undo_redo(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    kb = str(corpus.root)
    original = (corpus.root / A).read_bytes()
    code, out, _ = run(capsys, "relabel", "a1a1a1a1", "--type", "pattern", "--reason", "a pattern",
                       "--kb", kb, "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["ok"] and data["commit"] == git(corpus.root, "rev-parse", "HEAD").strip()
    assert data["fields"][0] == {"path": A, "field": "type", "old": "observation", "new": "pattern"}
    code, out, _ = run(capsys, "undo", "--list", "--kb", kb)
    assert "relabel: Connection pool" in out
    assert run(capsys, "undo", "--kb", kb)[0] == 0
    assert (corpus.root / A).read_bytes() == original
    assert run(capsys, "redo", "--kb", kb)[0] == 0
    assert b"type: pattern" in (corpus.root / A).read_bytes()


def test_relabel_repairs_a_fact_of_unknown_type(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    path = "kb/gotchas/db/e5e5e5e5.md"
    corpus.fact(path, title="Pools run dry", type="factoid")
    corpus.commit("learn: a typo")
    kb = str(corpus.root)
    code, out, _ = run(capsys, "check", "--kb", kb)
    assert code == 1 and "unknown_type" in out
    code, out, _ = run(capsys, "relabel", path, "--type", "observation", "--reason", "typo",
                       "--kb", kb, "--format", "json")
    assert code == 0, out
    assert json.loads(out)["fields"] == [{"path": path, "field": "type", "old": "factoid",
                                          "new": "observation"}]
    fact = parse_fact(path, (corpus.root / path).read_bytes()).fact
    assert fact is not None and fact.type == "observation"
    assert "unknown_type" not in run(capsys, "check", "--kb", kb)[1]


def test_illegal_relabel_is_refused_with_the_rule(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    head = git(corpus.root, "rev-parse", "HEAD")
    code, _, err = run(capsys, "relabel", A, "--claimant-type", "tool", "--subject-kind", "user",
                       "--claim-type", "assertion", "--reason", "x", "--kb", str(corpus.root))
    assert code == 1 and "refused [A1]" in err and "only the user may assert" in err
    code, out, _ = run(capsys, "relabel", A, "--type", "policy", "--kind", "epistemic", "--reason", "x",
                       "--kb", str(corpus.root), "--format", "json")
    assert code == 1 and json.loads(out)["rule"] == "kind×type"
    code, _, err = run(capsys, "relabel", A, "--type", "pattern", "--kb", str(corpus.root))
    assert code != 0  # --reason is required
    assert git(corpus.root, "rev-parse", "HEAD") == head


def test_bulk_by_query_preview_then_commit(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    kb = str(corpus.root)
    head = git(corpus.root, "rev-parse", "HEAD")
    code, out, _ = run(capsys, "relabel", "--query", "type:observation", "--type", "pattern",
                       "--reason", "patterns", "--preview", "--kb", kb)
    assert code == 0 and "preview (nothing committed): relabel: 2 facts" in out
    assert git(corpus.root, "rev-parse", "HEAD") == head
    assert run(capsys, "relabel", "--query", "type:observation", "--type", "pattern",
               "--reason", "patterns", "--kb", kb)[0] == 0
    assert sorted(git(corpus.root, "show", "--name-only", "--format=", "HEAD").split()) == [A, B]


def test_edit_move_retract_restore_settle(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    kb = str(corpus.root)
    assert run(capsys, "edit", A, "--confidence", "0.6", "--reason", "one more source", "--kb", kb)[0] == 0
    assert "confidence: 0.6\n" in (corpus.root / A).read_text()
    assert run(capsys, "move", A, "--to", "kb/decisions/db/a1a1a1a1.md", "--reason", "decision",
               "--kb", kb)[0] == 0
    assert (corpus.root / "kb/decisions/db/a1a1a1a1.md").exists()
    assert run(capsys, "retract", B, "--reason", "superseded", "--kb", kb)[0] == 0
    assert not (corpus.root / B).exists()
    assert run(capsys, "restore", B, "--reason", "by mistake", "--kb", kb)[0] == 0
    assert (corpus.root / B).exists()
    assert run(capsys, "relabel", B, "--type", "hypothesis", "--settle-by", "2027-01-01", "--reason", "guess",
               "--kb", kb)[0] == 0
    code, _, _ = run(capsys, "settle", B, "--promote", "--refute", "--reason", "x", "--kb", kb)
    assert code != 0
    assert run(capsys, "settle", B, "--extend", "2027-06-01", "--reason", "later", "--kb", kb)[0] == 0
    assert run(capsys, "settle", B, "--confirm", "kb/decisions/db/a1a1a1a1.md", "--reason", "seen",
               "--kb", kb)[0] == 0
    assert not (corpus.root / B).exists()
    new_a = "kb/decisions/db/a1a1a1a1.md"
    moved = parse_fact(new_a, (corpus.root / new_a).read_bytes())
    assert moved.fact is not None and B in moved.fact.refs


def test_real_corpus_principles_fixed_in_one_bulk_move(real_corpus: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The 14 distilled syntheses under kb/principles/ break that topic's rules (principles
    are designer-authored policies). An honest curator files them where their sources live
    (origin untouched); the check is then clean of them and undo restores the bytes."""
    repo = tmp_path / "kb"
    subprocess.run(["git", "clone", "-q", str(real_corpus), str(repo)], check=True)
    kb = str(repo)
    assert run(capsys, "check", "--kb", kb, "--format", "json")[0] == 1
    before_check = json.loads(run(capsys, "check", "--kb", kb, "--format", "json")[1])
    principles = [e for e in before_check["errors"]
                  if e["path"].startswith("kb/principles/") and e["code"] == "ontology-rule"]
    assert len(principles) == 28 and len({e["path"] for e in principles}) == 14
    originals = {p: (repo / p).read_bytes() for p in {e["path"] for e in principles}}
    head = git(repo, "rev-parse", "HEAD").strip()
    code, out, _ = run(capsys, "move", "--query", "topic:principles", "--topic", "auto", "--reason",
                       "distilled syntheses, not designer principles: filed where their sources live",
                       "--kb", kb, "--format", "json")
    assert code == 0, out
    assert git(repo, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    renames = [line for line in git(repo, "show", "-M", "--name-status", "--format=", "HEAD").splitlines()
               if line.startswith("R")]
    assert len(renames) == 14
    after = json.loads(run(capsys, "check", "--kb", kb, "--format", "json")[1])
    assert not [e for e in after["errors"] if e["code"] == "ontology-rule"]
    assert not any(e["code"].startswith(("yaml", "unknown", "missing")) for e in after["errors"])
    for old in originals:  # origin and type untouched, knomit's parse rules read each file
        new = next(line.split("\t")[2] for line in renames if line.split("\t")[1] == old)
        fact = parse_fact(new, (repo / new).read_bytes()).fact
        assert fact is not None and fact.type == "synthesis"
        changed = [(a, b) for a, b in zip(originals[old].splitlines(), (repo / new).read_bytes().splitlines(),
                                          strict=True) if a != b]
        # byte-identical but for refs to the other moved facts, rewritten in the same commit
        assert all(a.startswith(b"refs: ") and b.startswith(b"refs: ") for a, b in changed)
    assert run(capsys, "undo", "--kb", kb)[0] == 0
    for path, data in originals.items():
        assert (repo / path).read_bytes() == data
    assert git(repo, "diff", head, "HEAD", "--stat") == ""


HYP = "kb/gotchas/db/h1h1h1h1.md"


def _hypothesis(corpus: Corpus) -> None:
    corpus.fact(HYP, title="The pool will run dry at 300 clients", type="hypothesis",
                body="Settles by 2026-12-31: pool errors at 300 clients.")
    corpus.commit("learn: a hypothesis")


def _findings(capsys: pytest.CaptureFixture[str], kb: str, path: str) -> list[dict[str, object]]:
    main(["check", "--kb", kb, "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    return [p for p in out["errors"] + out["warnings"] + out.get("infos", []) if p["path"] == path]


def test_confirm_leaves_no_warning_on_the_confirming_fact(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 14 bug 5: the ref from the observation to the hypothesis it settled is
    knomit's own settlement link (FORMAT §6.6), kept and not warned about."""
    _hypothesis(corpus)
    kb = str(corpus.root)
    assert _findings(capsys, kb, A) == []
    assert run(capsys, "settle", HYP, "--confirm", A, "--reason", "the load test saw it",
               "--kb", kb)[0] == 0
    fact = parse_fact(A, (corpus.root / A).read_bytes()).fact
    assert fact is not None and HYP in fact.refs  # the link is kept
    assert _findings(capsys, kb, A) == []


def test_confirm_with_a_new_observation_writes_a_full_fact(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 14 bug 5: a body is required, and the new fact has a full envelope, so that
    `check` and the mislabel queue find nothing in it."""
    _hypothesis(corpus)
    kb = str(corpus.root)
    code, _, err = run(capsys, "settle", HYP, "--new-title", "The pool ran dry at 300 clients",
                       "--reason", "observed", "--kb", kb)
    assert code == 1 and "body" in err
    code, out, _ = run(capsys, "settle", HYP, "--new-title", "The pool ran dry at 300 clients",
                       "--new-body", "Seen in the 2026-11 load test: 300 clients, pool errors.",
                       "--reason", "observed", "--kb", kb, "--format", "json")
    assert code == 0, out
    new = json.loads(out)["paths"]
    new = [p for p in new if p != HYP]
    assert len(new) == 1
    fact = parse_fact(new[0], (corpus.root / new[0]).read_bytes()).fact
    assert fact is not None and fact.type == "observation" and fact.refs == (HYP,)
    env = fact.envelope
    assert (env.claim_type, env.claimant_type, env.subject_kind, fact.origin) == \
        ("observation", "user", "world", "authored")
    assert env.claimant_agent_id and fact.body.startswith("Seen in the 2026-11 load test")
    assert _findings(capsys, kb, new[0]) == []
    assert run(capsys, "mislabels", "--all", "--kb", kb)[1].count(new[0]) == 0


def test_a_binary_body_file_is_refused_in_words(corpus: Corpus, capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    kb = str(corpus.root)
    head = git(corpus.root, "rev-parse", "HEAD")
    for data in (b"\x89PNG\r\n\x1a\n\x00\x00", b"caf\xe9 latin-1"):
        (tmp_path / "body.bin").write_bytes(data)
        code, _, err = run(capsys, "edit", A, "--body-file", str(tmp_path / "body.bin"),
                           "--reason", "r", "--kb", kb)
        assert code == 1 and ("binary" in err or "not UTF-8" in err) and "Traceback" not in err
    assert git(corpus.root, "rev-parse", "HEAD") == head
