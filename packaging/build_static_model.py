"""Distil the default static embedding model once, into the package data (issue 18).

    python packaging/build_static_model.py [--force] [--dest DIR]

`make dist` and `make package` run it before building, so the wheel, the sdist and the
bundle carry `app/factdesk/model_data/static-minilm/` (float16 weights, tokenizer, config,
factdesk.json naming what it was distilled from) and load it with model2vec alone: no torch
and no first-run distillation on the user's machine. The folder is a build output, not in
git (.gitignore). Distilling needs the `semantic` extra here (torch, the local
all-MiniLM-L6-v2 package, model2vec[distill]); a folder already distilled from today's
versions is kept (`--force` distils again).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEST = ROOT / "app" / "factdesk" / "model_data" / "static-minilm"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=DEST, help=f"default: {DEST.relative_to(ROOT)}")
    parser.add_argument("--force", action="store_true", help="distil again even when current")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    sys.path.insert(0, str(ROOT / "app"))  # this checkout's factdesk, installed or not
    from factdesk.semantic import backends

    dest: Path = args.dest.resolve()
    made = backends.read_manifest(dest).get("distilled")
    if not args.force and made == backends.distilled_with() and (dest / "model.safetensors").is_file():
        print(f"static model current: {dest} ({_size(dest) / 1e6:.1f} MB)")
        return 0
    shutil.rmtree(dest, ignore_errors=True)
    started = time.perf_counter()
    try:
        backends.distil_static(dest, progress=print)
    except backends.ModelUnavailable as exc:
        print(f"build_static_model: {exc}", file=sys.stderr)
        return 1
    print(f"static model: {dest} ({_size(dest) / 1e6:.1f} MB, "
          f"{time.perf_counter() - started:.0f} s)")
    return 0


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


if __name__ == "__main__":
    raise SystemExit(main())
