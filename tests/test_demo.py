"""The bundled demo corpus: history replay, determinism, and the shape of every fact."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from factdesk.demo import build_demo_corpus, ensure_demo_workspace, resource_root

BRANCH = "agent/build-02.lan-59c73bff"
ROOT = resource_root()
HISTORY = yaml.safe_load((ROOT / "resources/demo/history.yaml").read_text(encoding="utf-8"))
PLANTED: dict[str, list[str]] = HISTORY["planted"]
LOCAL_REF = re.compile(r"^kb/.+\.md$")
EXTRA_FILES = {
    "README.md": "resources/demo/README.md",
    ".knomit/ontology.yaml": "resources/demo/ontology.yaml",
    ".factdesk/agents.yaml": "resources/demo/agents.yaml",
}


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    out = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-C", str(repo), *args],
                         capture_output=True, env=env, check=True)
    return out.stdout.decode("utf-8")


def source_facts() -> dict[str, bytes]:
    return {p.relative_to(ROOT).as_posix(): p.read_bytes()
            for p in sorted((ROOT / "kb").rglob("*.md"))}


def source_messages() -> dict[str, bytes]:
    """The message store (msg/, issue 17): beside kb/, never facts."""
    return {p.relative_to(ROOT).as_posix(): p.read_bytes()
            for p in sorted((ROOT / "msg").rglob("*.md"))}


def split_fact(text: str) -> tuple[dict[str, object], str, str]:
    assert text.startswith("---\n")
    end = text.index("\n---\n", 3)
    front = yaml.safe_load(text[4:end]) or {}
    rest = text[end + 5:]
    title, _, body = rest.partition("\n")
    return front, title, body


def local_refs(text: str) -> list[str]:
    front, _, _ = split_fact(text)
    refs = front.get("refs") or []
    assert isinstance(refs, list)
    return [r for r in refs if isinstance(r, str) and LOCAL_REF.match(r)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_corpus(tmp_path_factory.mktemp("demo") / "ledger-demo")


def main_history(repo: Path) -> list[str]:
    return git(repo, "rev-list", "--first-parent", "--reverse", "main").split()


def paths_in_history(repo: Path) -> set[str]:
    out = git(repo, "log", "--first-parent", "--format=", "--name-only", "main")
    return {line for line in out.splitlines() if line}


def test_main_has_a_knomit_history(demo: Path) -> None:
    commits = main_history(demo)
    assert len(commits) >= 15
    emails = git(demo, "log", "--format=%ae", "main").split()
    assert sum("+learn@" in e for e in set(emails)) >= 3
    assert any("+update@" in e for e in emails)
    assert "knomit@local" in emails
    first = git(demo, "log", "-1", "--format=%B", commits[0])
    assert first.startswith("init: create knowledge base\n\nknomit-repo-nonce: ")
    committers = set(git(demo, "log", "--format=%ce", "main").split())
    assert all("+" not in c for c in committers)
    assert git(demo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert git(demo, "status", "--porcelain") == ""


def test_agent_branch_is_ahead_and_unmerged(demo: Path) -> None:
    ahead = git(demo, "rev-list", "--count", f"main..{BRANCH}").strip()
    assert 4 <= int(ahead) <= 8
    assert git(demo, "rev-list", "--count", f"{BRANCH}..main").strip() == "0"
    merged = git(demo, "branch", "--merged", "main", "--format=%(refname:short)").split()
    assert BRANCH not in merged
    subjects = git(demo, "log", "--format=%s", f"main..{BRANCH}").splitlines()
    assert any(s.startswith("synthesize-review: distill kb/") for s in subjects)
    assert any(s.startswith("dedup: merge ") for s in subjects)
    assert any(s.startswith("dedup: remove duplicate ") for s in subjects)
    assert any(s.startswith('discover-forward: emergent fact via bridge "') for s in subjects)
    authors = set(git(demo, "log", "--format=%ae", f"main..{BRANCH}").split())
    assert all(a.startswith("build-02.lan-59c73bff+") for a in authors)


def test_main_tree_equals_the_source_kb(demo: Path) -> None:
    tree = git(demo, "ls-tree", "-r", "--name-only", "main").splitlines()
    facts = source_facts()
    # (on purpose, issue 17: the demo's message store, msg/, is part of the tree too)
    assert set(tree) == set(facts) | set(source_messages()) | set(EXTRA_FILES)
    for path, content in {**facts, **source_messages()}.items():
        assert (demo / path).read_bytes() == content, path
    for path, src in EXTRA_FILES.items():
        assert (demo / path).read_bytes() == (ROOT / src).read_bytes(), path


def test_build_is_deterministic(demo: Path, tmp_path: Path) -> None:
    again = build_demo_corpus(tmp_path / "again")
    for ref in ("main", BRANCH):
        assert git(again, "rev-parse", ref) == git(demo, "rev-parse", ref)


def test_build_refuses_a_non_empty_destination(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "file").write_text("x")
    with pytest.raises(FileExistsError):
        build_demo_corpus(tmp_path / "x")


def test_ensure_demo_workspace_builds_once(tmp_path: Path) -> None:
    repo = ensure_demo_workspace(tmp_path)
    assert repo == tmp_path / "ledger-demo"
    head = git(repo, "rev-parse", "HEAD")
    (repo / "marker").write_text("kept")
    assert ensure_demo_workspace(tmp_path) == repo
    assert (repo / "marker").read_text() == "kept"
    assert git(repo, "rev-parse", "HEAD") == head
    assert [p.name for p in tmp_path.iterdir()] == ["ledger-demo"]


@pytest.mark.parametrize("path", sorted(source_facts()))
def test_every_fact_has_frontmatter_and_a_title(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    front, title, body = split_fact(text)
    assert isinstance(front, dict) and "type" in front
    assert title.startswith("# ") and title[2:].strip()
    assert body.startswith("\n") and body.endswith("\n") and not body.endswith("\n\n")
    assert re.fullmatch(r"kb/[a-z0-9-]+(/[a-z0-9-]+)+/[0-9a-f]{8}\.md", path)


def test_every_local_ref_resolves_in_main_history(demo: Path) -> None:
    known = paths_in_history(demo)
    for path, content in source_facts().items():
        for ref in local_refs(content.decode("utf-8")):
            assert ref in known, f"{path} cites {ref}, which never existed on main"


def test_local_refs_existed_when_they_were_written(demo: Path) -> None:
    """knomit's write gate: a new local ref must resolve at the head or in the same commit."""
    seen: set[str] = set()
    for sha in main_history(demo):
        changed = git(demo, "diff-tree", "--root", "--no-commit-id", "-r", "--name-status",
                      sha).splitlines()
        written = [line.split("\t")[1] for line in changed if line[0] in "AM"]
        seen.update(line.split("\t")[1] for line in changed if line[0] == "A")
        for path in written:
            if not path.startswith("kb/"):
                continue
            for ref in local_refs(git(demo, "show", f"{sha}:{path}")):
                assert ref in seen, f"{path} at {sha[:8]} cites {ref} before it existed"


def test_branch_refs_resolve_on_the_branch(demo: Path) -> None:
    out = git(demo, "log", "--first-parent", "--format=", "--name-only", BRANCH)
    known = {line for line in out.splitlines() if line}
    for path in git(demo, "ls-tree", "-r", "--name-only", BRANCH).splitlines():
        if path.startswith("kb/"):
            for ref in local_refs(git(demo, "show", f"{BRANCH}:{path}")):
                assert ref in known, f"{path} cites {ref}"


def test_promoted_hypothesis_is_a_hypothesis_in_history(demo: Path) -> None:
    [path] = PLANTED["hypothesis_promoted"]
    versions = git(demo, "log", "--first-parent", "--format=%H", "main", "--", path).split()
    assert len(versions) >= 2
    first, _, _ = split_fact(git(demo, "show", f"{versions[-1]}:{path}"))
    now, _, _ = split_fact((demo / path).read_text(encoding="utf-8"))
    assert first["type"] == "hypothesis" and first.get("claim_type") == "hypothesis"
    assert now["type"] == "observation" and now.get("claim_type") == "observation"
    subject = git(demo, "log", "-1", "--format=%s", versions[0])
    assert subject.startswith("update: ")


def test_confirmed_hypothesis_was_deleted_by_the_confirming_learn(demo: Path) -> None:
    [hypothesis] = PLANTED["hypothesis_confirmed"]
    [observation] = PLANTED["confirming_observation"]
    assert not (demo / hypothesis).exists()
    sha = git(demo, "log", "--first-parent", "--format=%H", "--diff-filter=D", "main", "--",
              hypothesis).split()[0]
    assert git(demo, "log", "-1", "--format=%s", sha).startswith("learn: ")
    added = git(demo, "diff-tree", "--no-commit-id", "-r", "--diff-filter=A", "--name-only",
                sha).split()
    assert observation in added
    assert hypothesis in local_refs((demo / observation).read_text(encoding="utf-8"))
    old, _, _ = split_fact(git(demo, "show", f"{sha}^:{hypothesis}"))
    assert old["type"] == "hypothesis"


def test_retracted_fact_has_a_retract_commit(demo: Path) -> None:
    [path] = PLANTED["retracted"]
    sha = git(demo, "log", "--first-parent", "--format=%H", "--diff-filter=D", "main", "--",
              path).split()[0]
    assert git(demo, "log", "-1", "--format=%s", sha) == f"retract(friday-freeze-lifted): {path}\n"
    assert "+retract@" in git(demo, "log", "-1", "--format=%ae", sha)


def test_planted_paths_exist(demo: Path) -> None:
    on_main = paths_in_history(demo)
    on_branch = set(git(demo, "log", "--format=", "--name-only", BRANCH).split())
    readme = (ROOT / "resources/demo/README.md").read_text(encoding="utf-8")
    for key, paths in PLANTED.items():
        assert f"`{key}`" in readme
        for path in paths:
            assert path in on_main or path in on_branch, (key, path)
            assert f"`{path}`" in readme, (key, path)


def test_the_message_store_reads_clean_and_threads() -> None:
    """Every demo message parses with no finding (names are the hash of from, sent and
    body), references facts of kb/ and replies to messages that exist: `check` stays clean."""
    from factdesk.corpus.messages import cross_check, parse_message
    from factdesk.model.messages import threads

    messages = []
    for path, data in source_messages().items():
        outcome = parse_message(path, data)
        assert outcome.message is not None and outcome.problems == (), (path, outcome.problems)
        messages.append(outcome.message)
    assert len(messages) == 6
    assert cross_check(messages, set(source_facts()), set(source_messages())) == []
    grouped = threads(messages)
    pair = frozenset({"claude-code", "codex"})
    assert [len(t.messages) for t in grouped[pair]] == [3]
    assert {m.delivery for m in messages} == {"queued", "delivered", "read", "acknowledged"}
    assert sum(bool(m.referenced_memory_ids) for m in messages) == 3


def test_a_message_was_marked_read_in_a_later_commit(demo: Path) -> None:
    [first, *_] = PLANTED["message_thread"]
    versions = git(demo, "log", "--format=%H", "main", "--", first).split()
    assert len(versions) == 2
    assert "delivery: delivered" in git(demo, "show", f"{versions[1]}:{first}")
    assert "delivery: read" in git(demo, "show", f"{versions[0]}:{first}")
