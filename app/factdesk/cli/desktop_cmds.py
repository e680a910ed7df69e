"""`factdesk desktop install|uninstall`: the menu entry, metainfo and icons for this install
(registered on import by commands.py; app/factdesk/desktop.py does the work)."""

from __future__ import annotations

from factdesk.cli.commands import _exit, cli, say
from factdesk.desktop import install, launcher, uninstall


@cli.group(name="desktop")
def desktop_group() -> None:
    """Add factdesk to the desktop's application menu (for pip and pipx installs)."""


@desktop_group.command(name="install")
def desktop_install() -> None:
    """Write the menu entry (running this install), its icons and metainfo under
    $XDG_DATA_HOME (default ~/.local/share). Run again after moving the install."""
    files = install(launcher())
    say(f"menu entry: {files.entry}")
    say(f"metainfo:   {files.metainfo}")
    say(f"icons:      {files.data / 'icons' / 'hicolor'}/*/apps/{files.entry.stem}.*")
    _exit(0)


@desktop_group.command(name="uninstall")
def desktop_uninstall() -> None:
    """Remove what `desktop install` wrote (and nothing else)."""
    removed = uninstall()
    say(f"removed {len(removed)} file{'s' if len(removed) != 1 else ''}"
        + (f" (the menu entry was {removed[0]})" if removed else " (nothing was installed)"))
    _exit(0)
