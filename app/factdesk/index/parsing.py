"""Parsing workers: read and parse fact files in order, in worker processes when there are
many (`parse_files`), with each fact's ontology findings worked out there too
(`parse_and_check_files`, the rebuild's stream)."""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Protocol, TypeVar

from factdesk.corpus import gitrepo
from factdesk.corpus.codec import ParseOutcome, parse_fact
from factdesk.corpus.ontology import Ontology, check_ontology, shared_engine, topic_problems
from factdesk.corpus.scan import io_error, read_fact_file
from factdesk.model.fact import Problem

_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)
#: below this many files one process parses them (starting workers costs more)
PARALLEL_MIN = 4000
CHUNK = 250
#: chunks parsed ahead of the consumer (~1 MB each): enough to keep the workers busy while
#: a rebuild reads git's history
AHEAD = 24
WORKER_NICENESS = 5


def parse_entry(repo: str, rel: str) -> tuple[ParseOutcome, str, int, int]:
    try:
        data, st = read_fact_file(repo, rel)
    except OSError as exc:
        return ParseOutcome(rel, None, (io_error(rel, exc),)), "", 0, 0
    return parse_fact(rel, data), gitrepo.blob_id(data), st.st_size, st.st_mtime_ns


Parsed = tuple[ParseOutcome, str, int, int]
Checked = tuple[ParseOutcome, str, int, int, list[Problem]]

#: the ontology a rebuild's parse worker checks each fact against (set by its initializer)
_worker_ontology: Ontology | None = None


def _init_worker(ontology: Ontology | None) -> None:
    global _worker_ontology
    _worker_ontology = ontology
    # The parse workers run ahead of the process that consumes them; at a lower priority
    # they take the cores that the main process and the full-text builder (the slowest
    # consumer) leave idle, instead of taking turns with them.
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)


def _parse_chunk(repo: str, paths: list[str]) -> list[Parsed]:
    return [parse_entry(repo, p) for p in paths]


def _check_entry(repo: str, rel: str, ontology: Ontology | None) -> Checked:
    """Parse one file and run the rules that need nothing but the fact itself: the
    ontology's validations (in this process's V8 context) and its topic rules."""
    outcome, blob, size, mtime = parse_entry(repo, rel)
    found: list[Problem] = []
    if outcome.fact is not None and ontology is not None:
        found.extend(check_ontology(outcome.fact, ontology, shared_engine()))
        found.extend(topic_problems(outcome.fact, ontology))
    return outcome, blob, size, mtime, found


def _check_chunk(repo: str, paths: list[str]) -> list[Checked]:
    return [_check_entry(repo, p, _worker_ontology) for p in paths]


class _InWorkers(Iterator[_T]):
    """`work` over chunks of `paths` in worker processes, results in order. The workers start
    at once, so they parse while the caller reads git's history. At most AHEAD chunks are
    done ahead of the consumer: when it is the slower side, parsed files with their bodies
    wait in a short queue instead of piling up in memory."""

    def __init__(self, work: Callable[[str, list[str]], list[_T]], repo: Path,
                 paths: list[str], ontology: Ontology | None = None) -> None:
        self._work = work
        self._repo = str(repo)
        self._chunks = collections.deque(paths[i : i + CHUNK] for i in range(0, len(paths), CHUNK))
        # forkserver: workers start small instead of inheriting the parent's history in memory
        context = multiprocessing.get_context("forkserver")
        self._pool = ProcessPoolExecutor(max_workers=min(4, os.cpu_count() or 2),
                                         mp_context=context, initializer=_init_worker,
                                         initargs=(ontology,))
        self._pending: collections.deque[Future[list[_T]]] = collections.deque()
        self._ready: collections.deque[_T] = collections.deque()
        while self._chunks and len(self._pending) < AHEAD:
            self._submit()

    def _submit(self) -> None:
        self._pending.append(self._pool.submit(self._work, self._repo, self._chunks.popleft()))

    def __next__(self) -> _T:
        while not self._ready:
            if not self._pending:
                self.close()
                raise StopIteration
            self._ready.extend(self._pending.popleft().result())
            if self._chunks:
                self._submit()
        return self._ready.popleft()

    def close(self) -> None:
        """Stop the workers (also when the consumer gives up part-way)."""
        for future in self._pending:
            future.cancel()
        self._pending.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)


def parallel(paths: list[str]) -> bool:
    return len(paths) >= PARALLEL_MIN and (os.cpu_count() or 1) >= 2


class ParseStream(Protocol[_T_co]):
    """Parsed files in order; `close()` stops the workers when the consumer gives up."""

    def __iter__(self) -> Iterator[_T_co]: ...

    def __next__(self) -> _T_co: ...

    def close(self) -> None: ...


def parse_files(repo: Path, paths: list[str]) -> ParseStream[Parsed]:
    """Parse files in order, in two processes when there are many (this machine has 2 cores)."""
    if not parallel(paths):
        return (parse_entry(str(repo), p) for p in paths)
    return _InWorkers(_parse_chunk, repo, paths)


def parse_and_check_files(repo: Path, paths: list[str], ontology: Ontology | None
                          ) -> ParseStream[Checked]:
    """`parse_files` plus each fact's ontology findings (`check_ontology`, then
    `topic_problems`), worked out in the parse workers."""
    if not parallel(paths):
        return (_check_entry(str(repo), p, ontology) for p in paths)
    return _InWorkers(_check_chunk, repo, paths, ontology)
