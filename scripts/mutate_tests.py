#!/usr/bin/env python3
"""The test command of one mutant in `make mutate` (scripts/mutate.py runs it through
cosmic-ray, in the scratch copy): find the lines the mutant changed, run `pytest -x` on the
tests that executed those lines when the module was pristine, exit with pytest's status.

    python scripts/mutate_tests.py <module key>

- A mutant that does not compile (cosmic-ray sometimes mutates the `*` of a keyword-only
  marker as if it were a product) exits 3 at once: incompetent, left out of the score.
- A line run only when the module is imported (a `def`, a decorator, a field default, a
  constant) has no test of its own in coverage's map: the tests that executed the body of
  the function or class it belongs to run, or, for a line outside any, every test that
  executed any line of the module.
- A mutant on a line no test executes at all exits 0 at once (it survives, as it would
  under the whole selection) and says which line."""

from __future__ import annotations

import ast
import difflib
import json
import subprocess
import sys

from mutate import MODULES, OUT, PYTEST, WORK

INCOMPETENT = 3


def changed_lines(before: list[str], after: list[str]) -> set[int]:
    """1-based numbers of the pristine lines the mutant replaced (or inserted before)."""
    lines: set[int] = set()
    for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(a=before, b=after,
                                                         autojunk=False).get_opcodes():
        if tag != "equal":
            lines.update(range(i1 + 1, max(i2, i1 + 1) + 1))
    return lines


def enclosing(source: str, line: int) -> range | None:
    """The lines of the innermost function or class whose header (decorators included)
    or class body holds `line` — what runs only at import there."""
    best: range | None = None
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            span = range(start, (node.end_lineno or node.lineno) + 1)
            if line in span and (best is None or len(span) < len(best)):
                best = span
    return best


def tests_for(lines: set[int], covered: dict[str, list[str]], source: str) -> list[str]:
    out: dict[str, None] = {}
    for line in sorted(lines):
        found = covered.get(str(line))
        if not found:
            span = enclosing(source, line)
            around = [str(n) for n in span] if span is not None else list(covered)
            found = [t for n in around for t in covered.get(n, [])]
        out.update(dict.fromkeys(found))
    return list(out)


def main(key: str) -> int:
    pristine = (OUT / f"{key}.pristine.py").read_text()
    mutated = (WORK / MODULES[key]).read_text()
    try:
        compile(mutated, MODULES[key], "exec")
    except SyntaxError as exc:
        print(f"incompetent: the mutant does not compile ({exc})")
        return INCOMPETENT
    covered: dict[str, list[str]] = json.loads((OUT / f"{key}.lines.json").read_text())
    lines = changed_lines(pristine.splitlines(), mutated.splitlines())
    tests = tests_for(lines, covered, pristine)
    if not tests:
        print(f"no test executes line(s) {sorted(lines)} of {MODULES[key]}")
        return 0
    return subprocess.run([sys.executable, *PYTEST, *tests], cwd=WORK).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
