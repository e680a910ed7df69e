"""The label family: relabel (the envelope), edit (confidence, sources, lists, title,
body) and attest (a curator confirms an envelope, the only way to ground truth)."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from factdesk.corpus import gitrepo
from factdesk.corpus.codec import parse_fact
from factdesk.corpus.writer import FieldValue, WriteRefused, edit_text, render_item
from factdesk.curation.base import (
    READ_LIMIT,
    CurationBase,
    apply_edits,
    check_edit_values,
    frontmatter_edits,
    read_file,
    unique,
    unreadable,
)
from factdesk.curation.changes import ChangeSet, FieldChange, Plan, subject_for
from factdesk.curation.gitwrite import FileChange, Identity, Refused
from factdesk.errors import FactdeskError
from factdesk.fsio import read_regular
from factdesk.index.curation_reads import derived_envelope
from factdesk.index.search import resolve_local_ref
from factdesk.model import legality
from factdesk.model.refs import RefKind, classify_ref, unwritable

ATTESTATIONS = ".factdesk/attestations.yaml"
EDIT_FIELDS = ("confidence", "sources", "domain", "entities", "refs", "title", "body")
_DERIVABLE = ("claim_type", "claimant_agent_id", "claimant_type", "subject_kind", "subject_ref")


class LabelOps(CurationBase):
    """relabel, edit, attest."""

    def plan_relabel(self, paths: Sequence[str], changes: Mapping[str, str | None],
                     expected: Mapping[str, str] | None = None) -> Plan:
        unknown = set(changes) - set(legality.RELABEL_FIELDS)
        if unknown:
            raise Refused(f"relabel cannot change {', '.join(sorted(unknown))} "
                          f"(it changes {', '.join(legality.RELABEL_FIELDS)}; use edit for the rest)")
        if not changes:
            raise Refused("relabel needs at least one field to change")
        file_changes: list[FileChange] = []
        fields: list[FieldChange] = []
        for path in unique(paths):
            data, labels = self._read_labels(path, expected)
            before = labels.values
            after = legality.follow(before, changes)
            problems = legality.violations(after, self.context_for(labels.fact, values=before))
            if problems:
                first = problems[0]
                raise Refused(f"{path}: {first}", rule=first.rule)
            edits = frontmatter_edits(before, after)
            if not edits:
                continue
            new = apply_edits(path, data, edits)
            if labels.fault is not None and (repaired := parse_fact(path, new)).fact is None:
                raise Refused(unreadable(repaired, "choose a known kind and type"))
            file_changes.append(FileChange(path, data, new))
            fields += [FieldChange(path, k, before.get(k), v) for k, v in edits.items()]
        if not file_changes:
            raise Refused("nothing to change: every selected fact already has those values")
        return Plan("relabel", subject_for("relabel", file_changes, fields), tuple(file_changes),
                    tuple(fields))

    def relabel(self, paths: Sequence[str], changes: Mapping[str, str | None], reason: str, *,
                expected: Mapping[str, str] | None = None, expected_head: str | None = None,
                preview: bool = False) -> ChangeSet:
        """Change envelope fields of one or many facts (one commit)."""
        return self._run(self.plan_relabel(paths, changes, expected), reason, expected_head, preview)

    def edit(self, paths: Sequence[str], changes: Mapping[str, object], reason: str, *,
             expected: Mapping[str, str] | None = None, expected_head: str | None = None,
             preview: bool = False) -> ChangeSet:
        """Change confidence, sources, domain, entities, refs, title or body (one commit)."""
        unknown = set(changes) - set(EDIT_FIELDS)
        if unknown:
            raise Refused(f"edit cannot change {', '.join(sorted(unknown))} "
                          f"(it changes {', '.join(EDIT_FIELDS)}; use relabel for the envelope)")
        if not changes:
            raise Refused("edit needs at least one field to change")
        checked = check_edit_values(changes)
        file_changes: list[FileChange] = []
        fields: list[FieldChange] = []
        for path in unique(paths):
            edited = self._edit_one(path, checked, expected)
            if edited is not None:
                file_changes.append(edited[0])
                fields += edited[1]
        if not file_changes:
            raise Refused("nothing to change: every selected fact already has those values")
        plan = Plan("edit", subject_for("edit", file_changes, fields), tuple(file_changes),
                    tuple(fields))
        return self._run(plan, reason, expected_head, preview)

    def _edit_one(self, path: str, checked: Mapping[str, object], expected: Mapping[str, str] | None
                  ) -> tuple[FileChange, list[FieldChange]] | None:
        """One fact's edit (None when it already has those values)."""
        data, fact = self._read(path, expected)
        current: dict[str, object] = {
            "confidence": fact.confidence, "sources": fact.sources, "domain": list(fact.domain),
            "entities": list(fact.entities), "refs": list(fact.refs), "title": fact.title,
            "body": fact.body,
        }
        front: dict[str, FieldValue] = {
            k: v for k, v in checked.items()  # type: ignore[misc]
            if k not in ("title", "body") and _norm(current[k]) != _norm(v)}
        new = apply_edits(path, data, front) if front else data
        title, body = checked.get("title"), checked.get("body")
        text_changes = {}
        if title is not None and title != fact.title:
            text_changes["title"] = str(title)
        if body is not None and str(body).strip() != fact.body.strip():
            text_changes["body"] = str(body)
        if text_changes:
            try:
                new = edit_text(new, **text_changes)
            except WriteRefused as exc:
                raise Refused(f"{path}: {exc}") from None
        if new == data:
            return None
        after = parse_fact(path, new).fact
        if after is None:
            raise Refused(f"{path}: the edit would make the file unreadable")
        self._refuse_new_refs(path, [r for r in after.refs if r not in fact.refs])
        problems = legality.violations(legality.values_of(after), self.context_for(after))
        if problems:
            raise Refused(f"{path}: {problems[0]}", rule=problems[0].rule)
        return (FileChange(path, data, new),
                [FieldChange(path, k, current[k], v) for k, v in {**front, **text_changes}.items()])

    def _refuse_new_refs(self, path: str, added: Sequence[str]) -> None:
        """knomit's write gate (FORMAT §4.3–4.4): every ref newly added must be well formed
        and stay inside the repository, and a local one must name a fact that exists or once
        did (a retracted one is in the index too); refs the fact already had are not checked
        again. Every problem is listed at once, and nothing is written."""
        problems: list[str] = []
        missing: list[tuple[str, str]] = []
        for raw in added:
            if why := unwritable(raw, self.repo_ids):
                problems.append(f"{raw!r}: {why}")
            elif (ref := classify_ref(raw, self.repo_ids)).kind is RefKind.LOCAL_FACT and ref.target:
                missing.append((raw, ref.target))
        if missing:
            conn = self.indexer.connect(readonly=True)
            try:
                problems += [f"{target!r}: no such fact" for raw, target in missing
                             if resolve_local_ref(conn, raw, target) is None]
            finally:
                conn.close()
        if problems:
            raise Refused(f"{path}: refs that cannot be written, nothing was written: "
                          + "; ".join(problems), rule="refs")

    # -- attest -----------------------------------------------------------------------------

    def attest(self, paths: Sequence[str], reason: str, changes: Mapping[str, str | None] | None = None,
               *, expected: Mapping[str, str] | None = None, expected_head: str | None = None,
               preview: bool = False) -> ChangeSet:
        """A curator confirms a fact's derived or legacy envelope: the envelope is written
        out explicitly (with any corrections) and the attestation is appended to
        `.factdesk/attestations.yaml` in the same commit. This is the only way to ground truth."""
        file_changes: list[FileChange] = []
        fields: list[FieldChange] = []
        entries: list[str] = []
        conn = self.indexer.connect(readonly=True)
        try:
            for path in unique(paths):
                change, more, entry = self._attest_one(path, derived_envelope(conn, path),
                                                       dict(changes or {}), reason, expected)
                file_changes.append(change)
                fields += more
                entries.append(entry)
        finally:
            conn.close()
        old_log = read_file(self.repo, ATTESTATIONS)
        header = b"# Curator attestations (factdesk attest): who confirmed which envelope, when.\n"
        new_log = (old_log if old_log is not None else header) + "".join(entries).encode("utf-8")
        subject = subject_for("attest", file_changes, fields)
        file_changes.append(FileChange(ATTESTATIONS, old_log, new_log))
        return self._run(Plan("attest", subject, tuple(file_changes), tuple(fields)), reason,
                         expected_head, preview)

    def _attest_one(self, path: str, row: Mapping[str, str | None] | None,
                    changes: Mapping[str, str | None], reason: str,
                    expected: Mapping[str, str] | None) -> tuple[FileChange, list[FieldChange], str]:
        data, fact = self._read(path, expected)
        before = legality.values_of(fact)
        derived = {
            "claim_type": fact.claim_type,
            "claimant_agent_id": before["claimant_agent_id"] or (row["claimant"] if row else None),
            "claimant_type": before["claimant_type"] or (row["claimant_type"] if row else None),
            "subject_kind": before["subject_kind"] or (row["subject_kind"] if row else None),
        }
        after = legality.follow({**before, **derived}, changes)
        missing = [k for k in ("claim_type", "claimant_agent_id", "claimant_type", "subject_kind")
                   if not after.get(k)]
        if missing:
            raise Refused(f"{path}: cannot attest without {', '.join(missing)} "
                          "(nothing to derive it from; give it explicitly)", rule="attest")
        if after.get("claim_type") == "legacy":
            raise Refused(f"{path}: a legacy claim type is what attestation replaces; give "
                          "the claim type you confirm", rule="attest")
        problems = legality.violations(after, self.context_for(fact, attesting=True))
        if problems:
            raise Refused(f"{path}: {problems[0]}", rule=problems[0].rule)
        edits: dict[str, FieldValue] = {
            k: v for k, v in after.items() if k in _DERIVABLE and v is not None and before.get(k) != v}
        edits.update(frontmatter_edits(before, {**before, **{k: v for k, v in after.items()
                                                            if k not in _DERIVABLE}}))
        new = apply_edits(path, data, edits) if edits else data
        fields = [FieldChange(path, k, before.get(k), v) for k, v in edits.items()]
        fields.append(FieldChange(path, "attested", None, f"{self.curator.name}"))
        entry = _attestation_entry(path, gitrepo.blob_id(new), self.curator, reason,
                                   {k: after.get(k) for k in _DERIVABLE if after.get(k)})
        return FileChange(path, data, new), fields, entry


def _norm(value: object) -> object:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return value


def _attestation_entry(path: str, blob: str, curator: Identity, reason: str,
                       envelope: Mapping[str, str | None]) -> str:
    env = ", ".join(f"{k}: {render_item(str(v))}" for k, v in envelope.items())
    return (f"- path: {render_item(path)}\n"
            f"  by: {render_item(f'{curator.name} <{curator.email}>')}\n"
            f"  at: {_dt.datetime.now(_dt.UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}\n"
            f"  blob: {blob}\n"
            f"  envelope: {{{env}}}\n"
            f"  reason: {render_item(reason)}\n")


def load_attestations(repo: Path) -> dict[str, list[dict[str, str]]]:
    """`.factdesk/attestations.yaml` by fact path (unreadable or absent — a FIFO or a device
    there too, never waited on: none)."""
    try:
        data = read_regular(repo / ATTESTATIONS, limit=READ_LIMIT)
    except (OSError, FactdeskError):
        return {}
    try:
        entries = yaml.safe_load(data)
    except (yaml.YAMLError, UnicodeDecodeError):
        return {}
    out: dict[str, list[dict[str, str]]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            out.setdefault(entry["path"], []).append({k: str(v) for k, v in entry.items()})
    return out
