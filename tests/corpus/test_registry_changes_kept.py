"""The registry's changes are read once, then O(new) (issue 23 #1, #7): kept by tip beside
the index, a new tip reads only the commits after the kept one, and nothing kept is
trusted over git — a rewritten line, a graft, a damaged file are read from git again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factdesk.corpus import gitrepo, registry_trust
from factdesk.corpus.registry_io import REGISTRY_PATH, load_registry
from factdesk.corpus.registry_trust import KEPT, registry_changes
from tests.conftest import Corpus, git

REG = """agents:
  claude-code: {type: tool, email: claude-code@agents.knomit.io}
  bot: {type: tool, email: bot@corp.example}
"""


def _kept(root: Path) -> Path:
    return gitrepo.common_dir(root) / "factdesk" / KEPT


def _fresh(root: Path) -> list[registry_trust.RegistryChange]:
    """What git says, with nothing kept."""
    _kept(root).unlink(missing_ok=True)
    return registry_changes(root)


def _change(corpus: Corpus, text: str, *, who: str = "ana", email: str = "ana@example.org") -> str:
    corpus.write(REGISTRY_PATH, text)
    git(corpus.root, "add", "-A")
    git(corpus.root, "commit", "-qm", f"config: registry by {who}", author=who, email=email)
    return git(corpus.root, "rev-parse", "HEAD").strip()


def test_the_kept_changes_are_what_git_says_after_every_commit(corpus: Corpus,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _change(corpus, REG)
    assert registry_changes(corpus.root) == _fresh(corpus.root) and _kept(corpus.root).exists()
    logs: list[tuple[str, ...]] = []
    real = gitrepo.run_git

    def spy(repo: Path, *args: str, **kw: object) -> bytes:
        if args and args[0] == "log":
            logs.append(args)
        return real(repo, *args, **kw)  # type: ignore[arg-type]

    for n in range(3):
        corpus.fact(f"kb/gotchas/db/f{n}f{n}f{n}f{n}.md", title=f"Fact {n}")
        corpus.commit(f"learn: fact {n}")
        _change(corpus, REG + f"# change {n}\n", who="bot", email="bot@corp.example")
        monkeypatch.setattr(gitrepo, "run_git", spy)
        got = registry_changes(corpus.root)
        monkeypatch.setattr(gitrepo, "run_git", real)
        assert got == _fresh(corpus.root)
        registry_changes(corpus.root)  # (kept again for the next round)
    # after the first read, each read logged only the commits after the kept tip
    assert logs and all(".." in a[a.index("--end-of-options") + 1] for a in logs), logs
    assert len(registry_changes(corpus.root)) == 4
    reg = load_registry(corpus.root)  # (the registry read through them: bot's not applied)
    assert {p.code for p in reg.problems} == {"registry-trust"}


def test_a_rewritten_line_a_graft_or_a_damaged_file_is_read_from_git_again(corpus: Corpus) -> None:
    first = _change(corpus, REG)
    _change(corpus, REG + "# two\n")
    registry_changes(corpus.root)
    # the branch rewritten: the kept tip is no longer on the line
    git(corpus.root, "reset", "-q", "--hard", first)
    _change(corpus, REG + "# another two\n", who="bot", email="bot@corp.example")
    assert registry_changes(corpus.root) == _fresh(corpus.root)
    assert len(registry_changes(corpus.root)) == 2
    # a graft makes the line another without changing its ids
    registry_changes(corpus.root)
    grafts = gitrepo.common_dir(corpus.root) / "info" / "grafts"
    grafts.parent.mkdir(exist_ok=True)
    grafts.write_text(git(corpus.root, "rev-parse", "HEAD").strip() + "\n")  # (a root now)
    assert registry_changes(corpus.root) == _fresh(corpus.root)
    assert len(registry_changes(corpus.root)) == 1
    grafts.unlink()
    # a damaged or foreign file: read from git, never a crash
    for junk in (b"\x00\xff", b"{}", json.dumps({"version": 1, "world": "x", "tip": "y",
                                                 "changes": []}).encode(), b"[1, 2, 3]"):
        _kept(corpus.root).write_bytes(junk)
        assert len(registry_changes(corpus.root)) == 2
    kept = json.loads(_kept(corpus.root).read_text())
    kept["changes"][0][0] = "--upload-pack=touch pwned"  # (never a revision git is given)
    _kept(corpus.root).write_text(json.dumps(kept))
    assert registry_changes(corpus.root) == _fresh(corpus.root)
