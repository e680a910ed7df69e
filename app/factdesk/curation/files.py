"""The file family: move (git renames, refs to the moved facts updated in the same commit),
retract (delete, knomit's retract) and restore (bring back the last live version)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

from factdesk.corpus import githistory, gitrepo
from factdesk.corpus.codec import parse_fact
from factdesk.corpus.ontology import load_ontology
from factdesk.corpus.scan import unportable
from factdesk.curation import dismissals as dz
from factdesk.curation.base import CurationBase, apply_edits, exists, read_file, unique
from factdesk.curation.changes import ChangeSet, FieldChange, Plan
from factdesk.curation.gitwrite import FileChange, Refused, refuse_links
from factdesk.index.curation_reads import citing_paths
from factdesk.model.refs import RefKind, classify_ref, is_contained_repo_path, local_targets


class FileOps(CurationBase):
    """move, retract, restore."""

    def plan_move(self, moves: Mapping[str, str], expected: Mapping[str, str] | None = None) -> Plan:
        if not moves:
            raise Refused("nothing to move")
        file_changes: dict[str, FileChange] = {}
        fields: list[FieldChange] = []
        topics = self._ontology_topics()
        for old, new in moves.items():
            self._check_destination(old, new)
            data, _ = self._read(old, expected)
            refuse_links(self.repo, new)  # (before anything is read through it)
            if exists(self.repo, new) or new in file_changes:
                raise Refused(f"{new} already exists")
            topic = new.split("/")[1]
            if topics and topic not in topics:
                raise Refused(f"{new}: topic {topic!r} is not in the ontology "
                              f"({', '.join(sorted(topics))})", rule="ontology-topic")
            file_changes[old] = FileChange(old, data, None)
            file_changes[new] = FileChange(new, None, data)
            fields.append(FieldChange(old, "path", old, new))
        fields += self._follow_refs(moves, file_changes, expected)
        if (dz_change := self._follow_dismissals(moves)) is not None:
            file_changes[dz.DISMISSALS_PATH] = dz_change
        return Plan("move", _move_subject(moves), tuple(file_changes.values()), tuple(fields),
                    moves=dict(moves))

    def _ontology_topics(self) -> frozenset[str]:
        onto = load_ontology(self.repo)
        return frozenset(onto.topics) if onto is not None and onto.topics else frozenset()

    @staticmethod
    def _check_destination(old: str, new: str) -> None:
        if not new.startswith("kb/") or not new.endswith(".md") or not is_contained_repo_path(new):
            raise Refused(f"{new}: a fact's path is kb/<topic>/…/<name>.md")
        if old == new:
            raise Refused(f"{old}: already there")
        if (nfc := unicodedata.normalize("NFC", new)) != new:  # RELIABILITY C11
            raise Refused(f"{new!r}: new names are NFC-normalised; use {nfc!r}")
        if why := unportable(new):  # C13: one that Windows could not check out
            raise Refused(f"{new}: {why}, a name Windows cannot check out")

    def _follow_refs(self, moves: Mapping[str, str], file_changes: dict[str, FileChange],
                     expected: Mapping[str, str] | None) -> list[FieldChange]:
        """Rewrite the refs that name a moved fact (in `file_changes`, in place)."""
        lower_moves = {old.lower(): new for old, new in moves.items()}
        conn = self.indexer.connect(readonly=True)
        try:
            citing = citing_paths(conn, list(lower_moves))
        finally:
            conn.close()
        fields = []
        for src in sorted(citing):
            src_now = moves.get(src, src)
            if src in file_changes and file_changes[src].new is None:
                moved_bytes = file_changes[src_now].new
                assert moved_bytes is not None
                data = moved_bytes
            else:
                data, _ = self._read(src, expected)
            fact = parse_fact(src_now, data).fact
            if fact is None:
                continue
            new_refs = [self._moved_ref(raw, lower_moves) for raw in fact.refs]
            if new_refs == list(fact.refs):
                continue
            new_bytes = _replace_refs(src_now, data, fact.refs, new_refs)
            old_bytes = file_changes[src_now].old if src_now in file_changes else data
            file_changes[src_now] = FileChange(src_now, old_bytes, new_bytes)
            fields.append(FieldChange(src_now, "refs", list(fact.refs), new_refs))
        return fields

    def _follow_dismissals(self, moves: Mapping[str, str]) -> FileChange | None:
        """The dismissals file with the moved paths renamed (None: nothing to change)."""
        old_dz = read_file(self.repo, dz.DISMISSALS_PATH)
        if old_dz is None:
            return None
        try:
            ds = dz.parse_dismissals(old_dz.decode("utf-8"))
        except (dz.DismissalsError, UnicodeDecodeError) as exc:
            raise Refused(f"{exc}; fix it before moving facts", rule="dismissals") from None
        for old, new in moves.items():
            ds = dz.rename_path(ds, old, new)
        new_dz = dz.serialize_dismissals(ds).encode("utf-8")
        return FileChange(dz.DISMISSALS_PATH, old_dz, new_dz) if new_dz != old_dz else None

    def _moved_ref(self, raw: str, lower_moves: Mapping[str, str]) -> str:
        ref = classify_ref(raw, self.repo_ids)
        if ref.kind is not RefKind.LOCAL_FACT or ref.target is None or ref.target not in lower_moves:
            return raw
        new = lower_moves[ref.target]
        if raw.startswith("kb://"):
            prefix = raw[: raw.index("/", len("kb://")) + 1]
            return prefix + new
        return new

    def move(self, moves: Mapping[str, str], reason: str, *, expected: Mapping[str, str] | None = None,
             expected_head: str | None = None, preview: bool = False) -> ChangeSet:
        """File facts under other paths (git renames), updating refs to them in the same commit."""
        return self._run(self.plan_move(moves, expected), reason, expected_head, preview)

    def topic_move_targets(self, paths: Sequence[str], topic: str) -> dict[str, str]:
        """`kb/<old topic>/rest` → `kb/<topic>/rest` for each path; topic `auto` picks, for
        each fact, the topic most of its local sources are filed under (ties: the first
        cited), never the one it is leaving."""
        out: dict[str, str] = {}
        for path in paths:
            parts = path.split("/")
            if len(parts) < 3:
                raise Refused(f"{path}: not under a topic")
            target = topic
            if topic == "auto":
                _, fact = self._read(path, None)
                tops = [t.split("/")[1] for t in local_targets(fact.refs, self.repo_ids)
                        if t.count("/") >= 2 and t.split("/")[1] != parts[1]]
                if not tops:
                    raise Refused(f"{path}: cites no fact under another topic; name the topic")
                target = max(dict.fromkeys(tops), key=tops.count)
            out[path] = "/".join([parts[0], target, *parts[2:]])
        return out

    # -- retract / restore ------------------------------------------------------------------

    def retract(self, paths: Sequence[str], reason: str, *, expected: Mapping[str, str] | None = None,
                expected_head: str | None = None, preview: bool = False) -> ChangeSet:
        """Delete facts in one commit whose message records the reason (knomit's retract)."""
        changes = []
        fields = []
        for path in unique(paths):
            data, _ = self._read(path, expected)
            changes.append(FileChange(path, data, None))
            fields.append(FieldChange(path, "status", "live", "retracted"))
        subject = (f"retract(curation): {changes[0].path}" if len(changes) == 1
                   else f"retract(curation): {len(changes)} facts")
        return self._run(Plan("retract", subject, tuple(changes), tuple(fields)), reason,
                         expected_head, preview)

    def restore(self, paths: Sequence[str], reason: str, *, expected_head: str | None = None,
                preview: bool = False) -> ChangeSet:
        """Bring retracted facts back with the bytes of their last live version."""
        changes = []
        fields = []
        for path in unique(paths):
            if not path.startswith("kb/") or not path.endswith(".md") \
                    or not is_contained_repo_path(path):
                raise Refused(f"{path}: not a fact path (kb/…/<name>.md); restore brings back "
                              "retracted facts")
            if exists(self.repo, path):
                raise Refused(f"{path} is not retracted: it exists on disk")
            sha = self._deleted_in(path)
            with gitrepo.BlobReader(self.repo) as reader:
                data = reader.read(f"{sha}^:{path}") if sha is not None else None
            if sha is None or data is None:
                raise Refused(f"{path}: no earlier version in this branch's history")
            if elsewhere := self._moved_to(sha, path):
                raise Refused(f"{path}: the fact lives on at {elsewhere} (moved there); restoring "
                              "it would make a second copy")
            changes.append(FileChange(path, None, data))
            fields.append(FieldChange(path, "status", "retracted", "live"))
        title = parse_fact(changes[0].path, changes[0].new or b"").title  # (an unreadable one's too)
        subject = (f"restore: {title or changes[0].path}" if len(changes) == 1
                   else f"restore: {len(changes)} facts")
        return self._run(Plan("restore", subject, tuple(changes), tuple(fields)), reason,
                         expected_head, preview)

    def _deleted_in(self, path: str) -> str | None:
        """The first-parent commit that last deleted `path` (retracted or moved it), or None."""
        return githistory.deleted_in(self.repo, path)

    def _moved_to(self, sha: str, path: str) -> str | None:
        """Where commit `sha`, which deleted `path`, moved it (a rename git sees), if it is
        still there; None for a retraction. (A file name alone says nothing: FORMAT §1.4,
        names are not unique across folders.)"""
        return next((c.new_path for c in githistory.commit_changes(self.repo, sha, renames=True)
                     if c.path == path and c.new_path and exists(self.repo, c.new_path)), None)


def _move_subject(moves: Mapping[str, str]) -> str:
    if len(moves) == 1:
        (old, new), = moves.items()
        return f"move: {old} -> {new}"
    subject = f"move: {len(moves)} facts"
    tops = {(o.split('/')[1], n.split('/')[1]) for o, n in moves.items()}
    if len(tops) == 1:
        (a, b), = tops
        subject += f" ({a} → {b})"
    return subject


def _replace_refs(path: str, data: bytes, old_refs: Sequence[str], new_refs: Sequence[str]) -> bytes:
    """Swap ref items in place, keeping every other byte of the refs line (quoting, spacing);
    fall back to re-rendering the list if the in-place edit does not parse back exactly."""
    end = data.find(b"\n---", 3)
    front, rest = data[:end], data[end:]
    for old, new in zip(old_refs, new_refs, strict=True):
        if old != new:
            pattern = re.compile(rb"(?<=[\[\s,'\"])" + re.escape(old.encode()) + rb"(?=[\],\s'\"])")
            front = pattern.sub(new.encode().replace(b"\\", b"\\\\"), front)
    out = front + rest
    fact = parse_fact(path, out).fact
    if end > 0 and fact is not None and list(fact.refs) == list(new_refs):
        return out
    return apply_edits(path, data, {"refs": list(new_refs)})
