"""factdesk.corpus."""
