"""Cloning a corpus for the desktop's File ▸ Clone from URL…: which URLs may be cloned (said
at once, before any git runs, in the dialog's words), the folder a clone goes to, and the
clone itself — `corpus.gitremote.clone` (written with the sync work: progress, Cancel,
nothing left behind, the URL checked again after the user's `insteadOf` rewriting).

Only https, ssh (`ssh://…` or `user@host:path`) and file URLs and local paths are cloned:
never a transport helper (`ext::…`, `fd::…`), never plain http or `git://`, never a URL
that git could read as an option (a leading `-`). No program named by a repository's config
runs (RELIABILITY K01): see `gitremote.clone`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from factdesk.corpus import gitremote
from factdesk.corpus.gitobjects import checked_remote_url
from factdesk.corpus.gitrepo import GitError
from factdesk.errors import FactdeskError

#: URL schemes a clone may use
SCHEMES = ("https", "ssh", "file")

Progress = Callable[[str, float], None]
CloneCancelled = gitremote.CloneCancelled


class CloneRefused(FactdeskError):
    """The URL is not one factdesk clones (the message says why)."""


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")


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
    try:
        return checked_remote_url(url)  # (the rule fetch and push follow too)
    except GitError as exc:
        raise CloneRefused(str(exc)) from None


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
    removed and `CloneCancelled` raised (`gitremote.clone`). The folder `dest` goes in is
    made when missing."""
    url = check_url(url)
    dest.parent.mkdir(parents=True, exist_ok=True)  # (the folder chosen to clone into)
    return Path(gitremote.clone(url, dest, progress=progress, cancelled=cancelled))
