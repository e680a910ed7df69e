"""`factdesk desktop install|uninstall`: a menu entry for pip and pipx installs (issue 25)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from factdesk.cli import main
from factdesk.desktop import APP_ID, DesktopFiles, data_home, entry_text, exec_quote


def _validate(path: Path) -> None:
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        return  # (the other assertions still run; test_packaging names the missing tool)
    done = subprocess.run([tool, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "warning" not in done.stdout.lower(), done.stdout + done.stderr


def test_install_writes_a_valid_entry_running_this_install_and_uninstall_removes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    data = tmp_path / "share"
    keep = data / "applications" / "someone-else.desktop"
    keep.parent.mkdir(parents=True)
    keep.write_text("[Desktop Entry]\n")
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    assert main(["desktop", "install"]) == 0
    files = DesktopFiles(data)
    assert str(files.entry) in capsys.readouterr().out
    entry = files.entry.read_text()
    exec_line = next(line for line in entry.splitlines() if line.startswith("Exec="))
    program = shlex.split(exec_line[len("Exec="):])[0]
    assert Path(program).is_absolute() and Path(program).exists()  # runs this install
    assert f"Icon={APP_ID}\n" in entry
    assert all(p.is_file() and p.stat().st_size > 0 for p in files.all())
    assert files.icons()[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _validate(files.entry)
    assert main(["desktop", "uninstall"]) == 0
    assert not any(p.exists() for p in files.all())
    assert keep.exists()  # nothing it did not write


def test_exec_quotes_paths_with_spaces_percent_and_backslashes(tmp_path: Path) -> None:
    template = "[Desktop Entry]\nType=Application\nName=factdesk\nExec=factdesk %f\nTryExec=factdesk\n"
    command = ["/opt/My Apps/py$thon", "-m", "factdesk", "100%"]
    text = entry_text(template, command)
    assert 'Exec="/opt/My Apps/py\\\\$thon" -m factdesk 100%% %f' in text
    assert exec_quote("plain") == "plain" and exec_quote("a b") == '"a b"'
    path = tmp_path / f"{APP_ID}.desktop"
    path.write_text(text)
    _validate(path)


def test_data_home_follows_xdg_and_ignores_a_relative_value() -> None:
    assert data_home({"XDG_DATA_HOME": "/x/share", "HOME": "/h"}) == Path("/x/share")
    assert data_home({"XDG_DATA_HOME": "rel", "HOME": "/h"}) == Path("/h/.local/share")
    assert data_home({"HOME": "/h"}) == Path("/h/.local/share")
