"""Cloning a corpus for the desktop's File ▸ Clone from URL…: which URLs may be cloned, the
folder a clone goes to, and the clone itself (`corpus.gitremote.clone`, written with the
sync work, when it is there; until then the plain `git clone` below, with the same rules).

Only https, ssh (`ssh://…` or `user@host:path`) and file URLs and local paths are cloned:
never a transport helper (`ext::…`, `fd::…`), never plain http or `git://`, never a URL
that git could read as an option (a leading `-`). No program named by a repository's config
runs (RELIABILITY K01): the clone runs with factdesk's fixed options (no hooks, no
fsmonitor, the `ext` protocol off), the user's credential helpers and ssh command only;
a local folder is cloned as a remote is (`--no-local`: objects are copied through git's
pack protocol, never hard-linked from a repository nobody checked).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from factdesk.corpus.gitrepo import FIXED, GitError, git_env
from factdesk.errors import FactdeskError

#: URL schemes a clone may use
SCHEMES = ("https", "ssh", "file")

Progress = Callable[[str, float], None]


class CloneRefused(FactdeskError):
    """The URL is not one factdesk clones (the message says why)."""


class CloneCancelled(FactdeskError):
    """The clone was cancelled; nothing of it was kept."""


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")
_SCP = re.compile(r"^(?:[^@/\s]+@)?[^/:\s]+:(?!//)")


def check_url(url: str) -> str:
    """`url`, stripped, when factdesk may clone it; else `CloneRefused` saying why."""
    url = url.strip()
    if not url:
        raise CloneRefused("no URL given")
    if any(ord(c) < 32 or c == "\x7f" for c in url):
        raise CloneRefused("the URL holds a control character")
    if url.startswith("-"):
        raise CloneRefused("a URL may not start with '-' (git would read it as an option)")
    if _HELPER.match(url):
        raise CloneRefused(f"{url.split('::')[0]}:: URLs run a program: only https, ssh and "
                           "file URLs and local folders are cloned")
    scheme = _SCHEME.match(url)
    if scheme:
        if scheme.group(1).lower() not in SCHEMES:
            raise CloneRefused(f"{scheme.group(1)}:// is not cloned: only https, ssh and file "
                               "URLs and local folders")
        return url
    if _SCP.match(url) and not re.match(r"^[A-Za-z]:[\\/]", url):  # user@host:path (ssh)
        return url
    return url  # a local path


def folder_name(url: str) -> str:
    """The folder a clone of `url` gets, as git names it (`…/kb.git` → `kb`)."""
    tail = re.split(r"[/:\\]", url.strip().rstrip("/\\"))[-1]
    tail = tail[:-4] if tail.endswith(".git") else tail
    tail = re.sub(r"[^A-Za-z0-9._-]", "-", tail).strip(".-")
    return tail or "corpus"


def clone(url: str, dest: Path, *, progress: Progress | None = None,
          cancelled: Callable[[], bool] | None = None) -> Path:
    """Clone `url` into the new folder `dest` and return it; `progress(stage, fraction)`
    as git reports it; `cancelled()` polled: when it turns true, git is stopped, `dest`
    removed and `CloneCancelled` raised."""
    url = check_url(url)
    try:
        from factdesk.corpus import gitremote  # type: ignore[attr-defined]
    except ImportError:
        gitremote = None
    if gitremote is not None and hasattr(gitremote, "clone"):
        return Path(gitremote.clone(url, dest, progress=progress, cancelled=cancelled))
    return _git_clone(url, dest, progress, cancelled or (lambda: False))


_STAGE = re.compile(rb"(Counting objects|Compressing objects|Receiving objects|"
                    rb"Resolving deltas|Updating files)[^:\r\n]*:\s+(\d+)%")
#: each stage's share of the bar (receiving dominates)
_SPAN = {b"Counting objects": (0.0, 0.05), b"Compressing objects": (0.05, 0.1),
         b"Receiving objects": (0.1, 0.8), b"Resolving deltas": (0.8, 0.9),
         b"Updating files": (0.9, 1.0)}


def _git_clone(url: str, dest: Path, progress: Progress | None,
               cancelled: Callable[[], bool]) -> Path:
    if dest.exists() and any(dest.iterdir()):
        raise CloneRefused(f"{dest} exists and is not empty")
    made = not dest.exists()
    allow = ("-c", "protocol.allow=never", "-c", "protocol.https.allow=always",
             "-c", "protocol.ssh.allow=always", "-c", "protocol.file.allow=always")
    argv = ["git", *FIXED, *allow, "clone", "--progress", "--no-local", "--no-recurse-submodules",
            "--", url, str(dest)]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=git_env())
    said: list[bytes] = []

    def read() -> None:
        assert proc.stderr is not None
        buffer = b""
        while chunk := proc.stderr.read1(4096):  # type: ignore[attr-defined]
            buffer += chunk
            *lines, buffer = re.split(rb"[\r\n]", buffer)
            for line in lines:
                said.append(line)
                found = _STAGE.search(line)
                if found and progress is not None:
                    low, high = _SPAN[found.group(1)]
                    share = low + (high - low) * int(found.group(2)) / 100
                    progress(found.group(1).decode(), share)

    reader = threading.Thread(target=read, name="factdesk-clone-progress", daemon=True)
    reader.start()
    try:
        return _wait(proc, reader, said, dest, made, progress, cancelled)
    finally:
        assert proc.stderr is not None
        proc.stderr.close()


def _wait(proc: subprocess.Popen[bytes], reader: threading.Thread, said: list[bytes],
          dest: Path, made: bool, progress: Progress | None,
          cancelled: Callable[[], bool]) -> Path:
    while True:
        try:
            code = proc.wait(timeout=0.1)
            break
        except subprocess.TimeoutExpired:
            if cancelled():
                proc.terminate()
                proc.wait()
                reader.join(2)
                _remove(dest, made)
                raise CloneCancelled("clone cancelled; nothing was kept") from None
    reader.join(2)
    if cancelled():
        _remove(dest, made)
        raise CloneCancelled("clone cancelled; nothing was kept")
    if code != 0:
        _remove(dest, made)
        message = next((line.decode("utf-8", "replace") for line in reversed(said)
                        if line.strip().startswith((b"fatal:", b"error:"))), f"exit status {code}")
        raise GitError(f"git clone failed: {message}")
    if progress is not None:
        progress("done", 1.0)
    return dest


def _remove(dest: Path, made: bool) -> None:
    if made:
        shutil.rmtree(dest, ignore_errors=True)
    elif dest.exists():
        for child in dest.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
