"""What a curator's choices in the relabel editor write (`legality.changes_from_choices`)."""

from __future__ import annotations

from factdesk.model.legality import changes_from_choices

NO_CLAIM = {"type": "hypothesis", "kind": "epistemic", "claim_type": None, "origin": None,
            "claimant_type": None, "subject_kind": None}


def test_a_value_as_written_is_no_change() -> None:
    assert changes_from_choices(NO_CLAIM, {"type": "hypothesis", "kind": "epistemic"}) == {}
    assert changes_from_choices(NO_CLAIM, {"claimant_type": None}) == {}


def test_the_claim_type_a_type_derives_is_not_written() -> None:
    assert changes_from_choices(NO_CLAIM, {"claim_type": "hypothesis"}) == {}
    assert changes_from_choices(NO_CLAIM, {"type": "policy", "claim_type": "assertion"}) == {
        "type": "policy"}
    assert changes_from_choices(NO_CLAIM, {"claim_type": "report"}) == {"claim_type": "report"}


def test_a_field_kept_against_a_new_type_counts() -> None:
    # policy brings kind pragmatic; a curator keeping epistemic is a choice to write (and
    # the rules then refuse it)
    assert changes_from_choices(NO_CLAIM, {"type": "policy", "kind": "epistemic"}) == {
        "type": "policy", "kind": "epistemic"}
