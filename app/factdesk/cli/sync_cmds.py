"""`factdesk sync`: fetch every remote, join the curated branch with the remote's, push
(review/sync.py; issue 13).

    factdesk sync [--kb PATH] [--remote NAME] [--format text|json]

Progress goes to stderr; the summary (what arrived, what was joined, what was pushed) to
stdout. Exit 1 when both sides changed the same fact (the facts and both commits named,
nothing changed) or the sync was refused.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from factdesk.cli.commands import FORMAT, KB, _exit, cli, say
from factdesk.corpus import gitrepo
from factdesk.curation import recover
from factdesk.errors import CorpusNotFound
from factdesk.review.sync import SyncConflict, SyncResult, sync


class _StderrProgress:
    """One line per step on stderr (rewritten in place on a terminal)."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last: tuple[str, int] | None = None

    def __call__(self, what: str, fraction: float) -> None:
        step = int(fraction * 100) // (1 if self.tty else 25)
        if self.last == (what, step):
            return
        if not self.tty and self.last is not None and self.last[0] == what:
            self.last = (what, step)
            return  # (piped: one line per step, not per percent)
        self.last = (what, step)
        end = "\r" if self.tty else "\n"
        click.echo(f"{what} {int(fraction * 100):3d}%".ljust(60), err=True, nl=False)
        click.echo(end, err=True, nl=False)

    def done(self) -> None:
        if self.tty and self.last is not None:
            click.echo("", err=True)


@cli.command(name="sync")
@KB
@click.option("--remote", default=None,
              help="the remote to join and push to (default: the branch's upstream, origin, "
                   "or the only remote); every remote is fetched either way")
@FORMAT
def sync_cmd(kb: Path, remote: str | None, fmt: str) -> None:
    """Fetch every remote, bring in the other curators' work, push the curated branch."""
    repo = kb.expanduser()
    if not repo.is_dir() or not gitrepo.is_git_repo(repo):
        raise CorpusNotFound(f"{repo} is not the top of a git repository")
    for done in recover(repo):
        say(f"recovered an interrupted action ({done.outcome}): {done.message}", err=True)
    progress = _StderrProgress()
    try:
        result = sync(repo, remote=remote, progress=progress)
    except SyncConflict as conflict:
        progress.done()
        if fmt == "json":
            click.echo(json.dumps({"conflict": {
                "ours": conflict.ours, "theirs": conflict.theirs, "base": conflict.base,
                "facts": [{"path": c.path, "ours": c.ours, "ours_said": c.ours_said,
                           "theirs": c.theirs, "theirs_said": c.theirs_said}
                          for c in conflict.conflicts]}}, ensure_ascii=False))
        say(f"Error: {conflict}", err=True)
        _exit(1)
        return
    progress.done()
    waiting = _open_proposals(repo)
    if fmt == "json":
        click.echo(json.dumps(_as_json(result, waiting), ensure_ascii=False))
    else:
        for line in _summary(result, waiting):
            say(line)
    for warning in result.warnings:
        say(f"warning: {warning}", err=True)
    _exit(1 if result.pushed is not None and result.pushed.rejected else 0)


def _open_proposals(repo: Path) -> int | None:
    """How many proposals wait (REVQ's queue, when this build has it)."""
    try:
        from factdesk.review import proposals  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        return None
    try:
        queue = proposals.load_queue(repo)
    except Exception:  # (the count is a courtesy: the sync itself is done)
        return None
    found = getattr(queue, "proposals", None)
    if found is None:
        return None
    return sum(1 for p in found if getattr(p, "status", "open") == "open")


def _summary(r: SyncResult, waiting: int | None) -> list[str]:
    lines = []
    for f in r.fetched:
        agents = [u for u in f.updated if u.ref.split("/", 3)[-1].startswith("agent/")]
        new = sum(1 for u in agents if u.old is None)
        others = len(f.updated) - len(agents)
        bits = []
        if new:
            bits.append(f"{new} new agent branch{'es' if new != 1 else ''}")
        if len(agents) - new:
            bits.append(f"{len(agents) - new} agent branch{'es' if len(agents) - new != 1 else ''} "
                        "with new commits")
        if others:
            bits.append(f"{others} other branch{'es' if others != 1 else ''} updated")
        lines.append(f"fetched {f.remote}: {', '.join(bits) or 'nothing new'}")
    if r.remote is None:
        return lines
    theirs = f"{r.remote}/{r.branch}"
    lines.append({
        "up-to-date": f"{r.branch}: up to date with {theirs}",
        "ahead": f"{r.branch}: nothing new from {theirs}",
        "fast-forward": f"{r.branch}: fast-forwarded to {theirs} "
                        f"({r.incoming} commit{'s' if r.incoming != 1 else ''} arrived)",
        "merged": f"{r.branch}: merged {theirs} ({r.incoming} commit{'s' if r.incoming != 1 else ''} "
                  f"arrived) as {(r.merge or '')[:12]}",
    }[r.joined])
    if r.pushed is not None:
        p = r.pushed
        lines.append({"pushed": f"pushed {r.branch} to {r.remote} ({p.message})",
                      "up-to-date": f"{r.remote} already had {r.branch}",
                      "rejected": f"not pushed: {r.remote} refused {r.branch} ({p.message})"}[p.status])
    if waiting is not None:
        lines.append(f"{waiting} proposal{'s' if waiting != 1 else ''} waiting for review")
    return lines


def _as_json(r: SyncResult, waiting: int | None) -> dict[str, Any]:
    return {
        "branch": r.branch, "remote": r.remote, "joined": r.joined, "before": r.before,
        "after": r.after, "incoming": r.incoming, "merge": r.merge,
        "fetched": [{"remote": f.remote, "updated": [{"ref": u.ref, "old": u.old, "new": u.new}
                                                     for u in f.updated]} for f in r.fetched],
        "pushed": None if r.pushed is None else {
            "status": r.pushed.status, "old": r.pushed.old, "new": r.pushed.new,
            "message": r.pushed.message},
        "proposals_waiting": waiting, "warnings": list(r.warnings),
    }
