"""Named questions to git's history, each one command line (built by `gitrepo.git_argv`, so
RELIABILITY I6 holds), for the layers above `corpus/`: they never build git command lines.

Also the rules that read factdesk's own commit trailers (`Factdesk-Action:` …): only from a
message's final trailer block, and an undo or redo counts only as the exact inverse of the
commit it names (`cancelled_commits`), so that an action and its undo cancel out in every
derived view (transitions, track records, creation times, the settlement queue).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from factdesk.corpus import gitrepo
from factdesk.corpus.gitrepo import ZERO, RawChange, raw_changes, run_git

# -- revisions --------------------------------------------------------------------------------


def resolve_commit(repo: Path, rev: str) -> str | None:
    """The commit id `rev` names, or None (never an option: `--end-of-options`)."""
    out = run_git(repo, "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}",
                  check=False).decode().strip()
    return out or None


def first_parent_chain(repo: Path, rev: str = "HEAD") -> list[str]:
    """The commits on `rev`'s first-parent chain, oldest first ([] when it names nothing)."""
    return run_git(repo, "rev-list", "--first-parent", "--reverse", "--end-of-options", rev, "--",
                   check=False).decode().split()


def first_parent_count(repo: Path, rev: str) -> int:
    """How many commits `rev`'s first-parent chain holds (`rev` itself included)."""
    return int(run_git(repo, "rev-list", "--first-parent", "--count", "--end-of-options", rev,
                       "--").decode().strip() or 0)


def merge_base(repo: Path, a: str, b: str) -> str | None:
    """The best common ancestor of two commits, or None."""
    out = run_git(repo, "merge-base", "--end-of-options", a, b, check=False).decode().strip()
    return out or None


def commits_only_in(repo: Path, rev: str, not_in: str) -> list[str]:
    """Commits `rev` reaches and `not_in` does not (`git rev-list not_in..rev`), newest first."""
    return run_git(repo, "rev-list", "--end-of-options", f"{not_in}..{rev}", "--",
                   check=False).decode().split()


# -- files in history -------------------------------------------------------------------------


def tree_blobs(repo: Path, rev: str, root: str) -> list[tuple[str, str]]:
    """(path, blob id) of every file under `root` in `rev`'s tree."""
    listing = run_git(repo, "ls-tree", "-r", "-z", "--full-tree", "--end-of-options", rev, "--",
                      f"{root}/")
    files: list[tuple[str, str]] = []
    for entry in listing.split(b"\x00"):
        meta, _, raw = entry.partition(b"\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == b"blob":
            files.append((raw.decode("utf-8", "surrogateescape"), fields[2].decode()))
    return files


def added_by(repo: Path, rev: str, root: str) -> dict[str, str]:
    """path → e-mail of the oldest commit that added it, for every path under `root` ever
    added up to `rev` (one `git log --diff-filter=A` pass)."""
    out = run_git(repo, "log", "--no-renames", "--diff-filter=A", "--format=%x01%ae",
                  "--name-only", "-z", "--end-of-options", rev, "--", f"{root}/", check=False)
    found: dict[str, str] = {}
    for chunk in out.split(b"\x01")[1:]:  # newest first: the oldest addition wins
        parts = chunk.split(b"\x00")
        email = parts[0].strip().decode("utf-8", "replace")
        for raw in parts[1:]:
            path = raw.strip(b"\n").decode("utf-8", "surrogateescape")
            if path:
                found[path] = email
    return found


def deleted_in(repo: Path, path: str, rev: str = "HEAD") -> str | None:
    """The first-parent commit that last deleted `path` (retracted or moved it), or None."""
    out = run_git(repo, "log", "--first-parent", "-n", "1", "--format=%H", "--diff-filter=D",
                  "--end-of-options", rev, "--", path, check=False).decode().strip()
    return out or None


def commit_changes(repo: Path, commit: str, *, renames: bool = False) -> list[RawChange]:
    """What `commit` changed against its first parent (the root commit: against nothing);
    with `renames`, a rename is one change with its `new_path`."""
    out = run_git(repo, "diff-tree", "-r", "-z", "--no-commit-id", "--root", "-m",
                  "--first-parent", "-M" if renames else "--no-renames", "--no-textconv",
                  "--no-ext-diff", "--end-of-options", commit)
    return raw_changes(out)


def changed_between(repo: Path, old: str, new: str, paths: Sequence[str] = ()) -> list[str]:
    """Paths (among `paths`, or all) whose content differs between two commits."""
    out = run_git(repo, "diff", "--name-only", "-z", "--no-renames", "--no-textconv",
                  "--no-ext-diff", "--end-of-options", old, new, "--", *paths)
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\x00") if p]


def one_line_log(repo: Path, rev_range: str, paths: Sequence[str] = ()) -> str:
    """`%h %an: %s` of each commit in `rev_range` touching `paths`, newest first (for
    messages that name who changed a file since)."""
    return run_git(repo, "log", "--format=%h %an: %s", "--end-of-options", rev_range, "--",
                   *paths, check=False).decode("utf-8", "replace").strip()


def messages_with(repo: Path, rev_range: str, needle: str, *,
                  first_parent: bool = True) -> list[tuple[str, str, str]]:
    """(sha, subject, whole message) of the commits of `rev_range` (first-parent ones only,
    unless told otherwise) whose message holds `needle` (a fixed string), newest first, all
    of them (no depth cap: a cap lets older commits silently drop out, issue 23 #7)."""
    out = run_git(repo, "log", *(["--first-parent"] if first_parent else []),
                  "--format=%x01%H%x00%s%x00%B", "--fixed-strings", f"--grep={needle}",
                  "--end-of-options", rev_range, "--", check=False)
    found = []
    for chunk in out.split(b"\x01")[1:]:
        sha, subject, body = chunk.decode("utf-8", "replace").split("\x00", 2)
        found.append((sha, subject, body))
    return found


@dataclass(frozen=True, slots=True)
class LoggedCommit:
    """One commit of `decision_log`: its id, parents, author and committer e-mail, subject,
    whole message and its final trailer block (`trailer_lines`, parsed once here)."""

    sha: str
    parents: tuple[str, ...]
    author_email: str
    committer_email: str
    subject: str
    message: str
    trailers: tuple[tuple[str, str], ...] | None

    @classmethod
    def of(cls, sha: str, parents: tuple[str, ...], author: str, committer: str, subject: str,
           message: str) -> LoggedCommit:
        block = trailer_lines(message)
        return cls(sha, parents, author, committer, subject, message,
                   None if block is None else tuple(block))


def decision_log(repo: Path, tip: str, needle: str, *, merges: bool = False,
                 exclude: Sequence[str] = ()) -> list[LoggedCommit]:
    """The non-merge commits on `tip`'s first-parent line whose message holds `needle` (a
    fixed string; "": every commit), newest first, all of them (the curation trust rule
    reads these; no depth cap: issue 23 #7, `index.decision_log` keeps them cheap).
    `merges`: the merge commits too; `exclude`: stop at commits these reach (the line of a
    sync merge's second parent, down to what its first parent has)."""
    grep = ["--fixed-strings", f"--grep={needle}"] if needle else []
    out = run_git(repo, "log", "--first-parent", *([] if merges else ["--no-merges"]),
                  "--format=%x01%H%x00%P%x00%ae%x00%ce%x00%s%x00%B", *grep,
                  "--end-of-options", tip,
                  *(f"^{rev}" for rev in exclude), "--", check=False)
    found = []
    for chunk in out.split(b"\x01")[1:]:
        sha, parents, author, committer, subject, body = (
            chunk.decode("utf-8", "replace").split("\x00", 5))
        found.append(LoggedCommit.of(sha, tuple(parents.split()), author, committer, subject,
                                     body))
    return found


def replace_refs(repo: Path) -> str:
    """`refname objectname` of every replace ref, one a line ("" when there is none): what
    makes git show a commit with other parents or another message than its id names."""
    return run_git(repo, "for-each-ref", "--format=%(refname) %(objectname)",
                   "refs/replace/").decode("utf-8", "replace")


def world_stamp(repo: Path) -> str:
    """A stamp of what can change a commit's line without changing its id: replace refs
    (and whether git honours them), grafts, the shallow boundary (the caches of history
    kept by commit id are emptied when it changes)."""
    common = gitrepo.common_dir(repo)
    parts = [replace_refs(repo)]
    for name in ("shallow", "info/grafts"):
        try:
            parts.append(hashlib.sha256((common / name).read_bytes()).hexdigest())
        except OSError:
            parts.append("-")
    parts += [os.environ.get(k, "") for k in ("GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE",
                                               "GIT_GRAFT_FILE", "GIT_SHALLOW_FILE")]
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def every_ref(repo: Path) -> bytes:
    """Every ref of the repository and the object it names, one a line (`git
    for-each-ref`): what moved when any branch, tag or remote-tracking ref did (HEAD's own
    commit is the index's; `index.check_cache.answer_key`)."""
    return run_git(repo, "for-each-ref", "--format=%(refname) %(objectname)", check=False)


def agent_refs(repo: Path) -> list[tuple[str, str]]:
    """(ref name, commit) of every local `agent/*` branch and every remote-tracking ref (the
    caller keeps the remote ones whose branch part is `agent/…`)."""
    out = run_git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/agent/",
                  "refs/remotes/", check=False).decode("utf-8", "replace")
    return [(ref, sha) for ref, _, sha in (line.partition(" ") for line in out.splitlines())]


def authors_only_in(repo: Path, ref: str, *, depth: int = 200) -> list[tuple[str, str, int]]:
    """(author name, e-mail, time) of the commits `ref` reaches and HEAD does not, newest
    first (at most `depth`); for a ref HEAD has merged already: its tip's author."""
    found = run_git(repo, "log", "--format=%an%x00%ae%x00%at", f"-n{depth}", "--end-of-options",
                    ref, "--not", "HEAD", "--", check=False).decode("utf-8", "replace").splitlines()
    if not found:
        found = run_git(repo, "log", "-1", "--format=%an%x00%ae%x00%at", "--end-of-options", ref,
                        "--", check=False).decode("utf-8", "replace").splitlines()
    out = []
    for line in found:
        name, email, when = [*line.split("\x00"), "", "0"][:3]
        out.append((name, email, int(when) if when.isdigit() else 0))
    return out


def commit_message(repo: Path, commit: str) -> str:
    """The whole message of `commit` ("" when it names none)."""
    return run_git(repo, "log", "-1", "--format=%B", "--end-of-options", commit, "--",
                   check=False).decode("utf-8", "replace")


def config_get(repo: Path, key: str) -> str | None:
    """The value git itself uses for `key` in `repo` (every scope, includes, environment
    and `-c` as git reads them), or None. (The git CLI rather than GitPython's reader, which
    ignores GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM and GIT_CONFIG_COUNT.) Reading config runs
    no program."""
    out = run_git(repo, "config", "--get", "--end-of-options", key, check=False)
    value = out.decode("utf-8", "surrogateescape").rstrip("\n")
    return value or None


# -- factdesk's trailers, and undo cancelling its action ---------------------------------------

_TRAILER_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9-]*):[ \t]?(.*)$")


def trailer_lines(message: str) -> list[tuple[str, str]] | None:
    """The `(key, value)` lines of a commit message's final trailer block: its last
    paragraph, when that is not the subject and every line of it is a trailer (`Key: value`,
    or a continuation line indented under one, which is skipped: factdesk writes none);
    else None. Trailer-like lines anywhere else (a subject, a reason, a quoted field value)
    are text, never trailers. (The one reader of trailers: undo's cancelling here, the
    curation trust rule and recovery all use it.)"""
    paragraphs = [p for p in re.split(r"\n[ \t]*\n", message.replace("\r\n", "\n").strip()) if p]
    if len(paragraphs) < 2:  # the subject alone is never a trailer block
        return None
    found: list[tuple[str, str]] = []
    key = None
    for line in paragraphs[-1].split("\n"):
        if line[:1] in (" ", "\t") and key is not None:
            continue
        m = _TRAILER_LINE.match(line)
        if m is None:
            return None
        key = m.group(1)
        found.append((key, m.group(2).strip()))
    return found


def final_trailers(message: str) -> dict[str, str]:
    """The final trailer block (`trailer_lines`) as a mapping: the first value of each key."""
    found: dict[str, str] = {}
    for key, value in trailer_lines(message) or ():
        found.setdefault(key, value)
    return found


@dataclass(frozen=True, slots=True)
class ActionMark:
    """What a commit's final trailer block says about factdesk's actions."""

    action: str  #: relabel, refute, … undo, redo
    action_id: str
    reverts: str | None = None  #: for undo and redo: the action id it reverts

    @classmethod
    def of(cls, message: str) -> ActionMark | None:
        t = final_trailers(message)
        action, action_id = t.get("Factdesk-Action"), t.get("Factdesk-Action-Id")
        if not action or not action_id:
            return None
        return cls(action, action_id, t.get("Factdesk-Reverts") or None)


#: (old blob, new blob) per path: a commit's changes against its first parent
Effect = Mapping[str, tuple[str | None, str | None]]


@dataclass(frozen=True, slots=True)
class Step:
    """One first-parent commit, for `cancelled_commits`."""

    sha: str
    message: str  #: subject and body
    effect: Effect


def effect(changes: Iterable[gitrepo.Change | RawChange]) -> dict[str, tuple[str | None, str | None]]:
    """A commit's changes as an `Effect` (the all-zero id as None)."""
    out: dict[str, tuple[str | None, str | None]] = {}
    for c in changes:
        old = c.old_blob if c.old_blob and c.old_blob != ZERO else None
        new = c.new_blob if c.new_blob and c.new_blob != ZERO else None
        out[c.path] = (old, new)
    return out


def _inverse(a: Effect, b: Effect) -> bool:
    return bool(a) and a.keys() == b.keys() and all(b[p] == (a[p][1], a[p][0]) for p in a)


@dataclass(frozen=True, slots=True)
class Cancelled:
    """The outcome of `cancelled_commits`."""

    shas: frozenset[str]  #: commits whose effect derived views leave out
    #: undo/redo commits whose action lies before the steps given (an incremental reader
    #: must go back to it)
    orphans: tuple[str, ...]


def cancelled_commits(steps: Sequence[Step]) -> Cancelled:
    """Which of these first-parent commits (oldest first) cancel out: an action X, its
    undo U, a redo R of it, a second undo … count only as a chain in which each step is the
    exact inverse of the one before (same paths, blobs swapped), named by its final trailer
    block (`Factdesk-Action: undo|redo`, `Factdesk-Reverts: <X's action id>`). A chain that
    ends undone cancels entirely; one that ends redone keeps X alone, at its own time. A
    forged or inexact undo is an ordinary commit."""
    chains: dict[str, list[Step]] = {}
    orphans: list[str] = []
    for step in steps:
        mark = ActionMark.of(step.message)
        if mark is None:
            continue
        if mark.action in ("undo", "redo"):
            chain = chains.get(mark.reverts or "")
            if chain is None:
                orphans.append(step.sha)
                continue
            expected = "undo" if len(chain) % 2 == 1 else "redo"
            if mark.action == expected and _inverse(chain[-1].effect, step.effect):
                chain.append(step)
        elif mark.action_id not in chains:  # (a repeated id is an ordinary commit)
            chains[mark.action_id] = [step]
    out: set[str] = set()
    for chain in chains.values():
        gone = chain if len(chain) % 2 == 0 else chain[1:]
        out.update(s.sha for s in gone)
    return Cancelled(frozenset(out), tuple(orphans))


# -- proposal review (factdesk/review/, issue 13) --------------------------------------------


def checked_out_branch(repo: Path) -> tuple[str, str | None]:
    """(the checked-out branch's short name, its tip) — ("", tip) on a detached HEAD and
    (name, None) on a branch with no commit yet."""
    name = run_git(repo, "symbolic-ref", "-q", "--short", "HEAD",
                   check=False).decode("utf-8", "replace").strip()
    proc = gitrepo.git_proc(repo, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
    if proc.returncode not in (0, 1):  # (1: a branch with no commit yet; else git failed)
        raise gitrepo.git_failed("rev-parse", proc.stderr)
    return name, proc.stdout.decode().strip() or None


@dataclass(frozen=True, slots=True)
class RangeCommit:
    """One commit of `range_log`: id, parents, author, subject and what it changed against
    its first parent (nothing for a merge: `git log` shows merges without a diff)."""

    sha: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    time: int
    subject: str
    changes: tuple[RawChange, ...]


_RANGE_FORMAT = "%x01%H%x00%P%x00%an%x00%ae%x00%at%x00%s%x00"


def _range_commits(out: bytes) -> list[RangeCommit]:
    found = []
    for chunk in out.split(b"\x01")[1:]:
        sha, parents, name, email, when, subject, rest = chunk.split(b"\x00", 6)
        found.append(RangeCommit(
            sha.decode(), tuple(parents.decode().split()), name.decode("utf-8", "replace"),
            email.decode("utf-8", "replace"), int(when or 0),
            subject.decode("utf-8", "replace"), tuple(raw_changes(rest.lstrip(b"\x00\n")))))
    return found


def range_log(repo: Path, tip: str, not_in: str) -> list[RangeCommit]:
    """Every commit `tip` reaches and `not_in` does not, oldest first (topological), each
    with its raw changes (renames as a deletion and an addition): one `git log` for the
    whole range, merges included (with no changes)."""
    out = run_git(repo, "log", "--reverse", "--topo-order", f"--format={_RANGE_FORMAT}",
                  "--raw", "-z", "--no-abbrev", "--no-renames", "--no-textconv", "--no-ext-diff",
                  "--end-of-options", tip, f"^{not_in}", "--")
    return _range_commits(out)


def commits_named(repo: Path, shas: Sequence[str]) -> list[RangeCommit]:
    """The commits `shas` name (those that exist), oldest first, with their raw changes
    against their first parent; merges come with none."""
    shas = existing_commits(repo, shas)
    if not shas:
        return []
    out = run_git(repo, "log", "--no-walk=sorted", "--reverse", f"--format={_RANGE_FORMAT}",
                  "--raw", "-z", "--no-abbrev", "--no-renames", "--no-textconv", "--no-ext-diff",
                  "--stdin", "--", input="\n".join(shas).encode() + b"\n")
    return _range_commits(out)


def existing_commits(repo: Path, shas: Sequence[str]) -> list[str]:
    """Those of `shas` (full ids) that name a commit this repository holds (a decision may
    name one that was never fetched, or was collected), in the order given."""
    if not shas:
        return []
    out = run_git(repo, "cat-file", "--batch-check=%(objectname) %(objecttype)",
                  input="\n".join(shas).encode() + b"\n").decode("utf-8", "replace")
    held = {line.split()[0] for line in out.splitlines() if line.endswith(" commit")}
    return [s for s in shas if s in held]


def reachable_from(repo: Path, tip: str, shas: Iterable[str]) -> set[str]:
    """Those of `shas` that `tip` reaches (one `git rev-list`)."""
    wanted = set(shas)
    if not wanted:
        return set()
    out = run_git(repo, "rev-list", "--end-of-options", tip, "--")
    return wanted & set(out.decode().split())


def tree_diff(repo: Path, old: str, new: str, root: str | None = None) -> list[RawChange]:
    """What differs between two commits' trees (under `root/`, or all), renames as a
    deletion and an addition, with both blob ids."""
    out = run_git(repo, "diff", "--raw", "-z", "--no-abbrev", "--no-renames", "--no-textconv",
                  "--no-ext-diff", "--end-of-options", old, new, "--",
                  *([f"{root}/"] if root else []))
    return raw_changes(out)


def blobs_at(repo: Path, rev: str, paths: Sequence[str]) -> dict[str, str]:
    """path → blob id in `rev`'s tree, for those of `paths` it holds (one `git ls-tree`)."""
    if not paths:
        return {}
    out = run_git(repo, "ls-tree", "-z", "--full-tree", "--end-of-options", rev, "--",
                  *paths)
    found: dict[str, str] = {}
    for entry in out.split(b"\x00"):
        meta, _, raw = entry.partition(b"\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == b"blob":
            found[raw.decode("utf-8", "surrogateescape")] = fields[2].decode()
    return found


def object_ids(repo: Path, rev: str, paths: Sequence[str]) -> dict[str, str]:
    """path → object id in commit `rev`'s tree, for those of `paths` it holds: one
    `git cat-file --batch-check` of `rev:path` lines, a tree lookup each (`ls-tree` with one
    pathspec per path matches every entry against every pathspec: 12 s for 5,500 paths at
    100,000 facts). A path with an empty, `.` or `..` segment names no entry (git refuses
    such paths: absent, as for `ls-tree`); one with a newline is read through `ls-tree`."""
    paths = [p for p in paths if not {"", ".", ".."} & set(p.split("/"))]
    plain = [p for p in paths if "\n" not in p]
    odd = [p for p in paths if "\n" in p]
    found: dict[str, str] = {}
    if plain:
        out = run_git(repo, "cat-file", "--batch-check=%(objectname) %(objecttype)",
                      input="".join(f"{rev}:{p}\n" for p in plain).encode(
                          "utf-8", "surrogateescape"))
        lines = out.decode("utf-8", "surrogateescape").split("\n")
        for path, line in zip(plain, lines, strict=False):
            oid, _, kind = line.partition(" ")
            if kind in ("blob", "tree", "commit") and len(oid) >= 40:
                found[path] = oid
    if odd:
        out = run_git(repo, "ls-tree", "-z", "--full-tree", "--end-of-options", rev, "--", *odd,
                      env={"GIT_LITERAL_PATHSPECS": "1"})
        for entry in out.split(b"\x00"):
            meta, _, raw = entry.partition(b"\t")
            if len(fields := meta.split()) == 3:
                found[raw.decode("utf-8", "surrogateescape")] = fields[2].decode()
    return found


def agent_branch_refs(repo: Path) -> list[tuple[str, str]]:
    """`agent_refs`, but a git failure raises `GitError` instead of reading as "no agent
    branch" (proposal review must not show an empty queue because git failed)."""
    out = run_git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/agent/",
                  "refs/remotes/").decode("utf-8", "replace")
    return [(ref, sha) for ref, _, sha in (line.partition(" ") for line in out.splitlines())]
