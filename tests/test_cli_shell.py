"""The command line as a shell meets it: completion, whole help summaries, no display."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from factdesk.cli import main, no_display_reason

APP = Path(__file__).resolve().parents[1] / "app"


@pytest.mark.parametrize("shell, marker", [("bash", "complete -o nosort -F"),
                                           ("zsh", "compdef"), ("fish", "complete --no-files")])
def test_completion_scripts_for_bash_zsh_and_fish(shell: str, marker: str, monkeypatch,
                                                  capsys) -> None:
    monkeypatch.setenv("_FACTDESK_COMPLETE", f"{shell}_source")
    assert main([]) == 0  # (without the variable, no arguments opens the window)
    out = capsys.readouterr().out
    assert marker in out and "_FACTDESK_COMPLETE" in out


def test_bash_completes_command_names_and_options(monkeypatch, capsys) -> None:
    monkeypatch.setenv("_FACTDESK_COMPLETE", "bash_complete")
    monkeypatch.setenv("COMP_WORDS", "factdesk sy")
    monkeypatch.setenv("COMP_CWORD", "1")
    assert main([]) == 0
    assert capsys.readouterr().out.split() == ["plain,sync"]
    monkeypatch.setenv("COMP_WORDS", "factdesk search --fo")
    monkeypatch.setenv("COMP_CWORD", "2")
    assert main([]) == 0
    assert "plain,--format" in capsys.readouterr().out.split()


def test_help_shows_every_summary_whole(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    commands = out.split("Commands:", 1)[1]
    assert "..." not in commands
    # the longest summary, whole (click cut it at about 45 characters)
    assert "commit by commit along first-parent history." in " ".join(out.split())


def test_no_display_is_said_in_words_not_an_abort() -> None:
    assert no_display_reason({}, "linux") is not None
    assert no_display_reason({"DISPLAY": ":0"}, "linux") is None
    assert no_display_reason({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert no_display_reason({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert no_display_reason({}, "darwin") is None and no_display_reason({}, "win32") is None
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = str(APP)
    done = subprocess.run([sys.executable, "-m", "factdesk"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "no display" in done.stderr and "QT_QPA_PLATFORM=offscreen" in done.stderr
    assert "Aborted" not in done.stderr and "xcb" not in done.stderr
