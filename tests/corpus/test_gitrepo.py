"""gitrepo.BlobReader: blobs by id or `rev:path`, and a size limit that never holds an
oversize blob in memory nor leaves the `cat-file` stream out of step."""

from __future__ import annotations

import pytest

from factdesk.corpus.gitrepo import BlobReader, BlobTooLarge, blob_id
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
