"""RELIABILITY F07: an update killed with its write transaction open leaves the WAL and
its index behind (factdesk never deletes them); the next open recovers, and the next update
does the work again: the index then equals a rebuild and passes quick_check."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from factdesk import faults
from factdesk.index import schema
from factdesk.index.indexer import Indexer
from tests.conftest import Corpus
from tests.index.test_indexer import assert_incremental_equals_rebuild, dump


def test_an_update_killed_mid_transaction_is_recovered_and_redone(corpus: Corpus,
                                                                   tmp_path: Path) -> None:
    repo = corpus.root
    Indexer(repo).update()
    corpus.fact("kb/gotchas/db/e5e5e5e5.md", title="Written before the crash")
    edited = repo / "kb/gotchas/db/a1a1a1a1.md"
    edited.write_text(edited.read_text().replace("Body text", "Edited body text"))
    env = {**os.environ, faults.ENV: "index.txn_open"}
    killed = subprocess.run([sys.executable, "-m", "factdesk.cli", "index", "--kb", str(repo)],
                            capture_output=True, env=env, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    index = schema.index_path(repo / ".git")
    assert Path(f"{index}-wal").exists()  # left as the crash left it
    assert "e5e5e5e5" not in str(dump(Indexer(repo)))  # the killed transaction never landed

    assert_incremental_equals_rebuild(repo, tmp_path)  # the update that redoes the work
    conn = Indexer(repo).connect(readonly=True)
    try:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    after = str(dump(Indexer(repo)))
    assert "e5e5e5e5" in after and "Edited body text" in after
