"""The transition-log cache under the git directory: same answers, extended, self-healing."""

from __future__ import annotations

from pathlib import Path

from factdesk.reflect.cache import cache_path, cached_walk
from factdesk.reflect.model import Transition
from factdesk.reflect.transitions import walk
from tests.conftest import Corpus


def _dicts(items: list[Transition]) -> list[dict[str, object]]:
    return [t.as_dict() for t in items]


def _hyp(title: str, type: str = "hypothesis") -> str:
    return (f"---\ntype: {type}\nconfidence: 0.5\nsources: 1\nrefs: []\n---\n# {title}\n\n"
            "Settles by 2026-12-01: 3 runs.\n")


def test_cache_answers_like_a_walk_and_extends(corpus: Corpus) -> None:
    corpus.write("kb/gotchas/db/11111111.md", _hyp("Will hold"))
    first = corpus.commit("learn: h")
    corpus.write("kb/gotchas/db/11111111.md", _hyp("Held", "observation"))
    corpus.commit("update: h", op="update")
    log = cached_walk(corpus.root)
    assert cache_path(corpus.root).is_file()
    assert not (corpus.root / "kb" / "reflect.db").exists()
    assert _dicts(log.transitions) == _dicts(walk(corpus.root).transitions)
    (corpus.root / "kb/gotchas/db/11111111.md").unlink()
    corpus.commit("retract: h", op="retract")
    again = cached_walk(corpus.root)
    assert [t.kind for t in again.transitions] == ["promoted", "retracted"]
    assert _dicts(again.transitions) == _dicts(walk(corpus.root).transitions)
    # --since a commit on the chain: filtered from the whole log, same as walking the range
    since = cached_walk(corpus.root, first)
    assert _dicts(since.transitions) == _dicts(walk(corpus.root, f"{first}..HEAD").transitions)
    assert since.commits == 2


def test_a_damaged_cache_is_moved_aside(corpus: Corpus) -> None:
    path: Path = cache_path(corpus.root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a database" * 100)
    log = cached_walk(corpus.root)
    assert log.transitions == []
    assert list(path.parent.glob("reflect.db.corrupt-*"))
    assert cached_walk(corpus.root).head == log.head
