"""gitrepo.BlobReader: blobs by id or `rev:path`, and a size limit that never holds an
oversize blob in memory nor leaves the `cat-file` stream out of step; gitrepo.BlobDiff:
`git diff` of two blobs, stoppable."""

from __future__ import annotations

import ast
import os
import subprocess
import tracemalloc
from pathlib import Path

import pytest

from factdesk.corpus import gitlook, gitrepo
from factdesk.corpus.codec import MAX_BYTES
from factdesk.corpus.gitrepo import BlobDiff, BlobReader, BlobTooLarge, GitError, blob_id
from tests.conftest import Corpus, git


def test_a_blob_over_the_limit_is_refused_and_the_reader_reads_on(corpus: Corpus) -> None:
    big = b"x" * 3_000_000 + b"\n"
    small = b"after the big one\n"
    corpus.write("kb/gotchas/db/big.md", big)
    corpus.write("kb/gotchas/db/small.md", small)
    corpus.commit("learn: two sizes")
    with BlobReader(corpus.root) as reader:
        with pytest.raises(BlobTooLarge) as caught:
            reader.read(blob_id(big), limit=2_000_000)
        assert caught.value.size == len(big)
        # the same process answers the next request with the right bytes (the big blob
        # and git's newline after it were read off the pipe, not left in it)
        assert reader.read(blob_id(small), limit=2_000_000) == small
        assert reader.read("HEAD:kb/gotchas/db/small.md") == small
        assert reader.read(blob_id(big)) == big  # no limit: read whole
        assert reader.read("0" * 40) is None  # missing
        assert reader.read(blob_id(small), limit=len(small)) == small  # at the limit: read


def test_an_oversize_blob_is_never_held_in_memory(corpus: Corpus) -> None:
    big = b"y" * 8_000_000
    corpus.write("kb/gotchas/db/big.md", big)
    corpus.commit("learn: a big file")
    big_id = blob_id(big)
    with BlobReader(corpus.root) as reader:
        tracemalloc.start()
        try:
            with pytest.raises(BlobTooLarge):
                reader.read(big_id, limit=MAX_BYTES)
            _now, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 3_000_000  # read through a 1 MiB buffer, not 8 MB at once


def test_a_missing_path_with_spaces_is_missing(corpus: Corpus) -> None:
    """git answers `<spec> missing`; a spec with spaces must not be taken for a size."""
    with BlobReader(corpus.root) as reader:
        assert reader.read("HEAD:kb/no such file.md") is None
        assert reader.read("HEAD:kb/gotchas/db/a1a1a1a1.md", limit=MAX_BYTES) is not None


def test_blob_diff_gives_git_diffs_hunks(corpus: Corpus) -> None:
    lines = [f"line {i} of a long fact\n" for i in range(60_000)]
    changed = list(lines)
    for i in range(0, len(changed), 50):  # 2 % of the lines: difflib took ~20 s on this
        changed[i] = f"changed {i}\n"
    old, new = "".join(lines).encode(), "".join(changed).encode()
    corpus.write("kb/gotchas/db/long.md", old)
    corpus.write("kb/gotchas/db/long2.md", new)
    corpus.commit("learn: two long versions")
    hunks = BlobDiff(corpus.root).run(blob_id(old), blob_id(new))
    assert hunks is not None and hunks.startswith(b"@@ -1,")
    body = hunks.decode().splitlines()
    assert [x for x in body if x.startswith("-")] == [f"-line {i} of a long fact"
                                                      for i in range(0, 60_000, 50)]
    assert [x for x in body if x.startswith("+")] == [f"+changed {i}" for i in range(0, 60_000, 50)]
    assert BlobDiff(corpus.root).run(blob_id(old), blob_id(old)) == b""  # equal: no hunks
    stopped = BlobDiff(corpus.root)
    stopped.cancel()
    assert stopped.run(blob_id(old), blob_id(new)) is None
    with pytest.raises(GitError, match="git diff failed"):
        BlobDiff(corpus.root).run("1" * 40, blob_id(new))


# ---------------------------------------------------------------------------------------------
# RELIABILITY I6 / K01: no program named by the repository's own config, attributes or hooks
# runs from any git call factdesk makes. Each route plants a script that leaves a marker.

def _script(tmp_path: Path, name: str = "evil") -> tuple[Path, Path]:
    marker = tmp_path / f"{name}.ran"
    script = tmp_path / f"{name}.sh"
    # it records its run, then behaves as a filter would (so git's own output stays sane)
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> '{marker}'\ncat\n")
    script.chmod(0o755)
    return script, marker


def _sign_head(repo: Path) -> None:
    """Give HEAD a (bogus) gpg signature, so that `log.showSignature` has one to check."""
    raw = git(repo, "cat-file", "commit", "HEAD")
    head, _, message = raw.partition("\n\n")
    sig = ("gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n"
           " -----END PGP SIGNATURE-----")
    data = f"{head}\n{sig}\n\n{message}"
    sha = subprocess.run(["git", "-C", str(repo), "hash-object", "-t", "commit", "-w", "--stdin"],
                         input=data.encode(), capture_output=True, check=True).stdout.decode().strip()
    git(repo, "update-ref", "HEAD", sha)


def _route(name: str, repo: Path, script: Path) -> None:
    cfg = lambda *kv: git(repo, "config", *kv)  # noqa: E731
    attributes = repo / ".gitattributes"
    if name == "clean-smudge-filter":
        cfg("filter.x.clean", str(script))
        cfg("filter.x.smudge", str(script))
        cfg("filter.x.required", "true")
        attributes.write_text("*.md filter=x\n")
    elif name == "process-filter":
        cfg("filter.x.process", str(script))
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "attributes").write_text("*.md filter=x\n")
    elif name == "textconv":
        cfg("diff.x.textconv", str(script))
        attributes.write_text("*.md diff=x\n")
    elif name == "external-diff":
        cfg("diff.external", str(script))
        cfg("diff.x.command", str(script))
        attributes.write_text("*.md diff=x\n")
    elif name == "merge-driver":
        # two branches that change one line of one fact each their own way
        fact = repo / "kb/decisions/api/c3c3c3c3.md"
        text = fact.read_text()
        git(repo, "checkout", "-q", "-b", "side")
        fact.write_text(text.replace("Body text", "Side text"))
        git(repo, "commit", "-qam", "learn: side")
        git(repo, "checkout", "-q", "main")
        fact.write_text(text.replace("Body text", "Main text"))
        git(repo, "commit", "-qam", "learn: main")
        cfg("merge.x.driver", f"{script} %A %O %B")
        attributes.write_text("*.md merge=x\n")
    elif name == "show-signature":
        cfg("log.showSignature", "true")
        cfg("gpg.program", str(script))
        cfg("gpg.openpgp.program", str(script))
        _sign_head(repo)
    elif name == "fsmonitor":
        cfg("core.fsmonitor", str(script))
    elif name == "pager":
        cfg("core.pager", str(script))
        cfg("pager.log", str(script))
        cfg("pager.status", str(script))
    elif name == "hooks":
        hooks = repo / ".githooks"
        hooks.mkdir()
        for hook in ("reference-transaction", "post-index-change", "pre-commit", "post-commit",
                     "post-checkout", "pre-auto-gc", "post-rewrite"):
            (hooks / hook).write_text(f"#!/bin/sh\nexec '{script}' </dev/null\n")
            (hooks / hook).chmod(0o755)
            (repo / ".git" / "hooks" / hook).write_text(f"#!/bin/sh\nexec '{script}' </dev/null\n")
            (repo / ".git" / "hooks" / hook).chmod(0o755)
        cfg("core.hooksPath", ".githooks")
    elif name == "included-config":
        (repo / ".git" / "more.cfg").write_text(
            f"[filter \"y\"]\n\tclean = {script}\n\tsmudge = {script}\n"
            f"[diff \"y\"]\n\ttextconv = {script}\n[core]\n\tfsmonitor = {script}\n")
        cfg("include.path", "more.cfg")
        attributes.write_text("*.md filter=y diff=y\n")
    elif name == "alias":
        for verb in ("status", "log", "rev-parse", "cat-file", "ls-files", "diff", "config"):
            cfg(f"alias.{verb}", f"!{script}")
    elif name == "credentials-askpass-ssh":
        cfg("credential.helper", str(script))
        cfg("credential.https://example.com.helper", str(script))
        cfg("core.askPass", str(script))
        cfg("core.sshCommand", str(script))
        cfg("remote.origin.url", "ssh://127.0.0.1:1/x")
        cfg("remote.origin.uploadpack", str(script))
        cfg("url.ext::sh -c touch% /nonexistent.insteadOf", "evil://")
    elif name == "submodule":
        # a nested repository committed as a gitlink, with its own filter and a dirty file:
        # `git status` in the outer repository would run `git status` inside it
        sub = repo / "kb" / "vendor" / "sub"  # (under kb/, where factdesk asks git status)
        sub.mkdir(parents=True)
        git(sub, "init", "-q", "-b", "main")
        (sub / "notes.md").write_text("one\n")
        git(sub, "add", "-A")
        git(sub, "commit", "-qm", "sub")
        git(repo, "add", "kb/vendor/sub")
        # (and .gitmodules asks for it never to be ignored)
        (repo / ".gitmodules").write_text('[submodule "sub"]\n\tpath = kb/vendor/sub\n'
                                          '\turl = ./kb/vendor/sub\n\tignore = none\n')
        git(repo, "add", ".gitmodules")
        git(repo, "commit", "-qm", "learn: vendor")
        git(sub, "config", "filter.x.clean", str(script))
        (sub / ".gitattributes").write_text("*.md filter=x\n")
        os.utime(sub / "notes.md", (1, 1))
    else:  # pragma: no cover
        raise AssertionError(name)


ROUTES = ("clean-smudge-filter", "process-filter", "textconv", "external-diff", "merge-driver",
          "show-signature", "fsmonitor", "pager", "hooks", "included-config", "alias",
          "credentials-askpass-ssh", "submodule")


@pytest.mark.parametrize("route", ROUTES)
def test_no_program_named_by_the_repository_runs(route: str, corpus: Corpus, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from factdesk.cli import main

    for var in ("GIT_ASKPASS", "SSH_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_PAGER", "PAGER",
                "GIT_EXTERNAL_DIFF"):
        monkeypatch.delenv(var, raising=False)
    repo, kb = corpus.root, str(corpus.root)
    git(repo, "config", "user.name", "Curator")
    git(repo, "config", "user.email", "curator@example.com")
    assert main(["index", "--kb", kb]) == 0
    before = git(repo, "rev-parse", "HEAD").strip()
    script, marker = _script(tmp_path)
    _route(route, repo, script)
    # every fact is stat-dirty with its size kept: git must hash each one (clean filters)
    fact = repo / "kb/gotchas/db/a1a1a1a1.md"
    for path in (repo / "kb").rglob("*.md"):
        os.utime(path, (1, 1))
    fact.write_text(fact.read_text() + "\nOne more line.\n")
    capsys.readouterr()
    for argv in (["index", "--kb", kb], ["search", "pool", "--kb", kb], ["check", "--kb", kb],
                 ["show", "a1a1a1a1", "--kb", kb], ["queue", "--kb", kb],
                 ["transitions", "--stats", "--kb", kb],
                 ["relabel", "kb/gotchas/db/b2b2b2b2.md", "--type", "insight", "--reason", "x",
                  "--kb", kb],
                 ["undo", "--reason", "y", "--kb", kb], ["index", "--rebuild", "--kb", kb]):
        main(argv)
        assert not marker.exists(), (argv, marker.read_text())
    # the library's own readers and the commands the coming sync runs
    head = gitrepo.head_sha(repo)
    assert head is not None
    gitrepo.log(repo)
    assert gitlook.status_paths(repo, "kb") is not None
    old, new = before, f"{head}~1"  # (the relabel; head is its undo)
    gitrepo.diff_versions(repo, "kb/gotchas/db/a1a1a1a1.md", f"{old}:kb/gotchas/db/a1a1a1a1.md",
                          f"{new}:kb/gotchas/db/b2b2b2b2.md", ("a", "b"))
    gitrepo.run_git(repo, "diff", "--stat", old, new, check=False)
    # (a diff against the work tree names --ignore-submodules=all: a submodule's `ignore =
    # none` in .gitmodules outranks the fixed diff.ignoreSubmodules=all)
    gitrepo.run_git(repo, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all",
                    old, "--", "kb", check=False)
    gitrepo.run_git(repo, "log", "-p", "-1", check=False)
    gitrepo.run_git(repo, "diff", old, new, check=False)  # (a caller that forgot --no-ext-diff)
    gitrepo.run_git(repo, "merge-tree", "--write-tree", "main", "side", check=False)
    gitrepo.run_git(repo, "credential", "fill", input=b"protocol=https\nhost=example.com\n\n",
                    check=False)
    gitrepo.run_git(repo, "ls-remote", "origin", check=False)
    gitrepo.run_git(repo, "ls-remote", "ext::sh -c touch% x", check=False)
    gitrepo.run_git(repo, "ls-remote", "evil://x", check=False)
    assert not marker.exists(), marker.read_text()


def test_the_route_tests_can_fail(corpus: Corpus, tmp_path: Path) -> None:
    """Each planted script does run when git is called plainly (the routes are real)."""
    repo = corpus.root
    script, marker = _script(tmp_path)
    _route("clean-smudge-filter", repo, script)
    _route("show-signature", repo, script)
    os.utime(repo / "kb/gotchas/db/a1a1a1a1.md", (1, 1))
    subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, check=True)
    subprocess.run(["git", "-C", str(repo), "log", "-1"], capture_output=True, check=True)
    assert marker.read_text().count(str(script)) >= 2


def test_the_users_own_drivers_are_kept_and_the_repositorys_replaced(
        corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """K01 as amended: the global config is the user's to trust; the repository's is not."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    subprocess.run(["git", "config", "--global", "filter.lfs.process", "git-lfs filter-process"],
                   check=True)
    subprocess.run(["git", "config", "--global", "credential.helper", "cache"], check=True)
    repo = corpus.root
    git(repo, "config", "filter.lfs.process", "/tmp/evil")
    git(repo, "config", "filter.mine.clean", "/tmp/evil")
    git(repo, "config", "credential.helper", "/tmp/evil")
    git(repo, "config", "core.sshCommand", "/tmp/evil")
    args = gitrepo.config_neutralisers(repo)
    pairs = [args[i + 1] for i in range(0, len(args), 2)]
    assert "filter.lfs.process=git-lfs filter-process" in pairs
    assert "filter.mine.clean=" in pairs and "core.sshCommand=ssh".lower() in map(str.lower, pairs)
    assert pairs.index("credential.helper=") < pairs.index("credential.helper=cache")
    effective = gitrepo.run_git(repo, "config", "--get-all", "credential.helper").decode().split("\n")[:-1]
    assert effective[-2:] == ["", "cache"] and "/tmp/evil" not in gitrepo.run_git(
        repo, "config", "filter.mine.clean").decode()


def test_a_repository_cannot_turn_tls_checking_off(corpus: Corpus) -> None:
    """A hostile `.git/config` with `http.sslVerify=false` (or per URL) would let anyone
    answer factdesk's fetch and push, and take the user's credential helper's password."""
    repo = corpus.root
    git(repo, "config", "http.sslVerify", "false")
    git(repo, "config", "http.https://kb.example.org/.sslVerify", "false")
    effective = gitrepo.run_git(repo, "config", "--bool", "--get-urlmatch", "http.sslVerify",
                                "https://kb.example.org/team/kb.git").decode().strip()
    assert effective == "true"
    assert gitrepo.run_git(repo, "config", "--bool", "http.sslVerify").decode().strip() == "true"


def test_the_users_credential_helper_answers_beside_a_repositorys_url_helper(
        corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25 #7: the reset of the repository's `credential.<url>.helper` came after the
    user's own helper was put back, and emptied the list again: git found no helper and
    asked for a password it could not prompt for."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    mine = home / "mine.sh"
    mine.write_text("#!/bin/sh\n[ \"$1\" = get ] && printf 'username=ana\\npassword=pw\\n'\n"
                    "exit 0\n")
    mine.chmod(0o755)
    subprocess.run(["git", "config", "--global", "credential.helper", str(mine)], check=True)
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.sh"
    evil.write_text(f"#!/bin/sh\necho \"$*\" >> '{marker}'\nexit 1\n")
    evil.chmod(0o755)
    repo = corpus.root
    git(repo, "config", "credential.helper", str(evil))
    git(repo, "config", "credential.https://example.com.helper", str(evil))
    git(repo, "config", "credential.https://example.com/kb.git.helper", str(evil))
    said = gitrepo.run_git(repo, "credential", "fill",
                           input=b"protocol=https\nhost=example.com\npath=kb.git\n\n")
    assert b"username=ana" in said and b"password=pw" in said
    assert not marker.exists()


def test_the_overrides_follow_a_config_change_and_cost_a_few_stats(corpus: Corpus,
                                                                   tmp_path: Path) -> None:
    repo = corpus.root
    assert not any("filter" in a for a in gitrepo.config_neutralisers(repo))
    # an include that does not exist yet, filled in later
    git(repo, "config", "include.path", "later.cfg")
    assert not any("filter" in a for a in gitrepo.config_neutralisers(repo))
    (repo / ".git" / "later.cfg").write_text("[filter \"z\"]\n\tclean = /tmp/evil\n")
    assert "filter.z.clean=" in gitrepo.config_neutralisers(repo)
    git(repo, "config", "diff.q.textconv", "/tmp/evil")
    assert "diff.q.textconv=" in gitrepo.config_neutralisers(repo)
    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a process ran: {args[:1]}")

    with pytest.MonkeyPatch.context() as patch:  # cached: stats, no process
        patch.setattr(subprocess, "run", no_process)
        patch.setattr(subprocess, "Popen", no_process)
        for _ in range(200):
            assert "diff.q.textconv=" in gitrepo.config_neutralisers(repo)


def test_a_program_key_that_cannot_be_overridden_is_refused(corpus: Corpus) -> None:
    (corpus.root / ".git" / "config").write_text(
        (corpus.root / ".git" / "config").read_text() + '[filter "a=b"]\n\tclean = /tmp/evil\n')
    with pytest.raises(GitError, match="cannot override"):
        gitrepo.head_sha(corpus.root)
    with pytest.raises(gitrepo.UnsafeConfig):  # (not "not a git repository")
        gitrepo.is_git_repo(corpus.root)


# ---------------------------------------------------------------------------------------------
# corpus.githistory and corpus.gitobjects: the named helpers others call instead of git argv

def test_history_helpers_answer_from_git(corpus: Corpus) -> None:
    from factdesk.corpus import githistory

    repo = corpus.root
    head = gitrepo.head_sha(repo)
    assert head is not None
    assert githistory.resolve_commit(repo, "HEAD") == head
    assert githistory.resolve_commit(repo, "--output=/tmp/x") is None
    chain = githistory.first_parent_chain(repo)
    assert chain[-1] == head and githistory.first_parent_count(repo, "HEAD") == len(chain) == 2
    assert githistory.merge_base(repo, chain[0], head) == chain[0]
    assert githistory.commits_only_in(repo, head, chain[0]) == [head]
    assert {p for p, _ in githistory.tree_blobs(repo, head, "kb")} == {
        "kb/gotchas/db/a1a1a1a1.md", "kb/gotchas/db/b2b2b2b2.md", "kb/decisions/api/c3c3c3c3.md"}
    assert githistory.added_by(repo, head, "kb")["kb/gotchas/db/a1a1a1a1.md"] == \
        "claude-code+learn@agents.knomit.io"
    (repo / "kb/gotchas/db/a1a1a1a1.md").unlink()
    corpus.commit("retract: a1")
    new_head = gitrepo.head_sha(repo)
    assert githistory.deleted_in(repo, "kb/gotchas/db/a1a1a1a1.md") == new_head
    changes = githistory.commit_changes(repo, new_head or "")
    assert [(c.status, c.path) for c in changes] == [("D", "kb/gotchas/db/a1a1a1a1.md")]
    assert githistory.changed_between(repo, head, new_head or "") == ["kb/gotchas/db/a1a1a1a1.md"]
    assert "retract: a1" in githistory.one_line_log(repo, f"{head}..HEAD")
    assert [s for _, s, _ in githistory.messages_with(repo, "HEAD", "knomit-repo-nonce")] == [
        "init: create knowledge base"]
    assert githistory.messages_with(repo, f"{head}..HEAD", "knomit-repo-nonce",
                                    first_parent=False) == []
    git(repo, "config", "user.name", "Cur Ator")
    assert githistory.config_get(repo, "user.name") == "Cur Ator"
    assert githistory.config_get(repo, "user.nobody") is None


def test_gitpython_objects_never_run_git(corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    """GitPython's commands would carry none of git_argv's protections: the Repo factdesk
    opens reads refs and config in Python and refuses any command."""
    from factdesk.corpus import gitobjects

    git(corpus.root, "remote", "add", "origin", "https://example.com/kb.git")
    git(corpus.root, "branch", "side")
    gitobjects.repository(corpus.root)  # (GitPython's import runs `git version` once)
    started: list[object] = []
    real = subprocess.Popen.__init__

    def spy(self: subprocess.Popen[bytes], *args: object, **kwargs: object) -> None:
        started.append(args[0] if args else kwargs.get("args"))
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(subprocess.Popen, "__init__", spy)
    head = gitrepo.head_sha(corpus.root)
    started.clear()
    assert gitobjects.branches(corpus.root) == {"main": head, "side": head}
    assert gitobjects.current_branch(corpus.root) == "main"
    assert gitobjects.remotes(corpus.root) == [
        gitobjects.Remote("origin", ("https://example.com/kb.git",))]
    assert started == []
    with pytest.raises(GitError, match="GitPython tried to run"):
        gitobjects.repository(corpus.root).git.status()


# ---------------------------------------------------------------------------------------------
# K01 / issue 14: git command lines are built in corpus/ only, each with a constant verb

APP = Path(__file__).resolve().parents[2] / "app" / "factdesk"
#: modules outside corpus/ that still run git themselves: gitwrite (with gittree and recovery,
#: split out of it) is the write protocol on
#: top of gitrepo; ops.py and indexer.py are to switch to corpus.githistory's helpers
#: (remove them here when they do); demo.py builds its repository through run_git
GIT_OUTSIDE_CORPUS = {"curation/gitwrite.py", "curation/gittree.py", "curation/recovery.py",
                      "demo.py",
                      # (no git: the desktop's own cache tools after `desktop install`)
                      "desktop.py"}
RUNNERS = {"run_git", "git_argv", "GitRun", "_git"}
VERBS = {"add", "cat-file", "checkout", "commit", "commit-tree", "config", "diff", "diff-tree",
         "for-each-ref", "hash-object", "init", "log", "ls-files", "ls-tree", "merge-base", "mktree",
         "read-tree", "reset", "rev-list", "rev-parse", "status", "symbolic-ref", "update-index",
         "update-ref", "write-tree"}
#: corpus/gitremote.py's (sync and clone, issue 13): it builds its fetch / push command lines
#: through `_remote_argv`, which puts the remote rules before the verb
VERBS |= {"fetch", "push", "merge-tree", "remote"}


def _git_calls(tree: ast.AST) -> list[ast.Call]:
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in RUNNERS:
                calls.append(node)
    return calls


def test_git_runs_only_from_corpus_and_with_a_constant_verb() -> None:
    outside: set[str] = set()
    for path in sorted(APP.rglob("*.py")):
        rel = path.relative_to(APP).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        uses_subprocess = any(isinstance(n, (ast.Import, ast.ImportFrom)) and any(
            a.name == "subprocess" for a in n.names) for n in ast.walk(tree))
        calls = _git_calls(tree)
        if not rel.startswith("corpus/") and (calls or uses_subprocess):
            outside.add(rel)
        for call in calls:
            if rel == "demo.py" or not call.args or len(call.args) < 2:
                continue  # (demo passes its plan's verbs through one wrapper)
            verb = call.args[1]
            if isinstance(verb, ast.Starred):
                continue  # a wrapper forwarding its own args, checked at its callers
            assert isinstance(verb, ast.Constant) and verb.value in VERBS, (
                f"{rel}:{call.lineno}: git's verb must be a constant from the allowlist")
    assert outside <= GIT_OUTSIDE_CORPUS, sorted(outside - GIT_OUTSIDE_CORPUS)
    assert "reflect/transitions.py" not in outside and "reflect/cache.py" not in outside


@pytest.mark.parametrize("url,ok", [
    ("https://example.com/kb.git", True), ("ssh://git@example.com/kb.git", True),
    ("git@example.com:team/kb.git", True), ("example.com:kb.git", True),
    ("file:///srv/kb.git", True), ("../kb.git", True),
    ("/srv/kb", True), ("ext::sh -c touch% /tmp/x", False), ("fd::3", False),
    ("--upload-pack=touch /tmp/x", False), ("-u", False), ("http://example.com/kb", False),
    ("git://example.com/kb", False), ("ftp://example.com/kb", False), ("hg::https://x/y", False),
    ("https://example.com/kb\n--upload-pack=x", False), ("", False), ("c:evil", False)])
def test_only_https_ssh_and_file_remotes_are_accepted(url: str, ok: bool) -> None:
    from factdesk.corpus.gitobjects import checked_remote_url

    if ok:
        assert checked_remote_url(url) == url
    else:
        with pytest.raises(GitError, match="refused remote URL"):
            checked_remote_url(url)


def test_raw_changes_keeps_both_modes() -> None:
    """One parser of `--raw -z` (sync's tree_changes reads the modes from it too)."""
    out = (b":100644 100755 " + b"a" * 40 + b" " + b"b" * 40 + b" M\0kb/x.md\0"
           b":000000 100644 " + b"0" * 40 + b" " + b"c" * 40 + b" A\0kb/new.md\0")
    changed, added = gitrepo.raw_changes(out)
    assert (changed.old_mode, changed.new_mode, changed.path) == ("100644", "100755", "kb/x.md")
    assert (added.old_blob, added.new_blob, added.old_mode) == (None, "c" * 40, "000000")
