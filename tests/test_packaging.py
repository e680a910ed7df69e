"""Installing and finding factdesk (issue 18): --version and --help, the shared folder's
place, the demo corpus as package data, the resource accessor."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import version as metadata_version
from pathlib import Path

import pytest

from factdesk import resources
from factdesk.cli import main
from factdesk.demo import HISTORY_FILE, build_demo_corpus, resource_root
from factdesk.resources import resource_path

ROOT = Path(__file__).resolve().parents[1]
STATIC_MODEL = Path("app", "factdesk", "model_data", "static-minilm")


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


def test_the_demo_corpus_is_package_data_and_the_only_copy() -> None:
    root = resource_root()
    assert root == resource_path("demo_data") == ROOT / "app" / "factdesk" / "demo_data"
    assert (root / HISTORY_FILE).is_file() and len(list((root / "kb").rglob("*.md"))) >= 60
    assert not (ROOT / "kb").exists() and not (ROOT / "resources").exists()  # one source of truth
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"demo_data/**/*"' in pyproject  # what puts it into the wheel and the sdist


@pytest.mark.parametrize("name", ["", "/etc/passwd", "../pyproject.toml", "demo_data/../../x",
                                  "demo_data/./kb", "demo_data\\kb", "C:/x", "./demo_data"])
def test_resource_names_never_leave_the_package(name: str) -> None:
    with pytest.raises(ValueError, match="not a resource name"):
        resource_path(name)


def test_a_missing_resource_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no-such-thing"):
        resource_path("no-such-thing")


def test_resources_come_from_the_bundle_when_frozen(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """PyInstaller sets sys.frozen and sys._MEIPASS; the packaged data lies under
    _MEIPASS/factdesk (the real bundle is started by tests/test_bundle.py)."""
    (tmp_path / "factdesk" / "demo_data" / "kb").mkdir(parents=True)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert resources.resource_path("demo_data/kb") == tmp_path / "factdesk" / "demo_data" / "kb"


def test_the_demo_builds_from_the_package_data(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    repo = build_demo_corpus(tmp_path / "demo")
    assert (repo / ".knomit" / "ontology.yaml").is_file()
    main(["check", "--kb", str(repo), "--format", "json"])  # 1: the demo plants rule breaks
    facts = len(list((resource_root() / "kb").rglob("*.md")))
    assert json.loads(capsys.readouterr().out)["facts"] == facts  # main's tree is exactly kb/


@pytest.mark.slow
def test_the_wheel_installs_into_a_fresh_venv_and_runs(tmp_path: Path) -> None:
    """python -m build, then pip install the wheel (dependencies from the registry) into a new
    venv and run it from outside the checkout: --version, and check on the demo corpus it
    builds from its own package data."""
    # from a clean copy of the checkout's files: setuptools also reads a stale
    # app/factdesk.egg-info/SOURCES.txt, which would hide a package-data mistake
    src = tmp_path / "src"
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    # the static model is a build output (git-ignored): the one `make dist` made, else made now
    model = ROOT / STATIC_MODEL
    if (model / "model.safetensors").is_file():
        shutil.copytree(model, src / STATIC_MODEL)
    else:
        subprocess.run([sys.executable, str(src / "packaging" / "build_static_model.py")],
                       check=True, capture_output=True, timeout=900)
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(tmp_path / "dist"), str(src)],
                   check=True, capture_output=True, timeout=600)
    wheel, = (tmp_path / "dist").glob("factdesk-*.whl")
    sdist, = (tmp_path / "dist").glob("factdesk-*.tar.gz")
    with zipfile.ZipFile(wheel) as zf:  # the static model ships in the wheel, whole
        shipped = {i.filename.removeprefix("factdesk/model_data/static-minilm/"): i.file_size
                   for i in zf.infolist() if i.filename.startswith("factdesk/model_data/")}
    assert {"model.safetensors", "tokenizer.json", "config.json", "factdesk.json"} <= set(shipped)
    assert shipped["model.safetensors"] == (src / STATIC_MODEL / "model.safetensors").stat().st_size
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # without PYTHONPATH: pip would take this checkout's factdesk for an installed one
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "install", "-q", str(wheel)], check=True, capture_output=True, timeout=900,
                   env=clean)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen"}
    run = lambda *argv: subprocess.run([str(venv / "bin" / argv[0]), *argv[1:]],  # noqa: E731
                                       capture_output=True, text=True, cwd=tmp_path, env=env,
                                       timeout=300)
    assert run("factdesk", "--version").stdout == f"factdesk {metadata_version('factdesk')}\n"
    demo = run("python", "-m", "factdesk.demo", str(tmp_path / "demo"))
    assert demo.returncode == 0, demo.stderr
    check = run("factdesk", "check", "--kb", str(tmp_path / "demo"), "--format", "json")
    assert json.loads(check.stdout)["facts"] == len(list((resource_root() / "kb").rglob("*.md")))
    # and the window: `factdesk` alone opens the demo (a fresh profile) and paints its rows
    window = subprocess.run([str(venv / "bin" / "factdesk")], capture_output=True, text=True,
                            env={**env, "FACTDESK_SMOKE": "1",
                                 "FACTDESK_DATA_DIR": str(tmp_path / "data")}, timeout=300)
    assert window.returncode == 0, window.stderr[-3000:]
    assert "factdesk-smoke first-paint" in window.stdout and " rows=" in window.stdout
    found = run("python", "-c", "import factdesk.demo as d; print(d.resource_root())").stdout
    assert found.startswith(str(venv))  # the installed package data, not this checkout
    # semantic search from the plain install: the shipped model, no torch, nothing distilled
    assert run("python", "-c", "import torch").returncode == 1
    similar = run("factdesk", "similar", "ledger", "--kb", str(tmp_path / "demo"), "--format", "json")
    assert similar.returncode == 0, similar.stderr[-3000:]
    hits = json.loads(similar.stdout)
    assert hits["model"].startswith("static:") and len(hits["results"]) >= 3
    assert not (tmp_path / ".cache" / "factdesk" / "models").exists()
    assert sdist.stat().st_size > 100_000  # the source release carries the demo corpus too


APP_ID = "org.factdesk.factdesk"
PACKAGING = ROOT / "packaging"
DESKTOP = ROOT / "app" / "factdesk" / "desktop_data"  # package data: `factdesk desktop install`


def test_the_desktop_files_agree_on_one_app_id() -> None:
    """The .desktop file's name, the metainfo's id and launchable, the spec's bundle id and the
    window's desktop file name (Wayland's app id) must be the same string, or a desktop shows
    a generic icon and the software centre cannot launch the app."""
    desktop = (DESKTOP / f"{APP_ID}.desktop").read_text(encoding="utf-8")
    metainfo = (DESKTOP / f"{APP_ID}.metainfo.xml").read_text(encoding="utf-8")
    assert f"Icon={APP_ID}\n" in desktop and "Exec=factdesk %f\n" in desktop
    assert f"<id>{APP_ID}</id>" in metainfo
    assert f'<launchable type="desktop-id">{APP_ID}.desktop</launchable>' in metainfo
    assert f'APP_ID = "{APP_ID}"' in (PACKAGING / "factdesk.spec").read_text(encoding="utf-8")
    gui_app = (ROOT / "app" / "factdesk" / "gui" / "app.py").read_text(encoding="utf-8")
    assert f'setDesktopFileName("{APP_ID}")' in gui_app
    assert f'<release version="{metadata_version("factdesk")}"' in metainfo


@pytest.mark.parametrize(("tool", "args", "name"), [
    ("desktop-file-validate", [], f"{APP_ID}.desktop"),
    ("appstreamcli", ["validate", "--no-net", "--pedantic"], f"{APP_ID}.metainfo.xml"),
])
def test_the_desktop_files_validate(tool: str, args: list[str], name: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed (apt install desktop-file-utils / appstream)")
    proc = subprocess.run([tool, *args, str(DESKTOP / name)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "warning" not in (proc.stdout + proc.stderr).lower()


def test_the_icon_comes_in_every_size_desktops_use() -> None:
    for size in (16, 22, 24, 32, 48, 64, 128, 256, 512):
        png = (DESKTOP / "icons" / f"factdesk-{size}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
        assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (size, size)
    ico = (DESKTOP / "icons" / "factdesk.ico").read_bytes()
    assert ico[:4] == b"\x00\x00\x01\x00" and int.from_bytes(ico[4:6], "little") == 7
