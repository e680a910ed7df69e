"""Shared by the decision tests: a real corpus with an agent branch on it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from factdesk.core import open_corpus
from factdesk.curation import Identity
from factdesk.review.decide import Review
from tests.conftest import GOOD_FACT, Corpus, git

AGENT = "host-8ef0cd32"
BRANCH = f"agent/{AGENT}"
CURATOR = Identity("ana", "ana@example.org")
A = "kb/gotchas/db/a1a1a1a1.md"
B = "kb/gotchas/db/b2b2b2b2.md"
C = "kb/decisions/api/c3c3c3c3.md"
H = "kb/gotchas/db/d4d4d4d4.md"
N = "kb/gotchas/db/e5e5e5e5.md"
S = "kb/gotchas/db/f6f6f6f6.md"
JOB = ".knomit/jobs/distill.md"  # (a private path agents may write: FORMAT §1.3)

HYPOTHESIS = """---
type: hypothesis
domain: [db]
confidence: 0.5
sources: 1
settle_by: 2027-01-31
settlement: pool holds at 300 clients
refs: []
---
# Pools will hold at 300 clients

A guess.
"""


def fact_text(title: str, *, type: str = "observation", refs: str = "",
              body: str = "Body text with 3 numbers.") -> str:
    return GOOD_FACT.format(type=type, title=title, refs=refs, body=body)


def agent_commit(corpus: Corpus, message: str, files: dict[str, str | None], *,
                 op: str = "learn", branch: str = BRANCH) -> str:
    """One commit on the agent branch (made from a scratch worktree, so the curated
    checkout is never touched), authored and committed as knomit's agents are."""
    repo = corpus.root
    wt = repo.parent / f"wt-{branch.replace('/', '-')}"
    if not wt.exists():
        exists = subprocess.run(["git", "-C", str(repo), "rev-parse", "-q", "--verify",
                                 f"refs/heads/{branch}"], capture_output=True).returncode == 0
        git(repo, "worktree", "add", "-q", *([] if exists else ["-b", branch]), str(wt),
            *([branch] if exists else ["main"]))
    for rel, text in files.items():
        path = wt / rel
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    agent = branch.removeprefix("agent/")
    git(wt, "add", "-A")
    env = {"GIT_COMMITTER_EMAIL": f"{agent}@agents.knomit.io"}
    git(wt, "commit", "-qm", message, author=agent, email=f"{agent}+{op}@agents.knomit.io",
        env=env)
    return git(wt, "rev-parse", "HEAD").strip()


def review_of(corpus: Corpus, **kw: object) -> Review:
    ix = open_corpus(corpus.root)
    ix.update()
    return Review(ix, CURATOR, **kw)  # type: ignore[arg-type]


def trailers(repo: Path, rev: str | None = "HEAD") -> list[str]:
    """git's own reading of the commit's trailers (`interpret-trailers --parse`)."""
    assert rev
    msg = git(repo, "log", "-1", "--format=%B", rev)
    out = subprocess.run(["git", "interpret-trailers", "--parse"], input=msg.encode(),
                         capture_output=True, check=True).stdout.decode()
    return out.splitlines()


def show(repo: Path, fmt: str, rev: str | None = "HEAD") -> str:
    assert rev
    return git(repo, "log", "-1", f"--format={fmt}", rev).strip()
