"""Transitions, the queue and track records against a generated corpus's ground truth (the
manifest of ../shared/bench/make_corpus.py): exact sets, with mismatches spelled out."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from factdesk.cli import main
from factdesk.core import open_corpus
from factdesk.reflect.model import CONFIDENCE, Transition
from factdesk.reflect.queue import GROUPS, open_hypotheses
from factdesk.reflect.stats import OpenClaim, track_records
from factdesk.reflect.transitions import TransitionLog, extend, walk
from tests.conftest import GeneratedCorpus

Key = tuple[str, ...]


def expected(manifest: dict[str, Any]) -> set[Key]:
    """Every transition the manifest records, in our vocabulary, with its commit."""
    out: set[Key] = set()
    for t in manifest["transitions"]:
        seq, sha = str(t["commit"]), t["sha"]
        if t["kind"] == "settle":
            out.add(("promoted", t["path"], seq, sha, t["from_type"], t["to_type"]))
        elif t["kind"] == "retract":
            out.add(("retracted", t["path"], seq, sha, t["reason"], t["confirmed_by"] or "",
                     t["from_type"]))
        elif t["kind"] == "relabel":
            out.add(("relabel", t["path"], seq, sha, t["from_type"], t["to_type"]))
        elif t["kind"] == "move":
            out.add(("move", t["path"], seq, sha, t["to_path"]))
        else:
            raise AssertionError(f"manifest kind not covered by this test: {t['kind']}")
    for pair in manifest["near_duplicates"]:
        out.add(("confirmed-by", pair["hypothesis"], str(pair["observation_commit"]),
                 pair["observation_sha"], pair["observation"]))
    return out


def actual(items: list[Transition]) -> set[Key]:
    out: set[Key] = set()
    for t in items:
        seq = str(t.seq)
        if t.kind == "promoted":
            out.add(("promoted", t.path, seq, t.sha, t.from_type or "", t.to_type or ""))
        elif t.kind == "retracted":
            out.add(("retracted", t.path, seq, t.sha, t.reason or "", t.confirming or "",
                     t.from_type or ""))
        elif t.kind == "relabel":
            out.add(("relabel", t.path, seq, t.sha, t.from_type or "", t.to_type or ""))
        elif t.kind == "move":
            out.add(("move", t.path, seq, t.sha, t.new_path or ""))
        elif t.kind == "confirmed-by":
            out.add(("confirmed-by", t.path, seq, t.sha, t.confirming or ""))
        else:
            out.add((t.kind, t.path, seq, t.sha, t.old_value or "", t.new_value or ""))
    return out


def assert_same(got: set[Key], want: set[Key]) -> None:
    missing, extra = sorted(want - got), sorted(got - want)
    if missing or extra:
        lines = [f"{len(missing)} transitions missing, {len(extra)} unexpected"]
        lines += [f"  missing    {k}" for k in missing[:25]]
        lines += [f"  unexpected {k}" for k in extra[:25]]
        raise AssertionError("\n".join(lines))


@pytest.fixture(scope="module")
def full(generated_corpus: GeneratedCorpus) -> TransitionLog:
    return walk(generated_corpus[0], "main")


def test_transitions_recover_the_manifest_exactly(generated_corpus: GeneratedCorpus,
                                                  full: TransitionLog) -> None:
    _, manifest = generated_corpus
    want = expected(manifest)
    assert {k[0] for k in want} == {"promoted", "retracted", "relabel", "move", "confirmed-by"}
    assert_same(actual(full.transitions), want)
    # the generator never changes a hypothesis's confidence, so there is nothing else
    assert not [t for t in full.transitions if t.kind == CONFIDENCE]
    assert full.head == manifest["head"] and full.seq == manifest["commits"] - 1


def test_hypothesis_transitions_carry_claimant_and_author(generated_corpus: GeneratedCorpus,
                                                          full: TransitionLog) -> None:
    repo, manifest = generated_corpus
    agents = manifest["agents"]["agents"]
    for t in full.transitions:
        assert t.author in agents or t.author == "ana", t
        assert t.time > 0 and len(t.sha) == 40
        if t.hypothesis:
            assert t.claimant in agents, t
            assert t.claimant_type == agents[t.claimant]["type"], t
            assert t.title, t
    # the claimant of a hypothesis is the agent that authored the commit creating it
    sample = [t for t in full.transitions if t.kind == "promoted"][:5]
    for t in sample:
        email = subprocess.run(["git", "-C", str(repo), "log", "--diff-filter=A", "--format=%ae",
                                "main", "--", t.path], capture_output=True, text=True,
                               check=True).stdout.split()[-1]
        assert email.split("+")[0] == t.claimant


def _chain(repo: Path) -> list[str]:
    return subprocess.run(["git", "-C", str(repo), "rev-list", "--first-parent", "--reverse",
                           "main"], capture_output=True, text=True, check=True).stdout.split()


def test_incremental_and_since_agree_with_the_whole_history(generated_corpus: GeneratedCorpus,
                                                            full: TransitionLog) -> None:
    repo, _ = generated_corpus
    chain = _chain(repo)
    mid = chain[len(chain) // 2]
    first = walk(repo, mid)
    assert first.head == mid and first.seq == len(chain) // 2
    assert all(t.seq <= first.seq for t in first.transitions)
    resumed = extend(first, repo, "main")
    assert actual(resumed.transitions) == actual(full.transitions)
    assert [t.as_dict() for t in resumed.transitions] == [t.as_dict() for t in full.transitions]
    # a saved log (JSON) extends the same way
    saved = TransitionLog.from_dict(json.loads(json.dumps(first.as_dict())))
    assert actual(extend(saved, repo, "main").transitions) == actual(full.transitions)
    # --since MID: the state at MID is rebuilt from the tree (git grep), not from history
    since = walk(repo, f"{mid}..main")
    later = {k for k in actual(full.transitions) if int(k[2]) > first.seq}
    assert_same(actual(since.transitions), later)
    assert extend(full, repo, "main") is full  # nothing new


def test_queue_lists_exactly_the_open_hypotheses_overdue_first(
        generated_corpus: GeneratedCorpus) -> None:
    repo, manifest = generated_corpus
    indexer = open_corpus(repo)
    indexer.update()
    today = date.fromisoformat(manifest["now"])
    items = open_hypotheses(indexer, today)
    paths = [i.path for i in items]
    assert len(paths) == len(set(paths))
    assert set(paths) == set(manifest["open_hypotheses"]), (
        sorted(set(manifest["open_hypotheses"]) - set(paths)),
        sorted(set(paths) - set(manifest["open_hypotheses"])))
    overdue = {o["path"]: o for o in manifest["overdue_hypotheses"]}
    assert overdue, "the generated corpus should have overdue hypotheses"
    n = len(overdue)
    assert {i.path for i in items[:n]} == set(overdue)
    assert all(i.overdue for i in items[:n]) and not any(i.overdue for i in items[n:])
    for item in items[:n]:
        assert item.settle_by == overdue[item.path]["settle_by"]
        assert item.criterion_in == overdue[item.path]["criterion_in"]
        assert item.days_left is not None and item.days_left < 0
    # groups in order; inside a dated group, by due date
    ranks = [GROUPS.index(i.group) for i in items]
    assert ranks == sorted(ranks)
    for group in ("overdue", "due"):
        dates = [i.settle_by or "" for i in items if i.group == group]
        assert dates == sorted(dates)
    # the planted hypotheses without any criterion form the last group (rule H1)
    planted = set(manifest["planted"]["hypothesis_without_criterion"])
    assert planted and {i.path for i in items if i.group == "no-criterion"} == planted
    # a body criterion names its line in the file
    for item in items:
        if item.criterion_in == "body":
            line = (repo / item.path).read_text().split("\n")[(item.criterion_line or 0) - 1]
            assert line.startswith(f"Settles by {item.settle_by}"), (item.path, line)


def test_track_records_add_up_to_the_manifest(generated_corpus: GeneratedCorpus,
                                              full: TransitionLog) -> None:
    repo, manifest = generated_corpus
    indexer = open_corpus(repo)
    indexer.update()
    items = open_hypotheses(indexer, date.fromisoformat(manifest["now"]))
    ref = track_records(full.transitions,
                        [OpenClaim(i.path, i.claimant, i.claimant_type, i.overdue) for i in items])
    life = manifest["lifecycle"]
    confirmed = {p["hypothesis"] for p in manifest["near_duplicates"]}
    assert ref.total.promoted == life["settle_inplace"]
    assert ref.total.refuted == life["refuted"]
    assert ref.total.confirmed == len(confirmed) == life["confirmed_kept"] + life["confirmed_retracted"]
    assert ref.total.retracted == 0
    kept = {p["hypothesis"] for p in manifest["near_duplicates"] if p["hypothesis_at_head"]}
    assert ref.total.open == len(set(manifest["open_hypotheses"]) - kept)
    assert ref.total.overdue == len({o["path"] for o in manifest["overdue_hypotheses"]} - kept)
    for table in (ref.by_agent, ref.by_type):
        for field in ("confirmed", "refuted", "promoted", "open", "overdue"):
            assert sum(getattr(r, field) for r in table.values()) == getattr(ref.total, field)
    assert set(ref.by_type) <= {"tool", "persona", "peer", "user", "view"}
    monthly: Counter[str] = Counter()
    for point in ref.monthly:
        if point.group == "all":
            monthly.update(point.counts)
    assert monthly["promoted"] == ref.total.promoted and monthly["refuted"] == ref.total.refuted


def test_cli_json_on_a_generated_corpus(generated_corpus: GeneratedCorpus,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    repo, manifest = generated_corpus
    assert main(["transitions", "--kb", str(repo), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["head"] == manifest["head"]
    mine = Counter(t["kind"] for t in data["transitions"])
    assert mine["move"] == manifest["transition_counts"]["move"]
    assert mine["confirmed-by"] == len(manifest["near_duplicates"])
    assert main(["queue", "--kb", str(repo), "--today", manifest["now"], "--format", "json"]) == 0
    q = json.loads(capsys.readouterr().out)
    assert {i["path"] for i in q["items"]} == set(manifest["open_hypotheses"])
    assert sum(i["overdue"] for i in q["items"]) == len(manifest["overdue_hypotheses"])
    assert main(["transitions", "--kb", str(repo), "--stats", "--today", manifest["now"],
                 "--format", "json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["total"]["promoted"] == manifest["lifecycle"]["settle_inplace"]
    assert main(["queue", "--kb", str(repo), "--today", "30/11/2026"]) != 0
