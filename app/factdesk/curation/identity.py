"""Who the curator is: the author and committer of every curation commit (issue 14 bug 8).

One source for the app and the command line, in this order:

1. git's own `user.name` and `user.email` as git resolves them for the repository, each
   overridden by `FACTDESK_CURATOR_NAME` / `FACTDESK_CURATOR_EMAIL` when set (tests, scripts);
2. factdesk's settings file, `identity.yaml` in the data folder (`{name:, email:}`), which
   the app writes once when it asks and `factdesk identity --name N --email E` writes;
3. else `MissingIdentity`, whose message says how to set one.

factdesk never writes git config (RELIABILITY K04) and never makes an identity up.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from factdesk.corpus import githistory
from factdesk.corpus.yamlv3 import FieldError, YamlError, as_string, compose_mapping
from factdesk.curation.gitwrite import CurationError, Identity
from factdesk.curation.trust import AGENT_DOMAIN
from factdesk.fsio import NotRegular, TooLarge, atomic_write, read_regular

if TYPE_CHECKING:
    from factdesk.core import Settings

IDENTITY_FILE = "identity.yaml"
_LIMIT = 64 * 1024
#: what git itself refuses in an identity (`<`, `>`, newlines), and any control character
_BAD = re.compile(r"[<>\x00-\x1f\x7f]")

HOW_TO_SET = ("set it with `git config user.name \"Your Name\"` and "
              "`git config user.email you@example.org` (git's own identity), or with "
              "`factdesk identity --name \"Your Name\" --email you@example.org` (factdesk's only)")


class MissingIdentity(CurationError):
    """No curator identity is configured; the message says how to set one (a
    `CurationError`, so every front end reports it as it reports a refused action)."""

    rule = "identity"


class BadIdentity(CurationError):
    """A name or e-mail that cannot be written into a commit."""

    rule = "identity"


def identity_file(settings: Settings) -> Path:
    """Where factdesk keeps the curator's identity when git has none."""
    return settings.data_dir / IDENTITY_FILE


def default_identity_file() -> Path:
    """`identity_file` of the settings resolved from the environment (the CLI's)."""
    from factdesk.core import Settings

    return identity_file(Settings.resolve())


def checked(name: str, email: str) -> Identity:
    """`Identity(name, email)` trimmed, or BadIdentity saying what is wrong."""
    name, email = name.strip(), email.strip()
    if not name or not email:
        raise BadIdentity("a curator identity needs both a name and an e-mail")
    for what, value in (("name", name), ("e-mail", email)):
        if _BAD.search(value):
            raise BadIdentity(f"the {what} {value!r} has a character git cannot record "
                              "(<, > or a control character)")
    if "@" not in email or " " in email:
        raise BadIdentity(f"{email!r} is not an e-mail address")
    if email.rpartition("@")[2].lower() == AGENT_DOMAIN:
        raise BadIdentity(f"{email} is a knomit agent's identity: curation commits are a "
                          f"curator's own (undo trusts no agent's commit); {HOW_TO_SET}")
    return Identity(name, email)


def curator_identity(repo: Path, settings_file: Path | None = None) -> Identity:
    """The curator's identity (see the module doc for the order); MissingIdentity if none."""
    name = os.environ.get("FACTDESK_CURATOR_NAME", "").strip() or _git_config(repo, "user.name")
    email = os.environ.get("FACTDESK_CURATOR_EMAIL", "").strip() or _git_config(repo, "user.email")
    if name and email:
        return checked(name, email)
    if settings_file is not None and (saved := load_identity(settings_file)) is not None:
        return saved
    missing = " and ".join(k for k, v in (("user.name", name), ("user.email", email)) if not v)
    raise MissingIdentity(f"no curator identity: git has no {missing} for {repo}, and factdesk "
                          f"has none saved; {HOW_TO_SET}")


def load_identity(settings_file: Path) -> Identity | None:
    """The identity saved in `settings_file` (None when there is none); BadIdentity when
    the file is there and cannot be read."""
    try:
        data = read_regular(settings_file, limit=_LIMIT)
    except FileNotFoundError:
        return None
    except (NotRegular, TooLarge) as exc:
        raise BadIdentity(f"{exc}; {HOW_TO_SET}") from None
    except OSError as exc:
        raise BadIdentity(f"{settings_file}: cannot be read: {exc.strerror or exc}") from None
    try:
        entries = compose_mapping(data.decode("utf-8"))
        name = as_string(entries["name"].value, "name") if "name" in entries else None
        email = as_string(entries["email"].value, "email") if "email" in entries else None
    except (YamlError, FieldError, UnicodeDecodeError) as exc:
        raise BadIdentity(f"{settings_file}: not a {{name, email}} file ({exc}); {HOW_TO_SET}") from None
    if not name or not email:
        raise BadIdentity(f"{settings_file}: needs both name and email; {HOW_TO_SET}")
    return checked(name, email)


def save_identity(settings_file: Path, name: str, email: str) -> None:
    """Keep the curator's identity in factdesk's settings file (never in git config)."""
    ident = checked(name, email)
    text = yaml.safe_dump({"name": ident.name, "email": ident.email}, allow_unicode=True,
                          sort_keys=False)
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(settings_file, ("# factdesk: the curator's identity (used when git has none)\n"
                                 + text).encode("utf-8"), crash_points=False)


def _git_config(repo: Path, key: str) -> str:
    return (githistory.config_get(repo, key) or "").strip()
