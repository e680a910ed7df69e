"""Remote operations: clone, fetch, push, and the three-way merge a sync joins two lines with.

Every git process started here carries `gitrepo`'s protections (RELIABILITY I6, K01 as
amended): the fixed options and the overrides of the repository's program keys
(`git_argv`), and on top of them the remote rules:

- only the https, ssh and file protocols (`protocol.allow=never` with those three allowed):
  an `ext::`, `fd::` or other transport helper is refused by git itself whatever URL
  reaches it, `url.<base>.insteadOf` rewrites included;
- each URL is checked before git sees it, after the `insteadOf` / `pushInsteadOf` rewriting
  git would do (`git remote get-url`, `git ls-remote --get-url`: git's own expansion, with no
  network): https, ssh (the scp-like `host:path` too), file:// or a local path; never a URL
  that starts with `-` or names a transport helper (`gitobjects.checked_remote_url`);
- fetch names its refspec itself (`+refs/heads/*:refs/remotes/<name>/*`, `--refmap=`,
  `--no-tags`): a configured refspec never writes a local branch; push names exactly one
  branch, never with `+` or `--force`, and a rejected push comes back as a `PushResult`;
- a repository's own `remote.<r>.uploadpack` / `receivepack` never names the command: git
  takes the first value it reads, so the override goes on the command line
  (`--upload-pack`, `--receive-pack`: `_pack_program`), over ssh as well;
- a remote on this machine (a path, file://) runs its `upload-pack` / `receive-pack` here:
  they are started with hooks off (`core.hooksPath=/dev/null`), so a hook in the remote
  repository never runs on the user's machine either. A remote reached over ssh or https runs
  its hooks on its own server, as it should;
- the user's own credentials work: their global and system config (credential helpers,
  `core.sshCommand`, `url.insteadOf`), their environment (`GIT_SSH_COMMAND`, an ssh agent).
  No terminal prompt (`GIT_TERMINAL_PROMPT=0`): a desktop app has no terminal.

The processes are plain `subprocess` runs rather than GitPython's `Git` runner: GitPython
would need the same neutralisers injected as persistent options, cannot kill a clone half-way
(its progress pump blocks until git exits) and runs extra git commands of its own; GitPython
is used for what fits — its `RemoteProgress` parses git's progress lines, and
`gitobjects.remotes` reads the configured remotes with its config reader.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from factdesk.corpus import gitobjects, gitrepo
from factdesk.corpus.gitobjects import checked_remote_url
from factdesk.corpus.gitrepo import FIXED, GitError, git_argv, git_env
from factdesk.errors import FactdeskError

#: `progress(what, fraction)`: what git is doing in words, and how far along (0.0 – 1.0)
Progress = Callable[[str, float], None]

#: the remote rules, given after `git_argv`'s options so that they win over anything before
REMOTE_OPTIONS = ("-c", "protocol.allow=never", "-c", "protocol.https.allow=always",
                  "-c", "protocol.ssh.allow=always", "-c", "protocol.file.allow=always",
                  "-c", "fetch.recurseSubmodules=false", "-c", "push.recurseSubmodules=no",
                  "-c", "submodule.recurse=false")
#: the upload-pack / receive-pack a remote on this machine runs: with hooks off (and, by
#: `local_program`, the fixed options and the remote repository's own program keys overridden)
LOCAL_UPLOAD_PACK = "git -c core.hooksPath=/dev/null -c core.fsmonitor=false upload-pack"
LOCAL_RECEIVE_PACK = ("git -c core.hooksPath=/dev/null -c core.fsmonitor=false "
                      "-c core.alternateRefsCommand= receive-pack")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")


class CloneCancelled(FactdeskError):
    """The clone was cancelled; its partial folder was removed."""


# ---------------------------------------------------------------------------------------------
# URLs


def is_local(url: str) -> bool:
    """A URL git reaches on this machine: file:// or a path (not https, ssh or scp-like)."""
    if url.lower().startswith("file://"):
        return True
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", url):
        return False
    return not gitobjects._SCP_LIKE.match(url)


def local_path(url: str, base: Path) -> Path:
    """Where a local URL (file:// or a path; a relative one from `base`) points."""
    if url.lower().startswith("file://"):
        return Path(unquote(urlsplit(url).path))
    path = Path(url)
    return path if path.is_absolute() else base / path


def local_program(command: str, url: str, base: Path) -> str:
    """The `--upload-pack` / `--receive-pack` command a remote on this machine runs (git runs
    it through the shell, in the remote repository): `command` (LOCAL_UPLOAD_PACK,
    LOCAL_RECEIVE_PACK) with git's fixed options and the overrides of every program key of
    the *remote repository's* own config (K01 on the receiving side, issue 22 #12): a
    non-bare remote with `receive.denyCurrentBranch=updateInstead` checks the pushed commit
    out into its work tree, through its own filters, which must not run here either.
    (`UnsafeConfig` when the remote's config names a program in a way that cannot be
    overridden.)"""
    where = local_path(url, base)
    neutral = gitrepo.config_neutralisers(where) if where.is_dir() else ()
    git_word, _, rest = command.partition(" ")
    return " ".join(shlex.quote(a) for a in (git_word, *FIXED, *neutral)) + " " + rest


def _pack_program(repo: Path, remote: str, key: str) -> list[str]:
    """`--upload-pack=…` (`--receive-pack=…`) for a remote reached over ssh when the
    repository's config names `remote.<remote>.uploadpack` (`receivepack`): the value
    `gitrepo` overrides it with (the user's own, else git's program). git takes the *first*
    such value it reads, so a `-c` after the repository's is ignored, and over ssh the
    user's account on the server would run the repository's command (issue 25 #7)."""
    args = gitrepo.config_neutralisers(repo)
    want = f"remote.{remote}.{key}="
    for i in range(1, len(args), 2):
        if args[i - 1] == "-c" and args[i].startswith(want):
            option = "--upload-pack" if key == "uploadpack" else "--receive-pack"
            return [f"{option}={args[i].removeprefix(want)}"]
    return []


def _checked_name(name: str, what: str) -> str:
    if not _NAME.match(name) or ".." in name or name.endswith((".lock", "/", ".")) or "//" in name:
        raise GitError(f"refused {what} {name!r}: not a name factdesk uses in git's refs")
    return name


def remote_names(repo: Path) -> list[str]:
    """The configured remotes, in config order (read by GitPython's config reader)."""
    return [r.name for r in gitobjects.remotes(repo)]


def remote_urls(repo: Path, remote: str, *, push: bool = False) -> list[str]:
    """Where a fetch (or push) from `remote` goes: its URLs after git's own `insteadOf`
    (`pushInsteadOf`) rewriting, each checked (`GitError` names the first refused one)."""
    _checked_name(remote, "remote name")
    if remote not in remote_names(repo):
        raise GitError(f"no remote named {remote!r} in {repo}")
    args = ["--all", "--push"] if push else ["--all"]
    proc = gitrepo.git_proc(repo, "remote", "get-url", *args, "--end-of-options", remote,
                            check=False)
    if proc.returncode != 0:
        raise gitrepo.git_failed("remote get-url", proc.stderr)
    urls = [u for u in proc.stdout.decode("utf-8", "surrogateescape").split("\n") if u]
    if not urls:
        raise GitError(f"remote {remote!r} has no URL")
    for url in urls:
        _checked_expanded(url, remote)
    return urls


def _checked_expanded(url: str, named: str) -> str:
    try:
        return checked_remote_url(url)
    except GitError as exc:
        if url == named:
            raise
        raise GitError(f"{named!r} leads to {url!r} (after the config's insteadOf rewriting): "
                       f"{exc}") from None


def _neutral_dir() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="factdesk-git-")


def _outside_env(cwd: str) -> dict[str, str]:
    """The environment of a git call that belongs to no repository (clone): no repository
    is looked for above `cwd`, and no GIT_DIR / GIT_WORK_TREE of the caller's applies."""
    env = git_env()
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
                "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE"):
        env.pop(key, None)
    env["GIT_CEILING_DIRECTORIES"] = str(Path(cwd).parent)
    return env


def checked_clone_url(url: str) -> str:
    """`url` as typed if git may clone it: checked as typed and again after the user's
    `insteadOf` rewriting (`git ls-remote --get-url`, outside any repository). Returns the
    URL git will reach."""
    checked_remote_url(url)
    with _neutral_dir() as cwd:
        proc = subprocess.run(["git", *FIXED, *REMOTE_OPTIONS, "-C", cwd, "ls-remote",
                               "--get-url", "--end-of-options", url],
                              capture_output=True, env=_outside_env(cwd), check=False,
                              stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise gitrepo.git_failed("ls-remote --get-url", proc.stderr)
    expanded = proc.stdout.decode("utf-8", "surrogateescape").rstrip("\n")
    return _checked_expanded(expanded or url, url)


# ---------------------------------------------------------------------------------------------
# Running a remote command: progress, cancel


#: (start, span) of the whole each of git's phases stands for
PHASES: dict[str, tuple[float, float]] = {
    "Counting objects": (0.0, 0.05), "Compressing objects": (0.05, 0.05),
    "Receiving objects": (0.1, 0.7), "Writing objects": (0.1, 0.8),
    "Resolving deltas": (0.8, 0.1), "Updating files": (0.9, 0.1),
    "Checking out files": (0.9, 0.1)}


class _Progress:
    """git's progress lines → `progress(what, fraction)`, parsed by GitPython's
    `RemoteProgress` (counting, compressing, receiving, resolving, writing); git 2.39's
    `Updating files:` (the checkout after a clone) is caught from its dropped lines."""

    _UPDATING = re.compile(r"(Updating files|Checking out files):\s+(\d+)% \((\d+)/(\d+)\)")

    def __init__(self, callback: Progress | None, label: str) -> None:
        from git import RemoteProgress

        self.callback = callback
        self.label = label
        self.lines: list[str] = []
        self._last: tuple[str, float] | None = None
        outer = self

        class _Parser(RemoteProgress):
            def update(self, op_code: int, cur_count: str | float, max_count: str | float | None = None,
                       message: str = "") -> None:
                line = re.sub(r"^remote:\s*", "", self._cur_line or "")
                name = line.split(":", 1)[0].strip()
                outer._report(name, float(cur_count or 0), float(max_count or 0))

            def line_dropped(self, line: str) -> None:
                m = outer._UPDATING.search(line)
                if m:
                    outer._report(m.group(1), float(m.group(3)), float(m.group(4)))

        self.parser = _Parser()

    def _report(self, name: str, cur: float, total: float) -> None:
        if self.callback is None:
            return
        start, span = PHASES.get(name, (0.0, 0.0))
        part = cur / total if total else 0.0
        said = (f"{self.label}: {name.lower()}" if name else self.label,
                round(min(1.0, start + span * min(1.0, part)), 3))
        if said != self._last:
            self._last = said
            self.callback(*said)

    def feed(self, line: str) -> None:
        line = line.strip()
        if not line:
            return
        self.lines.append(line)
        del self.lines[:-200]
        self.parser._parse_progress_line(line)

    def error_text(self) -> str:
        said = [ln for ln in self.lines if ln.startswith(("fatal:", "error:", "remote: error",
                                                          "ERROR", "! ", "hint:")) or
                not self._is_progress(ln)]
        return "\n".join(said[-12:])

    @staticmethod
    def _is_progress(line: str) -> bool:
        return bool(re.search(r"\d+% \(\d+/\d+\)|done\.$|^(remote: )?(Enumerating|Total|Counting|"
                              r"Compressing|Receiving|Resolving|Writing|Updating|Unpacking)", line))


def _run(argv: Sequence[str], *, env: dict[str, str], cwd: str | None, label: str,
         progress: Progress | None, cancelled: Callable[[], bool] | None = None
         ) -> tuple[int, bytes, str]:
    """Run a remote git command in its own process group (a cancel kills git and its
    helpers: index-pack, remote-https, ssh); stderr is read for progress as it comes.
    Returns (exit status, stdout, stderr's last lines); -1 when cancelled."""
    parser = _Progress(progress, label)
    proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=cwd, start_new_session=True)
    out_chunks: list[bytes] = []

    def read_err() -> None:
        assert proc.stderr is not None
        buf = b""
        while True:
            chunk = proc.stderr.read1(4096) if hasattr(proc.stderr, "read1") else proc.stderr.read(4096)
            if not chunk:
                break
            buf += chunk
            parts = re.split(rb"[\r\n]", buf)
            buf = parts.pop()
            for part in parts:
                parser.feed(part.decode("utf-8", "replace"))
        if buf:
            parser.feed(buf.decode("utf-8", "replace"))

    def read_out() -> None:
        assert proc.stdout is not None
        out_chunks.append(proc.stdout.read())

    readers = [threading.Thread(target=read_err, daemon=True),
               threading.Thread(target=read_out, daemon=True)]
    for t in readers:
        t.start()
    was_cancelled = False
    try:
        while proc.poll() is None:
            if cancelled is not None and cancelled():
                was_cancelled = True
                _kill(proc)
                break
            time.sleep(0.05)
    except BaseException:
        _kill(proc)
        raise
    finally:
        proc.wait()
        for t in readers:
            t.join(timeout=5)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    if was_cancelled:
        return -1, b"", ""
    return proc.returncode, b"".join(out_chunks), parser.error_text()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


# ---------------------------------------------------------------------------------------------
# clone


def clone(url: str, dest: Path, *, progress: Progress | None = None,
          cancelled: Callable[[], bool] | None = None) -> Path:
    """Clone `url` into `dest` (a new folder, or an empty one) and return its path.

    Only https, ssh (`ssh://`, `user@host:path`), file:// URLs and local paths, checked as
    typed and after the user's `insteadOf` rewriting; never a transport helper (`ext::`,
    `fd::`) or a URL starting with `-`. The user's own credentials (global config, ssh agent)
    work; no program the cloned repository names runs (it has no config of its own yet, and
    every program key is overridden anyway). `progress(what, fraction)` is called from a
    reader thread as git reports; `cancelled()` is polled every 50 ms: when it says True,
    git (and its helpers) are killed, what was written is removed, and `CloneCancelled` is
    raised. A failed clone also leaves nothing behind and raises `GitError` with git's words."""
    checked_clone_url(url)
    dest = Path(dest).expanduser()
    dest = dest if dest.is_absolute() else Path.cwd() / dest
    if dest.is_symlink() or (dest.exists() and (not dest.is_dir() or any(dest.iterdir()))):
        raise GitError(f"cannot clone into {dest}: it exists and is not an empty folder")
    if not dest.parent.is_dir():
        raise GitError(f"cannot clone into {dest}: {dest.parent} is not a folder")
    created = not dest.exists()
    argv = ["git", *FIXED, *REMOTE_OPTIONS]
    # (a local source runs its upload-pack here: with hooks off; a local clone copies objects
    # and runs none, but `file://` goes through upload-pack)
    extra = ([f"--upload-pack={local_program(LOCAL_UPLOAD_PACK, url, Path.cwd())}"]
             if is_local(url) else [])
    try:
        with _neutral_dir() as cwd:
            code, _out, said = _run(
                [*argv, "-C", cwd, "clone", "--progress", "--no-recurse-submodules", *extra,
                 "--", url, str(dest)],
                env=_outside_env(cwd), cwd=cwd, label="clone", progress=progress,
                cancelled=cancelled)
    except BaseException:
        _remove_partial(dest, created)
        raise
    if code == -1:
        _remove_partial(dest, created)
        raise CloneCancelled(f"the clone of {url} was cancelled; {dest} was removed"
                             if created else f"the clone of {url} was cancelled")
    if code != 0:
        _remove_partial(dest, created)
        raise GitError(f"git clone failed: {said or f'exit status {code}'}")
    if progress is not None:
        progress("clone: done", 1.0)
    return dest


def _remove_partial(dest: Path, created: bool) -> None:
    if not dest.exists():
        return
    if created:
        shutil.rmtree(dest, ignore_errors=True)
        return
    for child in dest.iterdir():  # (an empty folder the user chose: emptied again, kept)
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                child.unlink()


# ---------------------------------------------------------------------------------------------
# fetch and push


@dataclass(frozen=True, slots=True)
class RefUpdate:
    ref: str  #: `refs/remotes/<remote>/<branch>`
    old: str | None  #: None: a branch new to us
    new: str | None  #: None: gone (never here: fetch does not prune)
    #: the remote rewrote the branch (a forced push): `new` does not contain `old`
    forced: bool = False


@dataclass(frozen=True, slots=True)
class FetchResult:
    remote: str
    url: str
    updated: tuple[RefUpdate, ...]
    #: the remote's branches git could not store here (a name too long for the file system,
    #: one that clashes with another ref): left out of the fetch, the others fetched
    skipped: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PushResult:
    remote: str
    branch: str
    #: "pushed", "up-to-date" or "rejected" (the remote has commits we do not: fetch, join, retry)
    status: str
    old: str | None
    new: str | None
    message: str  #: git's words for the outcome ("non-fast-forward", "fetch first", …)

    @property
    def rejected(self) -> bool:
        return self.status == "rejected"


def _remote_argv(repo: Path, *args: str) -> list[str]:
    # (the remote rules go after git_argv's options, so they win over the repository's)
    return git_argv(repo, *REMOTE_OPTIONS, *args)


def tracking_refs(repo: Path, remote: str) -> dict[str, str]:
    """`refs/remotes/<remote>/…` → commit, for every remote-tracking ref of `remote`."""
    out = gitrepo.run_git(repo, "for-each-ref", "--format=%(refname)%00%(objectname)",
                          f"refs/remotes/{remote}/", check=False)
    refs = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        ref, _, sha = line.partition("\0")
        if ref and sha:
            refs[ref] = sha
    return refs


def fetch(repo: Path, remote: str | None = None, progress: Progress | None = None,
          cancelled: Callable[[], bool] | None = None) -> list[FetchResult]:
    """Fetch every configured remote (or only `remote`): each branch into
    `refs/remotes/<remote>/<branch>`, no tags, no submodules, never a local branch (the
    refspec is factdesk's, not the config's). A remote whose URL is refused stops the fetch
    before any git runs for it (`GitError`); one git fails: `GitError` with git's words."""
    names = [remote] if remote is not None else remote_names(repo)
    results = []
    for i, name in enumerate(names):
        urls = remote_urls(repo, name)
        before = tracking_refs(repo, name)
        extra = ([f"--upload-pack={local_program(LOCAL_UPLOAD_PACK, urls[0], repo)}"]
                 if is_local(urls[0]) else _pack_program(repo, name, "uploadpack"))

        def scaled(what: str, fraction: float, i: int = i) -> None:
            if progress is not None:
                progress(what, (i + fraction) / len(names))

        skipped: list[str] = []
        for _ in range(UNFETCHABLE_ROUNDS):
            code, _out, said = _run(
                _remote_argv(repo, "fetch", "--progress", "--no-tags", "--refmap=",
                             "--no-write-fetch-head", "--no-recurse-submodules", *extra,
                             "--end-of-options", name, f"+refs/heads/*:refs/remotes/{name}/*",
                             *(f"^refs/heads/{b}" for b in skipped)),
                env=git_env(), cwd=None, label=f"fetch {name}", progress=scaled,
                cancelled=cancelled)
            if code in (0, -1):
                break
            more = [b for b in _unfetchable(repo, name, extra, said) if b not in skipped]
            if not more:
                break
            skipped += more  # (fetch again without them: git stored the others, or not)
        if code == -1:
            raise GitError(f"the fetch from {name} was cancelled")
        if code != 0:
            raise GitError(f"git fetch {name} failed: {said or f'exit status {code}'}")
        after = tracking_refs(repo, name)
        updated = tuple(RefUpdate(ref, before.get(ref), sha, _rewritten(repo, before.get(ref), sha))
                        for ref, sha in sorted(after.items()) if before.get(ref) != sha)
        results.append(FetchResult(name, urls[0], updated, tuple(skipped)))
    if progress is not None:
        progress("fetch: done", 1.0)
    return results


def _rewritten(repo: Path, old: str | None, new: str) -> bool:
    return old is not None and not gitrepo.is_ancestor(repo, old, new)


#: fetches of one remote, each without the branches the one before could not store
UNFETCHABLE_ROUNDS = 3
#: the longest name of one ref component a file system stores (NAME_MAX 255, less `.lock`)
_COMPONENT_BYTES = 250
_CANNOT_LOCK = re.compile(r"cannot lock ref '(refs/remotes/[^']+)'")


def _unfetchable(repo: Path, remote: str, extra: list[str], said: str) -> list[str]:
    """The remote's branches a failed fetch could not store here (issue 22 #11): each whose
    tracking ref has a component longer than a file system takes (from the remote's own
    list, `git ls-remote --heads`), and each git named in `cannot lock ref` (a clash with
    another ref, a case-folding file system)."""
    prefix = f"refs/remotes/{remote}/"
    found = [m.removeprefix(prefix) for m in _CANNOT_LOCK.findall(said) if m.startswith(prefix)]
    code, out, _said = _run(
        _remote_argv(repo, "ls-remote", "--heads", *extra, "--end-of-options", remote),
        env=git_env(), cwd=None, label=f"list {remote}", progress=None)
    if code == 0:
        for line in out.decode("utf-8", "surrogateescape").splitlines():
            ref = line.partition("\t")[2]
            if not ref.startswith("refs/heads/"):
                continue
            branch = ref.removeprefix("refs/heads/")
            if any(len(part.encode("utf-8", "surrogateescape")) > _COMPONENT_BYTES
                   for part in f"{prefix}{branch}".split("/")):
                found.append(branch)
    return list(dict.fromkeys(found))


def push(repo: Path, remote: str, branch: str, progress: Progress | None = None) -> PushResult:
    """Push local `branch` to the same branch of `remote`, never forced: when the remote has
    commits we do not (another curator pushed meanwhile) the result says "rejected" and
    nothing changed there. Tags, submodules and signing are left out; a hook of a remote
    on this machine does not run (module doc)."""
    return push_branches(repo, remote, [branch], progress)[0]


def push_branches(repo: Path, remote: str, branches: Sequence[str],
                  progress: Progress | None = None) -> list[PushResult]:
    """`push` for several branches in one `git push` (one connection), each never forced:
    a result per branch, in the order given (a rejected one leaves the others pushed)."""
    for branch in branches:
        _checked_name(branch, "branch name")
    urls = remote_urls(repo, remote, push=True)
    extra = ([f"--receive-pack={local_program(LOCAL_RECEIVE_PACK, urls[0], repo)}"]
             if is_local(urls[0]) else _pack_program(repo, remote, "receivepack"))
    refs = [f"refs/heads/{branch}" for branch in branches]
    code, out, said = _run(
        _remote_argv(repo, "push", "--porcelain", "--progress", "--no-verify", "--no-signed",
                     "--no-follow-tags", "--recurse-submodules=no", *extra, "--end-of-options",
                     remote, *(f"{ref}:{ref}" for ref in refs)),
        env=git_env(), cwd=None, label=f"push {remote}", progress=progress)
    found: dict[str, PushResult] = {}
    for line in out.decode("utf-8", "replace").splitlines():
        flag, _, rest = line.partition("\t")
        if len(flag) != 1 or "\t" not in rest:
            continue
        named, _, summary = rest.partition("\t")
        ref = named.split(":")[-1]
        if ref not in refs:
            continue
        branch = ref.removeprefix("refs/heads/")
        old, new = _summary_range(summary)
        if flag == "!":
            why = summary[summary.find("(") + 1:summary.rfind(")")] if "(" in summary else summary
            found[ref] = PushResult(remote, branch, "rejected", old, new, why.strip() or summary)
        elif flag == "=":
            found[ref] = PushResult(remote, branch, "up-to-date", old, new, "up to date")
        elif flag in (" ", "*"):
            found[ref] = PushResult(remote, branch, "pushed", old, new, summary.strip())
        else:  # ('+': never asked)
            raise GitError(f"git push {remote} reported {summary!r} for {ref}")
    if len(found) != len(refs):
        raise GitError(f"git push {remote} failed: {said or f'exit status {code}'}")
    return [found[ref] for ref in refs]


def _summary_range(summary: str) -> tuple[str | None, str | None]:
    m = re.match(r"^([0-9a-f]+)\.\.\.?([0-9a-f]+)", summary.strip())
    return (m.group(1), m.group(2)) if m else (None, None)


# ---------------------------------------------------------------------------------------------
# the pieces of a sync's join: tips, the three-way merge of two trees, what changed


def tracking_tip(repo: Path, remote: str, branch: str) -> str | None:
    """Where `remote`'s `branch` was at the last fetch (None when it has none)."""
    _checked_name(remote, "remote name")
    _checked_name(branch, "branch name")
    return gitrepo.resolve_commit(repo, f"refs/remotes/{remote}/{branch}")


def merge_base(repo: Path, ours: str, theirs: str) -> str | None:
    out = gitrepo.run_git(repo, "merge-base", "--end-of-options", ours, theirs, check=False)
    return out.decode().strip() or None


@dataclass(frozen=True, slots=True)
class TreeMerge:
    tree: str  #: the merged tree (with conflict markers where `conflicted` names a path)
    conflicted: tuple[str, ...]  #: paths git could not merge


def merge_trees(repo: Path, ours: str, theirs: str) -> TreeMerge:
    """The three-way merge of two commits from their merge base(s), as a tree in the object
    store (`git merge-tree --write-tree`: no work tree, no index, nothing checked out). The
    repository's merge drivers are overridden (gitrepo); attributes pick only the user's."""
    proc = gitrepo.git_proc(repo, "merge-tree", "--write-tree", "-z", "--name-only",
                            "--no-messages", "--end-of-options", ours, theirs, check=False)
    if proc.returncode not in (0, 1):
        raise gitrepo.git_failed("merge-tree", proc.stderr)
    parts = proc.stdout.split(b"\0")
    tree = parts[0].decode().strip()
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", tree):
        raise GitError(f"git merge-tree gave no tree: {proc.stderr.decode('utf-8', 'replace')}")
    conflicted = tuple(dict.fromkeys(p.decode("utf-8", "surrogateescape") for p in parts[1:] if p))
    return TreeMerge(tree, conflicted if proc.returncode == 1 else ())


def tree_changes(repo: Path, old: str, new: str) -> dict[str, tuple[str | None, str | None, str]]:
    """path → (old blob, new blob, new mode or old mode when deleted) for every file that
    differs between two trees or commits (recursive, no rename detection)."""
    out = gitrepo.run_git(repo, "diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev",
                          "--end-of-options", old, new, "--")
    return {c.path: (c.old_blob, c.new_blob,
                     c.new_mode if set(c.new_mode) != {"0"} else c.old_mode)
            for c in gitrepo.raw_changes(out)}


def last_change(repo: Path, since: str, tip: str, path: str) -> tuple[str, str] | None:
    """(sha, "author: subject") of the newest commit in `since..tip` that changed `path`."""
    out = gitrepo.run_git(repo, "log", "-1", "--format=%H%x00%an: %s", "--end-of-options",
                          f"{since}..{tip}", "--", path, check=False)
    sha, _, said = out.decode("utf-8", "replace").strip().partition("\0")
    return (sha, said) if sha else None


def commits_between(repo: Path, since: str, tip: str) -> int:
    out = gitrepo.run_git(repo, "rev-list", "--count", "--end-of-options", f"{since}..{tip}", "--",
                          check=False)
    return int(out.decode().strip() or 0)
