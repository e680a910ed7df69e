"""`python -m factdesk.cli …`."""

import sys

from factdesk.cli import main

sys.exit(main())
