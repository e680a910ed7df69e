"""factdesk.curation."""
