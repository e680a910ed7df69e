"""The command line (DESIGN.md §6): the same operations as the GUI, for scripts and CI.

    factdesk [PATH]                      open the GUI (the demo corpus without PATH)
    factdesk check  [--kb PATH] [--format text|json] [--install-hook] [--staged]
    factdesk index  [--kb PATH] [--rebuild]
    factdesk search QUERY [--kb PATH] [--limit N] [--format text|json]
    factdesk show   FACT [--kb PATH] [--format text|json]
    factdesk relabel|edit|move|retract|restore|attest|settle|dismiss … --reason "…"
    factdesk undo | redo [--list]
    factdesk accept ID... | --all-clean --branch B ; reject ID...  --reason "…"
    factdesk mislabels | queue | transitions [--since REV] [--stats]
    factdesk embed | similar FACT_OR_TEXT | duplicates
    factdesk sync   [--kb PATH] [--remote NAME]   fetch every remote, join, push
    factdesk --version | --help
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from factdesk.version import version

if TYPE_CHECKING:
    import click

#: every sub-command's name, so that `factdesk [PATH]` opens the window without loading
#: click and every command module first (numpy, the index, git: about 0.4 s of CPU before
#: the first paint, issue 14); tests/test_cli.py holds it equal to click's registry
COMMANDS = frozenset({
    "accept", "agents", "attest", "check", "desktop", "dismiss", "duplicates", "edit", "embed",
    "identity", "index", "mcp", "merge-reviewed", "messages", "mislabels", "move",
    "move-to-messages", "new", "proposals", "queue", "recall", "redo", "reject", "relabel",
    "restore", "retract", "search", "settle", "show", "similar", "sync", "transitions", "undo"})
#: the commands that start with an index read: git's look at the work tree starts before
#: they import the rest of factdesk (`gitlook.look_early`, issue 23 #1)
EARLY_LOOK = frozenset({"agents", "check", "duplicates", "index", "messages", "mislabels",
                        "proposals", "queue", "recall", "search", "show", "similar",
                        "transitions"})
_LOADED: list[click.Group] = []
#: click's shell-completion variable (`_FACTDESK_COMPLETE=bash_source factdesk`, README)
COMPLETE_VAR = "_FACTDESK_COMPLETE"

#: `factdesk --help` starts by saying what the command does without a sub-command (`\b`
#: keeps click from re-wrapping the two columns).
OPEN_HELP = """\b
factdesk [PATH]  open the desktop app on the knomit corpus at PATH (a git work tree
                 with kb/); without PATH, on the bundled demo corpus (a copy with its
                 git history in your workspace)
"""


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        print(f"factdesk {version()}")
        ctx.exit(0)


def command_group() -> click.Group:
    """The click group with every command registered (loaded once, on first use)."""
    if not _LOADED:
        import click

        from factdesk.cli.commands import cli  # (the other command modules load on use)

        cli.help = f"{(cli.help or '').rstrip()}\n\n{OPEN_HELP}"
        click.option("--version", is_flag=True, expose_value=False, is_eager=True,
                     callback=_print_version, help="Print factdesk's version and exit.")(cli)
        _LOADED.append(cli)
    return _LOADED[0]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if os.environ.get(COMPLETE_VAR):  # shell completion (bash, zsh, fish): never the window
        return _complete()
    if not args or (len(args) == 1 and args[0] not in COMMANDS and Path(args[0]).is_dir()):
        return _gui(args[0] if args else None)
    if args[0] not in COMMANDS and not args[0].startswith("-"):
        # a mistyped command must not open a window (or hang, with no display)
        print(f"Error: {args[0]!r} is neither a command nor a folder to open "
              "(factdesk --help lists the commands)", file=sys.stderr)
        return 2
    if args[0] in EARLY_LOOK and not {"--rebuild", "--help", "-h"} & set(args):
        _look_early(args)  # (before the imports of command_group: they overlap)
    cli = command_group()
    try:
        cli.main(args=args, prog_name="factdesk", standalone_mode=False)
    except SystemExit as exc:  # pragma: no cover - click's own exits
        return int(exc.code or 0)
    except Exception as exc:
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            return exc.exit_code
        if isinstance(exc, click.exceptions.Abort):
            return 1
        raise
    return int(getattr(cli, "_exit_code", 0))


def _look_early(args: list[str]) -> None:
    """Start git's look at the corpus named by `--kb` (else this folder) now; the index
    read takes it if it asks within seconds, else it is stopped at exit."""
    kb = "."
    for i, arg in enumerate(args):
        if arg == "--kb" and i + 1 < len(args):
            kb = args[i + 1]
        elif arg.startswith("--kb="):
            kb = arg[len("--kb="):]
    from factdesk.corpus import gitlook

    # (no git, a folder that vanished: the read itself says so in its own words)
    with contextlib.suppress(OSError):
        gitlook.look_early(Path(kb).expanduser())


def _complete() -> int:
    """Answer the shell's completion request (click's protocol) and end."""
    cli = command_group()
    try:
        cli.main(args=[], prog_name="factdesk", complete_var=COMPLETE_VAR)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def no_display_reason(env: dict[str, str] | None = None, platform: str = sys.platform
                      ) -> str | None:
    """Why the window cannot open here (None when it can): on Linux and the BSDs, Qt needs
    an X or Wayland display, or a platform named in QT_QPA_PLATFORM; without one it aborts
    the process with a message about a missing plugin."""
    env = dict(os.environ) if env is None else env
    if not platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return None
    if any(env.get(k) for k in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")):
        return None
    return ("factdesk: no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY "
            "is set).\nUse the command line instead (factdesk --help lists the commands), "
            "run factdesk inside a desktop session, or set QT_QPA_PLATFORM=offscreen to run "
            "the window without showing it.")


def _gui(path: str | None) -> int:
    reason = no_display_reason()
    if reason is not None:
        print(reason, file=sys.stderr)
        return 1
    from factdesk.gui.app import run

    return run(Path(path) if path else None, end_process=True)
