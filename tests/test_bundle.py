"""The PyInstaller bundle (`make package`, packaging/factdesk.spec), started as a user would:
no Python, no checkout on its path, a fresh profile, the demo corpus from its package data.

Slow: run by `make package` after the build (skipped with a reason when there is no bundle).
FACTDESK_BUNDLE names another bundle folder (default: dist/factdesk).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from importlib.metadata import version as metadata_version
from pathlib import Path

import pytest

from tests.conftest import MAKE_CORPUS

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = Path(os.environ.get("FACTDESK_BUNDLE") or ROOT / "dist" / "factdesk")
EXE = BUNDLE / "factdesk"
RESULTS = BUNDLE.parent / "factdesk-smoke.json"
#: generous: the bundle's first paint is ~1-2 s on this 2-core VM (docs/packaging.md)
FIRST_PAINT_LIMIT_S = 20.0

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not EXE.is_file(), reason=f"no bundle at {BUNDLE} (run make package)"),
]


def bundle_env(tmp_path: Path) -> dict[str, str]:
    """What a desktop session would pass: no PYTHONPATH or virtualenv, a fresh profile."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8",
            "QT_QPA_PLATFORM": "offscreen", "FACTDESK_DATA_DIR": str(tmp_path / "data"),
            "FACTDESK_CACHE_DIR": str(tmp_path / "cache")}


def first_paint(env: dict[str, str], *args: str) -> tuple[float, int]:
    """Start the bundle with FACTDESK_SMOKE=1; seconds from the start to the table's first
    painted rows (the app prints its time.monotonic(), the same clock as ours), and rows."""
    t0 = time.monotonic()
    proc = subprocess.run([str(EXE), *args], env={**env, "FACTDESK_SMOKE": "1"},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("factdesk-smoke ")), None)
    assert line is not None, f"no first paint reported:\n{proc.stdout}\n{proc.stderr[-3000:]}"
    fields = dict(part.split("=", 1) for part in line.split()[2:])
    return float(fields["monotonic"]) - t0, int(fields["rows"])


def test_the_bundle_opens_the_demo_corpus_and_paints(tmp_path: Path) -> None:
    env = bundle_env(tmp_path)
    version = subprocess.run([str(EXE), "--version"], env=env, capture_output=True, text=True,
                             timeout=60)
    assert version.stdout == f"factdesk {metadata_version('factdesk')}\n", version.stderr

    # the first launch after the build reads the bundle's files from disk; then a second fresh
    # profile (files cached): each copies the demo from the bundle's data and indexes it
    cold_s, rows = first_paint(env)
    fresh_s, _ = first_paint({**env, "FACTDESK_DATA_DIR": str(tmp_path / "data2")})
    demo = tmp_path / "data" / "workspace" / "ledger-demo"
    assert (demo / ".git").is_dir() and rows == len(list((demo / "kb").rglob("*.md")))
    warm = [first_paint(env, str(demo))[0] for _ in range(3)]  # the index is current now
    assert max(cold_s, fresh_s, *warm) < FIRST_PAINT_LIMIT_S

    # the ontology's JavaScript rule runs in the bundle's V8 (py_mini_racer's files shipped)
    check = subprocess.run([str(EXE), "check", "--kb", str(demo), "--format", "json"], env=env,
                           capture_output=True, text=True, timeout=120)
    report = json.loads(check.stdout)
    assert check.returncode == 1 and report["facts"] == rows  # 1: the demo's planted errors
    assert "ontology-rule" in {e["code"] for e in report["errors"]}

    # semantic search with the static model shipped pre-built: no torch inside, nothing
    # distilled at the first use (the full model stays the optional extra)
    internal = BUNDLE / "_internal"
    assert not any((internal / name).exists() for name in ("torch", "sentence_transformers"))
    assert (internal / "factdesk" / "model_data" / "static-minilm" / "model.safetensors").is_file()
    similar = subprocess.run([str(EXE), "similar", "ledger", "--kb", str(demo), "--format", "json"],
                             env=env, capture_output=True, text=True, timeout=120)
    assert similar.returncode == 0, similar.stderr[-3000:]
    hits = json.loads(similar.stdout)
    assert hits["model"].startswith("static:") and len(hits["results"]) >= 3
    assert ":run-m2v-" not in hits["model"]  # model2vec's metadata travels with it
    assert not (tmp_path / "cache" / "models").exists()
    full = subprocess.run([str(EXE), "similar", "ledger", "--kb", str(demo), "--model", "full"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert full.returncode == 1 and "Error:" in full.stderr and "Traceback" not in full.stderr

    size = sum(p.stat().st_size for p in BUNDLE.rglob("*") if p.is_file() and not p.is_symlink())
    RESULTS.write_text(json.dumps({
        "first_paint_first_launch_s": round(cold_s, 3),
        "first_paint_fresh_profile_s": round(fresh_s, 3),
        "first_paint_warm_index_s": [round(s, 3) for s in warm],
        "bundle_bytes": size, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(f"\nbundle {size / 2**20:.0f} MiB; first paint {cold_s:.2f} s at the first launch, "
          f"{fresh_s:.2f} s on a fresh profile, "
          f"{', '.join(f'{s:.2f}' for s in warm)} s with the index current")


def test_a_large_rebuild_uses_worker_processes_in_the_bundle(tmp_path: Path) -> None:
    """At 4,000 files or more the rebuild parses in forkserver workers, which re-run the frozen
    executable: packaging/factdesk_entry.py's freeze_support() must turn them into workers."""
    if not MAKE_CORPUS.exists():
        pytest.skip(f"the corpus generator is absent ({MAKE_CORPUS}); it ships in ../shared")
    kb = tmp_path / "kb5000"
    subprocess.run([sys.executable, str(MAKE_CORPUS), "--facts", "5000", "--commits", "200",
                    "--seed", "3", "--out", str(kb), "--quiet"], check=True, timeout=300)
    proc = subprocess.run([str(EXE), "index", "--kb", str(kb), "--rebuild"], env=bundle_env(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("rebuild: 5000 facts"), proc.stdout


def test_the_bundles_pre_commit_hook_runs_the_bundle(tmp_path: Path) -> None:
    """check --install-hook from the bundle writes a hook that calls the bundle's own command
    (it wrote `<exe> -m factdesk.cli`, which a frozen executable does not understand: every
    commit was refused with "No such option: -m")."""
    from factdesk.demo import build_demo_corpus

    repo = build_demo_corpus(tmp_path / "demo")
    env = bundle_env(tmp_path)
    installed = subprocess.run([str(EXE), "check", "--install-hook", "--kb", str(repo)], env=env,
                               capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0, installed.stderr
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    fact = repo / "kb" / "principles" / "x" / "d4d4d4d4.md"
    fact.parent.mkdir(parents=True)
    fact.write_text("---\ntype: principle\n---\n# Rule\n", encoding="utf-8")
    subprocess.run([*git, "add", "-A"], check=True, env=env)
    refused = subprocess.run([*git, "commit", "-qm", "bad"], env=env, capture_output=True,
                             text=True, timeout=120)
    assert refused.returncode != 0 and "[ontology-rule]" in refused.stdout + refused.stderr, refused
    fact.unlink()  # what is staged now passes the check
    (repo / "README.md").write_text("the demo corpus\n", encoding="utf-8")
    subprocess.run([*git, "add", "-A"], check=True, env=env)
    ok = subprocess.run([*git, "commit", "-qm", "good"], env=env, capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
