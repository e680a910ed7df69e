"""Git access for reading: the repository, its first-parent history in one `git log` pass,
and blobs through one `git cat-file --batch` process.

Every git call is an argv list built by `git_argv` and data only after `--`. `git_argv` is
also where the rule "no program named by the repository runs" lives (RELIABILITY I6, K01):
fixed options switch off what git runs on its own (hooks, fsmonitor, pager, signature
display, the `ext::` transport, submodule recursion, and the git that `status` and `diff`
would run inside a submodule under that submodule's own config), and every key of the repository's own
config (`.git/config`, its includes, `config.worktree`) that names a program — filter,
textconv, diff and merge drivers, external diff, credential helpers, ssh and gpg programs,
askpass, editors, pagers, proxies, upload/receive-pack, alternate-refs commands — is
overridden on the command line by the user's own (global, system or command-line) value, or
by an inert one. Attributes (`.gitattributes`, `.git/info/attributes`) only select drivers
by name, so with the repository's drivers gone they select nothing the user did not set up.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from factdesk.corpus.codec import MAX_BYTES
from factdesk.errors import FactdeskError
from factdesk.model.registry import op_token

#: Options every git call carries, whatever the repository's config says.
FIXED = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
         "-c", "core.quotepath=false", "-c", "log.showSignature=false",
         "-c", "protocol.ext.allow=never", "-c", "submodule.recurse=false",
         "-c", "diff.ignoreSubmodules=all", "--no-pager")
#: The fixed options alone (kept for callers that build their own argv; they miss the
#: repository's program keys: use `git_argv`).
SAFE = FIXED
ZERO = "0" * 40


class GitError(FactdeskError):
    """A git command failed; the message is git's own."""


class UnsafeConfig(GitError):
    """The repository's config names a program in a way factdesk cannot override."""


def git_env(extra: Mapping[str, str] | None = None, *, isolated: bool = False) -> dict[str, str]:
    """The environment of factdesk's git calls; `extra` (an index file, an identity) is added
    last. `isolated`: without the user's git config and GIT_* variables too (the demo's
    reproducible build)."""
    env = dict(os.environ)
    if isolated:
        env = {k: v for k, v in env.items() if not k.startswith("GIT_")}
        env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull})
    # (GIT_LITERAL_PATHSPECS: a file named `[ab]1.md` is that file, never a glob matching
    # `a1.md`, in every call that names paths)
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0",
                "GIT_LITERAL_PATHSPECS": "1"})
    env.update(extra or {})
    return env


# ---------------------------------------------------------------------------------------------
# The repository's program keys, and what replaces them

#: (section, key) of every config key that names a program git may run, with the inert
#: value that replaces the repository's own when the user's config has none. A subsection
#: (`filter.<driver>.clean`, `credential.<url>.helper`) may be anything. An empty command
#: is skipped by git for filters and refused ("cannot run") elsewhere: no program runs.
PROGRAM_KEYS: dict[tuple[str, str], str] = {
    ("filter", "clean"): "", ("filter", "smudge"): "", ("filter", "process"): "",
    ("filter", "required"): "false",
    ("diff", "textconv"): "", ("diff", "command"): "", ("diff", "external"): "",
    ("merge", "driver"): "false",  # a conflict, the file left as ours
    ("difftool", "cmd"): "", ("mergetool", "cmd"): "", ("diff", "tool"): "", ("merge", "tool"): "",
    ("core", "fsmonitor"): "false", ("core", "hookspath"): "/dev/null",
    ("core", "pager"): "cat", ("pager", "*"): "false",
    ("core", "editor"): ":", ("sequence", "editor"): ":",
    ("core", "askpass"): "", ("credential", "helper"): "",
    ("core", "sshcommand"): "ssh", ("ssh", "variant"): "auto",
    ("core", "gitproxy"): "", ("core", "alternaterefscommand"): "",
    ("remote", "uploadpack"): "git-upload-pack", ("remote", "receivepack"): "git-receive-pack",
    ("remote", "vcs"): "",
    ("gpg", "program"): "gpg", ("gpg", "openpgp.program"): "gpg",
    ("gpg", "x509.program"): "gpgsm", ("gpg", "ssh.program"): "ssh-keygen",
    ("gpg", "ssh.defaultkeycommand"): "",
    ("log", "showsignature"): "false", ("submodule", "update"): "none",
    ("protocol", "allow"): "user", ("protocol", "ext.allow"): "never",
    ("web", "browser"): "", ("browser", "cmd"): "", ("browser", "path"): "",
    ("man", "cmd"): "", ("man", "path"): "", ("man", "viewer"): "",
    ("sendemail", "smtpserver"): "", ("sendemail", "tocmd"): "", ("sendemail", "cccmd"): "",
    # not a program, but a repository must not turn TLS checking off either: the user's
    # credential helper would hand its password to whoever answers (http.<url>.sslVerify too)
    ("http", "sslverify"): "true",
}
#: keys git reads as a list, where an empty value resets what came before
_LISTS = {("credential", "helper")}
_UNTRUSTED = {"local", "worktree"}


def _program_key(key: str) -> tuple[str, str] | None:
    """The PROGRAM_KEYS entry for a config key as `git config --list` prints it (section and
    name lower-cased, the subsection as written), or None."""
    section, _, rest = key.partition(".")
    name = rest.rpartition(".")[2]
    if (section, "*") in PROGRAM_KEYS:
        return section, "*"
    if (section, name) in PROGRAM_KEYS:
        return section, name
    # gpg.<format>.program, gpg.ssh.defaultKeyCommand, protocol.<name>.allow
    two = ".".join(rest.rsplit(".", 2)[-2:]) if rest.count(".") >= 1 else rest
    if (section, two) in PROGRAM_KEYS:
        return section, two
    if section == "protocol" and name == "allow":
        return section, "allow"
    return None


@dataclass(frozen=True, slots=True)
class _Neutraliser:
    files: tuple[Path, ...]  #: the config files read, and the includes they name
    signature: tuple[object, ...]
    args: tuple[str, ...]


_neutralisers: dict[str, _Neutraliser] = {}
_neutralisers_lock = threading.Lock()
_CONFIG_ENV = ("HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
               "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_DIR",
               "GIT_COMMON_DIR")


def _stat(path: Path) -> tuple[object, ...]:
    try:
        st = path.stat()
    except OSError:
        return (str(path), None)
    return (str(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _identity(path: Path) -> tuple[object, ...]:
    """Which file or folder is at `path` (device and inode), not when it last changed."""
    try:
        st = path.stat()
    except OSError:
        return (str(path), None)
    return (str(path), st.st_dev, st.st_ino)


def _signature(repo: Path, files: tuple[Path, ...]) -> tuple[object, ...]:
    # `.git` by identity only: its mtime moves with every index.lock git creates, which
    # made every write read the config again (3 extra `git config` runs per action).
    env = tuple(os.environ.get(k) for k in _CONFIG_ENV)
    return (env, _identity(repo / ".git"), _stat(repo / ".git" / "HEAD"),
            *(_stat(f) for f in files))


def _likely_files(repo: Path) -> tuple[Path, ...]:
    """The config files git will most likely name, in its order (system, global, local): a
    right guess saves the second read."""
    env = os.environ
    home = Path(env.get("HOME", "~")).expanduser()
    system = [] if env.get("GIT_CONFIG_NOSYSTEM") else [
        Path(env.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig"))]
    if "GIT_CONFIG_GLOBAL" in env:
        user = [Path(env["GIT_CONFIG_GLOBAL"])]
    else:
        xdg = Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "git" / "config"
        user = [xdg, home / ".gitconfig"]
    return tuple(f for f in (*system, *user, repo / ".git" / "config") if f.is_file())


def config_neutralisers(repo: Path) -> tuple[str, ...]:
    """The `-c key=value` options that override every program key the repository's own
    config defines: the user's value where the user has one, an inert one otherwise.
    Cached per repository until one of the config files it read (or an include they name,
    or the user's config environment) changes: a cached call costs a few `stat`s."""
    key = str(repo)
    with _neutralisers_lock:
        cached = _neutralisers.get(key)
    if cached is not None and cached.signature == _signature(repo, cached.files):
        return cached.args
    # The signature is taken before the read, so a change made during the read is seen by
    # the next call; it needs the files the read will name: guessed, and read again once
    # when the guess was wrong. (A change made between this read and the git call it
    # protects is not seen: an agent that can write .git/config can run programs itself.)
    guess = cached.files if cached is not None else _likely_files(repo)
    for _ in range(3):
        before = _signature(repo, guess)
        files, args = _read_neutralisers(repo)
        if files == guess:
            with _neutralisers_lock:
                _neutralisers[key] = _Neutraliser(files, before, args)
            break
        guess = files
    return args


def _read_neutralisers(repo: Path) -> tuple[tuple[Path, ...], tuple[str, ...]]:
    proc = subprocess.run(
        ["git", "--no-pager", "-C", str(repo), "config", "--list", "--includes",
         "--show-scope", "--show-origin", "-z"],
        capture_output=True, env=git_env(), check=False, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        # no readable config: git will refuse the real command as well
        return (), ()
    files: list[Path] = []
    trusted: dict[str, list[str]] = {}
    trusted_lists: list[tuple[str, str, tuple[str, str]]] = []  # (key, value, entry), in order
    untrusted: dict[str, tuple[str, str]] = {}  # key as printed → (section, name) entry
    parts = proc.stdout.split(b"\0")
    for i in range(0, len(parts) - 2, 3):
        scope = parts[i].decode("utf-8", "surrogateescape")
        origin = parts[i + 1].decode("utf-8", "surrogateescape")
        raw_key, _, raw_value = parts[i + 2].partition(b"\n")
        name = raw_key.decode("utf-8", "surrogateescape")
        value = raw_value.decode("utf-8", "surrogateescape")
        source = None
        if origin.startswith("file:"):
            source = Path(origin[5:])
            source = source if source.is_absolute() else repo / source
            if source not in files:
                files.append(source)
        section = name.partition(".")[0]
        if section in ("include", "includeif") and name.endswith(".path") and source:
            # an include that does not exist yet must be watched as well
            target = Path(value).expanduser()
            target = target if target.is_absolute() else source.parent / target
            if target not in files:
                files.append(target)
        entry = _program_key(name)
        if entry is None:
            continue
        if scope in _UNTRUSTED:
            untrusted.setdefault(name, entry)
        else:
            trusted.setdefault(name, []).append(value)
            if entry in _LISTS and "=" not in name and "\n" not in name:  # (what -c can name)
                trusted_lists.append((name, value, entry))
    args: list[str] = []
    reset: list[tuple[str, str]] = []
    for name, entry in untrusted.items():
        if "=" in name.partition(".")[2].rpartition(".")[0] or "\n" in name:
            raise UnsafeConfig(f"this repository's git config sets {name!r}, a program key that "
                           "factdesk cannot override; remove it from .git/config to open the "
                           "repository")
        inert = PROGRAM_KEYS[entry]
        values = trusted.get(name, [])
        if entry in _LISTS:
            if entry not in reset:
                reset.append(entry)
        else:
            args += ["-c", f"{name}={values[-1] if values else inert}"]
    for entry in reset:
        # A list is emptied once, by its key with no subsection (`credential.helper=` empties
        # the helpers of every URL, `credential.<url>.helper` included), and only then are
        # the user's own values put back, each under its own key, in git's order. (A reset
        # per key came after the user's helper for the key before it, and emptied it again:
        # issue 25 #7.)
        args += ["-c", f"{entry[0]}.{entry[1]}={PROGRAM_KEYS[entry]}"]
        args += [a for name, value, e in trusted_lists if e == entry
                 for a in ("-c", f"{name}={value}")]
    return tuple(files), tuple(args)


def git_argv(repo: Path, *args: str, config: Sequence[str] = ()) -> list[str]:
    """The command line of `git args…` in `repo`, with factdesk's safety settings: the
    fixed options, then the overrides of the repository's program keys; `config`: more
    `key=value` settings for this command (`-c`, after those)."""
    extra = [arg for setting in config for arg in ("-c", setting)]
    return ["git", *FIXED, *config_neutralisers(repo), *extra, "-C", str(repo), *args]


def git_failed(command: str, stderr: bytes) -> GitError:
    return GitError(f"git {command} failed: {stderr.decode('utf-8', 'replace').strip()}")


def run_git(repo: Path, *args: str, input: bytes | None = None, check: bool = True,
            env: Mapping[str, str] | None = None, isolated: bool = False) -> bytes:
    """Run one git command in `repo` and return stdout bytes. `env`: variables added to
    `git_env()` (an identity, an index file); `isolated`: see `git_env`."""
    return git_proc(repo, *args, input=input, check=check, env=env, isolated=isolated).stdout


def git_proc(repo: Path, *args: str, input: bytes | None = None, check: bool = True,
             env: Mapping[str, str] | None = None, isolated: bool = False
             ) -> subprocess.CompletedProcess[bytes]:
    """`run_git`, with the exit status and stderr too (for callers that read a failure)."""
    proc = subprocess.run(git_argv(repo, *args), input=input, capture_output=True,
                          env=git_env(env, isolated=isolated), check=False,
                          stdin=None if input is not None else subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise git_failed(args[0], proc.stderr)
    return proc


def is_git_repo(path: Path) -> bool:
    """True only when `path` itself is a work tree's top level (never a parent repo: E02)."""
    if not (path / ".git").exists():
        return False
    try:
        top = run_git(path, "rev-parse", "--show-toplevel").decode().strip()
    except UnsafeConfig:
        raise
    except (GitError, OSError):
        return False
    return Path(top).resolve() == path.resolve()


def head_sha(repo: Path) -> str | None:
    out = run_git(repo, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False).strip()
    return out.decode() if out else None


_git_dirs: dict[tuple[object, ...], Path] = {}


def common_dir(repo: Path) -> Path:
    """The git directory shared by every work tree of the repository."""
    own = git_dir(repo)
    try:
        pointer = (own / "commondir").read_text("utf-8").strip()
    except OSError:
        return own
    return (own / pointer).resolve() if pointer else own


def git_dir(repo: Path) -> Path:
    """The repository's git directory (asked once per work tree and `.git` identity: every
    action and index update asks)."""
    key = (str(repo), *_identity(repo / ".git"))
    found = _git_dirs.get(key)
    if found is None:
        found = Path(run_git(repo, "rev-parse", "--absolute-git-dir").decode().strip())
        _git_dirs[key] = found
    return found


def repo_id(repo: Path) -> str | None:
    """knomit's repo id: the first 12 hex of the root commit on HEAD's first-parent chain."""
    out = run_git(repo, "rev-list", "--first-parent", "--max-parents=0", "HEAD", check=False)
    roots = out.decode().split()
    return roots[-1][:12] if roots else None


def repo_ids(repo: Path) -> frozenset[str]:
    """Every id that names this repository in `kb://<id>/…` refs: the root-commit prefix
    and the init commit's `knomit-repo-nonce` when it is 12 hex."""
    rid = repo_id(repo)
    if rid is None:
        return frozenset()
    ids = {rid}
    root = run_git(repo, "rev-list", "--first-parent", "--max-parents=0", "HEAD").split()[-1]
    message = run_git(repo, "log", "-1", "--format=%B", root.decode()).decode("utf-8", "replace")
    m = re.search(r"knomit-repo-nonce:\s*([0-9a-f]{12})\b", message)
    if m:
        ids.add(m.group(1))
    return frozenset(ids)


@dataclass(frozen=True, slots=True)
class Change:
    status: str  # A, M, D (renames are split: --no-renames)
    path: str
    old_blob: str
    new_blob: str


@dataclass(slots=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    time: int
    subject: str
    body: str
    changes: list[Change] = field(default_factory=list)
    first_parent: bool = False

    @property
    def op(self) -> str | None:
        return op_token(self.email)


def log(repo: Path, rev_range: str = "HEAD") -> list[Commit]:
    """All commits in `rev_range`, newest first, with raw changes; merges diffed against
    their first parent. `first_parent` marks the commits on HEAD's first-parent chain."""
    if head_sha(repo) is None:
        return []
    return PendingLog(repo, rev_range).commits()


class GitRun:
    """A git command started now and read later, so that it runs beside other work: its
    output goes to an unnamed temporary file (a pipe would stall it once full)."""

    def __init__(self, repo: Path, *args: str) -> None:
        self._args = args
        # closed by output() (or with the object, when nobody asks for it)
        self._out = tempfile.TemporaryFile()  # noqa: SIM115
        self._err = tempfile.TemporaryFile()  # noqa: SIM115
        self._proc = subprocess.Popen(git_argv(repo, *args),
                                      stdin=subprocess.DEVNULL, stdout=self._out,
                                      stderr=self._err, env=git_env())

    def output(self) -> bytes:
        """Its stdout; GitError when it failed."""
        try:
            code = self._proc.wait()
            self._err.seek(0)
            if code != 0:
                raise git_failed(self._args[0], self._err.read())
            self._out.seek(0)
            return self._out.read()
        finally:
            self.close()

    def close(self) -> None:
        """Drop its files; when it is still running, its output is not wanted: stop it."""
        if not self._out.closed:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            self._out.close()
            self._err.close()


class PendingLog:
    """`log` started now (git's two passes run while the caller does other work) and
    parsed by `commits()`. The repository must have a HEAD."""

    def __init__(self, repo: Path, rev_range: str = "HEAD") -> None:
        fmt = "%x01%H%x00%P%x00%an%x00%ae%x00%at%x00%s%x00%b%x00"
        self._log = GitRun(repo, "log", f"--format={fmt}", "--raw", "-z", "--no-abbrev",
                           "--no-renames", "--diff-merges=first-parent", "--no-textconv",
                           "--no-ext-diff", "--end-of-options",
                           rev_range, "--")
        self._chain = GitRun(repo, "rev-list", "--first-parent", "--end-of-options", rev_range,
                             "--")

    def commits(self) -> list[Commit]:
        try:
            out = self._log.output()
            chain = set(self._chain.output().decode().split())
        finally:
            self.close()
        commits = list(_parse_log(out))
        for commit in commits:
            commit.first_parent = commit.sha in chain
        return commits

    def close(self) -> None:
        """Wait for both passes and drop their output (a caller that gives up)."""
        self._log.close()
        self._chain.close()


def _parse_log(out: bytes) -> Iterator[Commit]:
    for chunk in out.split(b"\x01")[1:]:
        parts = chunk.split(b"\x00")
        sha, parents, author, email, time, subject, body = (p.decode("utf-8", "replace")
                                                            for p in parts[:7])
        commit = Commit(sha, tuple(parents.split()), author, email, int(time or 0),
                        subject, body.strip())
        rest = [p for p in parts[7:]]
        i = 0
        while i < len(rest):
            meta = rest[i].lstrip(b"\n")
            if not meta.startswith(b":"):
                i += 1
                continue
            fields = meta[1:].split()
            path = rest[i + 1].decode("utf-8", "surrogateescape") if i + 1 < len(rest) else ""
            if len(fields) >= 5:
                status = fields[4].decode()[:1]
                commit.changes.append(Change(status, path, fields[2].decode(), fields[3].decode()))
            i += 2
        yield commit


#: git compares every field of a file's stat data with its index's, whatever the
#: repository's config says (`core.checkStat=minimal` and `core.trustctime=false` would let
#: a same-size edit with its modification time put back pass as clean)
def hooks_dir(repo: Path) -> tuple[Path, str]:
    """Where git runs this repository's hooks from, and the config scope that says so
    (`local`, `global`, `system`; `default` for `<git dir>/hooks`): `core.hooksPath` as
    the config files set it, relative paths being the work tree's. (factdesk's own git
    commands set it to /dev/null, so the files are read one by one.)"""
    for scope in ("worktree", "local", "global", "system"):
        out = run_git(repo, "config", f"--{scope}", "--get", "core.hooksPath", check=False).strip()
        if out:
            path = Path(out.decode("utf-8", "surrogateescape")).expanduser()
            return (path if path.is_absolute() else repo / path), scope.replace("worktree", "local")
    return git_dir(repo) / "hooks", "default"


@dataclass(frozen=True, slots=True)
class RawChange:
    """One line of `git diff --raw -z` (or `diff-tree -z`)."""

    status: str  #: A, M, D, T; R… or C… (with a score) for a rename or a copy
    old_blob: str | None  #: None where the file did not exist
    new_blob: str | None
    path: str
    new_path: str | None = None  #: where a rename or a copy put it
    old_mode: str = ""  #: as git printed them ("000000" where the file did not exist)
    new_mode: str = ""


def raw_changes(out: bytes) -> list[RawChange]:
    """Parse `--raw -z` output: `:mode mode blob blob status\0path\0` (a second path for a
    rename or a copy); other lines (a commit id) are skipped. Blobs as git printed them."""
    parts = out.split(b"\0")
    changes: list[RawChange] = []
    i = 0
    while i < len(parts) - 1:
        meta = parts[i]
        if not meta.startswith(b":"):
            i += 1
            continue
        fields = meta[1:].split()
        status = fields[4].decode() if len(fields) > 4 else ""
        old, new = fields[2].decode(), fields[3].decode()
        two = status[:1] in ("R", "C")
        changes.append(RawChange(
            status, None if old.strip("0") == "" else old, None if new.strip("0") == "" else new,
            parts[i + 1].decode("utf-8", "surrogateescape"),
            parts[i + 2].decode("utf-8", "surrogateescape") if two and i + 2 < len(parts) else None,
            fields[0].decode(), fields[1].decode()))
        i += 3 if two else 2
    return changes


def staged_blobs(repo: Path) -> dict[str, str]:
    """Each file added or modified in git's index (staged for the next commit), with the
    id of the blob staged: what the commit will hold, whatever the working tree has."""
    out = run_git(repo, "diff", "--cached", "--raw", "-z", "--no-renames", "--diff-filter=ACM",
                  "--no-abbrev")
    return {c.path: c.new_blob for c in raw_changes(out) if c.new_blob}


def resolve_commit(repo: Path, rev: str) -> str | None:
    """The full sha of the commit any revision git resolves names (a branch, a tag, `HEAD~2`,
    a short sha), or None. `repo` may be the work tree or the git directory."""
    if not rev or "\n" in rev or "\x00" in rev:
        return None
    out = run_git(repo, "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}",
                  check=False).decode("utf-8", "replace").strip()
    return out if is_object_id(out) else None


def is_object_id(text: object) -> bool:
    """A full object id as git writes it (SHA-1 or SHA-256, lower-case hex)."""
    return isinstance(text, str) and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", text) is not None


def is_ancestor(repo: Path, old: str, new: str) -> bool:
    proc = subprocess.run(git_argv(repo, "merge-base", "--is-ancestor", "--end-of-options",
                                   old, new), capture_output=True, env=git_env(), check=False)
    return proc.returncode == 0


class BlobTooLarge(FactdeskError):
    """A blob over the size a caller was willing to read (`BlobReader.read(limit=)`)."""

    def __init__(self, spec: str, size: int) -> None:
        super().__init__(f"{spec}: {size:,} bytes")
        self.size = size


class BlobReader:
    """One long-lived `git cat-file --batch` for reading many blobs."""

    def __init__(self, repo: Path) -> None:
        self._proc = subprocess.Popen(
            git_argv(repo, "cat-file", "--batch"),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=git_env(),
        )

    def read(self, spec: str, *, limit: int | None = None) -> bytes | None:
        """Bytes of a blob (by id, or `rev:path`), or None when missing. Over `limit` bytes
        it raises `BlobTooLarge` instead, having read the blob through a small buffer and
        dropped it: the reader stays usable and the blob never sits in memory."""
        assert self._proc.stdin and self._proc.stdout
        self._proc.stdin.write(spec.encode("utf-8", "surrogateescape") + b"\n")
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().split()
        if len(header) < 3 or header[-1] in (b"missing", b"ambiguous"):
            return None  # (a `rev:path` may hold spaces: the verdict is the last word)
        size = int(header[2])
        if limit is not None and size > limit:
            left = size + 1  # the blob and git's newline after it
            while left:
                chunk = self._proc.stdout.read(min(left, 1 << 20))
                if not chunk:
                    raise GitError(f"git cat-file ended in the middle of {spec}")
                left -= len(chunk)
            raise BlobTooLarge(spec, size)
        data = self._proc.stdout.read(size)
        self._proc.stdout.read(1)
        return data

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        self._proc.wait(timeout=10)
        if self._proc.stdout:
            self._proc.stdout.close()

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BlobDiff:
    """A unified diff of two blobs by `git diff`: C, and quick where difflib is not (two
    1.8 MB versions, 2 % of their 60,000 lines changed: difflib took 18–23 s). `cancel()`,
    from any thread, stops it by killing git."""

    def __init__(self, repo: Path) -> None:
        self._repo = repo
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._cancelled = False

    def run(self, before: str, after: str) -> bytes | None:
        """The diff's hunks (its header lines left out; empty when the blobs are equal),
        or None when cancelled."""
        with self._lock:
            if self._cancelled:
                return None
            # blob ids, no paths: no attributes, so no diff driver or textconv can run
            self._proc = subprocess.Popen(
                git_argv(self._repo, "diff", "--no-color", "--no-ext-diff", "--no-textconv",
                         "--text", "--unified=3", before, after),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=git_env())
        out, err = self._proc.communicate()
        if self._cancelled:
            return None
        if self._proc.returncode != 0:
            raise git_failed("diff", err)
        hunks = out.find(b"\n@@")
        return b"" if hunks < 0 else out[hunks + 1:]

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            if self._proc is not None and self._proc.poll() is None:
                self._proc.kill()


def diff_versions(repo: Path, path: str, before: str | None, after: str | None,
                  labels: tuple[str, str], *, differ: BlobDiff | None = None) -> str | None:
    """A unified diff of two blobs of `path` (None or the all-zero id: an empty file),
    headed `--- <label>:<path>` / `+++ <label>:<path>`; "" when they are equal, None when
    `differ` was cancelled. A version over the corpus's size limit is not read into memory,
    let alone compared: `BlobTooLarge`. Two non-empty versions are compared by `git diff`
    (`differ`, which another thread may cancel); against an empty one every line is added
    or removed (difflib, linear there)."""
    with BlobReader(repo) as reader:
        old = reader.read(before, limit=MAX_BYTES) if before and before != ZERO else b""
        new = reader.read(after, limit=MAX_BYTES) if after and after != ZERO else b""
    if old and new:
        assert before is not None and after is not None
        hunks = (differ or BlobDiff(repo)).run(before, after)
        if hunks is None:
            return None
        heading = f"--- {labels[0]}:{path}\n+++ {labels[1]}:{path}\n"
        return heading + hunks.decode("utf-8", "replace") if hunks else ""
    old_text = (old or b"").decode("utf-8", "replace")
    new_text = (new or b"").decode("utf-8", "replace")
    return "".join(difflib.unified_diff(old_text.splitlines(keepends=True),
                                        new_text.splitlines(keepends=True),
                                        f"{labels[0]}:{path}", f"{labels[1]}:{path}"))


def blob_id(data: bytes) -> str:
    """The git blob id of `data` (what `git hash-object` prints), without a subprocess."""
    import hashlib

    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


def init_with_first_commit(dest: Path, message: str, author: tuple[str, str],
                           branch: str = "main") -> str:
    """`git init -b branch` in `dest`, then one commit of everything in it by `author`
    (name, e-mail) as author and committer, hooks never run; returns its sha."""
    name, email = author
    env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
    run_git(dest, "init", "-q", "-b", branch)
    run_git(dest, "add", "-A")
    run_git(dest, "commit", "-q", "--no-verify", "-m", message, env=env)
    return run_git(dest, "rev-parse", "HEAD").decode().strip()
