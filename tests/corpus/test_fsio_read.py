"""Issue 15 #6: a FIFO or a device node where a configuration file belongs is refused at
once, in words naming the path, and nothing is read past a size cap (RELIABILITY C08)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factdesk import fsio
from factdesk.corpus.ontology import load_ontology
from factdesk.corpus.registry_io import REGISTRY_PATH, load_registry
from factdesk.corpus.scan import read_fact_file
from factdesk.errors import FactdeskError
from tests.conftest import Corpus


def _quick(call: Callable[[], Any], seconds: float = 5.0) -> Any:
    """`call()`'s result (or the exception it raised), failing the test if it takes more
    than `seconds` (the thread is left behind: a hung read must not hang the suite)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # (handed back to the test)
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still reading after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _device(path: Path) -> None:
    """A character device node like /dev/zero at `path` (needs root)."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 5))


def test_read_regular_refuses_a_fifo_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "ontology.yaml"
    os.mkfifo(fifo)
    with pytest.raises(fsio.NotRegular, match=r"ontology.yaml is not a regular file \(a FIFO\)"):
        _quick(lambda: fsio.read_regular(fifo, limit=1000))
    assert issubclass(fsio.NotRegular, FactdeskError) and issubclass(fsio.NotRegular, OSError)


def test_read_regular_refuses_a_device_node(tmp_path: Path) -> None:
    node = tmp_path / "agents.yaml"
    _device(node)
    with pytest.raises(fsio.NotRegular, match=r"agents.yaml .*a character device"):
        _quick(lambda: fsio.read_regular(node, limit=1000))
    with pytest.raises(fsio.NotRegular):
        _quick(lambda: fsio.read_or_none(node))


def test_read_regular_refuses_links_and_caps_the_size(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_bytes(b"x" * 100)
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    with pytest.raises(fsio.NotRegular, match="symbolic link"):
        fsio.read_regular(link, limit=1000)
    assert fsio.read_regular(real, limit=100) == b"x" * 100
    with pytest.raises(fsio.TooLarge, match=r"real\.yaml is over 99 bytes") as caught:
        fsio.read_regular(real, limit=99)
    assert caught.value.size == 100 and isinstance(caught.value, FactdeskError)
    with pytest.raises(FileNotFoundError):
        fsio.read_regular(tmp_path / "gone", limit=10)
    assert fsio.read_or_none(tmp_path / "gone") is None


def test_the_corpus_scan_reader_shares_the_rules(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    _device(tmp_path / "kb/zero.md")
    with pytest.raises(fsio.NotRegular):
        _quick(lambda: read_fact_file(str(tmp_path), "kb/zero.md"))


def test_config_readers_report_a_fifo_or_device_as_a_problem(corpus: Corpus) -> None:
    onto = corpus.root / ".knomit/ontology.yaml"
    onto.unlink()
    os.mkfifo(onto)
    loaded = _quick(lambda: load_ontology(corpus.root))
    assert loaded is not None
    assert [p.message for p in loaded.problems] == [
        "ontology is not a regular file (a FIFO): not read"]
    registry = corpus.root / REGISTRY_PATH
    registry.parent.mkdir(parents=True)
    _device(registry)
    problems = _quick(lambda: load_registry(corpus.root)).problems
    assert ["a character device" in p.message for p in problems] == [True]
    assert fsio.read_config(corpus.root, REGISTRY_PATH)[1] == (
        "is not a regular file (a character device): not read")


def test_dismissals_and_attestations_as_fifos_do_not_hang(corpus: Corpus) -> None:
    from factdesk.curation.dismissals import DismissalsError, load_dismissals
    from factdesk.curation.ops import load_attestations

    (corpus.root / ".factdesk").mkdir()
    os.mkfifo(corpus.root / ".factdesk/dismissals.yaml")
    os.mkfifo(corpus.root / ".factdesk/attestations.yaml")
    with pytest.raises(DismissalsError, match="not a regular file"):
        _quick(lambda: load_dismissals(corpus.root))
    assert _quick(lambda: load_attestations(corpus.root)) == {}


def test_search_with_a_fifo_ontology_finishes_and_says_why(corpus: Corpus) -> None:
    """The reproduction of issue 15 #6: `search` hung (killed at 20 s)."""
    onto = corpus.root / ".knomit/ontology.yaml"
    onto.unlink()
    os.mkfifo(onto)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "factdesk", "search", "pool", "--kb",
                           str(corpus.root)], capture_output=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert time.monotonic() - start < 60
    assert proc.returncode == 0, proc.stderr
    assert b"a1a1a1a1" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "factdesk", "check", "--kb", str(corpus.root)],
                          capture_output=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert b"not a regular file (a FIFO)" in proc.stdout + proc.stderr


def test_a_fifo_as_a_move_destination_is_refused_in_words(corpus: Corpus) -> None:
    dest = corpus.root / "kb/decisions/db/a1a1a1a1.md"
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(dest)
    before = (corpus.root / "kb/gotchas/db/a1a1a1a1.md").read_bytes()
    proc = subprocess.run([sys.executable, "-m", "factdesk", "move", "kb/gotchas/db/a1a1a1a1.md",
                           "--to", "kb/decisions/db/a1a1a1a1.md", "--reason", "x", "--kb",
                           str(corpus.root)], capture_output=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path),
                               "GIT_AUTHOR_NAME": "c", "GIT_AUTHOR_EMAIL": "c@x.invalid",
                               "GIT_COMMITTER_NAME": "c", "GIT_COMMITTER_EMAIL": "c@x.invalid"})
    assert proc.returncode != 0
    # (the destination's existence is checked without opening it: never waited on)
    assert b"kb/decisions/db/a1a1a1a1.md already exists" in proc.stderr
    assert b"Traceback" not in proc.stderr
    assert (corpus.root / "kb/gotchas/db/a1a1a1a1.md").read_bytes() == before
