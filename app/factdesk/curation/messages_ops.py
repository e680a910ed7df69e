"""The message family (issue 17): a message's delivery state, and moving a fact that is
really a message out of memory. Each is one commit like every other curator action, so
undo and redo revert it (`undo`), and its trailers record the reason.

    cur.mark_delivery(["msg/2026/11/1a2b3c4d.md"], "read", reason="answered in standup")
    cur.move_to_messages("kb/…/ab12cd34.md", to=["codex"], reason="an addressed request")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from factdesk.corpus.messages import parse_message, serialize_message
from factdesk.curation.base import CurationBase, apply_edits, exists, unique
from factdesk.curation.changes import ChangeSet, FieldChange, Plan, short
from factdesk.curation.gitwrite import FileChange, Refused
from factdesk.index import DatabaseError, recall_reads
from factdesk.model.messages import DELIVERY_STATES, MSG_ROOT, PATH_RE, message_path
from factdesk.model.refs import local_targets

#: the actions of this family (`trust.ACTIONS` knows them)
MARK = "mark"
TO_MESSAGES = "to-messages"


class MessageOps(CurationBase):
    """mark_delivery, move_to_messages."""

    def mark_delivery(self, paths: Sequence[str], delivery: str, reason: str, *,
                      expected: Mapping[str, str] | None = None, expected_head: str | None = None,
                      preview: bool = False) -> ChangeSet:
        """Set the delivery state of messages (queued, delivered, read, acknowledged): the
        `delivery:` line only, by the minimal-diff writer; one commit."""
        if delivery not in DELIVERY_STATES:
            raise Refused(f"delivery {delivery!r} is not one of {', '.join(DELIVERY_STATES)}",
                          rule="delivery")
        changes: list[FileChange] = []
        fields: list[FieldChange] = []
        first_line = ""
        for path in unique(paths):
            data = self._read_message_bytes(path, expected)
            outcome = parse_message(path, data)
            if outcome.message is None:
                first = outcome.problems[-1] if outcome.problems else None
                raise Refused(f"{path}:{first.line if first else 1}: cannot mark an unreadable "
                              f"message ({first.message if first else 'unparseable'})")
            old = outcome.message.delivery or None
            if old == delivery:
                continue
            first_line = first_line or outcome.message.first_line or path
            changes.append(FileChange(path, data, apply_edits(path, data, {"delivery": delivery})))
            fields.append(FieldChange(path, "delivery", old, delivery))
        if not changes:
            raise Refused(f"nothing to change: already {delivery}", rule="delivery")
        what = short(first_line, 60) if len(changes) == 1 else f"{len(changes)} messages"
        subject = f"{MARK}: {what} (delivery → {delivery})"
        return self._run(Plan(MARK, subject, tuple(changes), tuple(fields)), reason,
                         expected_head, preview)

    def _read_message_bytes(self, path: str, expected: Mapping[str, str] | None) -> bytes:
        return self._read_checked(path, expected, root=MSG_ROOT, noun="message",
                                  shape="msg/<yyyy>/<mm>/<8 hex>.md")

    def move_to_messages(self, path: str, to: Sequence[str], reason: str, *,
                         sender: str | None = None, delivery: str = "delivered",
                         expected: Mapping[str, str] | None = None,
                         expected_head: str | None = None, preview: bool = False) -> ChangeSet:
        """A fact that is really an addressed message (`message-in-memory`) leaves memory:
        one commit deletes it from kb/ and writes the message under msg/ — from its claimant
        (or `sender`), sent when the fact was first committed, its title and body as the
        message's text, its local refs as `referenced_memory_ids` (other refs kept as
        `refs`), and the fact's path and the reason as its `context_explanation`."""
        recipients = [t.strip() for t in to if t.strip()]
        if not recipients:
            raise Refused("say who the message is to (an agent id, or curator)", rule="to")
        if delivery not in DELIVERY_STATES:
            raise Refused(f"delivery {delivery!r} is not one of {', '.join(DELIVERY_STATES)}",
                          rule="delivery")
        data, fact = self._read(path, expected)
        claimant, created = self._provenance(path)
        who = (sender or fact.envelope.claimant_agent_id or claimant or "").strip()
        if not who:
            raise Refused(f"{path}: who wrote it cannot be told; give the sender", rule="from")
        sent = datetime.fromtimestamp(created, UTC) if created else datetime.now(UTC)
        sent_text = sent.strftime("%Y-%m-%dT%H:%M:%SZ")
        body = fact.title.strip() + ("\n\n" + fact.body.strip() if fact.body.strip() else "")
        local = local_targets(fact.refs, self.repo_ids)
        other = [r for r in fact.refs if r not in local and not r.endswith(tuple(local))] \
            if local else list(fact.refs)
        fields: dict[str, object] = {
            "from": who, "to": recipients, "sent": sent_text, "delivery": delivery,
            "context_explanation": f"moved out of memory ({path}) by the curator: "
                                   f"{' '.join(reason.split())}",
            "referenced_memory_ids": local,
        }
        if other:
            fields["refs"] = other
        try:
            new_path = message_path(who, sent_text, body)
            new = serialize_message(fields, body)
        except (ValueError, TypeError) as exc:
            raise Refused(f"{path}: cannot write it as a message: {exc}") from None
        assert PATH_RE.match(new_path)
        if exists(self.repo, new_path):
            raise Refused(f"{new_path} exists: this message was written already")
        changes = (FileChange(path, data, None), FileChange(new_path, None, new))
        field_changes = (FieldChange(path, "status", "live", f"moved to messages ({new_path})"),
                         FieldChange(new_path, "to", None, recipients))
        subject = f"{TO_MESSAGES}: {short(fact.title, 60)} (to {', '.join(recipients)})"
        return self._run(Plan(TO_MESSAGES, subject, changes, field_changes), reason,
                         expected_head, preview)

    def _provenance(self, path: str) -> tuple[str | None, int | None]:
        """(claimant, first commit time) of a fact, from the index (None when unknown)."""
        try:
            conn = self.indexer.connect(readonly=True)
            try:
                return recall_reads.provenance(conn, path)
            finally:
                conn.close()
        except DatabaseError:
            return None, None
