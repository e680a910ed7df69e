"""Deciding on agents' proposals (issue 13): the same decisions, checks and commits as the app.

    factdesk accept ID... --reason R [--path P...] [--override] [--edit P=FILE...]
    factdesk accept --all-clean --branch B --reason R
    factdesk reject ID... --reason R [--path P...]
    factdesk merge-reviewed --branch B

ID is a full or unique abbreviated sha of an agent commit (`factdesk proposals` lists
them). Every decision prints what it committed (`[<short sha>] <subject>`) and the review
merge when one was recorded; `--preview` commits nothing; `--format json` answers in JSON.
Exit status: 0 done, 1 refused or in conflict (the message names the rule: R1, conflict,
depends, decided …), 2 usage.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from factdesk.cli.commands import FORMAT, KB, RECOVERED_KEY, _exit, cli, say
from factdesk.cli.curation_cmds import PREVIEW, REASON, _curation, _report
from factdesk.curation import CurationError, Recovered
from factdesk.curation.changes import ChangeSet
from factdesk.model.words import count
from factdesk.review.decide import Review

PATHS = click.option("--path", "paths", multiple=True,
                     help="decide only this fact of the proposals (repeatable)")


def _review(kb: Path) -> Review:
    recovered: list[Recovered] = []
    cur = _curation(kb, recovered)  # (recovers an interrupted action, updates the index)
    review = Review(cur.indexer, identity_file=cur.identity_file)
    # (recovery may have run already when the corpus was opened: `commands._open`)
    recovered += click.get_current_context().meta.get(RECOVERED_KEY, [])
    if recovered:  # a decision whose ref moved before its review merge: record it now
        try:
            merges, warnings = review.record_pending()
        except CurationError as exc:  # (no curator identity yet: the decision says so)
            merges, warnings = [], [f"the review merges were not checked ({exc})"]
        for merge in merges:
            say(f"[{merge[:12]}] review merge recorded (lost to the interruption)", err=True)
        for warning in warnings:
            say(f"warning: {warning}", err=True)
    return review


def _said(result: ChangeSet) -> ChangeSet:
    for merge in getattr(result, "merges", ()):
        say(f"[{merge[:12]}] review merge recorded", err=True)
    return result


def _kept(into: list[ChangeSet], result: ChangeSet) -> ChangeSet:
    into.append(result)
    return result


def _say_clean(result: ChangeSet) -> None:
    """What "accept all clean" took, and each open proposal it left, with why."""
    taken = getattr(result, "proposals", ())
    left = getattr(result, "left", ())
    say(f"{'would take' if result.preview else 'took'} {count(len(taken), 'clean proposal')}: "
        + " ".join(sha[:10] for sha in taken))
    for v in left:
        say(f"stays open: {v.sha[:10]} [{v.kind}] {v.why}")


@cli.command()
@click.argument("ids", nargs=-1)
@REASON
@PATHS
@click.option("--override", is_flag=True,
              help="accept over the rules it breaks or a conflict (recorded with the reason)")
@click.option("--edit", "edit_files", multiple=True, metavar="PATH=FILE",
              help="accept FILE's bytes as the version of PATH (the curator's correction)")
@click.option("--all-clean", is_flag=True,
              help="accept every open proposal of --branch that is clean, in one commit")
@click.option("--branch", default=None, help="the agent branch (with --all-clean)")
@PREVIEW
@KB
@FORMAT
def accept(ids: tuple[str, ...], reason: str, paths: tuple[str, ...], override: bool,
           edit_files: tuple[str, ...], all_clean: bool, branch: str | None, preview: bool,
           kb: Path, fmt: str) -> None:
    """Accept agents' proposals onto the curated branch (the agent stays the author)."""
    if all_clean:
        if ids or paths or override or edit_files or not branch:
            raise click.UsageError("--all-clean takes --branch B and no IDs, --path, "
                                   "--override or --edit")
    elif not ids:
        raise click.UsageError("name the proposals to accept (IDs), or --all-clean --branch B")
    edits: dict[str, bytes] = {}
    for spec in edit_files:
        path, eq, file = spec.partition("=")
        if not eq or not path or not file:
            raise click.UsageError(f"--edit {spec!r}: give PATH=FILE")
        try:
            edits[path] = Path(file).read_bytes()
        except OSError as exc:
            raise click.UsageError(f"--edit {spec!r}: {exc.strerror or exc}") from None
    review = _review(kb)
    if all_clean:
        assert branch is not None
        taken: list[ChangeSet] = []
        _report(fmt, lambda: _said(_kept(taken, review.accept_all_clean(branch, reason,
                                                                        preview=preview))))
        if taken and fmt != "json":
            _say_clean(taken[0])
        return
    _report(fmt, lambda: _said(review.accept(list(ids), reason, paths=list(paths) or None,
                                             override=override, edits=edits or None,
                                             preview=preview)))


@cli.command()
@click.argument("ids", nargs=-1, required=True)
@REASON
@PATHS
@PREVIEW
@KB
@FORMAT
def reject(ids: tuple[str, ...], reason: str, paths: tuple[str, ...], preview: bool, kb: Path,
           fmt: str) -> None:
    """Reject agents' proposals: recorded in git (an empty commit), the curated facts stay."""
    review = _review(kb)
    _report(fmt, lambda: _said(review.reject(list(ids), reason, paths=list(paths) or None,
                                             preview=preview)))


@cli.command("merge-reviewed")
@click.option("--branch", required=True, help="the agent branch (agent/x or origin/agent/x)")
@KB
@FORMAT
def merge_reviewed(branch: str, kb: Path, fmt: str) -> None:
    """Record the review merge of an agent branch up to its decided prefix now (after a
    crash lost it, or to bring the agent's own messages over): docs/review.md."""
    review = _review(kb)
    try:
        made = review.merge_reviewed(branch)
    except CurationError as exc:
        rule = getattr(exc, "rule", None)
        if fmt == "json":
            click.echo(json.dumps({"ok": False, "error": "refused", "rule": rule,
                                   "message": str(exc)}))
        else:
            say(f"refused{f' [{rule}]' if rule else ''}: {exc}", err=True)
        _exit(1)
        return
    if fmt == "json":
        click.echo(json.dumps({"ok": True, "merge": made}))
    elif made:
        say(f"[{made[:12]}] review merge recorded", err=True)
    else:
        say(f"{branch}: nothing to record (no decided prefix the curated branch does not "
            "reach yet)")
    _exit(0)
