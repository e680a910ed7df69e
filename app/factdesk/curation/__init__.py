"""The curator's write operations (DESIGN.md §4 `curation`): validate with the model's
rules, write with minimal diffs, commit once, update the index, return what changed.

    from factdesk.curation import Curation
    cur = Curation(indexer)
    cur.relabel(["kb/…/ab12cd34.md"], {"type": "hypothesis", "settle_by": "2027-01-31"},
                reason="hedged wording: a guess, not an observation")
    cur.undo()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

#: where each name lives: a module is imported when one of its names is first used, so a
#: reader that needs only `recover_before_reads` (every CLI read) does not import the
#: write operations (`ops`: about 60 ms at start, issue 23 #1)
_WHERE = {
    **dict.fromkeys(("Conflict", "CurationError", "Identity", "Recovered", "Refused", "recover",
                     "recover_before_reads"), "factdesk.curation.gitwrite"),
    **dict.fromkeys(("ActionRecord", "ChangeSet", "Curation", "FieldChange", "FileDiff",
                     "Relabelable", "curator_identity", "finish_change"), "factdesk.curation.ops"),
}

__all__ = ["ActionRecord", "ChangeSet", "Conflict", "Curation", "CurationError", "FieldChange",
           "FileDiff", "Identity", "Recovered", "Refused", "Relabelable", "curator_identity", "finish_change",
           "recover", "recover_before_reads"]

if TYPE_CHECKING:
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


def __getattr__(name: str) -> object:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value
