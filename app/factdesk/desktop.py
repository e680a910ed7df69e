"""The menu entry for the current install (issue 25): `factdesk desktop install|uninstall`.

    files = install(launcher())      # writes under $XDG_DATA_HOME (default ~/.local/share)
    uninstall()                      # removes exactly what install writes

A pip or pipx user has no bundle for `packaging/install-desktop.sh`; this writes the same
freedesktop files — the .desktop entry (its `Exec=` runs this install by its full path: the
PATH a desktop session starts programs with may lack ~/.local/bin), the AppStream metainfo
and the icons under `hicolor` — from the copies shipped as package data (`desktop_data/`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from factdesk.errors import FactdeskError
from factdesk.resources import resource_path

APP_ID = "org.factdesk.factdesk"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
#: characters a Desktop Entry `Exec` argument must quote (the spec's "reserved characters")
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def data_home(env: dict[str, str] | None = None) -> Path:
    """$XDG_DATA_HOME when set to an absolute path (the spec ignores a relative one), else
    ~/.local/share."""
    env = dict(os.environ) if env is None else env
    value = env.get("XDG_DATA_HOME", "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path(env.get("HOME") or Path.home()) / ".local" / "share"


def launcher() -> list[str]:
    """The command line that starts this install's window: the bundle's executable, the
    `factdesk` script beside this interpreter, else this interpreter with `-m factdesk`."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    script = Path(sys.executable).with_name("factdesk")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "factdesk"]


def exec_quote(arg: str) -> str:
    """One argument of a Desktop Entry `Exec` key: quoted when it holds a reserved
    character; `"`, `` ` ``, `$` and `\\` escaped inside quotes; `%` doubled (field codes)."""
    arg = arg.replace("%", "%%")
    if not any(c in _RESERVED for c in arg):
        return arg
    inner = "".join("\\" + c if c in '"`$\\' else c for c in arg)
    return f'"{inner}"'


def entry_text(template: str, command: list[str]) -> str:
    """The shipped entry with `Exec=`/`TryExec=` naming `command` (its full path)."""
    out = []
    for line in template.splitlines():
        if line.startswith("Exec="):
            value = " ".join(exec_quote(a) for a in command) + " %f"
            # the key is a string too: its own escape rule doubles every backslash
            line = "Exec=" + value.replace("\\", "\\\\")
        elif line.startswith("TryExec="):
            line = "TryExec=" + command[0]
        out.append(line)
    return "\n".join(out) + "\n"


@dataclass(frozen=True, slots=True)
class DesktopFiles:
    """Where install writes, under one data folder."""

    data: Path

    @property
    def entry(self) -> Path:
        return self.data / "applications" / f"{APP_ID}.desktop"

    @property
    def metainfo(self) -> Path:
        return self.data / "metainfo" / f"{APP_ID}.metainfo.xml"

    def icons(self) -> list[Path]:
        base = self.data / "icons" / "hicolor"
        return ([base / f"{n}x{n}" / "apps" / f"{APP_ID}.png" for n in ICON_SIZES]
                + [base / "scalable" / "apps" / f"{APP_ID}.svg"])

    def all(self) -> list[Path]:
        return [self.entry, self.metainfo, *self.icons()]


def install(command: list[str], data: Path | None = None) -> DesktopFiles:
    """Write the entry, metainfo and icons for `command`; returns where (run again to
    update). Raises FactdeskError when the files cannot be written."""
    files = DesktopFiles(data or data_home())
    shipped = resource_path("desktop_data")
    sources = [shipped / f"{APP_ID}.metainfo.xml",
               *(shipped / "icons" / f"factdesk-{n}.png" for n in ICON_SIZES),
               shipped / "icons" / "factdesk.svg"]
    try:
        template = (shipped / f"{APP_ID}.desktop").read_text(encoding="utf-8")
        _write(files.entry, entry_text(template, command).encode())
        for source, dest in zip(sources, [files.metainfo, *files.icons()], strict=True):
            _write(dest, source.read_bytes())
    except OSError as exc:
        raise FactdeskError(f"cannot install the menu entry under {files.data}: {exc}") from exc
    _refresh_caches(files)
    return files


def uninstall(data: Path | None = None) -> list[Path]:
    """Remove what `install` writes (nothing else); returns the files removed."""
    files = DesktopFiles(data or data_home())
    removed = []
    for path in files.all():
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise FactdeskError(f"cannot remove {path}: {exc}") from exc
        removed.append(path)
    _refresh_caches(files)
    return removed


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def _refresh_caches(files: DesktopFiles) -> None:
    """The desktop's caches, when their tools exist (a missing one is not an error)."""
    for tool, args in (("update-desktop-database", ["-q", str(files.entry.parent)]),
                       ("gtk-update-icon-cache", ["-q", "-t", str(files.data / "icons" / "hicolor")])):
        exe = shutil.which(tool)
        if exe is None or not Path(args[-1]).is_dir():
            continue
        subprocess.run([exe, *args], capture_output=True, timeout=60, check=False)
