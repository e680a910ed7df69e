"""Only curators change the agent registry (issue 16): the registry in effect is the one
the last curator's change to `.factdesk/agents.yaml` wrote, never an agent's.

The registry is corpus data, so an agent can edit it too — and promote itself to `user`,
whose assertions about itself are ground truth. A change to the file on the curated branch
counts only when the commit that made it is

1. on the branch's first-parent line from its tip (a change that came in through a merge
   is the merged side's, and a merge is never a curator's change to the registry: factdesk
   never commits one; a curator applies an agent's suggestion with `factdesk agents …`);
2. not a merge;
3. neither authored nor committed by an agent identity: an e-mail at `agents.knomit.io`,
   or one the registry *in effect before that commit* lists for an agent of a type other
   than `user` (so an agent cannot first drop itself from the file, then promote itself).

These are rules 1–3 of `factdesk.curation.trust` (the rule undo trusts), applied to one
file. Rules 4–5 (factdesk's trailers) are not required: a curator may edit the registry by
hand in a plain commit, and trailers prove nothing an author identity does not (both are
written by whoever makes the commit).

Every first-parent change after the last counted one is a finding (`registry-trust`) and is
not applied: the registry read is that commit's file. A change in the work tree that is not
committed yet is the local curator's own and is read as it is.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from factdesk import fsio
from factdesk.corpus import githistory, gitrepo, gitreview
from factdesk.model.enums import ClaimantType, Severity
from factdesk.model.fact import Problem
from factdesk.model.registry import Registry

REGISTRY_PATH = ".factdesk/agents.yaml"
AGENT_DOMAIN = "agents.knomit.io"
CODE = "registry-trust"
#: the registry's changes as last read, beside the index (`registry_changes`; derived
#: data: deleting it loses nothing)
KEPT = "registry-changes.json"
_KEPT_VERSION = 1


@dataclass(frozen=True, slots=True)
class RegistryChange:
    """One first-parent commit that changed the registry file."""

    commit: str
    author: str  #: author e-mail
    committer: str  #: committer e-mail
    merge: bool
    blob: str | None  #: the file after the commit (None: deleted)
    subject: str
    trusted: bool = False


def is_agent_identity(email: str, registry: Registry) -> bool:
    """An agent's git identity: knomit's agent domain, or registered as a non-user agent
    (the one copy of the rule: curation's trust rule and the registry's both use it)."""
    if email.rpartition("@")[2].strip().lower() == AGENT_DOMAIN:
        return True
    agent = registry.agent_for_email(email)
    return agent is not None and agent.type != ClaimantType.USER


def registry_changes(repo: Path, tip: str = "HEAD") -> list[RegistryChange]:
    """The first-parent commits up to `tip` that changed the registry file, oldest first:
    all of them. (No depth cap: with one, an agent registered under its own e-mail could
    commit changes until the curator's that listed it fell out of reach, and its oldest
    change kept would be judged against no registry — and count. Issue 23 #7.)

    Read once, then O(new): a path-limited log of the whole line took 0.4 s at every
    registry read (every `recall`, `agents`, `proposals`) at 5,000 commits and grows with
    the history, so the list is kept by tip (`KEPT`, beside the index); a new tip whose
    first-parent line holds the kept one reads only the commits after it. Never trusted
    over git: a rewritten line, another `world_stamp` or a damaged file reads it all."""
    sha = gitrepo.resolve_commit(repo, tip)
    if sha is None:
        return []
    where = gitrepo.common_dir(repo) / "factdesk" / KEPT
    world = githistory.world_stamp(repo)
    kept = _read_kept(where, world)
    if kept is not None and kept[0] == sha:
        return kept[1]
    since = gitreview.first_parent_since(repo, kept[0], sha) if kept is not None else None
    if kept is not None and since is not None:
        changes = kept[1] + _logged(repo, f"{kept[0]}..{sha}")
    else:
        changes = _logged(repo, sha)
    _keep(where, world, sha, changes)
    return changes


def _logged(repo: Path, revs: str) -> list[RegistryChange]:
    """The registry's changes on the first-parent line of `revs`, oldest first, with the
    file each left."""
    out = gitrepo.run_git(
        repo, "log", "--first-parent", "--format=%x01%H%x00%P%x00%ae%x00%ce%x00%s",
        "--end-of-options", revs, "--", REGISTRY_PATH, check=False)
    changes: list[RegistryChange] = []
    for chunk in out.split(b"\x01")[1:]:
        sha, parents, author, committer, subject = (
            chunk.decode("utf-8", "replace").rstrip("\n").split("\x00", 4))
        changes.append(RegistryChange(sha, author, committer, len(parents.split()) > 1,
                                      None, subject))
    changes.reverse()
    if not changes:
        return changes
    listing = gitrepo.run_git(repo, "cat-file", "--batch-check=%(objectname) %(objecttype)",
                              input="".join(f"{c.commit}:{REGISTRY_PATH}\n" for c in changes
                                            ).encode(), check=False).decode().splitlines()
    blobs = [line.split()[0] if line.endswith(" blob") else None for line in listing]
    blobs += [None] * (len(changes) - len(blobs))
    return [RegistryChange(c.commit, c.author, c.committer, c.merge, b, c.subject)
            for c, b in zip(changes, blobs, strict=True)]


def _read_kept(where: Path, world: str) -> tuple[str, list[RegistryChange]] | None:
    """(tip, changes) as kept for this `world`; None when absent, another version or world,
    or not what we write (read again from git)."""
    try:
        data = json.loads(where.read_bytes())
        if data["version"] != _KEPT_VERSION or data["world"] != world:
            return None
        tip = data["tip"]
        changes = [RegistryChange(c, a, m, bool(g), b, s) for c, a, m, g, b, s in data["changes"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    ours = gitrepo.is_object_id(tip) and all(
        gitrepo.is_object_id(c.commit) and (c.blob is None or gitrepo.is_object_id(c.blob))
        and all(isinstance(v, str) for v in (c.author, c.committer, c.subject)) for c in changes)
    return (tip, changes) if ours else None


def _keep(where: Path, world: str, tip: str, changes: list[RegistryChange]) -> None:
    """Write the list for `tip` (all or nothing); a failure only means reading from git
    next time."""
    data = json.dumps({"version": _KEPT_VERSION, "world": world, "tip": tip,
                       "changes": [[c.commit, c.author, c.committer, c.merge, c.blob, c.subject]
                                   for c in changes]}, ensure_ascii=False)
    with contextlib.suppress(OSError):
        fsio.atomic_write(where, data.encode("utf-8"), crash_points=False)


def judge(changes: list[RegistryChange], parse: Callable[[str | None], Registry]
          ) -> tuple[list[RegistryChange], int]:
    """Mark each change trusted or not, oldest first, judging identities against the
    registry in effect before it. Returns (changes, index of the last trusted one or -1)."""
    in_effect = Registry()
    last = -1
    out: list[RegistryChange] = []
    for i, c in enumerate(changes):
        ok = (not c.merge and not is_agent_identity(c.author, in_effect)
              and not is_agent_identity(c.committer, in_effect))
        out.append(RegistryChange(c.commit, c.author, c.committer, c.merge, c.blob, c.subject, ok))
        if ok:
            last = i
            in_effect = parse(c.blob)
    return out, last


@dataclass(frozen=True, slots=True)
class Effective:
    """The registry bytes in effect and why."""

    data: bytes | None  #: None: no registry (the seeded types only)
    problems: tuple[Problem, ...]  #: one `registry-trust` finding per change not applied
    in_effect: str | None  #: the commit whose file is in effect (None: work tree / none)


def effective_bytes(repo: Path, work_tree: bytes | None,
                    parse_bytes: Callable[[bytes], Registry]) -> Effective:
    """The registry bytes to read: the work tree's when it differs from HEAD's (a local,
    uncommitted change) or when there is no git history; else the file of the last
    curator's change, with a finding for every later change that is not applied."""
    if not (repo / ".git").exists():
        return Effective(work_tree, (), None)
    try:
        changes = registry_changes(repo)
    except gitrepo.GitError:
        return Effective(work_tree, (), None)
    if not changes:
        return Effective(work_tree, (), None)
    head_blob = changes[-1].blob
    if (work_tree is None) != (head_blob is None) or (
            work_tree is not None and gitrepo.blob_id(work_tree) != head_blob):
        return Effective(work_tree, (), None)  # uncommitted: the local curator's own
    cache: dict[str, bytes | None] = {}
    with gitrepo.BlobReader(repo) as reader:
        def read(blob: str) -> bytes | None:
            if blob not in cache:
                cache[blob] = reader.read(blob)
            return cache[blob]

        def parse(blob: str | None) -> Registry:
            data = read(blob) if blob else None
            return parse_bytes(data) if data is not None else Registry()

        judged, last = judge(changes, parse)
        problems = tuple(_finding(c, judged[last] if last >= 0 else None)
                         for c in judged[last + 1:])
        if not problems:
            return Effective(work_tree, (), judged[last].commit if last >= 0 else None)
        if last < 0:
            return Effective(None, problems, None)
        blob = judged[last].blob
        return Effective(read(blob) if blob else None, problems, judged[last].commit)


def _finding(c: RegistryChange, in_effect: RegistryChange | None) -> Problem:
    who = c.author if c.author == c.committer else f"{c.author} (committed by {c.committer})"
    why = "a merge" if c.merge else f"made by an agent identity, {who}"
    kept = (f"the registry of {in_effect.commit[:10]} stays in effect" if in_effect
            else "no curator's registry is in effect (the seeded types only)")
    return Problem(REGISTRY_PATH, 1, CODE, Severity.ERROR,
                   f"agent registry change {c.commit[:10]} is not a curator's ({why}): "
                   f"not applied; {kept}. Only curators change the registry "
                   f"(`factdesk agents set-type … --reason …`)")
