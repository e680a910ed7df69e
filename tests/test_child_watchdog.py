"""The suite's watchdog for hanging children (tests/conftest.py): a child still running is
named and made to print every thread's stack, so a hang fails in words (issue 22)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.conftest import _abort_children, _descendants

HANGS = """
import threading, time
def stuck_in_a_thread():
    time.sleep(120)
threading.Thread(target=stuck_in_a_thread, name="worker").start()
print("ready", flush=True)
time.sleep(120)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
def test_a_hanging_child_prints_every_threads_stack_and_ends(
        capfd: pytest.CaptureFixture[str]) -> None:
    child = subprocess.Popen([sys.executable, "-c", HANGS], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        assert child.pid in _descendants(__import__("os").getpid())
        started = time.monotonic()
        _abort_children("tests/test_child_watchdog.py::demo")
        _out, err = child.communicate(timeout=30)
    finally:
        child.kill()
    assert time.monotonic() - started < 30
    assert child.returncode != 0
    # both threads, each with the line it waits on
    assert err.count("Thread 0x") + err.count("Current thread 0x") >= 2, err
    assert "in stuck_in_a_thread" in err and "<module>" in err, err
    assert f"child {child.pid} still running" in capfd.readouterr().err
