"""Transitions on small real git corpora written step by step, on the published corpus and on
the demo corpus (checked against git's own view of the same history)."""

from __future__ import annotations

import subprocess
from datetime import date
from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.core import open_corpus
from factdesk.demo import build_demo_corpus
from factdesk.reflect.model import Transition
from factdesk.reflect.queue import open_hypotheses
from factdesk.reflect.stats import OpenClaim, track_records
from factdesk.reflect.transitions import RangeError, extend, sniff_type, transitions, walk
from tests.conftest import Corpus, git


def fact_text(title: str, *, type: str = "hypothesis", confidence: float = 0.8,
              refs: str = "", extra: str = "", body: str = "Body.") -> str:
    return (f"---\ntype: {type}\ndomain: [db]\nconfidence: {confidence}\nsources: 1\n"
            f"entities: [Postgres]\nrefs: [{refs}]\n{extra}---\n# {title}\n\n{body}\n")


H1 = "kb/gotchas/db/11111111.md"
H2 = "kb/gotchas/db/22222222.md"
H3 = "kb/gotchas/db/33333333.md"
H4 = "kb/gotchas/db/44444444.md"
H5 = "kb/decisions/api/55555555.md"
H6 = "kb/decisions/api/66666666.md"
M = "kb/meta/reasoning/m0m0m0m0.md"
OBS = "kb/gotchas/db/0b0b0b0b.md"


def by_kind(items: list[Transition], kind: str) -> list[Transition]:
    return [t for t in items if t.kind == kind]


@pytest.fixture
def story(corpus: Corpus) -> tuple[Corpus, dict[str, str]]:
    """A hypothesis lifecycle, one commit per step; returns the commit of each step."""
    shas: dict[str, str] = {}
    corpus.write(H1, fact_text("Pool resize will end the 503 bursts"))
    corpus.write(H2, fact_text("Lock timeouts will stop at 02:30", extra=(
        "claim_type: hypothesis\nclaimant_agent_id: librarian\nclaimant_type: persona\n"
        "settle_by: 2026-12-20\nsettlement: no lock_timeout for 20 days\n")))
    corpus.write(H3, fact_text("Replica reads will halve CPU"))
    corpus.write(H4, fact_text("Cache TTL of 120 s will hold the hit ratio"))
    corpus.write(H5, fact_text("Token buckets will halve tickets"))
    corpus.write(M, fact_text("Hypotheses naming a metric settle", type="methodology"))
    shas["learn"] = corpus.commit("learn: predictions", author="claude-code")
    corpus.write(H1, fact_text("Pool resize will end the 503 bursts", confidence=0.6))
    shas["confidence"] = corpus.commit("update: pool resize", author="codex", op="update")
    corpus.write(H1, fact_text("Pool resize ended the 503 bursts", type="observation",
                               confidence=0.85, refs=M))
    shas["promote"] = corpus.commit("update: pool resize", author="codex", op="update")
    # knomit's collision: the observation is written citing the hypothesis, which goes
    corpus.write(OBS, fact_text("No lock timeouts since 02:30", type="observation",
                              refs=f"{H2}, https://example.org/logs"))
    (corpus.root / H2).unlink()
    shas["collision"] = corpus.commit("learn: no lock timeouts", author="icog")
    (corpus.root / H3).unlink()
    shas["refute"] = corpus.commit("retract: Replica reads will halve CPU", author="codex",
                                   op="retract")
    (corpus.root / H4).unlink()
    shas["merge"] = corpus.commit(f"dedup: remove duplicate {H4} (merged into x) [review]",
                                  author="codex", op="retract")
    # a move with an edit (same knomit id, new folder) and a relabel by a person
    (corpus.root / "kb/gotchas/db/a1a1a1a1.md").unlink()
    corpus.fact("kb/decisions/db/a1a1a1a1.md", title="Connection pool exhausts at 200 clients",
                body="Moved, and edited: 3 numbers.")
    corpus.fact("kb/decisions/api/c3c3c3c3.md", title="Rate limit is 100 requests per minute",
                type="observation")
    git(corpus.root, "add", "-A")
    git(corpus.root, "commit", "-qm", "relabel: rate limit", author="ana",
        email="ana+relabel@example.org")
    shas["move"] = git(corpus.root, "rev-parse", "HEAD").strip()
    # an existing observation updated to cite an open hypothesis confirms it
    corpus.fact("kb/gotchas/db/b2b2b2b2.md", title="Migrations lock the ledger table for 40 s",
                refs=f"kb://0123456789ab/{H5}")
    shas["confirm"] = corpus.commit("update: migrations", author="codex", op="update")
    # reflection reinforces the methodology on the confirming fact, later
    corpus.write(OBS, fact_text("No lock timeouts since 02:30", type="observation",
                              refs=f"{H2}, https://example.org/logs, {M}"))
    shas["reinforce"] = corpus.commit("review: reflect", author="claude-code", op="review")
    # a side branch that retracts a hypothesis, merged with --no-ff
    corpus.write(H6, fact_text("Webhooks will drain in 1 h"))
    shas["h6"] = corpus.commit("learn: webhooks", author="claude-code")
    git(corpus.root, "checkout", "-qb", "side")
    (corpus.root / H6).unlink()
    corpus.commit("retract: webhooks", author="codex", op="retract")
    git(corpus.root, "checkout", "-q", "main")
    git(corpus.root, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    shas["merge-side"] = git(corpus.root, "rev-parse", "HEAD").strip()
    return corpus, shas


def test_every_kind_of_transition(story: tuple[Corpus, dict[str, str]]) -> None:
    corpus, shas = story
    items = transitions(corpus.root)
    assert {(t.kind, t.path, t.sha) for t in items} == {
        ("confidence-updated", H1, shas["confidence"]),
        ("promoted", H1, shas["promote"]),
        ("confirmed-by", H2, shas["collision"]),
        ("retracted", H2, shas["collision"]),
        ("retracted", H3, shas["refute"]),
        ("retracted", H4, shas["merge"]),
        ("move", "kb/gotchas/db/a1a1a1a1.md", shas["move"]),
        ("relabel", "kb/decisions/api/c3c3c3c3.md", shas["move"]),
        ("confirmed-by", H5, shas["confirm"]),
        ("retracted", H6, shas["merge-side"]),
    }
    conf = by_kind(items, "confidence-updated")[0]
    assert (conf.old_value, conf.new_value, conf.author, conf.claimant) == ("0.8", "0.6", "codex",
                                                                            "claude-code")
    promoted = by_kind(items, "promoted")[0]
    assert (promoted.from_type, promoted.to_type) == ("hypothesis", "observation")
    assert promoted.methodologies == (M,)  # the settled fact cites the methodology
    retracted = {t.path: t for t in by_kind(items, "retracted")}
    assert retracted[H2].reason == "confirmed" and retracted[H2].confirming == OBS
    assert retracted[H2].claimant == "librarian" and retracted[H2].claimant_type == "persona"
    assert retracted[H3].reason == "refuted" and retracted[H3].confirming is None
    assert retracted[H4].reason == "subsumed"
    assert retracted[H6].reason == "refuted"
    confirmed = {t.path: t for t in by_kind(items, "confirmed-by")}
    assert confirmed[H2].confirming == OBS and confirmed[H2].author == "icog"
    assert confirmed[H2].methodologies == (M,)  # reinforced later, on the confirming fact
    assert confirmed[H2].claimant == "librarian" and confirmed[H2].title.startswith("Lock")
    assert confirmed[H5].confirming == "kb/gotchas/db/b2b2b2b2.md"
    move = by_kind(items, "move")[0]
    assert move.new_path == "kb/decisions/db/a1a1a1a1.md" and move.author == "ana"
    relabel = by_kind(items, "relabel")[0]
    assert (relabel.from_type, relabel.to_type) == ("reference", "observation")
    seqs = [t.seq for t in items]
    assert seqs == sorted(seqs) and seqs[0] == 3  # init 0, first facts 1, predictions 2


def test_since_and_extend(story: tuple[Corpus, dict[str, str]]) -> None:
    corpus, shas = story
    whole = walk(corpus.root)
    since = walk(corpus.root, f"{shas['collision']}..HEAD")
    base_seq = next(t.seq for t in whole.transitions if t.sha == shas["collision"])
    assert since.seq == whole.seq
    later = [t for t in whole.transitions if t.seq > base_seq]
    assert later
    # the methodology link of a transition before the range is not in the range's log
    assert [t.key() for t in since.transitions] == [t.key() for t in later]
    assert [t.as_dict() for t in since.transitions] == [t.as_dict() for t in later]
    early = walk(corpus.root, shas["confidence"])
    assert [t.kind for t in early.transitions] == ["confidence-updated"]
    full = extend(early, corpus.root)
    assert [t.as_dict() for t in full.transitions] == [t.as_dict() for t in whole.transitions]
    assert [t.kind for t in early.transitions] == ["confidence-updated"]  # not changed
    # history rewritten under a saved log: the range is walked again
    git(corpus.root, "reset", "-q", "--hard", shas["refute"])
    redone = extend(whole, corpus.root)
    assert redone.head == shas["refute"]
    assert {t.sha for t in redone.transitions} <= set(shas.values())
    assert not [t for t in redone.transitions if t.seq > redone.seq]
    with pytest.raises(RangeError, match="nosuchrev"):
        walk(corpus.root, "nosuchrev..HEAD")
    with pytest.raises(RangeError):
        walk(corpus.root, "--output=/tmp/x")


def test_broken_files_and_non_facts_do_not_stop_the_walk(corpus: Corpus) -> None:
    corpus.write(H1, fact_text("Will hold"))
    corpus.write("kb/.drafts/99999999.md", fact_text("private draft"))
    corpus.commit("learn: h1")
    corpus.write(H1, "---\ntype: [unclosed\n---\n# broken\n")
    (corpus.root / "kb/.drafts/99999999.md").unlink()
    corpus.commit("update: h1 broken")
    corpus.write(H1, fact_text("Held", type="observation"))
    corpus.commit("update: h1 repaired")
    items = transitions(corpus.root)
    # a hypothesis that turned unreadable and came back as an observation: no invented
    # transition in between, and the draft outside the corpus is not a fact
    assert [t.kind for t in items] == []
    assert sniff_type(b"---\ntype: 'hypothesis'\n---\n# x\n") == "hypothesis"
    assert sniff_type(b"no frontmatter") is None


def test_queue_groups_lines_and_candidates(corpus: Corpus) -> None:
    corpus.write(H1, fact_text("Pool resize ends the bursts", extra=(
        "settle_by: 2026-10-20\nsettlement: zero 503s on 10 weekdays\n")))
    corpus.write(H2, fact_text("Lock timeouts stop", body=(
        "Statement.\n\nSettles by 2026-12-20: no lock_timeout in the scheduler logs.")))
    corpus.write(H3, fact_text("Replica reads halve CPU p95 below 40%"))
    corpus.write(H4, fact_text("Environment prefixes end confusion", body="Soon."))
    corpus.write(H5, fact_text("Tickets halve", extra="settle_by: 2026-11-01\n"))
    corpus.commit("learn: predictions")
    corpus.write(OBS, fact_text("No lock timeouts since 02:30", type="observation", refs=H2))
    corpus.write("kb/gotchas/db/0c0c0c0c.md", fact_text("Scheduler quiet", type="observation"))
    corpus.write("kb/gotchas/db/0d0d0d0d.md", fact_text("A pattern", type="pattern"))
    corpus.commit("learn: observations", author="codex")
    indexer = open_corpus(corpus.root)
    indexer.update()
    items = open_hypotheses(indexer, date(2026, 11, 30))
    assert [(i.path, i.group) for i in items] == [
        (H1, "overdue"), (H5, "overdue"), (H2, "due"), (H3, "undated"), (H4, "no-criterion")]
    assert items[0].days_left == -41 and items[0].criterion_in == "frontmatter"
    assert items[0].settlement == "zero 503s on 10 weekdays"
    h2 = items[2]
    assert (h2.settle_by, h2.criterion_in) == ("2026-12-20", "body")
    assert h2.settlement == "no lock_timeout in the scheduler logs."
    assert (corpus.root / H2).read_text().split("\n")[(h2.criterion_line or 0) - 1].startswith(
        "Settles by 2026-12-20")
    assert items[3].criterion_in == "text" and items[4].criterion_in == "none"
    assert items[0].claimant == "claude-code" and items[0].claimant_type is None  # no registry

    from factdesk.reflect.queue import candidates

    conn = indexer.connect(readonly=True)
    assert [(c.path, c.cites, c.score) for c in candidates(conn, H2)] == [(OBS, True, None)]

    def similar(path: str) -> list[tuple[str, float]]:
        assert path == H2
        return [(H3, 0.99), ("kb/gotchas/db/0d0d0d0d.md", 0.95), ("kb/gotchas/db/0c0c0c0c.md", 0.9),
                (OBS, 0.88), ("kb/nowhere/00000000.md", 0.8), (H2, 1.0)]

    got = candidates(conn, H2, similar)
    assert [(c.path, c.cites, c.score) for c in got] == [
        (OBS, True, 0.88), ("kb/gotchas/db/0c0c0c0c.md", False, 0.9)]
    assert got[1].after is True


def test_stats_on_the_story(story: tuple[Corpus, dict[str, str]]) -> None:
    corpus, _ = story
    log = walk(corpus.root)
    ref = track_records(log.transitions, [OpenClaim("kb/x/77777777.md", "codex", "tool", True)],
                        [(M, "Hypotheses naming a metric settle", 2)])
    assert ref.outcomes == {H1: "promoted", H2: "confirmed", H3: "refuted", H4: "retracted",
                            H5: "confirmed", H6: "refuted"}
    assert ref.by_agent["claude-code"].promoted == 1
    assert ref.by_agent["claude-code"].refuted == 2
    assert ref.by_agent["librarian"].confirmed == 1
    assert ref.by_agent["codex"].open == 1 and ref.by_agent["codex"].overdue == 1
    assert ref.total.hit_rate == pytest.approx(3 / 5)
    # H1's two transitions (its settled version cites M) and H2's confirmation (OBS cites M)
    assert [(m.path, m.transitions, m.citing) for m in ref.methodologies] == [(M, 3, 2)]
    assert {p.month for p in ref.monthly} == {"2026-11"}


def test_published_corpus_agrees_with_git(real_corpus: Path) -> None:
    items = walk(real_corpus, "main").transitions
    out = subprocess.run(["git", "-C", str(real_corpus), "log", "--first-parent", "--no-renames",
                          "--diff-filter=D", "--format=%x01%H", "--name-only", "main"],
                         capture_output=True, text=True, check=True).stdout
    deleted = set()
    for chunk in out.split("\x01")[1:]:
        sha, *paths = chunk.split()
        deleted |= {(sha, p) for p in paths if p.startswith("kb/") and p.endswith(".md")
                    and "/." not in p}
    assert deleted, "the published corpus has retractions in its history"
    assert {(t.sha, t.path) for t in items if t.kind == "retracted"} == deleted
    assert all(t.reason == "retracted" for t in items if t.kind == "retracted")
    assert not [t for t in items if t.kind not in ("retracted", "relabel", "move")]
    indexer = open_corpus(real_corpus)
    indexer.update()
    hyps = indexer.connect(readonly=True).execute(
        "SELECT COUNT(*) FROM facts WHERE status='live' AND type='hypothesis'").fetchone()[0]
    assert len(open_hypotheses(indexer, date(2026, 11, 30))) == hyps


def test_demo_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = build_demo_corpus(tmp_path / "ledger-demo")
    items = transitions(repo, "main")
    kinds = {t.kind for t in items}
    assert {"promoted", "confirmed-by", "retracted"} <= kinds
    for t in by_kind(items, "promoted"):
        assert (repo / t.path).is_file() and "type: observation" in (repo / t.path).read_text()
    for t in by_kind(items, "confirmed-by"):
        assert t.confirming and t.path in (repo / t.confirming).read_text()
    hyps = {str(p.relative_to(repo)) for p in (repo / "kb").rglob("*.md")
            if "\ntype: hypothesis\n" in p.read_text()}
    assert main(["queue", "--kb", str(repo), "--today", "2026-11-30"]) == 0
    out = capsys.readouterr().out
    assert f"{len(hyps)} open hypotheses" in out and all(h in out for h in hyps)
    assert main(["transitions", "--kb", str(repo), "--stats", "--today", "2026-11-30"]) == 0
    assert "by claimant agent" in capsys.readouterr().out
    assert main(["transitions", "--kb", str(repo), "--since", "nosuchrev"]) != 0
    assert "nosuchrev" in capsys.readouterr().err
