"""The bundle's entry point (packaging/factdesk.spec): the `factdesk` command, frozen.

`freeze_support()` comes first: the indexer's worker processes (forkserver) re-run this
executable, and in a frozen program only this call turns such a start into a worker.
"""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from factdesk.cli import main

    sys.exit(main())
