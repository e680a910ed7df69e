"""Who the curator is (the author and committer of every curation commit)."""

from __future__ import annotations

import os
from pathlib import Path

from factdesk.corpus import gitrepo
from factdesk.curation.gitwrite import Identity


def curator_identity(repo: Path) -> Identity:
    """The curator: FACTDESK_CURATOR_NAME/EMAIL, else git's user.name/user.email, else a
    placeholder that says so (commits never fail for want of an identity: RELIABILITY E17)."""
    name = os.environ.get("FACTDESK_CURATOR_NAME")
    email = os.environ.get("FACTDESK_CURATOR_EMAIL")
    if not name:
        name = gitrepo.run_git(repo, "config", "user.name", check=False).decode().strip() or None
    if not email:
        email = gitrepo.run_git(repo, "config", "user.email", check=False).decode().strip() or None
    return Identity(name or "factdesk curator", email or "curator@factdesk.invalid")
