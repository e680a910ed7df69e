"""factdesk.model."""
