"""BackgroundRead: one read at a time, the newest start waits its turn and wins, and
nothing comes back after close()."""

from __future__ import annotations

import sqlite3
import threading

from factdesk.gui.workers import BackgroundRead


def _reads(gate: threading.Event) -> tuple[BackgroundRead, list[int], list[object]]:
    ran: list[int] = []  # the requests the job was run for, in order
    answers: list[object] = []

    def job(conn: sqlite3.Connection, n: int) -> int:
        ran.append(n)
        gate.wait(10)  # the first read stays running until the test lets it go
        return int(conn.execute("SELECT ? * 10", (n,)).fetchone()[0])

    def answer(result: object, *_args: object) -> None:  # (args: the start's, handed back)
        answers.append(result)

    read = BackgroundRead(lambda: sqlite3.connect(":memory:"), job, done=answer, failed=answer)
    return read, ran, answers


def test_the_newest_start_waits_its_turn_and_only_its_answer_comes_back(qtbot) -> None:
    gate = threading.Event()
    read, ran, answers = _reads(gate)
    assert read.start(1) is True
    assert read.start(2) is False  # waits ...
    assert read.start(3) is False  # ... and is replaced by a newer start
    assert read.running
    gate.set()
    qtbot.waitUntil(lambda: not read.running, timeout=10_000)
    assert ran == [1, 3]  # 2 never ran
    assert answers == [30]  # 1's answer was stale by the time it came: dropped


def test_nothing_comes_back_after_close(qtbot) -> None:
    gate = threading.Event()
    read, ran, answers = _reads(gate)
    read.start(1)
    read.start(2)
    gate.set()
    read.close()  # waits for 1, drops 2 and 1's queued answer
    qtbot.wait(100)
    assert not read.running
    assert ran == [1] and answers == []
    assert read.start(3) is False  # closed for good
    assert ran == [1]


def test_a_failure_comes_back_as_text(qtbot) -> None:
    answers: list[object] = []
    read = BackgroundRead(lambda: sqlite3.connect(":memory:"),
                          lambda conn: conn.execute("SELECT * FROM missing_table").fetchall(),
                          done=answers.append, failed=answers.append)
    read.start()
    qtbot.waitUntil(lambda: not read.running, timeout=10_000)
    assert answers == ["OperationalError: no such table: missing_table"]


def test_the_answer_comes_back_with_the_arguments_of_its_start(qtbot) -> None:
    """So a caller can tell which request answered (a facet count for an older query, a
    diff for a selection left behind) without sending them through the job."""
    got: list[tuple[object, ...]] = []
    read = BackgroundRead(lambda: sqlite3.connect(":memory:"),
                          lambda conn, n, tag: n * 2, done=lambda *a: got.append(a),
                          failed=lambda *a: got.append(a))
    read.start(21, "first")
    qtbot.waitUntil(lambda: not read.running, timeout=10_000)
    assert got == [(42, 21, "first")]
