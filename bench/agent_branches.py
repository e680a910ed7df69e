#!/usr/bin/env python3
"""Add agent branches full of proposals to a corpus, quickly (issue 23 #7's review shape).

    .venv/bin/python bench/agent_branches.py --kb CLONE [--branches 10] [--proposals 500]
        [--seed 7] [--local] [--spread 200] [--curated-commits 0]

CLONE is a git clone of a generated corpus (`make_corpus.py`); it is written in place
(refs and objects only, plus the work tree when `--curated-commits` moves the checked-out
branch), so never point it at a corpus others read. Everything goes through one
`git fast-import`, so 5,000 proposals take seconds.

Each branch `agent/<host>-<8 hex>` (`refs/remotes/origin/agent/…`, or `refs/heads/agent/…`
with `--local`) starts on the curated branch at a depth drawn from 0..`--spread` commits
below its tip (so merge bases differ) and holds `--proposals` commits by its own agent
(`<id> <id+op@agents.knomit.io>`, knomit's convention), one proposal each:

- 60% `learn:` a new fact beside an existing one: that fact's text with the branch's agent
  as claimant and a new title; a fifth of them cite a fact an earlier proposal of the same
  branch added (a dependency the checks follow);
- 30% `update:` an existing fact with one sentence added to its body;
- 10% `dedup: remove duplicate …` deletes an existing fact.

`--curated-commits K` first adds K commits to the curated branch, each writing one line of
a log outside `kb/` (a long first-parent history at no indexing cost), then moves the work
tree there (`git read-tree -m -u`).
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import time
from pathlib import Path

EPOCH = 1_760_000_000
_CLAIMANT = re.compile(rb"^claimant_agent_id: .*$", re.M)
_TITLE = re.compile(rb"^# .*$", re.M)
_REFS = re.compile(rb"^refs: \[(.*)\]$", re.M)


def git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], input=data, check=True,
                          stdout=subprocess.PIPE).stdout


class Blobs:
    """`git cat-file --batch`, one process."""

    def __init__(self, repo: Path) -> None:
        self.proc = subprocess.Popen(["git", "-C", str(repo), "cat-file", "--batch"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def read(self, spec: str) -> bytes:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(spec.encode() + b"\n")
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        size = int(header[2])
        data = self.proc.stdout.read(size)
        self.proc.stdout.read(1)
        return data

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait()


def data_cmd(body: bytes) -> bytes:
    return b"data %d\n%s\n" % (len(body), body)


def commit_cmd(ref: str, mark: int, name: str, email: str, when: int, message: str,
               parent: str, ops: list[bytes]) -> bytes:
    ident = f"{name} <{email}> {when} +0000".encode()
    return b"".join([f"commit {ref}\nmark :{mark}\n".encode(), b"author ", ident, b"\n",
                     b"committer ", ident, b"\n", data_cmd(message.encode()),
                     f"from {parent}\n".encode(), *ops, b"\n"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kb", type=Path, required=True)
    ap.add_argument("--branches", type=int, default=10)
    ap.add_argument("--proposals", type=int, default=500)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--local", action="store_true", help="refs/heads/agent/… (default: "
                    "remote-tracking refs/remotes/origin/agent/…)")
    ap.add_argument("--spread", type=int, default=200,
                    help="branches start up to this many commits below the curated tip")
    ap.add_argument("--curated-commits", type=int, default=0)
    a = ap.parse_args()
    repo = a.kb.resolve()
    rng = random.Random(a.seed)  # noqa: S311 (a reproducible corpus, not a secret)
    started = time.perf_counter()
    curated = git(repo, "symbolic-ref", "HEAD").decode().strip()
    if a.curated_commits:
        _curated(repo, curated, a.curated_commits)
    line = git(repo, "rev-list", "--first-parent", f"--max-count={a.spread + 1}",
               "HEAD").decode().split()
    tip = line[0]
    # facts present from the deepest base up to the tip (a proposal edits what its base has)
    oldest = set(git(repo, "ls-tree", "-r", "--name-only", line[-1], "kb").decode().split("\n"))
    paths = [p for p in git(repo, "ls-tree", "-r", "--name-only", tip, "kb").decode().split("\n")
             if p.endswith(".md") and p in oldest]
    blobs = Blobs(repo)
    stream: list[bytes] = []
    mark = 0
    used: set[str] = set()
    for b in range(a.branches):
        host = f"fleet-{b:03d}-{rng.getrandbits(32):08x}"
        ref = (f"refs/heads/agent/{host}" if a.local else f"refs/remotes/origin/agent/{host}")
        base = line[rng.randrange(len(line))]
        parent = base
        added: list[str] = []
        when = EPOCH + b * 1000
        for i in range(a.proposals):
            mark += 1
            when += 60
            roll = rng.random()
            path = rng.choice(paths)
            while path in used:
                path = rng.choice(paths)
            used.add(path)  # (each existing fact touched by one proposal of the fleet)
            text = blobs.read(f"{base}:{path}")
            if roll < 0.6:
                op = "learn"
                new = f"{path.rsplit('/', 1)[0]}/{rng.getrandbits(32):08x}.md"
                old = text.split(b"\n# ", 1)[-1].split(b"\n", 1)[0][:80]
                title = f"{host} learned {i}: {old.decode('utf-8', 'replace')}"
                out = _CLAIMANT.sub(f"claimant_agent_id: {host}".encode(), text, count=1)
                out = _TITLE.sub(f"# {title}".encode(), out, count=1)
                if added and rng.random() < 0.2:
                    cite = rng.choice(added)
                    out = _REFS.sub(lambda m, c=cite: b"refs: [" + m.group(1)
                                    + (b", " if m.group(1) else b"") + c.encode() + b"]",
                                    out, count=1)
                added.append(new)
                ops = [f"M 100644 inline {new}\n".encode() + data_cmd(out)]
                message = f"learn: {title}"
            elif roll < 0.9:
                op = "update"
                out = text.rstrip(b"\n") + f"\n\n{host} saw this again in run {i}.\n".encode()
                ops = [f"M 100644 inline {path}\n".encode() + data_cmd(out)]
                message = f"update: {path} (run {i})"
            else:
                op = "retract"
                ops = [f"D {path}\n".encode()]
                message = f"dedup: remove duplicate {path} [review]"
            stream.append(commit_cmd(ref, mark, host, f"{host}+{op}@agents.knomit.io", when,
                                     message, parent, ops))
            parent = f":{mark}"
    blobs.close()
    git(repo, "fast-import", "--quiet", data=b"".join(stream))
    print(f"{a.branches} branches x {a.proposals} proposals added to {repo} in "
          f"{time.perf_counter() - started:.1f} s")
    return 0


def _curated(repo: Path, ref: str, count: int) -> None:
    """`count` commits on the curated branch, each one line more of `curation/log.txt`."""
    tip = git(repo, "rev-parse", "HEAD").decode().strip()
    stream = []
    for i in range(count):
        body = f"curated {i}\n".encode()
        stream.append(commit_cmd(ref, i + 1, "Curator", "curator+edit@example.org",
                                 EPOCH - count + i, f"edit: curated step {i}",
                                 tip if i == 0 else f":{i}",
                                 [b"M 100644 inline curation/log.txt\n" + data_cmd(body)]))
    git(repo, "fast-import", "--quiet", "--force", data=b"".join(stream))
    git(repo, "read-tree", "-m", "-u", tip, "HEAD")


if __name__ == "__main__":
    sys.exit(main())
