"""Agents as first-class citizens (issue 16): per-agent records and calibration checked
against the generator's manifest and an independent Brier score, the registry actions,
and the rule that only curators change the registry."""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import yaml

from factdesk.cli import main
from factdesk.cli.agents_cmds import records
from factdesk.core import open_corpus
from factdesk.corpus.registry_io import REGISTRY_PATH, load_registry
from factdesk.curation import Curation
from factdesk.curation.gitwrite import Identity, Refused
from factdesk.curation.registry_ops import add_entry, set_field
from factdesk.curation.trust import trusted_decisions
from factdesk.model.authority import Authority, authority
from factdesk.model.registry import agent_id_from_email
from factdesk.reflect.agents import (
    AgentRecord,
    SettingsError,
    Thresholds,
    load_thresholds,
    suggest,
)
from factdesk.reflect.calibration import Prediction, brier, reliability
from tests.conftest import MAKE_CORPUS, Corpus, git

ANA = Identity("ana", "ana@example.org")


# -- the generated corpus against its manifest ---------------------------------------------------


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    if not MAKE_CORPUS.exists():
        pytest.skip(f"the corpus generator is absent ({MAKE_CORPUS})")
    out = tmp_path_factory.mktemp("agents") / "kb"
    subprocess.run([sys.executable, str(MAKE_CORPUS), "--facts", "500", "--commits", "120",
                    "--seed", "5", "--out", str(out), "--quiet", "--hyp-frac", "0.08",
                    "--now", "2026-06-01"], check=True)
    return out, json.loads(out.with_name("kb.manifest.json").read_text())


def _agents(kb: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, dict]:
    capsys.readouterr()
    assert main(["agents", "--kb", str(kb), "--format", "json", *extra]) == 0
    data = json.loads(capsys.readouterr().out)
    return {a["id"]: a for a in data["agents"]}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True
                          ).stdout.decode()


def _first_version(repo: Path, path: str) -> tuple[str, str]:
    """(author e-mail of the commit that created `path`, the file as it created it)."""
    shas = _git(repo, "log", "--diff-filter=A", "--format=%H %ae", "--", path).split("\n")
    sha, email = [s for s in shas if s][-1].split(" ", 1)
    return email, _git(repo, "show", f"{sha}:{path}")


def _claimant(repo: Path, manifest: dict, path: str) -> tuple[str, float]:
    """The hypothesis's claimant from its envelope, else its creating commit's author; and
    the confidence it was written with — read straight from git, not through factdesk."""
    email, text = _first_version(repo, path)
    front = yaml.safe_load(text.split("---", 2)[1])
    who = front.get("claimant_agent_id")
    if not who:
        bare = re.sub(r"\+[^@]*@", "@", email)
        who = next((k for k, v in manifest["agents"]["agents"].items() if v.get("email") == bare),
                   None) or agent_id_from_email(email)
    return who, float(front["confidence"])


def test_per_agent_counts_and_brier_agree_with_the_manifest(
        small: tuple[Path, dict], capsys: pytest.CaptureFixture[str]) -> None:
    kb, m = small
    got = _agents(kb, capsys, "--today", m["now"])
    moved = {t["to_path"]: t["path"] for t in m["transitions"] if t["kind"] == "move"}

    def origin(path: str) -> str:
        while path in moved:
            path = moved[path]
        return path

    expected: dict[str, Counter] = defaultdict(Counter)
    outcomes: dict[str, int] = {}
    for t in m["transitions"]:
        if t.get("from_type") != "hypothesis":
            continue
        if t["kind"] == "settle":
            outcomes[t["path"]] = 1
            expected[t["path"]].update(confirmed=1, promoted=1)
        elif t["kind"] == "retract" and t["reason"] == "refuted":
            outcomes[t["path"]] = 0
            expected[t["path"]].update(refuted=1)
        elif t["kind"] == "retract" and t["reason"] == "confirmed":
            outcomes[t["path"]] = 1
            expected[t["path"]].update(confirmed=1)
    kept = {n["hypothesis_path_at_head"] for n in m["near_duplicates"] if n["hypothesis_at_head"]}
    for path in kept:
        outcomes[path] = 1
        expected[path].update(confirmed=1)
    overdue = {o["path"] for o in m["overdue_hypotheses"]}
    for path in set(m["open_hypotheses"]) - kept:
        expected[path].update(open=1, overdue=int(path in overdue))
    lc = m["lifecycle"]
    assert sum(c["promoted"] for c in expected.values()) == lc["settle_inplace"]
    assert sum(c["refuted"] for c in expected.values()) == lc["refuted"]
    assert sum(c["confirmed"] for c in expected.values()) == (
        lc["confirmed_kept"] + lc["confirmed_retracted"] + lc["settle_inplace"])
    per_agent: dict[str, Counter] = defaultdict(Counter)
    squares: dict[str, list[float]] = defaultdict(list)
    for path, counts in expected.items():
        who, conf = _claimant(kb, m, origin(path))
        per_agent[who].update(counts)
        if path in outcomes:
            squares[who].append((conf - outcomes[path]) ** 2)
    assert len(per_agent) >= 3  # (the test means something: several claimants)
    keys = ("confirmed", "refuted", "promoted", "open", "overdue")
    for who in set(per_agent) | {a for a in got if any(got[a]["hypotheses"].values())}:
        assert who in got, who
        assert got[who]["hypotheses"] == {k: per_agent[who][k] for k in keys}, who
        want = sum(squares[who]) / len(squares[who]) if squares[who] else None
        assert got[who]["settled"] == len(squares[who]), who
        if want is None:
            assert got[who]["brier"] is None
        else:
            assert got[who]["brier"] == pytest.approx(want, abs=1e-6), who
    # the Agents tab's worker reads the same records (its cache, this index version's)
    from factdesk.gui.agent_model import load_agents

    tab = load_agents(open_corpus(kb), today=datetime.date.fromisoformat(m["now"]),
                      settings_file=kb.parent / "no-such-settings.yaml")
    shown = {a["id"]: a for a in tab.agents}
    assert tab.cached
    for who in per_agent:
        assert shown[who]["hypotheses"] == {k: per_agent[who][k] for k in keys}, who
        assert shown[who]["settled"] == len(squares[who]), who


def test_every_registered_agent_branch_author_and_committer_is_listed(
        small: tuple[Path, dict], capsys: pytest.CaptureFixture[str]) -> None:
    kb, m = small
    got = _agents(kb, capsys, "--today", m["now"])
    for agent_id, entry in m["agents"]["agents"].items():
        assert got[agent_id]["registered"] and got[agent_id]["type"] == entry["type"]
    branch_agent = m["agent_branch"]["agent_id"]
    assert "branch" in got[branch_agent]["roles"]
    assert got[branch_agent]["last_activity"] is not None
    assert not got["knomit"]["registered"] and got["knomit"]["type"] is None  # the init commit
    for key in ("id", "type", "registered", "facts", "hypotheses", "brier", "settled",
                "corrections", "correction_rate"):
        assert key in got["codex"]
    claimed = Counter(m["envelope_at_head"]["claimant_agent_id"])
    for agent_id, n in claimed.items():  # facts with an envelope are a floor for its facts
        assert got[agent_id]["facts"] >= n


def test_the_published_corpus_lists_its_agent_and_who_merged_its_work(
        real_corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    got = _agents(real_corpus, capsys)
    agent = got["mindev.local-8ef0cd32"]
    assert agent["registered"] is False and agent["type"] is None  # (no registry there)
    assert agent["facts"] > 200 and {"claimant", "branch"} <= set(agent["roles"])
    mergers = {_git(real_corpus, "log", "-1", "--format=%an", sha).strip() for sha in _git(
        real_corpus, "log", "--first-parent", "--merges", "--format=%H").split()}
    assert mergers == {"knomit"}
    assert "committer" in got["knomit"]["roles"] and got["knomit"]["last_activity"]
    assert main(["agents", "--kb", str(real_corpus)]) == 0
    assert "mindev.local-8ef0cd32" in capsys.readouterr().out


# -- only curators change the registry --------------------------------------------------------------

REG = """# the agents of this corpus
agent_types:
  tool: {description: observes and reports}
agents:
  claude-code: {type: tool, email: claude-code@agents.knomit.io}   # the coding agent
  bot:
    type: tool
    email: bot@corp.example
"""


def _curated(corpus: Corpus) -> None:
    corpus.write(REGISTRY_PATH, REG)
    git(corpus.root, "add", "-A")
    git(corpus.root, "commit", "-qm", "config: registry", author="ana", email="ana@example.org")


def test_an_agent_that_promotes_itself_is_a_finding_and_is_not_applied(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    _curated(corpus)
    assert load_registry(corpus.root).type_of("claude-code") == "tool"
    corpus.write(REGISTRY_PATH, REG.replace("{type: tool, email: claude", "{type: user, email: claude"))
    sha = corpus.commit("update: registry")  # claude-code's own commit
    reg = load_registry(corpus.root)
    assert reg.type_of("claude-code") == "tool"  # not applied
    assert [p.code for p in reg.problems] == ["registry-trust"]
    assert sha[:10] in reg.problems[0].message
    capsys.readouterr()
    assert main(["check", "--kb", str(corpus.root)]) == 1
    out = capsys.readouterr().out
    assert f"{REGISTRY_PATH}:1: error [registry-trust]" in out
    got = _agents(corpus.root, capsys)
    assert got["claude-code"]["type"] == "tool"
    # a curator's registry action now would adopt the agent's change: refused until resolved
    with pytest.raises(Refused, match="not a curator's") as refused:
        _cur(corpus).register("newbie", "tool", "joins")
    assert refused.value.rule == "registry-trust"
    # a registered non-user agent committing with its own (non-knomit) e-mail: the same
    corpus.write(REGISTRY_PATH, REG.replace("    type: tool\n    email: bot",
                                            "    type: user\n    email: bot"))
    git(corpus.root, "add", "-A")
    git(corpus.root, "commit", "-qm", "registry", author="bot", email="bot@corp.example")
    assert load_registry(corpus.root).type_of("bot") == "tool"
    # the curator's own change after them is applied, and the findings go
    corpus.write(REGISTRY_PATH, REG.replace("bot@corp", "bot2@corp"))
    git(corpus.root, "add", "-A")
    git(corpus.root, "commit", "-qm", "config: bot's new address", author="ana",
        email="ana@example.org")
    reg = load_registry(corpus.root)
    assert reg.agents["bot"].email == "bot2@corp.example" and not reg.problems
    assert main(["check", "--kb", str(corpus.root)]) == 0


def test_a_registry_change_through_a_merge_is_not_applied(corpus: Corpus) -> None:
    _curated(corpus)
    git(corpus.root, "checkout", "-qb", "agent/box-12345678")
    corpus.write(REGISTRY_PATH, REG.replace("{type: tool, email: claude", "{type: user, email: claude"))
    corpus.commit("update: registry")
    git(corpus.root, "checkout", "-q", "main")
    git(corpus.root, "merge", "-q", "--no-ff", "-m", "merge agent work", "agent/box-12345678",
        author="ana", email="ana@example.org")
    reg = load_registry(corpus.root)
    assert reg.type_of("claude-code") == "tool"
    assert [p.code for p in reg.problems] == ["registry-trust"] and "a merge" in reg.problems[0].message


# -- the registry actions -------------------------------------------------------------------------


def _cur(corpus: Corpus) -> Curation:
    ix = open_corpus(corpus.root)
    ix.update()
    return Curation(ix, ANA)


def test_registry_actions_commit_once_each_keep_other_bytes_and_undo(corpus: Corpus) -> None:
    _curated(corpus)
    cur = _cur(corpus)
    path = corpus.root / REGISTRY_PATH
    before = path.read_text()
    head = git(corpus.root, "rev-parse", "HEAD").strip()
    change = cur.set_type("claude-code", "persona", "cites its sources now")
    after = path.read_text()
    assert after == before.replace("{type: tool, email: claude", "{type: persona, email: claude")
    assert git(corpus.root, "rev-parse", "HEAD~1").strip() == head
    assert change.action == "set-type"
    assert [d.action for d in trusted_decisions(corpus.root)][:1] == ["set-type"]
    assert load_registry(corpus.root).type_of("claude-code") == "persona"

    cur = _cur(corpus)
    cur.register("mindev.local-8ef0cd32", "tool", "the review agent",
                 email="mindev.local-8ef0cd32@agents.knomit.io",
                 branch="agent/mindev.local-8ef0cd32")
    cur = _cur(corpus)
    cur.retire("bot", "replaced by the review agent", today=datetime.date(2026, 12, 1))
    cur = _cur(corpus)
    cur.add_type("auditor", "reviews other agents' work",
                 {("other_agent", "assertion"): "attributed", ("user", "*"): "forbidden"},
                 "an auditing agent joins")
    reg = load_registry(corpus.root)
    assert reg.agents["mindev.local-8ef0cd32"].branch == "agent/mindev.local-8ef0cd32"
    assert reg.agents["bot"].retired and reg.agents["bot"].type == "tool"
    assert reg.authority_rows["auditor"] == {("other_agent", "assertion"): "attributed",
                                             ("user", "*"): "forbidden"}
    assert not reg.problems
    text = path.read_text()
    assert text.startswith("# the agents of this corpus\n")
    assert "# the coding agent" in text
    # undo, newest first, puts every byte back
    for _ in range(4):
        _cur(corpus).undo()
    assert path.read_text() == before
    assert load_registry(corpus.root).type_of("claude-code") == "tool"


def test_registry_actions_refuse_what_they_cannot_do(corpus: Corpus) -> None:
    _curated(corpus)
    cur = _cur(corpus)
    with pytest.raises(Refused, match="not registered"):
        cur.set_type("nobody", "tool", "r")
    with pytest.raises(Refused, match="unknown agent type"):
        cur.set_type("claude-code", "overlord", "r")
    with pytest.raises(Refused, match="registered already"):
        cur.register("bot", "tool", "r")
    with pytest.raises(Refused, match="exists already"):
        cur.add_type("tool", "again", {}, "r")
    with pytest.raises(Refused, match="authority row"):
        cur.add_type("auditor", "d", {("user", "assertion"): "maybe"}, "r")
    with pytest.raises(Refused, match="reason"):
        cur.retire("bot", "   ")


def test_an_added_types_row_is_the_authority_table_for_its_agents(corpus: Corpus) -> None:
    _curated(corpus)
    _cur(corpus).add_type("auditor", "reviews", {("user", "*"): "forbidden"}, "auditing")
    _cur(corpus).register("aud", "auditor", "joins", email="aud@corp.example")
    reg = load_registry(corpus.root)
    assert authority("auditor", "user", "observation", reg.authority_rows) is Authority.FORBIDDEN
    assert authority("auditor", "world", "observation", reg.authority_rows) is Authority.ATTRIBUTED
    # a seeded type's rows cannot be changed by the registry
    assert authority("tool", "user", "assertion",
                     {"tool": {("*", "*"): "ground_truth"}}) is Authority.FORBIDDEN
    corpus.write("kb/gotchas/db/e5e5e5e5.md", "---\ntype: observation\ndomain: [a]\n"
                 "confidence: 0.8\nsources: 1\nentities: []\nrefs: [kb/gotchas/db/a1a1a1a1.md]\n"
                 "claim_type: observation\nclaimant_agent_id: aud\nclaimant_type: auditor\n"
                 "subject_kind: user\nsubject_ref: user:ana\n---\n# Ana prefers 2 spaces\n\n"
                 "Seen in 3 files.\n")
    git(corpus.root, "add", "-A")
    git(corpus.root, "commit", "-qm", "learn: ana", author="aud", email="aud@corp.example")
    ix = open_corpus(corpus.root)
    ix.update()
    with ix.connect(readonly=True) as conn:
        found = conn.execute("SELECT message FROM problems WHERE path LIKE '%e5e5e5e5%' "
                             "AND code = 'A1'").fetchall()
    assert any("authority row for type auditor" in r[0] for r in found)


def test_the_cli_actions_and_the_cached_listing(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    _curated(corpus)
    git(corpus.root, "config", "user.name", "ana")
    git(corpus.root, "config", "user.email", "ana@example.org")
    kb = str(corpus.root)
    assert main(["agents", "set-type", "claude-code", "persona", "--kb", kb,
                 "--reason", "earned it"]) == 0
    out, err = capsys.readouterr()
    assert "set-type: claude-code tool → persona" in out and "evidence: claude-code" in err
    assert main(["agents", "add-type", "auditor", "--description", "reviews", "--row",
                 "user:*=forbidden", "--kb", kb, "--reason", "auditing"]) == 0
    assert main(["agents", "add-type", "x", "--description", "d", "--row", "nonsense",
                 "--kb", kb, "--reason", "r"]) != 0
    capsys.readouterr()
    got = _agents(corpus.root, capsys)
    assert got["claude-code"]["type"] == "persona" and got["bot"]["registered"]
    # the second listing of the same index version comes from the cache
    ix = open_corpus(corpus.root)
    ix.update()
    first, _ = records(ix, today=datetime.date(2026, 12, 1), thresholds=Thresholds())
    again, hit = records(ix, today=datetime.date(2026, 12, 1), thresholds=Thresholds())
    assert hit and again == first
    assert main(["undo", "--kb", kb]) == 0
    ix.update()
    _, hit = records(ix, today=datetime.date(2026, 12, 1), thresholds=Thresholds())
    assert not hit


# -- calibration and suggestions (pure) ------------------------------------------------------------


def test_brier_and_reliability_bins() -> None:
    preds = [Prediction("a", 0.9, 1), Prediction("b", 0.8, 0), Prediction("c", 0.55, 1),
             Prediction("d", 0.7, None), Prediction("e", None, 1)]
    assert brier(preds) == pytest.approx((0.01 + 0.64 + 0.2025) / 3)
    bins = reliability(preds)
    assert [(b.lo, b.settled, b.held) for b in bins if b.settled] == [
        (0.5, 1, 1), (0.8, 1, 0), (0.9, 1, 1)]
    assert reliability([Prediction("x", 1.0, 1)])[-1].settled == 1  # (the last bin is closed)
    assert brier([Prediction("d", 0.7, None)]) is None


def _record(type_: str, n: int, conf: float, held: int, **kw: int) -> AgentRecord:
    r = AgentRecord("a", type=type_, registered=True, **kw)
    r.predictions = [Prediction(str(i), conf, 1 if i < held else 0) for i in range(n)]
    return r


def test_suggestions_follow_the_thresholds_and_need_enough_settled() -> None:
    th = Thresholds()
    good = _record("tool", 12, 0.9, 12, facts=40, user_facts=8)
    s = suggest(good, th)
    assert s is not None and (s["action"], s["from"], s["to"]) == ("promote", "tool", "persona")
    assert s["evidence"]["settled"] == 12 and s["thresholds"]["max_brier"] == th.promote_max_brier
    assert suggest(_record("tool", 5, 0.9, 5, facts=40, user_facts=8), th) is None
    assert suggest(_record("tool", 12, 0.9, 12, facts=40, user_facts=1), th) is None
    bad = _record("persona", 12, 0.9, 3, facts=40)
    assert suggest(bad, th)["action"] == "demote"  # type: ignore[index]
    assert suggest(_record("tool", 12, 0.9, 12, facts=40, user_facts=8),
                   Thresholds(min_settled=20)) is None


def test_the_thresholds_file(tmp_path: Path) -> None:
    assert load_thresholds(tmp_path / "none.yaml") == Thresholds()
    f = tmp_path / "t.yaml"
    f.write_text("min_settled: 3\npromote_max_brier: 0.2\npromote: {tool: persona, peer: persona}\n")
    th = load_thresholds(f)
    assert th.min_settled == 3 and th.promote_max_brier == 0.2 and th.promote["peer"] == "persona"
    for bad in ("min_settled: 2.5\n", "nonsense: 1\n", "min_settled: many\n", "- a\n"):
        f.write_text(bad)
        with pytest.raises(SettingsError):
            load_thresholds(f)


def test_minimal_diff_edits() -> None:
    text = "agents:\n  a: {type: tool}  # note\n  b:\n    type: tool\n    email: b@x\n# end\n"
    assert set_field(text, "a", "type", "user") == text.replace("{type: tool}", "{type: user}")
    assert set_field(text, "a", "retired", '"2026-12-01"') == text.replace(
        "{type: tool}", '{type: tool, retired: "2026-12-01"}')
    assert set_field(text, "b", "retired", "x") == text.replace(
        "    email: b@x\n", "    email: b@x\n    retired: x\n")
    assert add_entry(text, "agents", "c: {type: tool}") == text.replace(
        "    email: b@x\n", "    email: b@x\n  c: {type: tool}\n")
    assert add_entry("", "agents", "c: {type: tool}").endswith("agents:\n  c: {type: tool}\n")
    assert add_entry("agents: {}\n", "agents", "c: {type: tool}") == "agents:\n  c: {type: tool}\n"
    assert add_entry("x: 1", "agents", "c: {}") == "x: 1\nagents:\n  c: {}\n"


def test_a_curators_relabel_is_a_correction_of_the_claimants_work_until_undone(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    got = _agents(corpus.root, capsys)
    assert got["claude-code"]["facts"] == 3 and got["claude-code"]["corrections"] == 0
    _cur(corpus).relabel(["kb/gotchas/db/a1a1a1a1.md"], {"type": "pattern"}, "a pattern")
    got = _agents(corpus.root, capsys)
    assert got["claude-code"]["corrections"] == 1
    assert got["claude-code"]["correction_rate"] == pytest.approx(1 / 3)
    assert got["claude-code"]["corrected"][0]["action"] == "relabel"
    assert "committer" in got["ana"]["roles"]  # the curator who committed on the branch
    _cur(corpus).undo()
    got = _agents(corpus.root, capsys)
    assert got["claude-code"]["corrections"] == 0


def test_the_agent_query_selects_an_agents_claims_alone(corpus: Corpus) -> None:
    """`agent:<id>` (the Agents list's filter): its claims, never a type's."""
    from factdesk.index.search import search

    corpus.write("kb/gotchas/db/e5e5e5e5.md", "---\ntype: observation\ndomain: [a]\n"
                 "confidence: 0.8\nsources: 1\nentities: []\nrefs: [kb/gotchas/db/a1a1a1a1.md]\n"
                 "claim_type: observation\nclaimant_agent_id: tool\nclaimant_type: persona\n"
                 "subject_kind: world\n---\n# An agent named like a type\n\nSeen 3 times.\n")
    corpus.commit("learn: odd name", author="tool")
    ix = open_corpus(corpus.root)
    ix.update()
    with ix.connect(readonly=True) as conn:
        def paths(q: str) -> set[str]:
            return {r.path for r in search(conn, q)}

        assert paths("agent:claude-code") == {
            "kb/gotchas/db/a1a1a1a1.md", "kb/gotchas/db/b2b2b2b2.md", "kb/decisions/api/c3c3c3c3.md"}
        assert paths("agent:tool") == {"kb/gotchas/db/e5e5e5e5.md"}
        assert paths("agent:persona") == set()
        assert "kb/gotchas/db/e5e5e5e5.md" not in paths("-agent:tool")


def test_suggestions_are_shown_from_the_settings_file_and_never_applied(
        small: tuple[Path, dict], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb, m = small
    settings = tmp_path / "agent-suggestions.yaml"
    settings.write_text("min_settled: 1\ndemote_min_brier: 0.01\ndemote: {tool: view}\n")
    before = _git(kb, "rev-parse", "HEAD")
    got = _agents(kb, capsys, "--today", m["now"], "--settings", str(settings))
    s = got["claude-code"]["suggestion"]
    assert s is not None and (s["action"], s["from"], s["to"]) == ("demote", "tool", "view")
    assert s["thresholds"]["min_brier"] == 0.01 and s["evidence"]["settled"] >= 1
    assert got["claude-code"]["type"] == "tool" and _git(kb, "rev-parse", "HEAD") == before
    assert main(["agents", "--kb", str(kb), "--today", m["now"], "--settings", str(settings)]) == 0
    assert "suggestion: demote tool → view" in capsys.readouterr().out
    settings.write_text("min_settled: lots\n")
    assert main(["agents", "--kb", str(kb), "--settings", str(settings)]) == 1


def test_an_agent_cannot_outlast_the_registry_history_with_a_flood_of_commits(
        corpus: Corpus) -> None:
    """No depth cap (issue 23 #7): `bot` (registered with its own, non-knomit e-mail)
    commits 2,001 registry changes promoting itself. Read back only so far, the oldest
    change kept is bot's own, judged against no registry at all, so it would count."""
    _curated(corpus)
    promoted = REG.replace("    type: tool\n    email: bot", "    type: user\n    email: bot")
    stream = ["reset refs/heads/main", f"from {git(corpus.root, 'rev-parse', 'HEAD').strip()}"]
    for n in range(2001):
        data = f"{promoted}# change {n}\n".encode()
        stream += ["commit refs/heads/main",
                   f"author bot <bot@corp.example> {1793000000 + n} +0000",
                   f"committer bot <bot@corp.example> {1793000000 + n} +0000",
                   "data 8", "registry",
                   f"M 100644 inline {REGISTRY_PATH}", f"data {len(data)}", data.decode()]
    subprocess.run(["git", "-C", str(corpus.root), "fast-import", "--quiet"],
                   input="\n".join(stream).encode() + b"\n", check=True)
    git(corpus.root, "reset", "-q", "--hard", "main")
    reg = load_registry(corpus.root)
    assert reg.type_of("bot") == "tool"  # not applied
    assert {p.code for p in reg.problems} == {"registry-trust"}
