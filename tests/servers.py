"""Real git servers on 127.0.0.1 for the slow sync tests (tests/review/test_sync_servers.py,
`make test-servers`): git's own smart HTTP (`git http-backend` as a CGI program) over https
with a self-signed certificate, the same over plain http (only to show that factdesk
refuses it), and an OpenSSH `sshd` with key authentication. Everything they need — keys,
certificate, configs — is made in the test's folder; nothing is committed.

The https server asks for a password (HTTP Basic), as a hosting site does, so a client
needs a credential helper; it serves every bare repository under its root
(`GIT_PROJECT_ROOT`, `GIT_HTTP_EXPORT_ALL`) and takes pushes (`http.receivepack=true` set on
the served repository by the test). The environment of the server's git is its own (no
user config), as on a real server.
"""

from __future__ import annotations

import base64
import contextlib
import os
import pwd
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

#: the account the https server takes (the password is made per server)
HTTPS_USER = "ana"


def server_env(home: Path) -> dict[str, str]:
    """A server's git environment: no user or system config of the machine running the test."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (its own CA: git is given it through
    `GIT_SSL_CAINFO`) and its key, made by `openssl`."""
    cert, key = folder / "server.crt", folder / "server.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, stdin=subprocess.DEVNULL)
    return cert, key


def _read_chunked(rfile: Any) -> bytes:
    body = bytearray()
    while True:
        size = int(rfile.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            while rfile.readline() not in (b"\r\n", b"\n", b""):
                pass  # (trailers)
            return bytes(body)
        body += rfile.read(size)
        rfile.readline()


@dataclass
class HttpGitServer:
    """`git http-backend` behind Python's `http.server` (a thread), over TLS when given a
    certificate. `requests` lists (method, path, user) as served; `redirect_to`: a base URL
    every `/moved/<rest>` request is sent to (302), as a moved repository would be."""

    root: Path
    home: Path
    password: str
    cert: tuple[Path, Path] | None = None
    redirect_to: str | None = None
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    port: int = 0
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def base(self) -> str:
        return f"{'https' if self.cert else 'http'}://127.0.0.1:{self.port}"

    def url(self, name: str) -> str:
        return f"{self.base}/{name}"

    def start(self) -> HttpGitServer:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._serve(b"")

            def do_POST(self) -> None:
                if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                    body = _read_chunked(self.rfile)
                else:
                    body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._serve(body)

            def _reply(self, status: int, headers: dict[str, str], body: bytes = b"") -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _serve(self, body: bytes) -> None:
                path, _, query = self.path.partition("?")
                if outer.redirect_to and path.startswith("/moved/"):
                    target = f"{outer.redirect_to}/{self.path.removeprefix('/moved/')}"
                    self._reply(302, {"Location": target})
                    return
                user = self._user()
                if user is None:
                    self._reply(401, {"WWW-Authenticate": 'Basic realm="kb"'})
                    return
                outer.requests.append((self.command, self.path, user))
                env = {**server_env(outer.home), "GIT_PROJECT_ROOT": str(outer.root),
                       "GIT_HTTP_EXPORT_ALL": "1", "REQUEST_METHOD": self.command,
                       "PATH_INFO": path, "QUERY_STRING": query, "REMOTE_USER": user,
                       "REMOTE_ADDR": self.client_address[0],
                       "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                       "CONTENT_LENGTH": str(len(body))}
                if self.headers.get("Content-Encoding"):
                    env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
                if self.headers.get("Git-Protocol"):
                    env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
                proc = subprocess.run(["git", "http-backend"], input=body, env=env,
                                      capture_output=True, check=False)
                if proc.stderr:
                    outer.errors.append(proc.stderr.decode("utf-8", "replace"))
                head, _, payload = proc.stdout.partition(b"\r\n\r\n")
                if not _:
                    head, _, payload = proc.stdout.partition(b"\n\n")
                status, headers = 200, {}
                for line in head.decode("latin-1").splitlines():
                    key, _, value = line.partition(":")
                    if key.lower() == "status":
                        status = int(value.split()[0])
                    elif key:
                        headers[key.strip()] = value.strip()
                self._reply(status, headers, payload)

            def _user(self) -> str | None:
                said = self.headers.get("Authorization", "")
                if not said.startswith("Basic "):
                    return None
                try:
                    user, _, password = base64.b64decode(said[6:]).decode().partition(":")
                except ValueError:
                    return None
                return user if (user, password) == (HTTPS_USER, outer.password) else None

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

            def handle_error(self, request: Any, client_address: Any) -> None:
                import sys
                import traceback
                if not isinstance(sys.exc_info()[1], (ssl.SSLError, ConnectionError)):
                    outer.errors.append(traceback.format_exc())  # (not a client giving up)

        server = Server(("127.0.0.1", 0), Handler)
        if self.cert is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(self.cert[0]), str(self.cert[1]))
            # (the handshake happens in the request's thread: a client that gives up on the
            # certificate never stalls the accepting one)
            server.socket = context.wrap_socket(server.socket, server_side=True,
                                                do_handshake_on_connect=False)
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"servers-{'https' if self.cert else 'http'}",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)


@contextlib.contextmanager
def http_git_server(root: Path, home: Path, password: str,
                    cert: tuple[Path, Path] | None = None) -> Iterator[HttpGitServer]:
    server = HttpGitServer(root, home, password, cert).start()
    try:
        yield server
    finally:
        server.stop()


# ---------------------------------------------------------------------------------------------
# sshd


def find_sshd() -> str | None:
    """OpenSSH's server (an absolute path: sshd re-executes itself), or None."""
    found = shutil.which("sshd")
    if found:
        return found
    for candidate in ("/usr/sbin/sshd", "/usr/local/sbin/sshd", "/sbin/sshd"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def sshd_missing_reason() -> str | None:
    """Why no sshd test can run here, or None when one can."""
    if find_sshd() is None:
        return "no sshd on this machine (install openssh-server to run the ssh transport tests)"
    if shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        return "no ssh client or ssh-keygen on this machine (openssh-client)"
    if os.geteuid() == 0 and not Path("/run/sshd").is_dir():
        # sshd run as root needs its privilege-separation folder (made by the service at boot)
        try:
            Path("/run/sshd").mkdir(mode=0o755)
        except OSError as exc:
            return f"sshd runs as root here and /run/sshd cannot be made: {exc}"
    return None


@dataclass
class SshServer:
    """An sshd on 127.0.0.1 taking one generated client key for the current account."""

    folder: Path
    port: int
    user: str
    client_key: Path
    known_hosts: Path
    process: subprocess.Popen[bytes]
    log: Path

    def url(self, path: Path) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}{path}"

    def ssh_command(self) -> str:
        """What a user puts in GIT_SSH_COMMAND or `core.sshCommand` to reach this server:
        their key, the server's host key pinned, never a prompt."""
        return (f"ssh -F /dev/null -i {self.client_key} -o IdentitiesOnly=yes -o BatchMode=yes "
                f"-o StrictHostKeyChecking=yes -o UserKnownHostsFile={self.known_hosts} "
                "-o LogLevel=ERROR")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "factdesk-test",
                    "-f", str(path)], check=True, capture_output=True, stdin=subprocess.DEVNULL)


def _banner(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            return s.recv(64).startswith(b"SSH-")
    except OSError:
        return False


@contextlib.contextmanager
def ssh_server(folder: Path) -> Iterator[SshServer]:
    """Start sshd (`-D -e`, its own config) and wait for its banner; stopped on exit."""
    sshd = find_sshd()
    assert sshd is not None
    folder.mkdir(parents=True, exist_ok=True)
    host_key, client_key = folder / "host_key", folder / "client_key"
    _keygen(host_key)
    _keygen(client_key)
    (folder / "authorized_keys").write_text(Path(f"{client_key}.pub").read_text())
    user = pwd.getpwuid(os.geteuid()).pw_name
    log = folder / "sshd.log"
    for _attempt in range(5):
        port = _free_port()
        config = folder / "sshd_config"
        config.write_text("\n".join([
            "ListenAddress 127.0.0.1", f"Port {port}", f"HostKey {host_key}",
            f"AuthorizedKeysFile {folder / 'authorized_keys'}", f"AllowUsers {user}",
            "PubkeyAuthentication yes", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no",
            "PermitRootLogin prohibit-password", "PidFile none", "LogLevel ERROR", ""]))
        with log.open("ab") as out:
            proc = subprocess.Popen([sshd, "-D", "-e", "-f", str(config)], stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT,
                                    env=server_env(folder))
        deadline = time.monotonic() + 10
        while proc.poll() is None and time.monotonic() < deadline and not _banner(port):
            time.sleep(0.05)
        if proc.poll() is None and _banner(port):
            break
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()
    else:
        raise RuntimeError(f"sshd did not start: {log.read_text(errors='replace')}")
    known = folder / "known_hosts"
    host_pub = Path(f"{host_key}.pub").read_text().split()
    known.write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
    try:
        yield SshServer(folder, port, user, client_key, known, proc, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
