"""The command line contract (DESIGN.md §6): shapes, exit codes, the pre-commit hook."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from factdesk.cli import main
from tests.conftest import Corpus, git


def test_check_json_shape_and_exit_code(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--kb", str(corpus.root), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["facts"] == 3 and out["errors"] == []
    corpus.write("kb/principles/x/d4d4d4d4.md", "---\ntype: principle\n---\n# Rule\n")
    assert main(["check", "--kb", str(corpus.root), "--format", "json"]) == 1
    err = json.loads(capsys.readouterr().out)["errors"][0]
    assert set(err) == {"path", "line", "code", "severity", "message"}
    assert err["code"] == "ontology-rule" and err["path"] == "kb/principles/x/d4d4d4d4.md"


def test_show_and_search(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "c3c3c3c3", "--kb", str(corpus.root), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["type"] == "reference" and shown["claimant"] == "claude-code"
    assert "claimant" in shown["derived"] and shown["evidence_weight"] is None
    assert "attribution" in shown and "evidence_weight_computed" in shown
    assert main(["search", "pool", "--kb", str(corpus.root), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["path"].endswith("a1a1a1a1.md")


def test_bad_input_gives_clear_errors(tmp_path: Path, corpus: Corpus,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--kb", str(tmp_path / "missing")]) == 1
    assert "not found" in capsys.readouterr().err
    assert main(["show", "nope", "--kb", str(corpus.root)]) == 1
    assert "no fact matches" in capsys.readouterr().err
    assert main(["search", "confidence:<high", "--kb", str(corpus.root)]) == 1
    assert "confidence" in capsys.readouterr().err


def test_a_mistyped_command_is_an_error_not_a_window(corpus: Corpus, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # it opened the GUI: with no display Qt aborted, and offscreen it hung
    for argv in (["chek", "--kb", str(corpus.root)], ["frobnicate"], [str(tmp_path / "nowhere")]):
        assert main(argv) == 2, argv
        assert "is neither a command nor a folder" in capsys.readouterr().err
    proc = subprocess.run([sys.executable, "-m", "factdesk", "check", "--kb", str(corpus.root),
                           "--format", "json"], capture_output=True, timeout=120)
    assert proc.returncode == 0 and json.loads(proc.stdout)["facts"] >= 1  # python -m factdesk


def test_check_staged_judges_what_is_staged_not_the_working_copy(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    kb = str(corpus.root)
    path = "kb/gotchas/db/e5e5e5e5.md"
    # a broken fact staged, then mended in the working tree only: the commit would hold
    # the broken one, so the check fails on it (it checked the working copy, and passed)
    corpus.write(path, "---\ntype: observation\n\tconfidence: 0.8\n---\n# Tab-indented\n")
    git(corpus.root, "add", path)
    corpus.fact(path, title="Mended, but not staged")
    assert main(["check", "--staged", "--kb", kb, "--format", "json"]) == 1
    errors = json.loads(capsys.readouterr().out)["errors"]
    assert [(e["path"], e["code"]) for e in errors] == [(path, "yaml_syntax")]
    # and the other way round: a good fact staged, then broken in the working tree only
    git(corpus.root, "add", path)
    corpus.write(path, "---\nconfidence: 1.7\n---\n# Too sure\n")
    assert main(["check", "--staged", "--kb", kb]) == 0
    capsys.readouterr()
    assert main(["check", "--kb", kb]) == 1  # (the whole check still sees the working copy)
    assert "confidence_range" in capsys.readouterr().out


def test_the_hook_goes_where_git_runs_hooks_from(corpus: Corpus,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    git(corpus.root, "config", "core.hooksPath", ".githooks")  # (it was written to .git/hooks)
    assert main(["check", "--install-hook", "--kb", str(corpus.root)]) == 0
    assert (corpus.root / ".githooks" / "pre-commit").exists()
    assert str(corpus.root / ".githooks" / "pre-commit") in capsys.readouterr().out
    assert not (corpus.root / ".git" / "hooks" / "pre-commit").exists()


def test_the_hook_is_not_installed_for_every_repository(corpus: Corpus, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    shared = tmp_path / "all-hooks"
    subprocess.run(["git", "config", "--global", "core.hooksPath", str(shared)], check=True)
    assert main(["check", "--install-hook", "--kb", str(corpus.root)]) == 1
    assert "set in your global git config" in capsys.readouterr().err
    assert not shared.exists()


def test_pre_commit_hook_stops_a_broken_fact(corpus: Corpus) -> None:
    assert main(["check", "--install-hook", "--kb", str(corpus.root)]) == 0
    corpus.write("kb/gotchas/db/e5e5e5e5.md", "---\nconfidence: 1.7\n---\n# Too sure\n")
    subprocess.run(["git", "-C", str(corpus.root), "add", "-A"], check=True)
    env_python = Path(sys.executable).parent
    proc = subprocess.run(["git", "-C", str(corpus.root), "commit", "-qm", "learn: bad"],
                          capture_output=True, env={"PATH": f"{env_python}:/usr/bin:/bin",
                                                    "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b",
                                                    "GIT_COMMITTER_NAME": "a",
                                                    "GIT_COMMITTER_EMAIL": "a@b", "HOME": "/tmp"})
    assert proc.returncode != 0
    assert b"confidence_range" in proc.stdout + proc.stderr
    assert "learn: bad" not in git(corpus.root, "log", "--format=%s")


def test_a_negated_word_is_a_query_not_an_option(corpus: Corpus,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    kb = str(corpus.root)
    assert main(["search", "-pool", "--kb", kb, "--format", "json"]) == 0  # "No such option: -p"
    negated = {r["path"] for r in json.loads(capsys.readouterr().out)["results"]}
    assert main(["search", "pool", "--kb", kb, "--format", "json"]) == 0
    wanted = {r["path"] for r in json.loads(capsys.readouterr().out)["results"]}
    assert negated and wanted and not negated & wanted


def test_a_search_that_finds_nothing_names_a_misspelt_value(
        corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "claim_type:obervation", "--kb", str(corpus.root)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "0 results"
    assert "note: claim_type:obervation is no claim (did you mean claim_type:observation?)" in err
    assert main(["search", "type:factoid", "--kb", str(corpus.root)]) == 0  # far from any: silent
    assert capsys.readouterr().err == ""


def test_a_moved_fact_is_found_by_its_name(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    # its old path stays in the index as retracted: the name matched two rows, and
    # `show <name>` said no fact matched
    kb = str(corpus.root)
    git(corpus.root, "mv", "kb/gotchas/db/a1a1a1a1.md", "kb/decisions/api/a1a1a1a1.md")
    corpus.commit("move: the pool fact", op="move")
    assert main(["show", "a1a1a1a1", "--kb", kb, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["path"] == "kb/decisions/api/a1a1a1a1.md"
    corpus.fact("kb/gotchas/db/a1a1a1a1.md", title="Another fact of the same name")
    corpus.commit("learn: a namesake")
    assert main(["show", "a1a1a1a1", "--kb", kb]) == 1  # two live ones: which is not guessed
    err = capsys.readouterr().err  # (both listed: issue 22 #9)
    assert "is ambiguous" in err and "kb/decisions/api/a1a1a1a1.md" in err \
        and "kb/gotchas/db/a1a1a1a1.md" in err


def test_corpus_text_reaches_the_terminal_inert(corpus: Corpus,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    # an escape sequence in a title retitled the terminal and cleared the screen
    path = "kb/gotchas/db/e5e5e5e5.md"
    corpus.fact(path, title="Invoice paid \u202efdp.exe \x1b]0;pwned\x07\x1b[2J")
    corpus.commit("learn: a hostile title")
    kb = str(corpus.root)
    for argv in (["search", "Invoice", "--kb", kb], ["show", "e5e5e5e5", "--kb", kb]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
        assert "Invoice paid ⟨U+202E⟩fdp.exe ⟨U+001B⟩]0;pwned⟨U+0007⟩⟨U+001B⟩[2J" in out
    main(["search", "Invoice", "--kb", kb])
    assert capsys.readouterr().out.endswith("\n1 result\n")  # (not "1 results")
    assert main(["show", "e5e5e5e5", "--kb", kb, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)  # JSON carries the raw text (escaped by JSON)
    assert data["title"] == "Invoice paid \u202efdp.exe \x1b]0;pwned\x07\x1b[2J"


def test_show_says_unknown_not_none(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    path = "kb/gotchas/db/e5e5e5e5.md"
    corpus.write(path, "---\ntype: factoid\n---\n# Broken\n")
    corpus.commit("learn: a broken one")
    assert main(["show", path, "--kb", str(corpus.root)]) == 0
    assert "None" not in capsys.readouterr().out
    # index and check count the same facts (index left the unreadable one out)
    main(["index", "--kb", str(corpus.root)])
    indexed = capsys.readouterr().out.split(": ", 1)[1].split(" facts")[0]
    main(["check", "--kb", str(corpus.root)])
    assert capsys.readouterr().err.startswith(f"{indexed} facts: 1 error")  # (on stderr)


def test_a_crlf_diff_reaches_the_terminal_as_lines(corpus: Corpus,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = "kb/gotchas/db/e5e5e5e5.md"
    corpus.write(path, "---\r\ntype: observation\r\nconfidence: 0.5\r\nsources: 1\r\n---\r\n"
                 "# A CRLF fact\r\n\r\nBody.\r\n")
    corpus.commit("learn: a CRLF fact")
    assert main(["relabel", path, "--type", "pattern", "--reason", "x", "--preview",
                 "--kb", str(corpus.root)]) == 0
    out = capsys.readouterr().out
    assert "+type: pattern" in out and "⟨U+000D⟩" not in out  # (every line ended in one)


def test_motifs_are_shown_and_searchable(corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 15: knomit's `motifs` were parsed, then shown nowhere."""
    corpus.write("kb/gotchas/db/m1m1m1m1.md",
                 "---\ntype: observation\nmotifs: [retry-storm-amplification, Bad_Motif, "
                 "pool-exhaustion]\n---\n# Retries pile up\n\nBody.\n")
    corpus.commit("learn: motifs")
    kb = str(corpus.root)
    assert main(["show", "m1m1m1m1", "--kb", kb, "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["motifs"] == ["retry-storm-amplification", "pool-exhaustion"]
    assert "motifs" not in shown["extra"]
    assert "motif" in [p["code"] for p in shown["problems"]]  # (the bad one dropped)
    assert main(["show", "m1m1m1m1", "--kb", kb]) == 0
    assert "motifs retry-storm-amplification, pool-exhaustion" in capsys.readouterr().out
    assert main(["search", "motif:pool-exhaustion", "--kb", kb, "--format", "json"]) == 0
    paths = [r["path"] for r in json.loads(capsys.readouterr().out)["results"]]
    assert paths == ["kb/gotchas/db/m1m1m1m1.md"]


def test_the_window_path_loads_no_command_module() -> None:
    """`factdesk [PATH]` decides to open the window from `factdesk.cli.COMMANDS` alone, so
    the first paint does not wait for click, numpy, the index and every command module
    (issue 14); the list cannot drift from click's registry."""
    import subprocess
    import sys

    import click

    from factdesk.cli import COMMANDS, command_group

    group = command_group()
    ctx = click.Context(group)
    assert set(group.list_commands(ctx)) == COMMANDS
    assert all(group.get_command(ctx, name) is not None for name in COMMANDS)
    assert set(group.commands) == COMMANDS  # (every one of them loaded now)
    probe = ("import sys, factdesk.cli; "
             "print(sorted(m for m in ('click', 'numpy', 'factdesk.cli.commands', "
             "'factdesk.index', 'factdesk.curation') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_a_read_loads_only_the_command_it_runs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`factdesk search` imports neither the review, sync, semantic nor curation command
    modules (issue 23 #1: each was imported before any command ran, about 0.4 s); each lazy
    command lives where `LAZY` says (the map cannot drift)."""
    import subprocess
    import sys

    import click

    from factdesk.cli import command_group
    from factdesk.cli.commands import LAZY

    probe = ("import sys; from factdesk.cli import main; main(['search', 'x', '--kb', sys.argv[1]]); "
             "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('factdesk.cli.') "
             "and m.endswith('_cmds')))")
    out = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True,
                         text=True).stdout.strip().splitlines()
    assert out and out[-1] == "[]", out
    group = command_group()
    ctx = click.Context(group)
    for name, module in LAZY.items():
        command = group.get_command(ctx, name)
        assert command is not None and command.callback is not None
        assert command.callback.__module__ == f"factdesk.cli.{module}", name
