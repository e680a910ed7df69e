#!/usr/bin/env python3
"""The test command of one mutant in `make mutate` (scripts/mutate.py runs it through
cosmic-ray, in the scratch copy): find the lines the mutant changed, run `pytest -x` on the
tests that executed those lines when the module was pristine, exit with pytest's status.

    python scripts/mutate_tests.py <module key>

A mutant on a line no test executes exits 0 at once (it survives, as it would under the
whole selection) and says which line."""

from __future__ import annotations

import difflib
import json
import subprocess
import sys

from mutate import MODULES, OUT, PYTEST, WORK


def changed_lines(before: list[str], after: list[str]) -> set[int]:
    """1-based numbers of the pristine lines the mutant replaced (or inserted before)."""
    lines: set[int] = set()
    for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(a=before, b=after,
                                                         autojunk=False).get_opcodes():
        if tag != "equal":
            lines.update(range(i1 + 1, max(i2, i1 + 1) + 1))
    return lines


def main(key: str) -> int:
    before = (OUT / f"{key}.pristine.py").read_text().splitlines()
    after = (WORK / MODULES[key]).read_text().splitlines()
    covered: dict[str, list[str]] = json.loads((OUT / f"{key}.lines.json").read_text())
    lines = changed_lines(before, after)
    tests = list(dict.fromkeys(t for line in sorted(lines) for t in covered.get(str(line), [])))
    if not tests:
        print(f"no test executes line(s) {sorted(lines)} of {MODULES[key]}")
        return 0
    return subprocess.run([sys.executable, *PYTEST, *tests], cwd=WORK).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
