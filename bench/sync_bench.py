"""Sync at scale (issue 13): clone, push-only sync, a true-merge sync, fast-forwards, on a
copy of a generated corpus behind a local bare remote. Curators' commits are made with
plain git (the sync's cost does not depend on which action made them).

    python bench/sync_bench.py [--corpus PATH | --facts N] [--work DIR] [--many N]

Without --corpus, a corpus of --facts facts (default 100,000) is generated with
../shared/bench/make_corpus.py into bench/out/ (reused when present). Prints one JSON object
of seconds. The corpus is never written: a bare copy is made first.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from factdesk.corpus import gitremote
from factdesk.review.sync import sync

ROOT = Path(__file__).resolve().parents[1]
MAKE_CORPUS = ROOT.parent / "shared" / "bench" / "make_corpus.py"


def generated(facts: int) -> Path:
    out = ROOT / "bench" / "out" / f"kb{facts}"
    if not (out / ".git").is_dir():
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["python3", str(MAKE_CORPUS), "--facts", str(facts), "--out", str(out),
                        "--force", "--quiet"], check=True)
    return out


def git(repo: Path, *args: str, who: str = "ana") -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": who, "GIT_AUTHOR_EMAIL": f"{who}@example.org",
           "GIT_COMMITTER_NAME": who, "GIT_COMMITTER_EMAIL": f"{who}@example.org"}
    return subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-C", str(repo), *args],
                          capture_output=True, text=True, env=env, check=True).stdout


def touch(repo: Path, paths: list[str], who: str, note: str) -> None:
    for p in paths:
        with open(repo / p, "a", encoding="utf-8") as f:
            f.write(f"\n{note}\n")
    git(repo, "add", "--", *paths, who=who)
    git(repo, "commit", "-qm", f"edit: {note}", who=who)


def timed(fn, *args, **kw) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = fn(*args, **kw)
    return time.perf_counter() - start, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--many", type=int, default=500)
    args = ap.parse_args()
    args.corpus = args.corpus or generated(args.facts)
    work = args.work or Path(tempfile.mkdtemp(prefix="factdesk-sync-bench-"))
    bare = work / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(args.corpus), str(bare)], check=True)
    out: dict[str, float | int | str] = {"corpus": args.corpus.name}
    out["clone_s"], ana = timed(gitremote.clone, bare.as_uri(), work / "ana")
    bob = gitremote.clone(str(bare), work / "bob")
    assert isinstance(ana, Path)
    facts = sorted(p.relative_to(ana).as_posix() for p in (ana / "kb").rglob("*.md"))[:2 + 2 * args.many]
    out["facts_in_kb_sample"] = len(facts)
    os.environ["FACTDESK_CURATOR_NAME"] = "ana"
    os.environ["FACTDESK_CURATOR_EMAIL"] = "ana@example.org"
    touch(ana, [facts[0]], "ana", "ana one")
    out["sync_push_only_s"], _ = timed(sync, ana)
    touch(bob, [facts[1]], "bob", "bob one")
    out["sync_true_merge_s"], r = timed(sync, bob)
    assert r.joined == "merged", r  # type: ignore[attr-defined]
    out["sync_fast_forward_s"], r = timed(sync, ana)
    assert r.joined == "fast-forward", r  # type: ignore[attr-defined]
    many = facts[2:2 + args.many]
    touch(ana, many, "ana", "ana many")
    sync(ana)
    out[f"sync_fast_forward_{len(many)}_files_s"], r = timed(sync, bob)
    assert r.joined == "fast-forward", r  # type: ignore[attr-defined]
    touch(bob, facts[2 + args.many:2 + 2 * args.many], "bob", "bob many")
    touch(ana, [facts[0]], "ana", "ana two")
    sync(ana)
    out[f"sync_true_merge_ours_{args.many}_files_theirs_1_s"], r = timed(sync, bob)
    assert r.joined == "merged", r  # type: ignore[attr-defined]
    out["up_to_date_s"], _ = timed(sync, bob)
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
