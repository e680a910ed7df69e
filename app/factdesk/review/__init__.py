"""Proposal review (issue 13): agents' `agent/*` branches as a review queue, decisions
(accept, reject, edit-then-accept) as commits on the curated branch, the review merge that
keeps the agents' history, and sync with shared remotes. See docs/review.md.

Its room is above curation, reflection and the semantic layer (it needs all three) and
below the CLI and the GUI, which call the same functions."""
