"""Files that ship inside the factdesk package (the demo corpus), found the same way from a
source checkout, an installed wheel and a PyInstaller bundle (STYLE.md §10).

`resource_path("demo_data/kb")` is the one place a resource name becomes a path: names are
relative, '/'-separated, and may not climb out of the package.
"""

from __future__ import annotations

import sys
from pathlib import Path, PurePosixPath


def package_dir() -> Path:
    """The folder of the `factdesk` package: beside this file in a checkout or a wheel; in a
    frozen bundle, `factdesk/` under the bundle's data folder (PyInstaller's `_MEIPASS`)."""
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        return Path(bundle) / "factdesk"
    return Path(__file__).resolve().parent


def resource_path(name: str) -> Path:
    """The path of the packaged resource `name` (e.g. "demo_data/kb").

    Raises ValueError for a name that is empty, absolute, uses backslashes or contains
    `..` (a resource never lies outside the package), and FileNotFoundError, naming the
    path, when the resource is missing (a broken install).
    """
    parts = PurePosixPath(name).parts
    if (not name or "\\" in name or name.startswith("/") or ":" in name
            or not parts or any(p in ("..", ".") for p in name.split("/"))):
        raise ValueError(f"not a resource name: {name!r} (relative, '/'-separated, no '..')")
    path = package_dir().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"factdesk resource {name!r} not found at {path} (broken install?)")
    return path
