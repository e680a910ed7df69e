"""factdesk: audit and curate AI agents' long-term memory."""
