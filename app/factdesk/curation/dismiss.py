"""The dismiss family: record in git that a suspected-mislabel suggestion does not apply."""

from __future__ import annotations

import datetime as _dt

from factdesk.corpus import gitrepo
from factdesk.curation import dismissals as dz
from factdesk.curation.base import CurationBase, read_file
from factdesk.curation.changes import ChangeSet, FieldChange, Plan, short
from factdesk.curation.gitwrite import FileChange, Refused
from factdesk.model.mislabels import CODES


class DismissOps(CurationBase):
    """dismiss."""

    def dismiss(self, path: str, code: str, reason: str, *, expected_head: str | None = None,
                preview: bool = False) -> ChangeSet:
        """Record in git (`.factdesk/dismissals.yaml`) that a suspected-mislabel suggestion
        does not apply to this version of the fact; an edited fact comes back to the queue."""
        if code not in CODES:  # (a typo would be recorded, and dismiss nothing)
            raise Refused(f"{code!r} is not a mislabel suggestion code ({', '.join(CODES)})",
                          rule="dismiss")
        data, fact = self._read(path, None)
        old = read_file(self.repo, dz.DISMISSALS_PATH)
        try:
            current = dz.parse_dismissals(old.decode("utf-8")) if old is not None else dz.Dismissals(())
        except (dz.DismissalsError, UnicodeDecodeError) as exc:
            raise Refused(f"{exc}; fix the file before dismissing more", rule="dismissals") from None
        entry = dz.Dismissal(path=path, code=code, reason=" ".join(reason.split()),
                             by=f"{self.curator.name} <{self.curator.email}>",
                             at=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                             blob=gitrepo.blob_id(data))
        new = dz.serialize_dismissals(dz.dismiss(current, entry)).encode("utf-8")
        plan = Plan("dismiss", f"dismiss: {code} on {short(fact.title)}",
                    (FileChange(dz.DISMISSALS_PATH, old, new),),
                    (FieldChange(path, "dismissed", None, code),))
        return self._run(plan, reason, expected_head, preview)
