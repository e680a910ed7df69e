"""Build the bundled ledger-demo corpus: a knomit git repository replayed from a plan.

The demo facts ship as package data under ``factdesk/demo_data/kb/`` (the "source tree" below);
``resources/demo/history.yaml`` there says in
which commits, by which agent and with which knomit operation they arrived, and which commits
sit on the unmerged agent branch. :func:`build_demo_corpus` replays that plan through
``gitrepo.run_git`` (factdesk's one git runner) without the user's git configuration
(``isolated``), so the same plan always yields the same commit ids.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from factdesk.corpus import gitrepo
from factdesk.resources import resource_path

HISTORY_FILE = "resources/demo/history.yaml"
DEMO_DIR_NAME = "ledger-demo"

class DemoPlanError(ValueError):
    """history.yaml is inconsistent with itself or with the files in the source tree."""


@dataclass(frozen=True)
class _FileOp:
    action: str  # "add", "modify" or "delete"
    path: str
    source: str | None  # relative to the source tree; None for delete


@dataclass(frozen=True)
class _Commit:
    subject: str
    body: str
    author: str
    op: str | None
    date: str
    files: tuple[_FileOp, ...]


def resource_root() -> pathlib.Path:
    """Return the source tree that holds ``kb/`` and ``resources/demo/`` (package data, so a
    wheel or a bundle has it too)."""
    root = resource_path("demo_data")
    if not (root / "kb").is_dir() or not (root / HISTORY_FILE).is_file():
        raise FileNotFoundError(
            f"demo corpus sources not found under {root} (expected kb/ and {HISTORY_FILE}); "
            "the factdesk installation is incomplete"
        )
    return root


def build_demo_corpus(dest: pathlib.Path, *, source: pathlib.Path | None = None) -> pathlib.Path:
    """Create the demo repository at ``dest`` (absent or empty) and return ``dest``.

    Replays the ``main`` commits of history.yaml, then creates the agent branch from the tip of
    ``main`` with its own commits, and leaves ``main`` checked out.
    """
    src = (source if source is not None else resource_root()).resolve()
    plan = _load_plan(src / HISTORY_FILE)
    dest = pathlib.Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise FileExistsError(f"{dest} exists and is not an empty directory")
    dest.mkdir(parents=True, exist_ok=True)

    identities = _str_map(plan.get("identities", {}), "identities")
    domain = str(plan.get("default_email_domain", "agents.knomit.io"))
    main = _parse_commits(plan.get("main"), "main", default_dir="")
    branch = plan.get("branch") or {}
    if not isinstance(branch, Mapping):
        raise DemoPlanError("branch must be a mapping")
    branch_name = str(branch.get("name", ""))
    branch_commits = _parse_commits(
        branch.get("commits", []), "branch", default_dir=str(branch.get("source_dir", ""))
    )
    if branch_commits and not branch_name:
        raise DemoPlanError("branch.name is required when branch.commits is not empty")

    _git(dest, "init", "-q", "-b", "main")
    for commit in main:
        _apply(dest, src, commit, identities, domain)
    if branch_name:
        _git(dest, "checkout", "-q", "-b", branch_name)
        for commit in branch_commits:
            _apply(dest, src, commit, identities, domain)
        _git(dest, "checkout", "-q", "main")
    return dest


def ensure_demo_workspace(workspace: pathlib.Path) -> pathlib.Path:
    """Return ``workspace/ledger-demo``, building it first if it is not a git repository yet.

    The build happens in a scratch directory next to the target and is moved into place at the
    end, so an interrupted first run never leaves a half-built corpus behind.
    """
    workspace = pathlib.Path(workspace)
    target = workspace / DEMO_DIR_NAME
    if (target / ".git").exists():
        return target
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise FileExistsError(f"{target} exists but is not a git repository; move it away first")
    workspace.mkdir(parents=True, exist_ok=True)
    scratch = workspace / f".{DEMO_DIR_NAME}.building-{os.getpid()}"
    if scratch.exists():
        shutil.rmtree(scratch)
    try:
        build_demo_corpus(scratch)
        if target.exists():
            target.rmdir()
        scratch.rename(target)
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
    return target


# ---------------------------------------------------------------------------- plan


def _load_plan(path: pathlib.Path) -> Mapping[str, Any]:
    with path.open(encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    if not isinstance(data, Mapping):
        raise DemoPlanError(f"{path}: top level must be a mapping")
    return data


def _str_map(value: object, what: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise DemoPlanError(f"{what} must be a mapping")
    return {str(k): str(v) for k, v in value.items()}


def _parse_commits(raw: object, where: str, *, default_dir: str) -> list[_Commit]:
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise DemoPlanError(f"{where}: expected a list of commits")
    commits: list[_Commit] = []
    for n, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise DemoPlanError(f"{where}[{n}]: a commit must be a mapping")
        try:
            subject, author, date = str(item["subject"]), str(item["author"]), str(item["date"])
        except KeyError as exc:
            raise DemoPlanError(f"{where}[{n}]: missing {exc.args[0]!r}") from None
        op = item.get("op")
        files_raw = item.get("files") or []
        if not isinstance(files_raw, Sequence) or isinstance(files_raw, str):
            raise DemoPlanError(f"{where}[{n}]: files must be a list")
        files = tuple(_parse_file(f, f"{where}[{n}]", default_dir) for f in files_raw)
        commits.append(
            _Commit(
                subject=subject,
                body=str(item.get("body") or ""),
                author=author,
                op=None if op is None else str(op),
                date=date,
                files=files,
            )
        )
    return commits


def _parse_file(raw: object, where: str, default_dir: str) -> _FileOp:
    if not isinstance(raw, Mapping):
        raise DemoPlanError(f"{where}: a file entry must be a mapping")
    actions = [a for a in ("add", "modify", "delete") if a in raw]
    if len(actions) != 1:
        raise DemoPlanError(f"{where}: a file entry needs exactly one of add, modify, delete")
    action = actions[0]
    path = _safe_relpath(str(raw[action]), where)
    if action == "delete":
        return _FileOp(action, path, None)
    default = f"{default_dir}/{path}" if default_dir else path
    return _FileOp(action, path, _safe_relpath(str(raw.get("from", default)), where))


def _safe_relpath(path: str, where: str) -> str:
    parts = pathlib.PurePosixPath(path).parts
    if not parts or path.startswith("/") or ".." in parts or "\\" in path:
        raise DemoPlanError(f"{where}: unsafe path {path!r}")
    return path


# ---------------------------------------------------------------------------- git


def _apply(
    repo: pathlib.Path,
    src: pathlib.Path,
    commit: _Commit,
    identities: Mapping[str, str],
    domain: str,
) -> None:
    for f in commit.files:
        target = repo / f.path
        if f.action == "delete":
            if not target.is_file():
                raise DemoPlanError(f"{commit.subject}: cannot delete missing {f.path}")
            target.unlink()
            continue
        if f.action == "add" and target.exists():
            raise DemoPlanError(f"{commit.subject}: {f.path} already exists")
        if f.action == "modify" and not target.is_file():
            raise DemoPlanError(f"{commit.subject}: cannot modify missing {f.path}")
        assert f.source is not None
        source_file = src / f.source
        if not source_file.is_file():
            raise DemoPlanError(f"{commit.subject}: source {f.source} not found")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source_file.read_bytes())
    _git(repo, "add", "-A", "--", *(f.path for f in commit.files))
    message = commit.subject + ("\n\n" + commit.body if commit.body else "") + "\n"
    _git(
        repo,
        "commit", "-q", "--cleanup=verbatim", "--no-verify", "-F", "-",
        stdin=message,
        env=_identity_env(commit, identities, domain),
    )


def _identity_env(
    commit: _Commit, identities: Mapping[str, str], domain: str
) -> dict[str, str]:
    email = identities.get(commit.author, f"{commit.author}@{domain}")
    author_email = email
    if commit.op:
        local, _, host = email.partition("@")
        author_email = f"{local}+{commit.op}@{host}"
    return {
        "GIT_AUTHOR_NAME": commit.author,
        "GIT_AUTHOR_EMAIL": author_email,
        "GIT_AUTHOR_DATE": commit.date,
        "GIT_COMMITTER_NAME": commit.author,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_COMMITTER_DATE": commit.date,
    }


def _git(
    repo: pathlib.Path,
    *args: str,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    try:
        out = gitrepo.run_git(repo, *args, input=None if stdin is None else stdin.encode("utf-8"),
                              env=env, isolated=True)
    except gitrepo.GitError as exc:
        raise RuntimeError(f"git {' '.join(args)} failed: {exc}") from exc
    return out.decode("utf-8", "replace")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m factdesk.demo DEST")
    print(build_demo_corpus(pathlib.Path(sys.argv[1])))
