"""factdesk.index."""
