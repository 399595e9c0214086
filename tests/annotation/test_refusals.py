"""One table of refusal statuses for pages and the API (annotation/refusals.py, ADR 0047)."""

from __future__ import annotations

import pytest

from annotation import refusals


@pytest.mark.parametrize(
    ("refusal", "status"),
    [
        (refusals.AnswerInvalid(["score must be 0–100"], []), 422),
        (refusals.NotEnrolled("not enrolled"), 404),
        (refusals.EnrollmentBlocked("paused"), 403),
        (refusals.Excluded("in the other study"), 403),
        (refusals.RequirementNotMet("native speakers of es", "native_language"), 403),
        (refusals.NotAllowed("closed"), 403),
    ],
)
def test_each_refusal_answers_its_own_status_or_its_nearest_listed_parents(refusal, status):
    assert refusals.http_status(refusal) == status


def test_an_invalid_answer_lists_errors_and_missing_a_refusal_its_sentence():
    assert refusals.reasons(refusals.AnswerInvalid(["bad span"], ["give a score"])) == (
        ["bad span"],
        ["give a score"],
    )
    assert refusals.reasons(refusals.NotAllowed("closed")) == (["closed"], [])
