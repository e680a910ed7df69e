"""What the work tree says, cheaply: every fact file's (size, mtime_ns) under the root.

The incremental update compares it with what the index recorded, so that a file is seen
whatever git's ignore rules and index flags say (`.git/info/exclude`, `--skip-worktree`,
`--assume-unchanged` hide files and edits from `git status`): a file's place in the work
tree decides whether it is a fact (FORMAT.md's location rule), as in a rebuild (I1).

It is a filter, not a reader: the paths whose stamps differ are handed to
`scan.stat_paths`, which applies every rule a rebuild's scan applies (links, nested
repositories, colliding names)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from factdesk.index.planning import Seen


def stamps(repo: Path, root: str) -> dict[str, Seen]:
    """(size, mtime_ns) of each regular `.md` file under `repo/root`, by repo-relative path,
    without following links; folders and files whose names start with a dot are skipped
    (knomit's location rule), as is a nested repository's content and any folder that
    cannot be listed (the scan reports those)."""
    top = os.fspath(repo)
    out: dict[str, Seen] = {}
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(os.path.join(top, folder)) as listing:
                items = list(listing)
        except OSError:
            continue
        if any(item.name == ".git" for item in items):
            continue
        for item in items:
            name = item.name
            if name[0] == ".":
                continue
            try:
                if item.is_dir(follow_symlinks=False):
                    stack.append(f"{folder}/{name}")
                elif name.endswith(".md") and not item.is_symlink():
                    st = item.stat(follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode):
                        out[f"{folder}/{name}"] = (st.st_size, st.st_mtime_ns)
            except OSError:
                continue
    return out
