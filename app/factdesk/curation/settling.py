"""The settling family (issue 5): confirm, refute, extend or promote a hypothesis (extend
and promote are relabels under their own action name, hence `LabelOps`)."""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Mapping, Sequence

from factdesk.corpus.codec import parse_fact
from factdesk.corpus.registry_io import parse_registry
from factdesk.corpus.writer import FieldValue, WriteRefused, serialize_fact
from factdesk.curation.base import apply_edits, check_edit_values, exists
from factdesk.curation.changes import ChangeSet, FieldChange, Plan, short
from factdesk.curation.gitwrite import FileChange, Refused
from factdesk.curation.labels import LabelOps
from factdesk.curation.registry_ops import user_entry
from factdesk.index import DatabaseError
from factdesk.index.reflect_reads import refs_toward
from factdesk.model import legality
from factdesk.model.derivation import RULE, Standing, standing
from factdesk.model.fact import Fact
from factdesk.model.refs import local_targets
from factdesk.model.registry import strip_op
from factdesk.model.rules import read_settle_answer


class SettleOps(LabelOps):
    """confirm, refute, extend, promote."""

    def _hypothesis(self, path: str, expected: Mapping[str, str] | None) -> tuple[bytes, Fact]:
        data, fact = self._read(path, expected)
        if fact.type != "hypothesis":
            raise Refused(f"{path} is typed {fact.type}: not a hypothesis", rule="settle")
        return data, fact

    def confirm(self, hypothesis: str, observation: str | None, reason: str, *,
                new_title: str | None = None, new_body: str = "", confidence: object = 0.8,
                expected: Mapping[str, str] | None = None, expected_head: str | None = None,
                preview: bool = False) -> ChangeSet:
        """Reality outranks prediction (R4, knomit's collision path §6.6): the observation
        stays (or is written, from `new_title`/`new_body`), it cites the hypothesis, and the
        hypothesis is retracted — all in one commit."""
        h_data, hyp = self._hypothesis(hypothesis, expected)
        changes = [FileChange(hypothesis, h_data, None)]
        fields = [FieldChange(hypothesis, "status", "open hypothesis", "confirmed, retracted")]
        if observation is not None:
            more, more_fields, title = self._confirm_by(hypothesis, observation, expected)
        else:
            observation, more, more_fields, title = self._confirm_new(
                hypothesis, hyp, new_title, new_body, confidence)
        subject = f"settle: confirmed {short(hyp.title, 60)} (by {short(title, 40)})"
        plan = Plan("confirm", subject, (*changes, *more), (*fields, *more_fields),
                    extra_trailers=(("Confirmed-By", observation),))
        return self._run(plan, reason, expected_head, preview)

    def _confirm_by(self, hypothesis: str, observation: str, expected: Mapping[str, str] | None
                    ) -> tuple[list[FileChange], list[FieldChange], str]:
        """An existing observation confirms: it must be evidence, and it comes to cite the
        hypothesis (if it does not already)."""
        o_data, obs = self._read(observation, expected)
        verdict = self._standing(hypothesis, observation, obs)
        if not verdict.eligible:
            raise Refused(f"{observation} cannot confirm {hypothesis}: {verdict.why}", rule=RULE)
        if hypothesis.lower() in set(local_targets(obs.refs, self.repo_ids)):
            return [], [], obs.title
        new_refs = [*obs.refs, hypothesis]
        return ([FileChange(observation, o_data, apply_edits(observation, o_data, {"refs": new_refs}))],
                [FieldChange(observation, "refs", list(obs.refs), new_refs)], obs.title)

    def _standing(self, hypothesis: str, observation: str, obs: Fact) -> Standing:
        """The candidate's standing as evidence (`model.derivation`): its own refs as the
        file on disk has them, the refs beyond as the index has them."""
        refs: dict[str, list[str]] = {}
        titles: dict[str, str] = {}
        try:
            conn = self.indexer.connect(readonly=True)
            try:
                refs, titles = refs_toward(conn, hypothesis)
            finally:
                conn.close()
        except DatabaseError:
            pass  # no index: the candidate's own refs still count
        refs[observation.lower()] = local_targets(obs.refs, self.repo_ids)
        return standing(observation, hypothesis, refs, type_=obs.type, kind=obs.kind,
                        cites=hypothesis.lower() in refs[observation.lower()], titles=titles)

    def _confirm_new(self, hypothesis: str, hyp: Fact, new_title: str | None, new_body: str,
                     confidence: object) -> tuple[str, list[FileChange], list[FieldChange], str]:
        """A new observation confirms: written beside the hypothesis, citing it, with a full
        envelope (the curator observed it, about the hypothesis's subject), so that it
        passes `check` and the mislabel queue as written (issue 14 bug 5)."""
        if not new_title or not new_title.strip() or not new_body.strip():
            raise Refused("confirm needs the confirming observation: an existing fact, or a new "
                          "title and a body saying what was observed", rule="settle")
        folder = hypothesis.rsplit("/", 1)[0]
        name = secrets.token_hex(4)
        while exists(self.repo, f"{folder}/{name}.md"):
            name = secrets.token_hex(4)
        observation = f"{folder}/{name}.md"
        checked = float(check_edit_values({"confidence": confidence})["confidence"])  # type: ignore[arg-type]
        registering = user_entry(self.repo, self.curator.email)
        fields: dict[str, FieldValue] = {
            "type": "observation", "origin": "authored", "domain": list(hyp.domain),
            "confidence": checked, "sources": 1, "entities": list(hyp.entities),
            "refs": [hypothesis],
            **self._observer_envelope(hyp, registering[0] if registering else None)}
        try:
            data = serialize_fact(fields, new_title, new_body)
        except WriteRefused as exc:
            raise Refused(f"{observation}: {exc}", rule="settle") from None
        written = parse_fact(observation, data).fact
        if written is None:
            raise Refused(f"{observation}: the new observation would not parse", rule="settle")
        context = self.context_for(written)
        if registering is not None:  # (checked as the commit leaves the registry)
            registry = parse_registry(registering[1].new or b"")
            context = dataclasses.replace(context, registry=registry)
        problems = legality.violations(legality.values_of(written), context)
        if problems:
            raise Refused(f"{observation}: {problems[0]}", rule=problems[0].rule)
        changes = [FileChange(observation, None, data)]
        fields_changed = [FieldChange(observation, "status", None, "learned")]
        if registering is not None:  # the curator is a `user` claimant: one person, one row
            changes.append(registering[1])
            fields_changed.append(FieldChange(registering[1].path, f"agents.{registering[0]}",
                                              None, "user"))
        return observation, changes, fields_changed, new_title

    def _observer_envelope(self, hyp: Fact, registering: str | None = None
                           ) -> dict[str, FieldValue]:
        """claim_type observation by the curator as `user` (their registered id — the one
        this commit registers them under, when it does —, else their e-mail's local part),
        about what the hypothesis was about."""
        agent = self.registry.agent_for_email(self.curator.email)
        claimant = registering or (agent.id if agent is not None
                                   else strip_op(self.curator.email).partition("@")[0])
        env = hyp.envelope
        return {"claim_type": "observation", "claimant_agent_id": claimant,
                "claimant_type": "user", "subject_kind": env.subject_kind or "world",
                "subject_ref": env.subject_ref}

    def refute(self, hypothesis: str, reason: str, *, evidence: Sequence[str] = (),
               expected: Mapping[str, str] | None = None, expected_head: str | None = None,
               preview: bool = False) -> ChangeSet:
        """The prediction did not hold: retract it with the reason and the evidence."""
        data, _ = self._hypothesis(hypothesis, expected)
        plan = Plan("refute", f"retract(refuted): {hypothesis}", (FileChange(hypothesis, data, None),),
                    (FieldChange(hypothesis, "status", "open hypothesis", "refuted, retracted"),),
                    extra_trailers=tuple(("Evidence", e) for e in evidence))
        return self._run(plan, reason, expected_head, preview)

    def extend(self, hypothesis: str, reason: str, *, settle_by: str | None = None,
               settlement: str | None = None, expected: Mapping[str, str] | None = None,
               expected_head: str | None = None, preview: bool = False) -> ChangeSet:
        """A new date or criterion, with the reason. The date may be written short
        (`2027-3-1` is written `2027-03-01`); one that names no day is refused."""
        self._hypothesis(hypothesis, expected)
        if settle_by is not None:
            try:
                settle_by, _text = read_settle_answer(settle_by)
            except ValueError as exc:
                raise Refused(str(exc), rule="settle") from None
            if settle_by is None:
                raise Refused(f"{_text!r} is not a date (YYYY-MM-DD)", rule="settle")
        changes = {k: v for k, v in (("settle_by", settle_by), ("settlement", settlement)) if v}
        if not changes:
            raise Refused("extend needs a new settle-by date or criterion", rule="settle")
        plan = self.plan_relabel([hypothesis], changes, expected).renamed("extend")
        return self._run(plan, reason, expected_head, preview)

    def promote(self, hypothesis: str, reason: str, *, expected: Mapping[str, str] | None = None,
                expected_head: str | None = None, preview: bool = False) -> ChangeSet:
        """Promote in place (knomit's update path): the hypothesis becomes an observation."""
        self._hypothesis(hypothesis, expected)
        plan = self.plan_relabel([hypothesis], {"type": "observation"}, expected).renamed("promote")
        return self._run(plan, reason, expected_head, preview)
