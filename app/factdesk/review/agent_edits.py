"""An agent proposes a change to a fact that exists (issue 26): an update in place, a
retraction, or the observation that settles a hypothesis. Each is one commit on
`agent/<id>`, built and checked like a new fact (`agent_write.AgentWriter.write`: plumbing
only, a compare-and-swap of the branch, the rules of `check` and review before anything is
written, refusals that start with `[CODE]`).

- **Which version**: the fact as the branch's base has it (its own tip, or the curated tip
  when the branch is absent or merged). A fact the curated branch added after the branch's
  open proposals began is not on the branch: it is refused in words, never written as an
  "added" file over the curated one.
- **update_fact** (knomit's `update: <title>`, op `update`): only the fields given change,
  surgically (`writer.edit_frontmatter`, `edit_text`); `""` clears an optional field, `[]` a
  list. Only the agent's own claims: a fact whose claimant (or, without one, whose creator)
  is another agent or a person is refused `[A1]` — rewriting it in place would put words in
  another claimant's mouth; the agent proposes a new fact citing it, or its retraction.
- **retract_fact** (knomit's `retract(<moment>): <path>`, op `retract`, the moment being the
  agent's reason): any live fact; the curator decides.
- **settle_hypothesis**: `confirmed` is knomit's collision path (FORMAT §6.6, factdesk's
  `settle --confirm`): a new observation beside the hypothesis citing it, and the
  hypothesis deleted, in one `learn: <title>` commit; the observation may not be derived
  from the hypothesis (R4). `refuted`: the observation (which must not cite the hypothesis:
  a citing observation reads as a confirmation) and the deletion in one
  `retract(refuted): <hypothesis>` commit with an `Evidence:` trailer (factdesk's refute).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from factdesk.corpus import githistory, gitremote
from factdesk.corpus.codec import MAX_BYTES, parse_fact
from factdesk.corpus.writer import FieldValue, WriteRefused, edit_frontmatter, edit_text, serialize_fact
from factdesk.curation import gittree
from factdesk.index import review_reads
from factdesk.index.history import path_history
from factdesk.index.reflect_reads import refs_toward
from factdesk.model.derivation import standing
from factdesk.model.enums import FactType, Severity
from factdesk.model.fact import Fact, Problem
from factdesk.model.refs import local_targets
from factdesk.model.registry import agent_id_from_email
from factdesk.review.agent_input import (
    AgentWriteRefused,
    confidence_arg,
    fact_path_arg,
    items_arg,
    line_arg,
    optional_line,
    origin_arg,
    text_arg,
    type_and_kind,
)
from factdesk.review.agent_write import UNVERIFIED, AgentWriter

if TYPE_CHECKING:
    import sqlite3

#: the envelope fields update_fact sets (None: keep; "": clear)
_ENVELOPE = ("claim_type", "subject_kind", "subject_ref", "settle_by")
OUTCOMES = ("confirmed", "refuted")


def _current(w: AgentWriter, path: str, base: str) -> tuple[bytes, Fact]:
    """The fact at `path` as `base` has it, or a refusal in words."""
    data = w.versions_at(base, [path]).get(path)
    if data is None:
        _curated, curated_tip = githistory.checked_out_branch(w.repo)
        fork = (gitremote.merge_base(w.repo, base, curated_tip)
                if curated_tip is not None and curated_tip != base else None)
        if fork and w.versions_at(fork, [path]):
            raise AgentWriteRefused("fact", f"{path} is retracted on {w.identity.branch} "
                                    "already (an open proposal of yours)")
        live = w.read(lambda conn: bool(review_reads.live_paths(conn, [path])))
        if live:
            raise AgentWriteRefused("fact", f"{path} came to the curated branch after your open "
                                    f"proposals on {w.identity.branch} began: change it once a "
                                    "curator decided them")
        raise AgentWriteRefused("fact", f"{path} is no live fact (on the curated branch or on "
                                f"{w.identity.branch}): search or show give the paths there are")
    outcome = parse_fact(path, data)
    if outcome.fact is None:
        raise AgentWriteRefused("fact", f"{path} does not parse as a fact: a curator must fix it "
                                "first")
    return data, outcome.fact


def _claimed_by(w: AgentWriter, fact: Fact) -> str | None:
    """Whose claim the fact is: its claimant, else its creator's agent id (from the index;
    a fact the index does not know is one this agent wrote on its own branch)."""
    if fact.envelope.claimant_agent_id:
        return fact.envelope.claimant_agent_id

    def work(conn: sqlite3.Connection) -> str | None:
        return path_history(conn, fact.path).creator_email or None

    email = w.read(work)
    if email is None:
        return w.identity.id
    agent = w.indexer.rule_setting().registry.agent_for_email(email)
    return agent.id if agent is not None else (agent_id_from_email(email) or email)


def _claimant_fields(w: AgentWriter) -> dict[str, FieldValue]:
    return {"claimant_agent_id": w.identity.id,
            "claimant_type": None if w.identity.type == UNVERIFIED else w.identity.type}


def update_fact(w: AgentWriter, path: str, *, title: str | None = None,
                body: str | None = None, type: str | None = None, kind: str | None = None,
                origin: str | None = None, confidence: float | None = None,
                refs: Sequence[str] | None = None, domain: Sequence[str] | None = None,
                entities: Sequence[str] | None = None, claim_type: str | None = None,
                subject_kind: str | None = None, subject_ref: str | None = None,
                settle_by: str | None = None, settlement: str | None = None) -> dict[str, Any]:
    """Propose new values for some fields of one of the agent's own facts (module doc) →
    `{sha, branch, path, changed, warnings}`."""
    w.rate.take()
    lim = w.limits
    path = fact_path_arg("path", path)
    new_title = line_arg("title", title, lim.title_chars) if title is not None else None
    new_body = text_arg("body", body, multiline=True) if body is not None else None
    if new_body is not None and len(new_body.encode("utf-8")) > lim.body_bytes:
        raise AgentWriteRefused("input", f"the body is {len(new_body.encode('utf-8'))} bytes; "
                                f"at most {lim.body_bytes}")
    edits: dict[str, FieldValue] = {}
    if type is not None:
        edits["type"], edits["kind"] = type_and_kind(type, kind)
    elif kind is not None:
        raise AgentWriteRefused("type", "kind follows the type: give type (and kind) together")
    if origin is not None:
        edits["origin"] = origin_arg(origin) if origin.strip() else None
    if confidence is not None:
        edits["confidence"] = confidence_arg(confidence)
    for name, value in (("refs", refs), ("domain", domain), ("entities", entities)):
        if value is not None:
            edits[name] = items_arg(name, value, lim)
    for name, value in zip(_ENVELOPE, (claim_type, subject_kind, subject_ref, settle_by),
                           strict=True):
        if value is not None:
            edits[name] = optional_line(name, value, lim.item_chars)
    if settlement is not None:
        edits["settlement"] = optional_line("settlement", settlement, lim.settlement_chars)
    if not edits and new_title is None and new_body is None:
        raise AgentWriteRefused("input", "nothing to change: give at least one field")
    author = w.identity.author("update")
    changed: list[str] = []
    shown: list[str] = []

    def make(base: str) -> tuple[dict[str, bytes | None], str]:
        old, fact = _current(w, path, base)
        owner = _claimed_by(w, fact)
        if owner != w.identity.id:
            raise AgentWriteRefused("A1", f"{path} is {owner}'s claim, not yours: you may update "
                                    "only your own facts; propose a new fact citing it (refs), "
                                    "or propose its retraction")
        mine = dict(edits)
        if mine.get("kind") == fact.kind and "kind" not in fact.key_lines:
            mine.pop("kind")  # (an epistemic fact need not say so)
        mine.update(_claimant_fields(w))
        try:
            data = edit_frontmatter(old, mine)
            if new_title is not None or new_body is not None:
                data = edit_text(data, title=new_title, body=new_body)
        except (WriteRefused, TypeError) as exc:
            raise AgentWriteRefused("input", f"{path}: {exc}") from None
        if data == old:
            raise AgentWriteRefused("input", f"{path} already says that: nothing to change")
        if len(data) > MAX_BYTES:
            raise AgentWriteRefused("input", f"the fact would be {len(data)} bytes; at most "
                                    f"{MAX_BYTES}")
        changed[:] = sorted({*edits, *(["title"] if new_title is not None else []),
                             *(["body"] if new_body is not None else [])})
        shown[:] = [new_title or fact.title]
        return {path: data}, path

    def check(files: Mapping[str, bytes | None], base: str) -> list[Problem]:
        data = files[path]
        assert data is not None
        return w.check_version(path, data, base, author.email)

    sha, _path, warnings = w.write(make, check, lambda: f"update: {shown[0]}", author)
    return {"sha": sha, "branch": w.identity.branch, "path": path, "changed": changed,
            "warnings": warnings}


def retract_fact(w: AgentWriter, path: str, reason: str) -> dict[str, Any]:
    """Propose the retraction of a live fact (module doc) → `{sha, branch, path}`."""
    w.rate.take()
    path = fact_path_arg("path", path)
    why = line_arg("reason", reason, w.limits.title_chars)

    def make(base: str) -> tuple[dict[str, bytes | None], str]:
        _current(w, path, base)
        return {path: None}, path

    def check(files: Mapping[str, bytes | None], base: str) -> list[Problem]:
        return []  # (a deletion breaks no rule: refs to a retracted fact stay valid)

    sha, _path, _warnings = w.write(make, check, f"retract({why}): {path}",
                                    w.identity.author("retract"))
    return {"sha": sha, "branch": w.identity.branch, "path": path}


def settle_hypothesis(w: AgentWriter, hypothesis: str, outcome: str, title: str, body: str, *,
                      confidence: float | None = None, refs: Sequence[str] | None = None,
                      entities: Sequence[str] | None = None, claim_type: str | None = None,
                      subject_kind: str | None = None, subject_ref: str | None = None
                      ) -> dict[str, Any]:
    """Propose the observation that settles a hypothesis, and the hypothesis's retraction,
    in one commit (module doc) → `{sha, branch, path, hypothesis, outcome, warnings}`."""
    w.rate.take()
    lim = w.limits
    hypothesis = fact_path_arg("hypothesis", hypothesis)
    if outcome not in OUTCOMES:
        raise AgentWriteRefused("input", f"outcome {outcome!r}: one of confirmed, refuted")
    title = line_arg("title", title, lim.title_chars)
    body = text_arg("body", body, multiline=True)
    if not body.strip() or len(body.encode("utf-8")) > lim.body_bytes:
        raise AgentWriteRefused("input", "the body must say what was observed, at most "
                                f"{lim.body_bytes} bytes")
    cited = items_arg("refs", refs, lim)
    setting = w.indexer.rule_setting()
    cites_it = hypothesis.lower() in set(local_targets(tuple(cited), setting.repo_id))
    if outcome == "refuted" and cites_it:
        raise AgentWriteRefused("input", "a refuting observation does not cite the hypothesis "
                                "(a citing observation reads as its confirmation): leave it "
                                "out of refs")
    if outcome == "confirmed" and not cites_it:
        cited.append(hypothesis)
    envelope = {name: optional_line(name, value, lim.item_chars) for name, value in
                (("claim_type", claim_type), ("subject_kind", subject_kind),
                 ("subject_ref", subject_ref))}
    conf = confidence_arg(0.8 if confidence is None else confidence)
    given_entities = items_arg("entities", entities, lim) if entities is not None else None
    author = w.identity.author("learn" if outcome == "confirmed" else "retract")
    made: list[str] = []

    def make(base: str) -> tuple[dict[str, bytes | None], str]:
        _old, hyp = _current(w, hypothesis, base)
        if hyp.type != FactType.HYPOTHESIS:
            raise AgentWriteRefused("settle", f"{hypothesis} is typed {hyp.type}: only a "
                                    "hypothesis is settled; propose an update or a retraction")
        folder = hypothesis.rsplit("/", 1)[0]
        path = f"{folder}/{secrets.token_hex(4)}.md"
        while gittree.tree_entries(w.repo, base, [path]):
            path = f"{folder}/{secrets.token_hex(4)}.md"
        fields: dict[str, FieldValue] = {
            "type": "observation", "origin": "authored", "domain": list(hyp.domain),
            "confidence": conf, "sources": 1,
            "entities": given_entities if given_entities is not None else list(hyp.entities),
            "refs": cited, "claim_type": envelope["claim_type"] or "observation",
            "subject_kind": envelope["subject_kind"] or hyp.envelope.subject_kind or "world",
            "subject_ref": envelope["subject_ref"] or hyp.envelope.subject_ref,
            **_claimant_fields(w)}
        try:
            data = serialize_fact(fields, title, body)
        except (WriteRefused, TypeError) as exc:
            raise AgentWriteRefused("input", str(exc)) from None
        made[:] = [path]
        return {path: data, hypothesis: None}, path

    def check(files: Mapping[str, bytes | None], base: str) -> list[Problem]:
        (path,) = [p for p in files if p != hypothesis]
        data = files[path]
        assert data is not None
        found = w.check_version(path, data, base, author.email, {hypothesis: None})
        if outcome == "confirmed":
            found += _derived(w, path, hypothesis, cited)
        return found

    def message() -> str:  # (a refutation names its evidence, as factdesk's refute does)
        if outcome == "confirmed":
            return f"learn: {title}"
        return f"retract(refuted): {hypothesis}\n\nEvidence: {made[0]}"

    sha, path, warnings = w.write(make, check, message, author)
    return {"sha": sha, "branch": w.identity.branch, "path": path, "hypothesis": hypothesis,
            "outcome": outcome, "warnings": warnings}


def _derived(w: AgentWriter, path: str, hypothesis: str, cited: Sequence[str]) -> list[Problem]:
    """R4: a confirming observation whose other refs reach the hypothesis is derived from
    the prediction, no evidence for it (`model.derivation`)."""
    setting = w.indexer.rule_setting()

    def work(conn: sqlite3.Connection) -> tuple[dict[str, list[str]], dict[str, str]]:
        return refs_toward(conn, hypothesis)

    refs, titles = w.read(work)
    refs[path.lower()] = local_targets(tuple(cited), setting.repo_id)
    verdict = standing(path, hypothesis, refs, type_="observation", kind="epistemic",
                       cites=True, titles=titles)
    if verdict.eligible:
        return []
    return [Problem(path, 1, "R4", Severity.ERROR, f"the observation cannot confirm "
                    f"{hypothesis}: {verdict.why}")]
