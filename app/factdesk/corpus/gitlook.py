"""git's look at the work tree for the index's reads (issue 23 #1): `status_paths` names
every file that can differ from HEAD at about the cost of one `git status`, and
`look_early` starts that look as a short-lived command starts, before its imports.

Every git call is built by `gitrepo.git_argv` (RELIABILITY I6, K01)."""

from __future__ import annotations

import atexit
import subprocess
import threading
import time
from pathlib import Path

from factdesk.corpus.gitrepo import git_argv, git_env

_FULL_STAT = ("core.checkStat=default", "core.trustctime=true")


def status_paths(repo: Path, root: str) -> set[str] | None:
    """Every path under `root` whose file can differ from what HEAD holds, as far as git and
    its index's stat data can tell, without reading a file git's stat cache calls clean;
    None when git cannot say (issue 23 #1: this replaces a walk of the work tree).

    - changes against HEAD in the work tree or the git index (`git status`, its stat cache
      refreshed in memory, every stat field compared: `_FULL_STAT`);
    - every untracked file, the ones git's ignore rules hide too (a file's place decides
      whether it is a fact, FORMAT.md), names starting with a dot left out as the location
      rule leaves them out (a nested repository: its folder, with a trailing `/`);
    - every tracked file git does not look at: `--skip-worktree` and `--assume-unchanged`
      entries (`core.ignoreStat` sets the latter), whose edits `git status` never tells.

    Two git processes side by side (`status --untracked-files=no`, and one `ls-files` that
    lists the index's entries with their flags and walks the untracked folders); on two
    cores the pair takes the time of the slower one."""
    early = _take_early(repo, root)
    status_out, others_out, ok = early.result() if early is not None else \
        _LookProcs(repo, root).result()
    if not ok:
        return None
    out: set[str] = set()
    for entry in status_out.split(b"\0"):
        if len(entry) > 3:
            out.add(entry[3:].decode("utf-8", "surrogateescape"))
    for entry in others_out.split(b"\0"):
        # "H ": a tracked entry git's stat cache covers (git status told of it if it
        # changed); "?" untracked, "S" skip-worktree, lower case assume-unchanged, …
        if len(entry) > 2 and entry[:2] != b"H ":
            out.add(entry[2:].decode("utf-8", "surrogateescape"))
    return out


class _LookProcs:
    """The two git processes of `status_paths`, started now; `result()` waits for both:
    (status output, ls-files output, both succeeded)."""

    def __init__(self, repo: Path, root: str) -> None:
        self.tracked = subprocess.Popen(
            git_argv(repo, "status", "--porcelain=v1", "-z", "--no-renames",
                     "--untracked-files=no", "--ignore-submodules=all", "--", root,
                     config=_FULL_STAT),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            env=git_env())
        self.others = subprocess.Popen(
            git_argv(repo, "ls-files", "-v", "--cached", "--others", "--exclude=.*", "-z",
                     "--", root),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            env=git_env())

    def result(self) -> tuple[bytes, bytes, bool]:
        # read the smaller output first; both pipes are drained completely before waiting
        status_out, _ = self.tracked.communicate()
        others_out, _ = self.others.communicate()
        return status_out, others_out, self.tracked.returncode == 0 == self.others.returncode

    def kill(self) -> None:
        """Stop both (`result()`, running or still to run, then reaps them)."""
        for proc in (self.tracked, self.others):
            if proc.poll() is None:
                proc.kill()


class _EarlyLook:
    """`status_paths`'s git processes started before the command's imports, their output
    drained by a thread meanwhile (the listing of a large index fills a pipe)."""

    def __init__(self, repo: Path, root: str) -> None:
        self.key = (str(repo), root)
        self.started = time.monotonic()
        self.procs = _LookProcs(repo, root)
        self._out: tuple[bytes, bytes, bool] | None = None
        self._drain = threading.Thread(target=self._run, name="factdesk-early-look",
                                       daemon=True)
        self._drain.start()

    def _run(self) -> None:
        self._out = self.procs.result()

    def result(self) -> tuple[bytes, bytes, bool]:
        self._drain.join()
        return self._out if self._out is not None else (b"", b"", False)

    def drop(self) -> None:
        self.procs.kill()
        self._drain.join()  # (its `result()` reaps them)


#: git's look started as the process started (`look_early`), for the first `status_paths`
#: of the same repository and folder within `EARLY_S`
_early: list[_EarlyLook] = []
_early_exit_hook: list[object] = []
EARLY_S = 5.0


def look_early(repo: Path, root: str = "kb") -> None:
    """Start `status_paths(repo, root)`'s git processes now, while a short-lived command
    imports the rest of factdesk (0.3–0.4 s; on two cores the look and the imports then
    take the time of the slower, issue 23 #1). Its first `status_paths` within `EARLY_S`
    takes their answer — git's view as of the command's start, as if it had run then —;
    none taking it, they are stopped at exit. Only for an indexed corpus (a folder with
    `.git/factdesk`): a first index or a rebuild asks git nothing of the kind."""
    repo = repo.resolve()
    if not (repo / ".git" / "factdesk").is_dir() or not (repo / root).is_dir() or _early:
        return
    if not _early_exit_hook:
        _early_exit_hook.append(atexit.register(_drop_early))
    _early.append(_EarlyLook(repo, root))


def _take_early(repo: Path, root: str) -> _EarlyLook | None:
    try:
        early = _early.pop()  # (atomic: two threads never take the same one)
    except IndexError:
        return None
    if early.key == (str(repo), root) and time.monotonic() - early.started < EARLY_S:
        return early
    early.drop()
    return None


def _drop_early() -> None:
    while _early:
        _early.pop().drop()
