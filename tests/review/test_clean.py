""""Accept all clean" is one definition (issue 24 #4, `review.clean`): the proposals the
accept takes are those the change set names (their shas), the CLI's preview, the GUI's
preview and the queue's badges all ask `clean_set`, and every open proposal left is named
with why — on hand-made branches, a generated corpus and the published one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.core import open_corpus
from factdesk.review.checks import check_all
from factdesk.review.clean import AUTHOR, OUTSIDE, clean_set
from factdesk.review.decide import Review
from factdesk.review.proposals import load_queue
from tests.conftest import Corpus, GeneratedCorpus, _generate, git
from tests.review.decide_helpers import (
    BRANCH,
    CURATOR,
    HYPOTHESIS,
    JOB,
    H,
    N,
    agent_commit,
    fact_text,
    review_of,
    trailers,
)

X = "kb/gotchas/db/0a0a0a0a.md"
Y = "kb/gotchas/db/0b0b0b0b.md"
Z = "kb/gotchas/db/0c0c0c0c.md"
S = "kb/decisions/api/0d0d0d0d.md"


def _branch(corpus: Corpus) -> dict[str, str]:
    corpus.write(H, HYPOTHESIS)
    corpus.commit("learn: a hypothesis")
    shas = {
        "new": agent_commit(corpus, "learn: replica lag", {N: fact_text("Replica lag is 3 s")}),
        # added, then deleted again: the branch leaves X as it was, yet both are taken
        "add": agent_commit(corpus, "learn: x", {X: fact_text("Lag spikes at 9:00")}),
        "drop": agent_commit(corpus, "retract: x", {X: None}, op="retract"),
        # R1: a synthesis seeded by a hypothesis, and one building on it
        "syn": agent_commit(corpus, "synthesize-review: distill", {
            S: fact_text("Pools and guesses", type="synthesis", refs=H)}, op="subsume"),
        "on-syn": agent_commit(corpus, "update: syn", {
            S: fact_text("Pools were measured at 300 clients")}, op="update"),
        # a clean fact beside a file outside kb/: never clean, whole
        "file": agent_commit(corpus, "learn: y", {Y: fact_text("Lag is 4 s at night"),
                                                  ".gitattributes": "*.md text\n"}),
        "state": agent_commit(corpus, "job: checkpoint", {JOB: "---\nstep: 2\n---\n# s\n"}),
    }
    wt = corpus.root.parent / f"wt-{BRANCH.replace('/', '-')}"
    (wt / Z).write_text(fact_text("Lag is 5 s on Sundays"))
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "learn: z by hand", author="mallory", email="mallory@example.org")
    shas["other"] = git(wt, "rev-parse", "HEAD").strip()
    return shas


def test_the_change_set_names_what_it_takes_and_why_the_rest_stays(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    shas = _branch(corpus)
    review = review_of(corpus)
    preview = review.accept_all_clean(BRANCH, "clean", preview=True)
    assert list(preview.proposals) == [shas["new"], shas["add"], shas["drop"]]
    why = {v.sha: v for v in preview.left}
    assert set(why) == {shas["syn"], shas["on-syn"], shas["file"], shas["other"]}
    assert why[shas["syn"]].kind == "error" and "R1" in why[shas["syn"]].why
    assert why[shas["on-syn"]].kind == "depends" and shas["syn"][:10] in why[shas["on-syn"]].why
    assert why[shas["file"]].kind == OUTSIDE and ".gitattributes" in why[shas["file"]].why
    assert why[shas["other"]].kind == AUTHOR and "mallory" in why[shas["other"]].why
    # the CLI says the same, in JSON and in words
    kb = ["--kb", str(corpus.root)]
    assert main(["accept", "--all-clean", "--branch", BRANCH, "--reason", "r", "--preview",
                 "--format", "json", *kb]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["proposals"] == list(preview.proposals)
    assert [(v["id"], v["kind"]) for v in out["left"]] == [(v.sha, v.kind) for v in preview.left]
    assert main(["accept", "--all-clean", "--branch", BRANCH, "--reason", "r", "--preview",
                 *kb]) == 0
    text = capsys.readouterr().out
    assert "stays open" in text and shas["other"][:10] in text and "mallory" in text
    # and the commit takes exactly those
    done = review.accept_all_clean(BRANCH, "clean")
    assert list(done.proposals) == list(preview.proposals)
    assert [t.split(": ")[1] for t in trailers(corpus.root, done.commit)
            if t.startswith("Factdesk-Proposal")] == list(preview.proposals)
    assert not (corpus.root / ".gitattributes").exists() and not (corpus.root / Y).exists()


def _agree(repo: Path, branch: str) -> int:
    """The one definition, asked three ways on one state: the queue's checks (the badges'
    source), the accept's preview and the CLI's; returns how many are clean."""
    ix = open_corpus(repo)
    ix.update()
    queue = load_queue(repo, branch=branch)
    checked = {p.sha: p for p in check_all(ix, queue, only_open=True)}
    badges = clean_set(queue, branch, checked)
    review = Review(ix, CURATOR)
    preview = review.accept_all_clean(branch, "clean", preview=True)
    assert list(preview.proposals) == list(badges.taken)
    assert [v.sha for v in preview.left] == [v.sha for v in badges.left]
    opened = [p for p in queue.proposals if p.status in ("open", "partial")]
    assert len(badges.taken) + len(badges.left) + len(badges.carried) == len(opened)
    for v in badges.left:
        assert v.why, v
    return len(badges.taken)


@pytest.fixture(scope="module")
def small_generated(tmp_path_factory: pytest.TempPathFactory) -> GeneratedCorpus:
    return _generate(tmp_path_factory, facts=300, commits=60, seed=5)


def test_one_definition_on_a_generated_corpus(small_generated: GeneratedCorpus, tmp_path: Path) -> None:
    src, _manifest = small_generated
    repo = tmp_path / "kb"
    shutil.copytree(src, repo, symlinks=True)
    git(repo, "config", "user.name", "ana")
    git(repo, "config", "user.email", "ana@example.org")
    branch = next(b.name for b in load_queue(repo).branches)
    assert _agree(repo, branch) > 0


def test_one_definition_on_the_published_corpus(real_corpus: Path, tmp_path: Path) -> None:
    repo = tmp_path / "real"
    shutil.copytree(real_corpus, repo, symlinks=True)
    git(repo, "config", "user.name", "ana")
    git(repo, "config", "user.email", "ana@example.org")
    assert _agree(repo, "agent/mindev.local-8ef0cd32") > 0
