"""`python -m factdesk`: the same entry point as the `factdesk` command."""

from factdesk.cli import main

raise SystemExit(main())
