"""Installing and finding factdesk (issue 18): --version and --help, the shared folder's
place, the demo corpus as package data, the resource accessor."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version as metadata_version
from pathlib import Path

import pytest

from factdesk.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_version_prints_the_installed_distribution_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out == f"factdesk {metadata_version('factdesk')}\n"
    assert re.fullmatch(r"factdesk \d+\.\d+\.\d+\S*\n", out)
    proc = subprocess.run([sys.executable, "-m", "factdesk", "--version"], capture_output=True,
                          text=True, timeout=120)
    assert (proc.returncode, proc.stdout) == (0, out)


def test_help_says_what_factdesk_path_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "factdesk [PATH]  open the desktop app on the knomit corpus at PATH" in out
    assert "without PATH, on the bundled demo corpus" in out
    assert "--version" in out and "check" in out  # the commands are still listed


def test_no_tracked_file_names_this_machines_layout() -> None:
    """The shared folder is ../shared from the repository root: a file that names the folder
    holding this checkout by its absolute path (bench/run_bench.py's MAKE_CORPUS did) works
    on one machine only."""
    if ROOT.parent == Path(ROOT.anchor) or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout below a named folder")
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                           check=True).stdout.decode().split("\0")
    needle = (str(ROOT.parent) + "/").encode()
    offenders = [name for name in files if name and (ROOT / name).is_file()
                 and needle in (ROOT / name).read_bytes()]
    assert offenders == [], f"these name {needle.decode()}… (use ../shared): {offenders}"
