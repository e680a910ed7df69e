"""The curator's operations (issue 4), shared by the GUI and the CLI.

Each operation takes a required reason, reads the files it acts on, computes the new
bytes with the core's minimal-diff writer, validates the result against the model's
rules (`model.legality`, the authority table), and — unless asked for a preview —
publishes exactly one commit through `gitwrite.commit_files`, then brings the index up
to date and returns a frozen `ChangeSet`. A bulk operation over many facts is one commit.

Commits are authored by the curator with knomit's `+op` convention
(`ana+relabel@example.org`), titled in knomit's style and carry trailers:

    Factdesk-Action: relabel
    Factdesk-Action-Id: 1f3a…
    Factdesk-Change: kb/…/ab12cd34.md type: observation → hypothesis
    Factdesk-Reason: hedged wording ("probably") is a guess, not an observation

The operations live by family — `labels` (relabel, edit, attest), `files` (move, retract,
restore), `settling` (confirm, refute, extend, promote), `undo` (stacks, undo, redo),
`dismiss` — over `base.CurationBase`, with the plan → commit → change-set machinery in
`changes`. `Curation` is all of them together.
"""

from __future__ import annotations

from factdesk.curation.base import Relabelable
from factdesk.curation.changes import ChangeSet, FieldChange, FileDiff, Plan, finish_change, with_op
from factdesk.curation.dismiss import DismissOps
from factdesk.curation.files import FileOps
from factdesk.curation.gitwrite import Conflict, CurationError, Refused
from factdesk.curation.identity import curator_identity
from factdesk.curation.labels import ATTESTATIONS, EDIT_FIELDS, load_attestations
from factdesk.curation.messages_ops import MessageOps
from factdesk.curation.registry_ops import RegistryOps
from factdesk.curation.settling import SettleOps
from factdesk.curation.undo import EMPTY_STACK, ActionRecord, UndoOps

__all__ = ["ATTESTATIONS", "EDIT_FIELDS", "EMPTY_STACK", "ActionRecord", "ChangeSet", "Conflict",
           "Curation", "CurationError", "FieldChange", "FileDiff", "Plan", "Refused", "Relabelable",
           "curator_identity", "finish_change", "load_attestations", "with_op"]


class Curation(SettleOps, FileOps, DismissOps, RegistryOps, UndoOps, MessageOps):
    """The write operations over one corpus (an `Indexer` for its index)."""
