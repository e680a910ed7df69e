"""Who the curator is (a minimal stand-in written by the GUI helper against the contract in
HELPERS.md; the CURATION branch owns this module and replaces it at the merge).

git's own user.name/user.email for the repository, else factdesk's settings file
(`{name:, email:}`), else `MissingIdentity` saying how to set one. factdesk never writes
git's config (RELIABILITY K04).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from factdesk.corpus import gitrepo
from factdesk.curation.gitwrite import Identity
from factdesk.errors import FactdeskError

if TYPE_CHECKING:
    from factdesk.core import Settings


class MissingIdentity(FactdeskError):
    """Neither git nor factdesk's settings name the curator."""


def identity_file(settings: Settings) -> Path:
    return settings.data_dir / "identity.yaml"


def curator_identity(repo: Path, settings_file: Path | None = None) -> Identity:
    name = gitrepo.run_git(repo, "config", "user.name", check=False).decode().strip()
    email = gitrepo.run_git(repo, "config", "user.email", check=False).decode().strip()
    if name and email:
        return Identity(name, email)
    if settings_file is not None and settings_file.is_file():
        data = yaml.safe_load(settings_file.read_text(encoding="utf-8")) or {}
        if isinstance(data, dict) and data.get("name") and data.get("email"):
            return Identity(str(data["name"]), str(data["email"]))
    raise MissingIdentity("no curator identity: set git's user.name and user.email "
                          "(git config --global user.name 'Your Name'; git config --global "
                          "user.email you@example.org), or give them once in the app")


def save_identity(settings_file: Path, name: str, email: str) -> None:
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    settings_file.write_text(yaml.safe_dump({"name": name, "email": email}), encoding="utf-8")
