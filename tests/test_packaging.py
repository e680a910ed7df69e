"""Installing and finding factdesk (issue 18): --version and --help, the shared folder's
place, the demo corpus as package data, the resource accessor."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version as metadata_version

import pytest

from factdesk.cli import main


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
