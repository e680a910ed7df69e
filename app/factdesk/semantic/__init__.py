"""factdesk.semantic."""
