"""Sync, clone, fetch and push through real servers (issue 25 #7; `make test-servers`): git's
own smart HTTP (`git http-backend`) over https on 127.0.0.1 with a self-signed certificate
given to git through `GIT_SSL_CAINFO` and a password from the user's credential helper, and
an OpenSSH sshd on 127.0.0.1 with key authentication (skipped, with the reason, where there
is no sshd). Over each: a clone, an agent pushing its branch, two curators accepting,
rejecting and syncing (a true merge, a stale push refused), and a repository config that
names programs on every route (K01's hostile-config rows in docs/reliability.md) — none
runs, the user's own credentials do. Plain http stays refused: typed, configured, reached
by an `insteadOf` rewrite or by a server's redirect. The servers are in tests/servers.py."""

from __future__ import annotations

import secrets
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from factdesk.core import open_corpus
from factdesk.corpus import gitclone, gitremote
from factdesk.corpus.gitrepo import GitError
from factdesk.curation import Curation, Identity
from factdesk.review.decide import Review
from factdesk.review.proposals import load_queue
from factdesk.review.sync import AgentCommits, sync
from tests import servers
from tests.conftest import GOOD_FACT, Corpus, git
from tests.review.test_sync import fsck, tip

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

A = "kb/gotchas/db/a1a1a1a1.md"
B = "kb/gotchas/db/b2b2b2b2.md"
C = "kb/decisions/api/c3c3c3c3.md"
D = "kb/gotchas/db/d4d4d4d4.md"
E = "kb/gotchas/db/e5e5e5e5.md"
AGENT = "host-8ef0cd32"
BRANCH = f"agent/{AGENT}"
ANA = Identity("ana", "ana@example.org")
BOB = Identity("bob", "bob@example.org")


@dataclass
class Site:
    """One served copy of the corpus (`kb.git` under the server's root), reached over
    `transport`; `mine` is where the user's own credential program notes each run."""

    transport: str
    tmp: Path
    bare: Path
    url: str
    mine: Path
    https: servers.HttpGitServer | None = None
    ssh: servers.SshServer | None = None


def _program(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture(params=["https", "ssh"])
def site(request: pytest.FixtureRequest, corpus: Corpus, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    transport = request.param
    if transport == "ssh" and (why := servers.sshd_missing_reason()):
        pytest.skip(why)
    if transport == "https" and shutil.which("openssl") is None:
        pytest.skip("no openssl on this machine to make the server's certificate")
    for var in ("GIT_ASKPASS", "SSH_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSL_NO_VERIFY",
                "GIT_SSL_CAINFO", "GIT_SSL_CAPATH"):
        monkeypatch.delenv(var, raising=False)
    # the user's own global config: an identity and, for https, their credential helper
    home = tmp_path / "home"
    home.mkdir()
    user_config = home / ".gitconfig"
    user_config.write_text("[user]\n\tname = Test Curator\n\temail = test-curator@example.org\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user_config))
    root = tmp_path / "srv"
    root.mkdir()
    bare = root / "kb.git"
    git(tmp_path, "clone", "-q", "--bare", str(corpus.root), str(bare))
    mine = tmp_path / "mine.ran"
    if transport == "https":
        password = secrets.token_hex(8)
        helper = _program(home / "my-credentials.sh",
                          f"echo \"credential $1\" >> '{mine}'\n"
                          f"[ \"$1\" = get ] && printf 'username={servers.HTTPS_USER}\\n"
                          f"password={password}\\n'\nexit 0")
        git(home, "config", "--global", "credential.helper", str(helper))
        git(bare, "config", "http.receivepack", "true")
        cert = servers.make_certificate(tmp_path)
        monkeypatch.setenv("GIT_SSL_CAINFO", str(cert[0]))
        with servers.http_git_server(root, home, password, cert) as https:
            yield Site(transport, tmp_path, bare, https.url("kb.git"), mine, https=https)
            assert not https.errors, https.errors  # (the server's own faults)
    else:
        with servers.ssh_server(tmp_path / "sshd") as ssh:
            # the user's ssh set-up through the environment (the hostile-config test uses
            # their global core.sshCommand instead)
            monkeypatch.setenv("GIT_SSH_COMMAND", ssh.ssh_command())
            yield Site(transport, tmp_path, bare, ssh.url(bare), mine, ssh=ssh)


def _clone(site: Site, name: str, **kw: object) -> Path:
    dest = gitremote.clone(site.url, site.tmp / name, **kw)  # type: ignore[arg-type]
    git(dest, "config", "user.name", name)
    git(dest, "config", "user.email", f"{name}@example.org")
    return dest


def _curation(repo: Path) -> Curation:
    ix = open_corpus(repo)
    ix.update()
    return Curation(ix)


def _review(repo: Path, who: Identity) -> Review:
    ix = open_corpus(repo)
    ix.update()
    return Review(ix, who)


def _agent_commit(agent: Path, rel: str, title: str) -> str:
    (agent / rel).parent.mkdir(parents=True, exist_ok=True)
    (agent / rel).write_text(GOOD_FACT.format(type="observation", title=title, refs="",
                                              body="Body text with 3 numbers."))
    git(agent, "add", "-A")
    git(agent, "commit", "-qm", f"learn: {title}", author=AGENT,
        email=f"{AGENT}+learn@agents.knomit.io",
        env={"GIT_COMMITTER_EMAIL": f"{AGENT}@agents.knomit.io"})
    return tip(agent)


def _statuses(repo: Path) -> dict[str, str]:
    return {p.sha: p.status for p in load_queue(repo).proposals}


def test_two_curators_and_an_agent_work_through_the_server(site: Site) -> None:
    # clone: the File ▸ Clone path for ana (URL check, progress), the library's for bob
    seen: list[tuple[str, float]] = []
    ana = gitclone.clone(site.url, site.tmp / "ana", progress=lambda w, f: seen.append((w, f)))
    git(ana, "config", "user.name", "ana")
    git(ana, "config", "user.email", "ana@example.org")
    assert seen and seen[-1] == ("clone: done", 1.0)
    assert git(ana, "remote", "get-url", "origin").strip() == site.url
    assert tip(ana) == tip(site.bare, "main")
    bob = _clone(site, "bob")
    # the agent: its own git, its own clone, its branch pushed over the same transport
    agent = site.tmp / "agent"
    git(site.tmp, "clone", "-q", site.url, str(agent))
    git(agent, "checkout", "-q", "-b", BRANCH)
    d = _agent_commit(agent, D, "Pool size is 200")
    e = _agent_commit(agent, E, "Lock lasts 40 s")
    git(agent, "push", "-q", "origin", BRANCH)
    for who in (bob, ana):
        done = sync(who)
        assert [u.ref for u in done.agent_updates] == [f"refs/remotes/origin/{BRANCH}"]
        assert done.joined == "up-to-date" and tip(who, f"origin/{BRANCH}") == e
    assert _statuses(ana) == {d: "open", e: "open"}
    # ana accepts one proposal and syncs; bob, not yet synced, rejects the other
    _review(ana, ANA).accept([d], "checked against the pool's config")
    pushed = sync(ana, curator=ANA)
    assert pushed.pushed is not None and pushed.pushed.status == "pushed"
    assert tip(site.bare, "main") == tip(ana)
    _review(bob, BOB).reject([e], "the lock time is a guess")
    merged = sync(bob, curator=BOB)
    assert merged.joined == "merged" and merged.incoming >= 1
    assert merged.pushed is not None and merged.pushed.status == "pushed"
    back = sync(ana, curator=ANA)
    assert back.joined == "fast-forward"
    assert tip(ana) == tip(bob) == tip(site.bare, "main")
    for repo in (ana, bob):
        assert _statuses(repo) == {d: "accepted", e: "rejected"}
        assert (repo / D).is_file() and not (repo / E).exists()
        assert git(repo, "status", "--porcelain") == ""
        fsck(repo)
    fsck(site.bare)
    # a stale push is refused by the server, never forced; the next sync joins and pushes
    _curation(bob).relabel([B], {"type": "insight"}, "bob's call")
    _curation(ana).relabel([A], {"type": "insight"}, "ana's call")
    assert sync(ana, curator=ANA).pushed.status == "pushed"  # type: ignore[union-attr]
    remote_tip = tip(site.bare, "main")
    stale = gitremote.push(bob, "origin", "main")
    assert stale.rejected, stale
    assert "fetch first" in stale.message or "non-fast-forward" in stale.message
    assert tip(site.bare, "main") == remote_tip
    assert sync(bob, curator=BOB).pushed.status == "pushed"  # type: ignore[union-attr]
    assert sync(ana, curator=ANA).joined == "fast-forward"
    assert tip(ana) == tip(bob) == tip(site.bare, "main")
    # the agent pushing straight to the curated branch: the sync stops and changes nothing
    git(agent, "fetch", "-q", "origin")
    git(agent, "checkout", "-q", "-B", "main", "origin/main")
    made = _agent_commit(agent, "kb/gotchas/db/f6f6f6f6.md", "Vacuum runs nightly")
    git(agent, "push", "-q", "origin", "main")
    before = tip(ana)
    with pytest.raises(AgentCommits, match=made[:12]):
        sync(ana, curator=ANA)
    assert tip(ana) == before and tip(site.bare, "main") == made
    if site.https is not None:  # (every git request went through the server, signed in)
        said = {(m, p.partition("?")[0]) for m, p, _u in site.https.requests}
        assert ("POST", "/kb.git/git-receive-pack") in said
        assert ("POST", "/kb.git/git-upload-pack") in said
        assert {u for _m, _p, u in site.https.requests} == {servers.HTTPS_USER}


# ---------------------------------------------------------------------------------------------
# a repository config naming a program on every route a clone, fetch, sync or push takes

HOOKS = ("pre-push", "post-merge", "post-checkout", "pre-commit", "commit-msg",
         "prepare-commit-msg", "post-commit", "pre-merge-commit", "reference-transaction",
         "post-rewrite", "pre-auto-gc", "post-index-change", "fsmonitor-watchman")


def _plant(repo: Path, site: Site, marker: Path) -> None:
    """Every key of `repo`'s own config that names a program a remote operation could run,
    each its own script noting its name in `marker`; and hooks in both hook folders. (A
    `filter.<d>.process` program is left to corpus/test_gitrepo.py: git's failure to talk
    to one that exits is fatal or not by timing, which would make the control flaky.)"""
    evil = site.tmp / "evil"

    def script(name: str) -> str:
        return str(_program(evil / f"{name}.sh", f"echo \"{name} $*\" >> '{marker}'\nexit 1"))

    def cfg(*kv: str) -> None:
        git(repo, "config", *kv)

    cfg("core.sshCommand", script("sshcommand"))
    cfg("core.askPass", script("askpass"))
    cfg("core.fsmonitor", script("fsmonitor"))
    cfg("credential.helper", script("credential"))
    base = site.https.base if site.https is not None else "https://127.0.0.1"
    cfg(f"credential.{base}.helper", script("credential-url"))
    cfg("remote.origin.uploadpack", script("uploadpack"))
    cfg("remote.origin.receivepack", script("receivepack"))
    for key in ("smudge", "clean"):
        cfg(f"filter.evil.{key}", script(key))
    cfg("commit.gpgSign", "true")
    cfg("gpg.program", script("gpg"))
    cfg("protocol.allow", "always")
    cfg("protocol.ext.allow", "always")
    cfg("protocol.http.allow", "always")
    cfg(f"url.ext::sh -c touch% {marker}.insteadOf", "evil://")
    cfg("remote.evil.url", "evil://x/kb")
    cfg("remote.ext.url", f"ext::sh -c touch% {marker}")
    # plain http, named and reached through a rewrite
    cfg("remote.http.url", "http://127.0.0.1:9/kb.git")
    cfg("url.http://127.0.0.1:9/.insteadOf", "plain://")
    cfg("remote.plain.url", "plain://kb.git")
    for name in ("evil", "ext", "http", "plain"):
        cfg(f"remote.{name}.fetch", f"+refs/heads/*:refs/remotes/{name}/*")
    cfg("--add", "remote.origin.fetch", "+refs/heads/main:refs/heads/main")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    hooks_path = site.tmp / "hooks-path"
    for folder in (repo / ".git" / "hooks", hooks_path):
        for hook in HOOKS:
            _program(folder / hook, f"echo \"hook:{hook} $*\" >> '{marker}'\nexit 0")
    cfg("core.hooksPath", str(hooks_path))


def _user_ssh(site: Site, monkeypatch: pytest.MonkeyPatch) -> str:
    """ssh: the user's key through their global `core.sshCommand` (which the repository's
    own `core.sshCommand` outranks in plain git): a program named `ssh` noting each run."""
    assert site.ssh is not None
    monkeypatch.delenv("GIT_SSH_COMMAND")
    real = shutil.which("ssh")
    wrapper = _program(site.tmp / "my-ssh" / "ssh",
                       f"echo \"ssh $*\" >> '{site.mine}'\n"
                       f"exec {site.ssh.ssh_command().replace('ssh', str(real), 1)} \"$@\"")
    git(site.tmp, "config", "--global", "core.sshCommand", str(wrapper))
    return str(wrapper)


def _bob_pushes_a_change(site: Site) -> None:
    bob = _clone(site, "bob")
    _curation(bob).relabel([B], {"type": "insight"}, "bob's call")
    assert sync(bob, curator=BOB).pushed.status == "pushed"  # type: ignore[union-attr]


def _ran(marker: Path) -> set[str]:
    return {line.split()[0] for line in marker.read_text().splitlines()} if marker.exists() else set()


def test_the_plants_are_real(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """Control: plain git, over the same transport, runs the planted programs."""
    mine_ssh = _user_ssh(site, monkeypatch) if site.ssh is not None else None
    copy = _clone(site, "copy")
    marker = site.tmp / "pwned"
    _plant(copy, site, marker)
    _bob_pushes_a_change(site)

    said: list[str] = []

    def plain(*args: str) -> None:
        proc = subprocess.run(["git", "-C", str(copy), *args], capture_output=True, text=True,
                              check=False, stdin=subprocess.DEVNULL)
        said.append(proc.stderr)

    if site.ssh is not None:
        plain("fetch", "origin")  # the repository's core.sshCommand outranks the user's
        assert "sshcommand" in _ran(marker)
        # with the user's ssh, the repository's upload-pack and receive-pack run (on the
        # server, which is this machine)
        plain("-c", f"core.sshCommand={mine_ssh}", "fetch", "origin")
        plain("-c", f"core.sshCommand={mine_ssh}", "push", "origin", "HEAD:refs/heads/control")
        assert {"uploadpack", "receivepack"} <= _ran(marker), said
    else:
        plain("pull", "--no-rebase", "origin", "main")
        assert "type: insight" in (copy / B).read_text(), said
        # the password was handed to the repository's helpers to store
        assert {"credential", "credential-url"} <= _ran(marker)
        # and bob's change was checked out through the repository's filters and hooks
        assert {"smudge", "clean", "fsmonitor", "hook:reference-transaction",
                "hook:post-index-change"} <= _ran(marker)
        plain("push", "origin", "HEAD:refs/heads/control")
        assert "hook:pre-push" in _ran(marker), said


def test_no_program_from_the_repository_config_runs(site: Site,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    if site.ssh is not None:
        _user_ssh(site, monkeypatch)
    ana = _clone(site, "ana")
    marker = site.tmp / "pwned"
    _plant(ana, site, marker)
    _bob_pushes_a_change(site)
    _curation(ana).relabel([A], {"type": "insight"}, "ana's call")
    done = sync(ana, remote="origin", curator=ANA)
    assert done.joined == "merged" and done.pushed is not None, done
    assert done.pushed.status == "pushed"
    assert tip(site.bare, "main") == tip(ana)
    assert "type: insight" in (ana / B).read_text()  # bob's change, written without the filter
    everything = sync(ana, curator=ANA)
    said = "\n".join(everything.warnings)
    for name in ("evil", "ext", "http", "plain"):
        assert f"could not fetch {name}" in said, said
        with pytest.raises(GitError, match="refused"):
            gitremote.fetch(ana, name)
    assert "insteadOf" in said
    for name in ("ext", "http", "plain"):
        with pytest.raises(GitError, match="refused"):
            gitremote.push(ana, name, "main")
    assert not list(site.tmp.glob("pwned*")), marker.read_text()
    # the user's own credentials were used: their helper (https), their ssh (ssh)
    assert site.mine.exists(), "the user's credential program never ran"
    if site.https is not None:
        assert "credential get" in site.mine.read_text()
    else:
        assert "127.0.0.1" in site.mine.read_text()
    assert git(ana, "for-each-ref", "--format=%(refname)", "refs/heads/") == "refs/heads/main\n"
    # a clone into a new folder runs nothing either (the fresh repository has no config yet)
    again = gitclone.clone(site.url, site.tmp / "again")
    assert tip(again) == tip(ana)
    assert not list(site.tmp.glob("pwned*"))


# ---------------------------------------------------------------------------------------------
# plain http and the certificate


@pytest.mark.parametrize("site", ["https"], indirect=True)
def test_plain_http_is_refused_and_the_certificate_is_checked(
        site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    assert site.https is not None
    root, home, password = site.https.root, site.https.home, site.https.password
    with servers.http_git_server(root, home, password) as plain:
        http_url = plain.url("kb.git")
        # control: the same repository is served over plain http, and plain git takes it
        git(site.tmp, "clone", "-q", http_url, str(site.tmp / "control-http"))
        assert plain.requests
        plain.requests.clear()
        # typed: refused before any git runs
        with pytest.raises(gitclone.CloneRefused, match=r"http:// is not cloned"):
            gitclone.check_url(http_url)
        with pytest.raises(GitError, match="refused remote URL"):
            gitremote.clone(http_url, site.tmp / "typed")
        assert not (site.tmp / "typed").exists()
        # a server that redirects to plain http: plain git follows, factdesk's git does not
        site.https.redirect_to = plain.base
        moved = f"{site.https.base}/moved/kb.git"
        git(site.tmp, "clone", "-q", moved, str(site.tmp / "control-moved"))
        assert plain.requests
        plain.requests.clear()
        with pytest.raises(GitError, match="git clone failed"):
            gitclone.clone(moved, site.tmp / "moved")
        assert not (site.tmp / "moved").exists()
        # configured, or reached by rewriting the https URL: refused, the https remote untouched
        ana = _clone(site, "ana")
        git(ana, "remote", "add", "plain", http_url)
        with pytest.raises(GitError, match="refused remote URL"):
            gitremote.fetch(ana, "plain")
        git(ana, "config", f"url.{plain.base}/.insteadOf", f"{site.https.base}/")
        with pytest.raises(GitError, match="insteadOf"):
            sync(ana, remote="origin")
        with pytest.raises(GitError, match="insteadOf"):
            gitremote.push(ana, "origin", "main")
        assert not plain.requests, plain.requests
    # the certificate is checked: without the CA git is told of, nothing is cloned
    monkeypatch.delenv("GIT_SSL_CAINFO")
    with pytest.raises(GitError, match="certificate"):
        gitclone.clone(site.url, site.tmp / "untrusted")
    assert not (site.tmp / "untrusted").exists()
