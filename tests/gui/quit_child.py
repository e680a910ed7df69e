"""The child process of tests/gui/test_quit.py: the real app (`factdesk.gui.app.run`) on
REPO with FACTDESK_SMOKE=1 (it closes itself at the first paint of the table), semantic
search on, and an embedding model that takes SECONDS to load (a stand-in that sleeps: the
real one takes 27-60 s to prepare on first use). Exits with run()'s status.

    python tests/gui/quit_child.py REPO SECONDS
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def main() -> int:
    repo, seconds = Path(sys.argv[1]), float(sys.argv[2])
    import factdesk.semantic.search as search

    def slow_session_for(*_args: object, **_kw: object) -> object:
        # one write, newline included: print() writes the newline apart, and the app's own
        # "factdesk-smoke first-paint" line, printed on the GUI thread at the same moment,
        # was seen glued after this one's text (the test found no first paint)
        sys.stdout.write(f"model-loading monotonic={time.monotonic():.6f}\n")
        sys.stdout.flush()
        time.sleep(seconds)
        raise OSError("the stand-in model never loads")

    search.session_for = slow_session_for  # type: ignore[assignment]
    from factdesk.gui.app import run

    return run(repo)


if __name__ == "__main__":
    raise SystemExit(main())
