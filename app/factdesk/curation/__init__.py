"""The curator's write operations (DESIGN.md §4 `curation`): validate with the model's
rules, write with minimal diffs, commit once, update the index, return what changed.

    from factdesk.curation import Curation
    cur = Curation(indexer)
    cur.relabel(["kb/…/ab12cd34.md"], {"type": "hypothesis", "settle_by": "2027-01-31"},
                reason="hedged wording: a guess, not an observation")
    cur.undo()
"""

from factdesk.curation.gitwrite import (
    Conflict,
    CurationError,
    Identity,
    Recovered,
    Refused,
    recover,
    recover_before_reads,
)
from factdesk.curation.ops import (
    ActionRecord,
    ChangeSet,
    Curation,
    FieldChange,
    FileDiff,
    Relabelable,
    curator_identity,
    finish_change,
)

__all__ = ["ActionRecord", "ChangeSet", "Conflict", "Curation", "CurationError", "FieldChange",
           "FileDiff", "Identity", "Recovered", "Refused", "Relabelable", "curator_identity", "finish_change",
           "recover", "recover_before_reads"]
