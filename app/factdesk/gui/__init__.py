"""factdesk.gui."""
