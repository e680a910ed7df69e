"""The curation commands: the same operations, validation and commits as the GUI.

    factdesk relabel FACT... --type hypothesis --settle-by 2027-01-31 --reason "…"
    factdesk edit    FACT... --confidence 0.6 --reason "…"
    factdesk move    FACT DEST | FACT... --topic TOPIC|auto  --reason "…"
    factdesk retract FACT...  --reason "…"
    factdesk restore PATH...  --reason "…"
    factdesk attest  FACT... [--claim-type …] --reason "…"
    factdesk undo | redo [--list]
    factdesk identity [--name N --email E]

Every action prints what it committed: `[<short sha>] <subject>`.

FACT is an id, a path or an 8-hex name; `--query Q` selects every fact a search matches
(a bulk action is one commit). `--preview` prints the diff and commits nothing.
Exit status: 0 done, 1 refused or conflicted (the message names the rule), 2 usage.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from factdesk.cli.commands import FORMAT, KB, _exit, _open, _say_recovered, cli, say
from factdesk.curation import ChangeSet, Curation, CurationError, Recovered, recover
from factdesk.curation.identity import (
    MissingIdentity,
    curator_identity,
    default_identity_file,
    save_identity,
)
from factdesk.index.indexer import AFTER_COMMIT_WAIT, Indexer
from factdesk.index.search import fact_ids, get_fact_row, live_paths_by_batch
from factdesk.model.words import count

REASON = click.option("--reason", required=True, help="why (recorded in the commit; required)")
PREVIEW = click.option("--preview", is_flag=True, help="show the change, commit nothing")
QUERY = click.option("--query", "query", default=None,
                     help="act on every fact this search matches (one commit)")


def _curation(kb: Path, recovered: list[Recovered] | None = None) -> Curation:
    """The corpus's curation, after recovering an interrupted action (each one said, and
    added to `recovered`) and bringing the index up to date."""
    indexer = _open(kb)
    for done in recover(indexer.repo):
        _say_recovered(done)
        if recovered is not None:
            recovered.append(done)
    # (behind a stopped updater: IndexBusy in words after search's bound, nothing done)
    indexer.update(lock_wait=AFTER_COMMIT_WAIT)
    return Curation(indexer, identity_file=default_identity_file())


def _paths(indexer: Indexer, facts: Sequence[str], query: str | None, *, live: bool = True) -> list[str]:
    conn = indexer.connect(readonly=True)
    try:
        out: list[str] = []
        for ref in facts:
            row = get_fact_row(conn, ref)
            if row is None:
                raise click.ClickException(f"no fact matches {ref!r}")
            out.append(row["path"])
        if query is not None:
            out += live_paths_by_batch(conn, fact_ids(conn, query))
        if not out:
            raise click.ClickException("no facts selected (name them, or give --query)")
        return list(dict.fromkeys(out))
    finally:
        conn.close()


def _report(fmt: str, action: Callable[[], ChangeSet]) -> None:
    try:
        result = action()
    except CurationError as exc:
        rule = getattr(exc, "rule", None)
        kind = {"Conflict": "conflict", "Failed": "failed"}.get(type(exc).__name__, "refused")
        if fmt == "json":
            click.echo(json.dumps({"ok": False, "error": kind, "rule": rule, "message": str(exc)}))
        else:
            say(f"{kind}{f' [{rule}]' if rule else ''}: {exc}", err=True)
        _exit(1)
        return
    if fmt == "json":
        click.echo(json.dumps({"ok": True, **result.as_dict()}, ensure_ascii=False, indent=2))
    else:
        for f in result.files:
            say(f.diff, nl=False)
        if result.preview:
            say(f"preview (nothing committed): {result.subject}")
        else:
            extra = " (rebased onto the agent's new commits)" if result.rebased else ""
            say(f"[{result.commit[:12] if result.commit else ''}] {result.subject}{extra}")
            if result.index is not None and result.index.note:
                say(result.index.note, err=True)
    for warning in result.committed.warnings if result.committed else ():
        say(f"warning: {warning}", err=True)  # committed all the same (the ref moved)
    _exit(0)


#: the most a body read from a file or stdin may hold
BODY_LIMIT = 1 << 20


def _read_body(stream: Any) -> str:
    """A body from `--body-file`: UTF-8 text, or a usage error that says why not (a binary
    file, one too large), never a traceback (issue 15)."""
    name = getattr(stream, "name", "the body file")
    try:
        data = stream.read(BODY_LIMIT + 1)
    except OSError as exc:
        raise click.ClickException(f"{name}: cannot be read: {exc.strerror or exc}") from None
    if len(data) > BODY_LIMIT:
        raise click.ClickException(f"{name}: more than {BODY_LIMIT} bytes; a body is text")
    if b"\0" in data:
        raise click.ClickException(f"{name}: a binary file (it holds NUL bytes); a body is text")
    try:
        return str(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise click.ClickException(f"{name}: not UTF-8 text (byte {exc.start}); a body is "
                                   "text") from None


def _envelope_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The relabel fields as options; each arrives under its frontmatter key."""
    for name, help_ in reversed((
        ("type", "fact type"), ("kind", "epistemic or pragmatic"),
        ("origin", "authored/distilled/discovered"),
        ("claim-type", "assertion/observation/report/inference/synthesis/hypothesis"),
        ("claimant", "claimant agent id"), ("claimant-type", "tool/persona/view/peer/user"),
        ("subject-kind", "self/user/other_agent/codebase/world/meta"), ("subject-ref", "e.g. user:ana"),
        ("settle-by", "YYYY-MM-DD"), ("settlement", "the settlement criterion"),
    )):
        key = "claimant_agent_id" if name == "claimant" else name.replace("-", "_")
        f = click.option(f"--{name}", key, default=None, help=help_)(f)
    return f


def _given(fields: dict[str, str | None]) -> dict[str, str | None]:
    return {k: v for k, v in fields.items() if v is not None}


@cli.command()
@click.argument("facts", nargs=-1)
@_envelope_options
@REASON
@QUERY
@PREVIEW
@KB
@FORMAT
def relabel(facts: tuple[str, ...], reason: str, query: str | None, preview: bool, kb: Path, fmt: str,
            **fields: str | None) -> None:
    """Change envelope fields (kind, type, origin, claim type, claimant, subject) of facts."""
    cur = _curation(kb)
    changes = _given(fields)
    paths = _paths(cur.indexer, facts, query)
    _report(fmt, lambda: cur.relabel(paths, changes, reason, preview=preview))


@cli.command()
@click.argument("facts", nargs=-1)
@click.option("--confidence", default=None)
@click.option("--sources", default=None)
@click.option("--domain", default=None, help="comma-separated")
@click.option("--entities", default=None, help="comma-separated")
@click.option("--refs", default=None, help="comma-separated")
@click.option("--title", default=None)
@click.option("--body-file", type=click.File("rb"), default=None,
              help="the new body, from a UTF-8 text file (- for stdin)")
@REASON
@QUERY
@PREVIEW
@KB
@FORMAT
def edit(facts: tuple[str, ...], confidence: str | None, sources: str | None, domain: str | None,
         entities: str | None, refs: str | None, title: str | None, body_file: Any, reason: str,
         query: str | None, preview: bool, kb: Path, fmt: str) -> None:
    """Change confidence, sources, domain, entities, refs, title or body of facts."""
    cur = _curation(kb)
    changes: dict[str, object] = {k: v for k, v in (
        ("confidence", confidence), ("sources", sources), ("domain", domain), ("entities", entities),
        ("refs", refs), ("title", title)) if v is not None}
    if body_file is not None:
        changes["body"] = _read_body(body_file)
    paths = _paths(cur.indexer, facts, query)
    _report(fmt, lambda: cur.edit(paths, changes, reason, preview=preview))


@cli.command()
@click.argument("facts", nargs=-1)
@click.option("--to", "dest", default=None, help="the new path (one fact)")
@click.option("--topic", default=None,
              help="file the facts under this topic (same sub-path); `auto`: the topic most of "
                   "each fact's sources are filed under")
@REASON
@QUERY
@PREVIEW
@KB
@FORMAT
def move(facts: tuple[str, ...], dest: str | None, topic: str | None, reason: str, query: str | None,
         preview: bool, kb: Path, fmt: str) -> None:
    """File facts under another path (a git rename); refs to them change in the same commit."""
    cur = _curation(kb)
    paths = _paths(cur.indexer, facts, query)
    if (dest is None) == (topic is None):
        raise click.UsageError("give exactly one of --to DEST (one fact) or --topic TOPIC")
    if dest is not None and len(paths) != 1:
        raise click.UsageError("--to moves one fact; use --topic for several")

    def run() -> ChangeSet:
        moves = {paths[0]: dest} if dest is not None else cur.topic_move_targets(paths, topic or "")
        return cur.move(moves, reason, preview=preview)

    _report(fmt, run)


@cli.command()
@click.argument("facts", nargs=-1)
@REASON
@QUERY
@PREVIEW
@KB
@FORMAT
def retract(facts: tuple[str, ...], reason: str, query: str | None, preview: bool, kb: Path,
            fmt: str) -> None:
    """Retract facts: delete the files in one commit that records the reason."""
    cur = _curation(kb)
    paths = _paths(cur.indexer, facts, query)
    _report(fmt, lambda: cur.retract(paths, reason, preview=preview))


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@REASON
@PREVIEW
@KB
@FORMAT
def restore(paths: tuple[str, ...], reason: str, preview: bool, kb: Path, fmt: str) -> None:
    """Bring retracted facts back from history (their last live version)."""
    cur = _curation(kb)
    conn = cur.indexer.connect(readonly=True)
    try:
        resolved = []
        for ref in paths:
            row = get_fact_row(conn, ref)
            resolved.append(row["path"] if row is not None else ref)
    finally:
        conn.close()
    _report(fmt, lambda: cur.restore(resolved, reason, preview=preview))


@cli.command()
@click.argument("facts", nargs=-1)
@_envelope_options
@REASON
@QUERY
@PREVIEW
@KB
@FORMAT
def attest(facts: tuple[str, ...], reason: str, query: str | None, preview: bool, kb: Path, fmt: str,
           **fields: str | None) -> None:
    """Confirm a derived or legacy envelope as curator (the only way to ground truth)."""
    cur = _curation(kb)
    changes = _given(fields)
    paths = _paths(cur.indexer, facts, query)
    _report(fmt, lambda: cur.attest(paths, reason, changes, preview=preview))


@cli.command()
@click.argument("hypothesis")
@click.option("--confirm", "confirm_by", default=None, metavar="FACT",
              help="confirmed by this observation (it will cite the hypothesis; the hypothesis is retracted)")
@click.option("--confirm-new", "--new-title", "confirm_title", default=None, metavar="TITLE",
              help="confirmed by a new observation with this title (its body: --new-body or "
                   "--body-file, required)")
@click.option("--new-body", default=None, metavar="TEXT", help="the new observation's body")
@click.option("--body-file", type=click.File("rb"), default=None,
              help="the new observation's body from a UTF-8 file (- for stdin)")
@click.option("--confidence", type=click.FloatRange(0.0, 1.0), default=0.8, show_default=True,
              help="the new observation's confidence (--confirm-new; it is written with sources: 1)")
@click.option("--refute", is_flag=True, help="it did not hold: retract it")
@click.option("--evidence", multiple=True, help="facts or URLs showing it did not hold (refute)")
@click.option("--extend", "extend_to", default=None, metavar="YYYY-MM-DD", help="a new settle-by date")
@click.option("--settlement", default=None, help="a new settlement criterion (extend)")
@click.option("--promote", is_flag=True, help="promote in place: it becomes an observation")
@REASON
@PREVIEW
@KB
@FORMAT
def settle(hypothesis: str, confirm_by: str | None, confirm_title: str | None, new_body: str | None,
           body_file: Any, confidence: float, refute: bool, evidence: tuple[str, ...], extend_to: str | None,
           settlement: str | None, promote: bool, reason: str, preview: bool, kb: Path, fmt: str) -> None:
    """Settle a hypothesis: confirm, refute, extend or promote it (one commit)."""
    chosen = [bool(confirm_by or confirm_title), refute, bool(extend_to or settlement), promote]
    if sum(chosen) != 1:
        raise click.UsageError("choose one of --confirm/--confirm-new, --refute, --extend/--settlement, "
                               "--promote")
    cur = _curation(kb)
    hyp = _paths(cur.indexer, [hypothesis], None)[0]
    if confirm_by or confirm_title:
        obs = _paths(cur.indexer, [confirm_by], None)[0] if confirm_by else None
        if new_body is not None and body_file is not None:
            raise click.UsageError("give the body once: --new-body or --body-file")
        body = new_body if new_body is not None else _read_body(body_file) if body_file else ""
        _report(fmt, lambda: cur.confirm(hyp, obs, reason, new_title=confirm_title, new_body=body,
                                         confidence=confidence, preview=preview))
    elif refute:
        _report(fmt, lambda: cur.refute(hyp, reason, evidence=evidence, preview=preview))
    elif promote:
        _report(fmt, lambda: cur.promote(hyp, reason, preview=preview))
    else:
        _report(fmt, lambda: cur.extend(hyp, reason, settle_by=extend_to, settlement=settlement,
                                        preview=preview))


@cli.command()
@click.option("--all", "include_all", is_flag=True, help="also facts with no envelope at all")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 1_000_000))
@KB
@FORMAT
def mislabels(include_all: bool, limit: int, kb: Path, fmt: str) -> None:
    """The suspected-mislabels queue: likely mislabels with a proposed relabel each."""
    from factdesk.curation.dismissals import queue_from_index

    indexer = _open(kb)
    indexer.update()
    conn = indexer.connect(readonly=True)
    try:
        queue = queue_from_index(indexer.repo, conn, include_no_envelope=include_all)
    finally:
        conn.close()
    if fmt == "json":
        click.echo(json.dumps({"total": len(queue), "suggestions": [s.as_dict() for s in queue[:limit]]},
                              ensure_ascii=False, indent=2))
    else:
        for s in queue[:limit]:
            change = ", ".join(f"{k} → {v if v is not None else '(remove)'}" for k, v in s.proposal.items())
            change = change or s.proposals[0].label  # (move-to-messages changes no field)
            need = f"  (needs {', '.join(s.needs_input)})" if s.needs_input else ""
            say(f"{s.path}:{s.line}: [{s.code}] {s.explanation}\n    propose: {change}{need}")
        say(count(len(queue), "suggestion"))
    _exit(0)


@cli.command()
@click.argument("fact")
@click.argument("code")
@REASON
@PREVIEW
@KB
@FORMAT
def dismiss(fact: str, code: str, reason: str, preview: bool, kb: Path, fmt: str) -> None:
    """Dismiss a suspected-mislabel suggestion for this version of a fact (recorded in git)."""
    cur = _curation(kb)
    path = _paths(cur.indexer, [fact], None)[0]
    _report(fmt, lambda: cur.dismiss(path, code, reason, preview=preview))


def _stack_command(name: str) -> None:
    what = "undone action" if name == "redo" else "action"
    @cli.command(name=name, help=f"{name.capitalize()} factdesk's last {what} (a new commit; "
                                 "refused if later commits touched its files).")
    @click.option("--reason", default="", help="why (optional)")
    @click.option("--list", "show", is_flag=True, help="list the undo and redo stacks")
    @PREVIEW
    @KB
    @FORMAT
    def command(reason: str, show: bool, preview: bool, kb: Path, fmt: str) -> None:
        cur = _curation(kb)
        if show:
            undo, redo = cur.stacks()
            if fmt == "json":
                click.echo(json.dumps({"undo": [r.__dict__ for r in undo],
                                       "redo": [r.__dict__ for r in redo]}))
            else:
                say("undo (newest last):")
                for r in undo:
                    say(f"  {r.commit[:12]} {r.subject}")
                say("redo (newest last):")
                for r in redo:
                    say(f"  {r.undone_by[:12] if r.undone_by else ''} {r.subject}")
            _exit(0)
            return
        action = cur.undo if name == "undo" else cur.redo
        _report(fmt, lambda: action(reason, preview=preview))

    del command


_stack_command("undo")
_stack_command("redo")



@cli.command()
@click.option("--name", default=None, help="the curator's name")
@click.option("--email", default=None, help="the curator's e-mail")
@KB
def identity(name: str | None, email: str | None, kb: Path) -> None:
    """Show the curator identity commits are made with, or save one in factdesk's settings
    (used when git has no user.name/user.email; factdesk never writes git config)."""
    where = default_identity_file()
    if (name is None) != (email is None):
        raise click.UsageError("give both --name and --email")
    if name is not None and email is not None:
        try:
            save_identity(where, name, email)
        except CurationError as exc:
            say(f"refused [identity]: {exc}", err=True)
            _exit(1)
            return
        say(f"saved {name} <{email}> in {where}")
    try:
        ident = curator_identity(kb, where)
    except MissingIdentity as exc:
        say(str(exc), err=True)
        _exit(1)
        return
    except CurationError as exc:
        say(f"refused [identity]: {exc}", err=True)
        _exit(1)
        return
    say(f"curator: {ident.name} <{ident.email}>")
    _exit(0)

