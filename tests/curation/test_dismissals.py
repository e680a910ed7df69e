"""`.factdesk/dismissals.yaml`: parse, serialize, errors naming file and line, and the queue
over a real git corpus (a dismissal holds for one blob; an edited fact resurfaces)."""

from __future__ import annotations

from pathlib import Path

import pytest

from factdesk.core import open_corpus
from factdesk.curation.dismissals import (
    DISMISSALS_PATH,
    Dismissal,
    Dismissals,
    DismissalsError,
    dismiss,
    is_dismissed,
    load_dismissals,
    parse_dismissals,
    pending,
    queue_from_index,
    rename_path,
    serialize_dismissals,
    stale,
    undismiss,
)
from factdesk.model.mislabels import Proposal, Suggestion
from tests.conftest import Corpus, git

BLOB = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"
OTHER = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
D1 = Dismissal("kb/gotchas/db/d84b6810.md", "observation-without-refs",
               "the evidence is our own measurement: 'p99: 900 ms'", "ana <ana@example.org>",
               "2026-11-30T10:00:00Z", BLOB)

GOOD = f"""# factdesk: mislabel suggestions a curator reviewed and dismissed
version: 1
dismissals:
- path: kb/gotchas/db/d84b6810.md
  code: observation-without-refs
  reason: we measured it
  by: ana <ana@example.org>
  at: '2026-11-30T10:00:00Z'
  blob: {BLOB}
"""


def test_round_trip() -> None:
    d2 = Dismissal("kb/a/b/00000001.md", "hedged-observation", "a quote — «probably» is the vendor's: yes",
                   "bo", "2026-12-01", OTHER)
    ds = Dismissals((d2, D1))
    text = serialize_dismissals(ds)
    back = parse_dismissals(text)
    assert set(back) == {D1, d2}
    assert [d.path for d in back] == sorted([D1.path, d2.path])   # sorted: stable diffs in git
    assert serialize_dismissals(back) == text
    assert parse_dismissals(GOOD).entries[0].blob == BLOB


@pytest.mark.parametrize("text", ["", "# nothing yet\n", "version: 1\n", "version: 1\ndismissals: []\n",
                                  "version: 1\ndismissals:\n"])
def test_empty(text: str) -> None:
    assert len(parse_dismissals(text)) == 0


@pytest.mark.parametrize("text, where, what", [
    ("version: 1\ndismissals:\n- path: [unclosed\n", ":4:", "not valid YAML"),
    ("version: 2\ndismissals: []\n", ":1:", "unsupported version"),
    ("version: 1\nitems: []\n", ":2:", "unknown key 'items'"),
    ("version: 1\ndismissals: {a: 1}\n", ":2:", "must be a list"),
    ("- just a list\n", ":1:", "expected a mapping"),
    (GOOD.replace("  reason: we measured it\n", ""), ":4:", "lacks reason"),
    (GOOD.replace(f"blob: {BLOB}", "blob: abc"), ":9:", "blob must be a git blob id"),
    (GOOD.replace("at: '2026-11-30T10:00:00Z'", "at: yesterday"), ":8:", "ISO date-time"),
    (GOOD.replace("path: kb/gotchas/db/d84b6810.md", "path: ../etc/passwd"), ":4:", "fact path"),
    (GOOD.replace("  reason: we measured it\n", "  reason: we measured it\n  colour: red\n"), ":7:",
     "unknown field 'colour'"),
    (GOOD.replace("  reason: we measured it\n", "  reason: [a, b]\n"), ":6:", "plain value"),
    (GOOD + GOOD.split("dismissals:\n", 1)[1], ":10:", "dismissed twice (first at line 4)"),
])
def test_errors_name_file_and_line(text: str, where: str, what: str) -> None:
    with pytest.raises(DismissalsError) as err:
        parse_dismissals(text, source=".factdesk/dismissals.yaml")
    msg = str(err.value)
    assert msg.startswith(".factdesk/dismissals.yaml" + where), msg
    assert what in msg, msg


def test_dismiss_replaces_and_undismiss_removes() -> None:
    ds = dismiss(Dismissals(), D1)
    newer = Dismissal(D1.path, D1.code, "re-reviewed", "bo", "2026-12-02", OTHER)
    ds = dismiss(ds, newer)
    assert list(ds) == [newer]
    assert len(undismiss(ds, D1.path, D1.code)) == 0
    assert len(undismiss(ds, D1.path, "other-code")) == 1
    with pytest.raises(DismissalsError, match="needs a reason"):
        dismiss(ds, Dismissal(D1.path, D1.code, "", "bo", "2026-12-02", OTHER))


def test_is_dismissed_only_for_the_same_blob() -> None:
    ds = Dismissals((D1,))
    assert is_dismissed(ds, D1.path, D1.code, BLOB)
    assert not is_dismissed(ds, D1.path, D1.code, OTHER)         # edited: resurfaces
    assert not is_dismissed(ds, D1.path, "hedged-observation", BLOB)
    assert not is_dismissed(ds, D1.path, D1.code, None)
    assert is_dismissed(ds.index(), D1.path, D1.code, BLOB)
    moved = rename_path(ds, D1.path, "kb/gotchas/pg/d84b6810.md")
    assert is_dismissed(moved, "kb/gotchas/pg/d84b6810.md", D1.code, BLOB)
    assert stale(ds, {D1.path: OTHER}) == [D1] and stale(ds, {D1.path: BLOB}) == []


def test_pending_filters_suggestions() -> None:
    s1 = Suggestion(D1.path, D1.code, 7, "x", (Proposal({}),))
    s2 = Suggestion(D1.path, "hedged-observation", 14, "y", (Proposal({"type": "hypothesis"}),))
    assert pending([s1, s2], Dismissals((D1,)), {D1.path: BLOB}) == [s2]
    assert pending([s1, s2], Dismissals((D1,)), {D1.path: OTHER}) == [s1, s2]


def test_load_missing_and_bad_files(tmp_path: Path) -> None:
    assert len(load_dismissals(tmp_path)) == 0
    (tmp_path / ".factdesk").mkdir()
    (tmp_path / DISMISSALS_PATH).write_bytes(b"version: 1\ndismissals:\n- path: \xff\n")
    with pytest.raises(DismissalsError, match=r"^\.factdesk/dismissals\.yaml:3: not UTF-8"):
        load_dismissals(tmp_path)
    (tmp_path / DISMISSALS_PATH).write_text(GOOD, encoding="utf-8")
    assert list(load_dismissals(tmp_path)) == [
        Dismissal(D1.path, D1.code, "we measured it", "ana <ana@example.org>", "2026-11-30T10:00:00Z", BLOB)]


HEDGED = "kb/gotchas/db/d1d1d1d1.md"


def test_queue_over_a_real_repository(corpus: Corpus) -> None:
    corpus.fact(HEDGED, title="The pool probably exhausts at 200 clients", refs="https://x.org/a")
    corpus.commit("learn: The pool probably exhausts at 200 clients")
    ix = open_corpus(corpus.root)
    ix.update()
    queue = queue_from_index(corpus.root, ix.connect(readonly=True))
    # the fixture's three facts cite nothing; the observation among them is flagged too
    assert [(s.path, s.code) for s in queue] == [
        (HEDGED, "hedged-observation"), ("kb/gotchas/db/a1a1a1a1.md", "observation-without-refs"),
        ("kb/gotchas/db/b2b2b2b2.md", "observation-without-refs")]
    assert "'probably' in the title" in queue[0].explanation
    only_hedges = queue_from_index(corpus.root, ix.connect(readonly=True), codes=["hedged-observation"])
    assert len(only_hedges) == 1
    assert queue_from_index(corpus.root, ix.connect(readonly=True), paths=[HEDGED]) == queue[:1]

    # dismissed for this blob, committed with the corpus: gone from the queue
    blob = git(corpus.root, "rev-parse", f"HEAD:{HEDGED}").strip()
    entry = Dismissal(HEDGED, "hedged-observation", "quoting the vendor", "ana", "2026-11-30T10:00:00Z", blob)
    corpus.write(DISMISSALS_PATH, serialize_dismissals(dismiss(load_dismissals(corpus.root), entry)))
    corpus.commit("curate: dismiss hedged-observation", author="ana", op="dismiss")
    ix.update()
    assert queue_from_index(corpus.root, ix.connect(readonly=True), codes=["hedged-observation"]) == []

    # the fact is edited: another blob, the suggestion resurfaces
    corpus.fact(HEDGED, title="The pool probably exhausts at 300 clients", refs="https://x.org/a")
    corpus.commit("update: The pool probably exhausts at 300 clients")
    ix.update()
    again = queue_from_index(corpus.root, ix.connect(readonly=True), codes=["hedged-observation"])
    assert [(s.path, s.code) for s in again] == [(HEDGED, "hedged-observation")]


def test_dismissing_an_unknown_code_is_refused(corpus: Corpus) -> None:
    from factdesk.curation import Curation, Refused

    cur = Curation(open_corpus(corpus.root))
    snapshot = corpus.snapshot()
    with pytest.raises(Refused, match="'no-such-code' is not a mislabel suggestion code"):
        cur.dismiss("kb/gotchas/db/a1a1a1a1.md", "no-such-code", "a typo")  # recorded, dismissing nothing
    assert corpus.snapshot() == snapshot
    cur.dismiss("kb/gotchas/db/a1a1a1a1.md", "observation-without-refs", "cited in the body")
    assert "observation-without-refs" in (corpus.root / DISMISSALS_PATH).read_text()
