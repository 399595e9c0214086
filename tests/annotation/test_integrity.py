"""Annotation integrity: no finished work lost to a lapsed claim, and no work from who was
stopped."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.item_refs import item_ref
from annotation.models import Annotation, Assignment, Enrollment, Item
from annotation.progress import campaign_progress
from annotation.refusals import NotAllowed
from annotation.selectors import over_overlap_items
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


@pytest.mark.parametrize("late_first", [False, True], ids=["late-last", "late-first"])
def test_a_late_submission_of_a_lapsed_claim_is_kept_beside_the_other(late_first):
    """Neither finished answer is refused: a's claim lapsed and b took the item, and whoever
    submits second is counted above the overlap; the item is flagged for the organisers."""
    campaign, a, b, item = _lapsed_pair()
    order = [(a, 20), (b, 70)] if late_first else [(b, 70), (a, 20)]

    results = [submit_annotation(who, item, esa_answer(score)) for who, score in order]

    assert [result.created for result in results] == [True, True]
    assert Item.objects.get(pk=item.pk).completed_count == 2
    assert sorted(
        Annotation.objects.filter(status="submitted").values_list("annotator", "score")
    ) == sorted([(a.pk, 20.0), (b.pk, 70.0)])
    assert [i.pk for i in over_overlap_items(campaign)] == [item.pk]
    progress = campaign_progress(campaign)
    assert (progress.submitted, progress.slots_filled, progress.percent) == (2, 1, 100.0)
    assert (progress.over_overlap_items, progress.over_overlap_judgments) == (1, 1)
    # Retrying either submission replays nothing new.
    assert not submit_annotation(a, item, esa_answer(20)).created
    assert Item.objects.get(pk=item.pk).completed_count == 2


def test_the_api_keeps_a_late_submission_and_the_dashboard_flags_the_item(admin_client):
    campaign, a, b, item = _lapsed_pair()
    submit_annotation(b, item, esa_answer(70))
    api = APIClient()
    api.force_authenticate(a.user)

    response = api.post(
        "/api/annotations/", {"item": item_ref(item.pk), "answer": esa_answer(20)}, format="json"
    )

    assert response.status_code == 201, response.content
    assert Item.objects.get(pk=item.pk).completed_count == 2
    dashboard = admin_client.get(f"/annotation/dashboard/{campaign.pk}/").content.decode()
    assert "1 item over the overlap" in dashboard
    assert "Items judged more often than the overlap (1)" in dashboard
    page = admin_client.get(f"/annotation/campaigns/{campaign.pk}/").content.decode()
    assert "1 item over the overlap" in page and "1 of 1 judgments" in page
    progress = admin_client.get(f"/api/campaigns/{campaign.pk}/progress/").json()
    assert (progress["submitted"], progress["over_overlap_items"]) == (2, 1)


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
    url = f"/annotation/items/{item_ref(item.pk)}/"

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
        "/api/annotations/", {"item": item_ref(item.pk), "answer": esa_answer(90)}, format="json"
    )

    assert draft.status_code == 403 and reason in draft.json()["errors"][0]
    assert form.status_code == 403 and reason in form.content.decode()
    assert as_json.status_code == 403 and reason in as_json.json()["errors"][0]
    assert via_api.status_code == 403 and reason in via_api.json()["detail"]
    assert snapshot() == before
    with pytest.raises(NotAllowed, match=reason):
        submit_annotation(a, item, esa_answer(90))
