"""Semantic fixtures: the real static model, distilled once per test session into tmp."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.semantic.guard import model_missing

if (why := model_missing()) is not None:  # every test here: one rule, one reason
    pytest.skip(why, allow_module_level=True)

from factdesk.semantic import backends

PARAPHRASE_SOURCE = (
    "When more than two hundred clients connect at once the database connection pool is "
    "exhausted and new requests wait until a connection is released back to the pool.")
PARAPHRASE = (
    "With over 200 clients connecting simultaneously, the pool of database connections "
    "runs out and fresh requests block until some connection returns to the pool.")
UNRELATED = [
    ("Invoices are rendered as PDF on the worker", "The billing worker renders every invoice "
     "to PDF with a headless renderer and stores it in object storage for seven years."),
    ("Feature flags live in the config service", "Product teams toggle feature flags in the "
     "central configuration service; the mobile apps poll it every five minutes."),
    ("The design system uses an 8 px grid", "All spacing in the component library is a "
     "multiple of eight pixels, and typography follows a modular scale."),
    ("On-call rotations are weekly", "Engineers rotate on call every week, handing over on "
     "Monday mornings with a written summary of open incidents."),
]

SUBJECTS = ["The billing service", "Our mobile app", "The search cluster", "The CI pipeline",
            "The design team", "The data warehouse", "The auth gateway", "The release train"]
ACTIONS = ["rotates its secrets every quarter", "publishes metrics to the dashboard nightly",
           "keeps an audit log for seven years", "uses blue-green deployments for upgrades",
           "stores invoices as PDF in object storage", "ships translations in twelve languages"]


def filler(n: int) -> list[tuple[str, str]]:
    """n distinct plain facts on unrelated topics (deterministic), to give a corpus a mean."""
    out = []
    for i in range(n):
        subject, action = SUBJECTS[i % len(SUBJECTS)], ACTIONS[(i * 5 + i // 8) % len(ACTIONS)]
        out.append((f"{subject} {action}", f"{subject} {action}; this was decided in review "
                    f"number {i + 3} and is documented in the team handbook."))
    return out


@pytest.fixture(scope="session")
def model_cache(pytestconfig: pytest.Config,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """FACTDESK_CACHE_DIR for the session, in pytest's own cache (not the user's): the
    static model is distilled there once (20 s to minutes on a busy 2-core machine) and
    reused by later runs; `pytest --cache-clear` distils it again."""
    cache = getattr(pytestconfig, "cache", None)  # (absent under -p no:cacheprovider)
    base = (Path(cache.mkdir("factdesk-models")) if cache
            else tmp_path_factory.mktemp("factdesk-models"))
    old = os.environ.get("FACTDESK_CACHE_DIR")
    os.environ["FACTDESK_CACHE_DIR"] = str(base)
    backends._loaded.clear()
    # distilled here, once, before any test starts: a test's own timeout (a worker's 120 s
    # signal wait) must never include the first run's distillation (it failed so on a
    # fresh clone: CI's first semantic test happened to be the worker's)
    shipped = backends.shipped_static_model()  # (made at set-up: `make` builds it)
    dest = backends.static_model_dir()
    if (shipped is not None and not (dest / "model.safetensors").is_file()
            and backends.read_manifest(shipped).get("distilled") == backends.distilled_with()):
        shutil.copytree(shipped, dest, dirs_exist_ok=True)
    backends.distil_static()  # (a no-op when copied or cached)
    yield base
    backends._loaded.clear()
    if old is None:
        os.environ.pop("FACTDESK_CACHE_DIR", None)
    else:
        os.environ["FACTDESK_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def static_backend(model_cache: Path) -> backends.Embedder:
    return backends.load_backend("static")


@pytest.fixture
def semantic_env(model_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(backends.ENV_CHOICE, raising=False)
    return model_cache
