"""The installed version of factdesk, read once from the package metadata.

One place for `factdesk --version` and the About box. The metadata exists in an installed
wheel, an editable install and the PyInstaller bundle (its spec copies it); a bare source
tree on PYTHONPATH without any install has none, and says so instead of inventing a number.
"""

from __future__ import annotations

from functools import cache

DISTRIBUTION = "factdesk"


@cache
def version() -> str:
    """The version of the installed `factdesk` distribution, e.g. "0.1.0". (importlib.metadata
    is imported here, on first use: about 40 ms that every command paid at start.)"""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _metadata_version

    try:
        return _metadata_version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown (not installed)"
