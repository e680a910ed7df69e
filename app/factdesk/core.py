"""Opening a corpus: resolving the path, keeping its index current. Shared by CLI and GUI."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_data_dir

from factdesk.corpus import gitrepo
from factdesk.errors import CorpusNotFound
from factdesk.index.indexer import Indexer


@dataclass(frozen=True)
class Settings:
    """Resolved once in the entry points (CLI flag > env var > platform default)."""

    data_dir: Path

    @classmethod
    def resolve(cls, data_dir: str | None = None) -> Settings:
        chosen = data_dir or os.environ.get("FACTDESK_DATA_DIR") or user_data_dir("factdesk")
        return cls(Path(chosen))

    @property
    def workspace(self) -> Path:
        return self.data_dir / "workspace"


def open_corpus(path: Path) -> Indexer:
    """An `Indexer` for the knomit corpus at `path` (a git work tree with a `kb/` folder)."""
    path = path.expanduser()
    if not path.exists():
        raise CorpusNotFound(f"knowledge base not found: {path}")
    if not path.is_dir():
        raise CorpusNotFound(f"not a folder: {path}")
    if not gitrepo.is_git_repo(path):
        raise CorpusNotFound(
            f"{path} is not the top of a git repository; factdesk reads history from git "
            "(run `git init` there, or open the repository's top folder)")
    if not (path / "kb").is_dir():
        raise CorpusNotFound(f"{path} has no kb/ folder: it is not a knomit corpus")
    return Indexer(path)


def demo_corpus(settings: Settings) -> Path:
    """The bundled demo corpus, copied to the per-user workspace with its history."""
    from factdesk.demo import ensure_demo_workspace

    return ensure_demo_workspace(settings.workspace)
