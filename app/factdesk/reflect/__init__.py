"""Reflection over a corpus's history: hypothesis transitions, track records, and the
settlement queue's data (issue 5, the read-only parts).

* `factdesk.reflect.model`        transitions as data and the pure rules classifying a change
* `factdesk.reflect.transitions`  the corpus diffed along first-parent history (git)
* `factdesk.reflect.stats`        track records per claimant agent / type, per month
* `factdesk.reflect.queue`        open hypotheses with their criteria, and candidate settlers
"""
