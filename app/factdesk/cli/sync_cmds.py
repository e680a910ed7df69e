"""`factdesk sync`: fetch every remote, join the curated branch with the remote's, push
(review/sync.py; issue 13).

    factdesk sync [--kb PATH] [--remote NAME] [--as-proposals] [--format text|json]

Progress goes to stderr; the summary (what arrived, what was joined, what was pushed, each
adopted commit that is no decision) to stdout. Exit 1 when both sides changed the same fact
(the facts and both commits named, nothing changed), when the remote's branch holds agent
commits no curator decided (each named, nothing changed: `--as-proposals` takes them in as
proposals on a local `agent/<id>` branch instead) or the sync was refused.
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
from factdesk.curation.changes import inert
from factdesk.curation.trust import Arrival
from factdesk.errors import CorpusNotFound, FactdeskError
from factdesk.review.sync import AgentCommits, SyncConflict, SyncResult, sync


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
@click.option("--as-proposals", "as_proposals", is_flag=True,
              help="agent commits on the remote's curated branch (no curator decided them) "
                   "are taken in as proposals on a local agent/<id> branch; the curated branch "
                   "stays as it is (without this, sync stops and names them)")
@FORMAT
def sync_cmd(kb: Path, remote: str | None, as_proposals: bool, fmt: str) -> None:
    """Fetch every remote, bring in the other curators' work, push the curated branch."""
    repo = kb.expanduser()
    if not repo.is_dir() or not gitrepo.is_git_repo(repo):
        raise CorpusNotFound(f"{repo} is not the top of a git repository")
    for done in recover(repo):
        say(f"recovered an interrupted action ({done.outcome}): {done.message}", err=True)
    progress = _StderrProgress()
    try:
        result = sync(repo, remote=remote, progress=progress, as_proposals=as_proposals)
    except AgentCommits as stopped:
        progress.done()
        if fmt == "json":
            click.echo(json.dumps({"agent_commits": [_arrival(a) for a in stopped.commits],
                                   "remote": stopped.remote, "branch": stopped.branch},
                                  ensure_ascii=False))
        say(f"Error: {stopped}", err=True)
        _exit(1)
        return
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
    """How many proposals wait for review (REVQ's queue; None when it cannot be read)."""
    from factdesk.review.proposals import load_queue

    try:
        queue = load_queue(repo)
    except (FactdeskError, OSError, LookupError):
        return None  # (the count is a courtesy: the sync itself is done)
    return sum(1 for p in queue.proposals if p.status == "open")


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
        "started": f"{r.branch}: started from {theirs} "
                   f"({r.incoming} commit{'s' if r.incoming != 1 else ''})",
        "fast-forward": f"{r.branch}: fast-forwarded to {theirs} "
                        f"({r.incoming} commit{'s' if r.incoming != 1 else ''} arrived)",
        "merged": f"{r.branch}: merged {theirs} ({r.incoming} commit{'s' if r.incoming != 1 else ''} "
                  f"arrived) as {(r.merge or '')[:12]}",
    }[r.joined])
    if r.adopted:
        n = len(r.adopted)
        lines.append(f"{n} commit{'s' if n != 1 else ''} adopted that {'are' if n != 1 else 'is'} "
                     "no decision:")
        lines += [f"  {_said(a)}" for a in r.adopted]
    if r.proposals:
        n = sum(1 for a in r.proposals if a.kind == "agent")
        lines.append(f"{n} agent commit{'s' if n != 1 else ''} taken in as proposals on "
                     f"{r.proposal_branch} ({r.branch} was left as it is):")
        lines += [f"  {_said(a)}" for a in r.proposals]
    if r.pushed is not None:
        p = r.pushed
        lines.append({"pushed": f"pushed {r.branch} to {r.remote} ({p.message})",
                      "up-to-date": f"{r.remote} already had {r.branch}",
                      "rejected": f"not pushed: {r.remote} refused {r.branch} ({p.message})"}[p.status])
    lines += [f"pushed {p.branch} to {r.remote} ({p.message})" for p in r.agent_pushed]
    if waiting is not None:
        lines.append(f"{waiting} proposal{'s' if waiting != 1 else ''} waiting for review")
    return lines


def _said(a: Arrival) -> str:
    return f"{a.commit[:12]} {inert(a.agent or a.author)}: {inert(a.subject)}"


def _arrival(a: Arrival) -> dict[str, str]:
    return {"commit": a.commit, "kind": a.kind, "author": a.author, "committer": a.committer,
            "subject": a.subject}


def _as_json(r: SyncResult, waiting: int | None) -> dict[str, Any]:
    return {
        "branch": r.branch, "remote": r.remote, "joined": r.joined, "before": r.before,
        "after": r.after, "incoming": r.incoming, "merge": r.merge,
        "fetched": [{"remote": f.remote, "updated": [{"ref": u.ref, "old": u.old, "new": u.new}
                                                     for u in f.updated]} for f in r.fetched],
        "pushed": None if r.pushed is None else {
            "status": r.pushed.status, "old": r.pushed.old, "new": r.pushed.new,
            "message": r.pushed.message},
        "agent_pushed": [{"branch": p.branch, "status": p.status, "old": p.old, "new": p.new,
                          "message": p.message} for p in r.agent_pushed],
        "proposals_waiting": waiting, "warnings": list(r.warnings),
        "adopted": [_arrival(a) for a in r.adopted],
        "proposals": [_arrival(a) for a in r.proposals], "proposal_branch": r.proposal_branch,
    }
