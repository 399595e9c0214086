"""Annotation integrity: no more judgments than the overlap, and no work from who was stopped."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Annotation, Assignment, Enrollment, Item
from annotation.refusals import ItemFull, NotAllowed
from annotation.services.claims import next_item_for
from annotation.services.enrollment import set_enrollment_status
from annotation.services.submissions import save_draft, submit_annotation
from tests.annotation.factories import enrolled, esa_answer, esa_campaign

pytestmark = pytest.mark.django_db


def snapshot():
    return (
        list(Annotation.objects.order_by("id").values_list("id", "status", "answer", "draft")),
        list(Assignment.objects.order_by("id").values_list("id", "status", "expires_at")),
        list(Item.objects.order_by("id").values_list("id", "completed_count")),
    )


def _lapsed_pair():
    """Overlap 1: a's claim lapsed, b took the item; both hold a claim on it."""
    campaign = esa_campaign(1, claim_ttl_seconds=600)
    a, b = enrolled(campaign, "a"), enrolled(campaign, "b")
    t0 = timezone.now() - timedelta(seconds=700)
    item = next_item_for(a, campaign, now=t0)
    assert next_item_for(b, campaign, now=t0 + timedelta(seconds=601)) == item
    return campaign, a, b, item


def test_a_submission_beyond_the_overlap_is_refused_and_not_counted():
    campaign, a, b, item = _lapsed_pair()
    submit_annotation(b, item, esa_answer(70))

    with pytest.raises(ItemFull, match="already has all the judgments"):
        submit_annotation(a, item, esa_answer(20))

    assert Item.objects.get(pk=item.pk).completed_count == 1
    assert Annotation.objects.get(annotator=a).status == "draft"
    assert list(
        Annotation.objects.filter(status="submitted").values_list("annotator", flat=True)
    ) == [b.pk]
    # a's claim is released, so "next" moves on instead of handing the full item back.
    assert Assignment.objects.get(annotator=a).status == "expired"
    assert next_item_for(a, campaign) is None


def test_the_lapsed_annotator_submitting_first_takes_the_slot():
    _campaign, a, b, item = _lapsed_pair()
    submit_annotation(a, item, esa_answer(20))

    with pytest.raises(ItemFull):
        submit_annotation(b, item, esa_answer(70))

    assert Item.objects.get(pk=item.pk).completed_count == 1


def test_the_api_answers_409_for_a_submission_beyond_the_overlap():
    _campaign, a, b, item = _lapsed_pair()
    submit_annotation(b, item, esa_answer(70))
    api = APIClient()
    api.force_authenticate(a.user)

    response = api.post(
        "/api/annotations/", {"item": item.pk, "answer": esa_answer(20)}, format="json"
    )

    assert response.status_code == 409
    assert "already has all the judgments" in response.json()["detail"]
    assert Item.objects.get(pk=item.pk).completed_count == 1


@pytest.mark.parametrize(
    ("status", "reason"),
    [("paused", "paused by the organisers"), ("rejected", "cannot take part")],
)
def test_a_stopped_annotator_can_neither_save_drafts_nor_submit(client, status, reason):
    campaign = esa_campaign(2)
    a = enrolled(campaign, "a")
    item = next_item_for(a, campaign)
    save_draft(a, item, {"spans": [], "score": 40})
    set_enrollment_status(Enrollment.objects.get(annotator=a), status)
    before = snapshot()
    client.force_login(a.user)
    api = APIClient()
    api.force_authenticate(a.user)
    url = f"/annotation/items/{item.pk}/"

    draft = client.post(
        f"{url}draft/",
        json.dumps({"draft": {"spans": [], "score": 90}}),
        content_type="application/json",
    )
    form = client.post(f"{url}submit/", {"answer": json.dumps(esa_answer(90))})
    as_json = client.post(
        f"{url}submit/", {"answer": json.dumps(esa_answer(90))}, HTTP_ACCEPT="application/json"
    )
    via_api = api.post(
        "/api/annotations/", {"item": item.pk, "answer": esa_answer(90)}, format="json"
    )

    assert draft.status_code == 403 and reason in draft.json()["errors"][0]
    assert form.status_code == 403 and reason in form.content.decode()
    assert as_json.status_code == 403 and reason in as_json.json()["errors"][0]
    assert via_api.status_code == 403 and reason in via_api.json()["detail"]
    assert snapshot() == before
    with pytest.raises(NotAllowed, match=reason):
        submit_annotation(a, item, esa_answer(90))
