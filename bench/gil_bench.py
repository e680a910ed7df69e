"""What a worker thread running Python costs the window's thread (gui/workers.py,
`GUI_SWITCH_INTERVAL_S`): PySide6 lets go of the GIL around each Qt call, and gets it back
only when the worker's switch interval runs out.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/gil_bench.py [--calls 300]

For each switch interval: the time of `--calls` small Qt calls (a label's text, a tree
item added) on the main thread alone and beside one thread counting in Python, and that
thread's count per second while the main thread sleeps (what the interval costs it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))
import factdesk.gui  # noqa: F401  (its workaround for PySide6 6.12 on CPython 3.11: None's refcount)


def _busy(counted: list[int], stop: threading.Event) -> None:
    while not stop.is_set():
        counted[0] += 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication, QLabel, QTreeWidget, QTreeWidgetItem

    app = QApplication.instance() or QApplication(sys.argv[:1])
    label, tree = QLabel(), QTreeWidget()

    def qt_calls() -> float:
        t = time.perf_counter()
        for i in range(args.calls):
            label.setText(str(i))
            tree.addTopLevelItem(QTreeWidgetItem(["a", "b"]))
        tree.clear()
        return time.perf_counter() - t

    rows = []
    for interval in (0.005, 0.001, 0.0005, 0.0002, 0.0001):
        sys.setswitchinterval(interval)
        alone = qt_calls()
        counted, stop = [0], threading.Event()

        worker = threading.Thread(target=_busy, args=(counted, stop))
        worker.start()
        time.sleep(0.2)
        beside = qt_calls()
        c0, t0 = counted[0], time.perf_counter()
        time.sleep(0.5)
        rate = (counted[0] - c0) / (time.perf_counter() - t0)
        stop.set()
        worker.join()
        rows.append({"interval_ms": interval * 1000, "qt_calls_alone_ms": round(alone * 1000, 1),
                     "qt_calls_beside_a_worker_ms": round(beside * 1000, 1),
                     "worker_counts_per_s_millions": round(rate / 1e6, 1)})
    print(json.dumps({"calls": args.calls, "rows": rows}, indent=2))
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
