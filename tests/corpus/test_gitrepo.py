"""gitrepo.BlobReader: blobs by id or `rev:path`, and a size limit that never holds an
oversize blob in memory nor leaves the `cat-file` stream out of step; gitrepo.BlobDiff:
`git diff` of two blobs, stoppable."""

from __future__ import annotations

import tracemalloc

import pytest

from factdesk.corpus.codec import MAX_BYTES
from factdesk.corpus.gitrepo import BlobDiff, BlobReader, BlobTooLarge, GitError, blob_id
from tests.conftest import Corpus


def test_a_blob_over_the_limit_is_refused_and_the_reader_reads_on(corpus: Corpus) -> None:
    big = b"x" * 3_000_000 + b"\n"
    small = b"after the big one\n"
    corpus.write("kb/gotchas/db/big.md", big)
    corpus.write("kb/gotchas/db/small.md", small)
    corpus.commit("learn: two sizes")
    with BlobReader(corpus.root) as reader:
        with pytest.raises(BlobTooLarge) as caught:
            reader.read(blob_id(big), limit=2_000_000)
        assert caught.value.size == len(big)
        # the same process answers the next request with the right bytes (the big blob
        # and git's newline after it were read off the pipe, not left in it)
        assert reader.read(blob_id(small), limit=2_000_000) == small
        assert reader.read("HEAD:kb/gotchas/db/small.md") == small
        assert reader.read(blob_id(big)) == big  # no limit: read whole
        assert reader.read("0" * 40) is None  # missing
        assert reader.read(blob_id(small), limit=len(small)) == small  # at the limit: read


def test_an_oversize_blob_is_never_held_in_memory(corpus: Corpus) -> None:
    big = b"y" * 8_000_000
    corpus.write("kb/gotchas/db/big.md", big)
    corpus.commit("learn: a big file")
    big_id = blob_id(big)
    with BlobReader(corpus.root) as reader:
        tracemalloc.start()
        try:
            with pytest.raises(BlobTooLarge):
                reader.read(big_id, limit=MAX_BYTES)
            _now, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 3_000_000  # read through a 1 MiB buffer, not 8 MB at once


def test_a_missing_path_with_spaces_is_missing(corpus: Corpus) -> None:
    """git answers `<spec> missing`; a spec with spaces must not be taken for a size."""
    with BlobReader(corpus.root) as reader:
        assert reader.read("HEAD:kb/no such file.md") is None
        assert reader.read("HEAD:kb/gotchas/db/a1a1a1a1.md", limit=MAX_BYTES) is not None


def test_blob_diff_gives_git_diffs_hunks(corpus: Corpus) -> None:
    lines = [f"line {i} of a long fact\n" for i in range(60_000)]
    changed = list(lines)
    for i in range(0, len(changed), 50):  # 2 % of the lines: difflib took ~20 s on this
        changed[i] = f"changed {i}\n"
    old, new = "".join(lines).encode(), "".join(changed).encode()
    corpus.write("kb/gotchas/db/long.md", old)
    corpus.write("kb/gotchas/db/long2.md", new)
    corpus.commit("learn: two long versions")
    hunks = BlobDiff(corpus.root).run(blob_id(old), blob_id(new))
    assert hunks is not None and hunks.startswith(b"@@ -1,")
    body = hunks.decode().splitlines()
    assert [x for x in body if x.startswith("-")] == [f"-line {i} of a long fact"
                                                      for i in range(0, 60_000, 50)]
    assert [x for x in body if x.startswith("+")] == [f"+changed {i}" for i in range(0, 60_000, 50)]
    assert BlobDiff(corpus.root).run(blob_id(old), blob_id(old)) == b""  # equal: no hunks
    stopped = BlobDiff(corpus.root)
    stopped.cancel()
    assert stopped.run(blob_id(old), blob_id(new)) is None
    with pytest.raises(GitError, match="git diff failed"):
        BlobDiff(corpus.root).run("1" * 40, blob_id(new))
