"""Claiming items, drafts, time per item, idempotent submission, revisions, item_completed."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.http import HttpRequest
from django.urls import resolve
from django.utils import timezone

from annotation.models import Annotation, Assignment, Campaign, Enrollment, Item
from annotation.refusals import AnswerInvalid, NotAllowed
from annotation.services.campaigns import create_campaign
from annotation.services.claims import next_item_for
from annotation.services.enrollment import set_enrollment_status
from annotation.services.submissions import (
    IDLE_GAP_CAP_SECONDS,
    record_activity,
    save_draft,
    start_viewing,
    submit_annotation,
)
from annotation.signals import item_completed
from tests.annotation.factories import choice_item, enrolled, esa_answer, esa_campaign, esa_item

pytestmark = pytest.mark.django_db


def test_each_item_gets_overlap_annotators_and_no_more():
    campaign = esa_campaign(2, overlap=2)
    a, b, c = (enrolled(campaign, n) for n in "abc")
    for annotator in (a, b):
        for _ in range(2):
            item = next_item_for(annotator, campaign)
            submit_annotation(annotator, item, esa_answer())
        assert next_item_for(annotator, campaign) is None
    assert next_item_for(c, campaign) is None
    assert list(campaign.items.values_list("completed_count", flat=True)) == [2, 2]
    assert Enrollment.objects.get(annotator=c).finished_at is not None


def test_next_item_resumes_the_open_claim_and_orders_by_position():
    campaign = esa_campaign(3)
    a = enrolled(campaign, "a")
    first = next_item_for(a, campaign)
    assert first.seg_id == "1"
    assert next_item_for(a, campaign) == first
    assert Assignment.objects.filter(annotator=a).count() == 1


def test_live_claims_hold_the_slot_and_expired_ones_free_it():
    campaign = esa_campaign(1, claim_ttl_seconds=600)
    a, b = enrolled(campaign, "a"), enrolled(campaign, "b")
    t0 = timezone.now()
    item = next_item_for(a, campaign, now=t0)
    assert next_item_for(b, campaign, now=t0 + timedelta(seconds=599)) is None
    # Someone else holds the last slot: b is not finished, just waiting.
    assert Enrollment.objects.get(annotator=b).finished_at is None
    assert next_item_for(b, campaign, now=t0 + timedelta(seconds=601)) == item
    # a comes back after the claim lapsed and b took the slot: a's claim is released.
    assert next_item_for(a, campaign, now=t0 + timedelta(seconds=602)) is None
    assert Assignment.objects.get(annotator=a).status == "expired"


def test_activity_renews_the_claim():
    campaign = esa_campaign(1, claim_ttl_seconds=600)
    a = enrolled(campaign, "a")
    t0 = timezone.now()
    item = next_item_for(a, campaign, now=t0)
    save_draft(a, item, {"spans": []}, now=t0 + timedelta(seconds=500))
    assert Assignment.objects.get(annotator=a).expires_at == t0 + timedelta(seconds=1100)


def test_quota_per_annotator_finishes_the_enrollment():
    campaign = esa_campaign(5, max_items_per_annotator=2)
    a = enrolled(campaign, "a")
    for _ in range(2):
        submit_annotation(a, next_item_for(a, campaign), esa_answer())
    assert next_item_for(a, campaign) is None
    assert Enrollment.objects.get(annotator=a).finished_at is not None


def test_enrollment_status_gates_annotating():
    campaign = esa_campaign(2, require_approval=True)
    a = enrolled(campaign, "a")
    with pytest.raises(NotAllowed, match="waiting for approval"):
        next_item_for(a, campaign)
    enrollment = Enrollment.objects.get(annotator=a)
    set_enrollment_status(enrollment, "approved")
    assert next_item_for(a, campaign) is not None
    set_enrollment_status(enrollment, "paused")
    with pytest.raises(NotAllowed, match="paused"):
        next_item_for(a, campaign)
    Campaign.objects.filter(pk=campaign.pk).update(status="closed")
    set_enrollment_status(enrollment, "approved")
    with pytest.raises(NotAllowed, match="not open"):
        next_item_for(a, Campaign.objects.get(pk=campaign.pk))


def test_attention_checks_and_tutorials_ignore_overlap():
    items = [esa_item(1, kind="tutorial", expected={"score_min": 90}), esa_item(2),
             esa_item(3, kind="attention_check", expected={"score_max": 30})]  # fmt: skip
    campaign = create_campaign("QC", "esa", items, overlap=1)
    got = {}
    for name in ("a", "b"):
        annotator = enrolled(campaign, name)
        got[name] = []
        while (item := next_item_for(annotator, campaign)) is not None:
            got[name].append(item.kind)
            submit_annotation(annotator, item, esa_answer(95))
    assert got["a"] == ["tutorial", "regular", "attention_check"]
    assert got["b"] == ["tutorial", "attention_check"]


def test_qualification_rejects_who_fails_the_tutorial():
    items = [esa_item(1, kind="tutorial", expected={"score_max": 20}), esa_item(2)]
    campaign = create_campaign("Qual", "esa", items, require_qualification=True)
    good, bad = enrolled(campaign, "good"), enrolled(campaign, "bad")
    submit_annotation(good, next_item_for(good, campaign), esa_answer(10))
    submit_annotation(bad, next_item_for(bad, campaign), esa_answer(90))
    assert next_item_for(good, campaign).kind == "regular"
    with pytest.raises(NotAllowed, match="did not pass"):
        next_item_for(bad, campaign)
    enrollment = Enrollment.objects.get(annotator=bad)
    assert (enrollment.status, enrollment.qualified) == ("rejected", False)
    assert Enrollment.objects.get(annotator=good).qualified is True


def test_choice_options_are_shuffled_per_annotator_and_recorded():
    campaign = create_campaign(
        "Shuffle", "choice", [choice_item(1, choices=[f"o{i}" for i in range(8)])], overlap=5
    )
    orders = set()
    for name in "abcde":
        annotator = enrolled(campaign, name)
        item = next_item_for(annotator, campaign)
        order = Annotation.objects.get(item=item, annotator=annotator).option_order
        assert sorted(order) == list(range(8))
        orders.add(tuple(order))
    assert len(orders) > 1


def test_draft_time_is_counted_with_idle_gaps_capped():
    campaign = esa_campaign(1)
    a = enrolled(campaign, "a")
    t0 = timezone.now()
    item = next_item_for(a, campaign, now=t0)
    start_viewing(a, item, now=t0)
    save_draft(a, item, {"spans": []}, now=t0 + timedelta(seconds=20))
    record_activity(a, item, now=t0 + timedelta(seconds=30))
    # A one-hour break counts as IDLE_GAP_CAP_SECONDS only.
    result = submit_annotation(a, item, esa_answer(), now=t0 + timedelta(hours=1))
    assert result.annotation.time_spent_seconds == 30 + IDLE_GAP_CAP_SECONDS


def test_invalid_drafts_are_refused_incomplete_ones_kept():
    campaign = esa_campaign(1)
    a = enrolled(campaign, "a")
    item = next_item_for(a, campaign)
    annotation, missing = save_draft(
        a, item, {"spans": [{"start": 0, "end": 3, "severity": "minor"}]}
    )
    assert missing == ["give a 0–100 score"]
    with pytest.raises(AnswerInvalid):
        save_draft(a, item, {"spans": [{"start": 5, "end": 500, "severity": "minor"}]})
    annotation.refresh_from_db()
    assert annotation.draft["spans"] == [{"start": 0, "end": 3, "severity": "minor"}]


def test_submission_is_idempotent_and_revisions_update_in_place():
    campaign = esa_campaign(1)
    a = enrolled(campaign, "a")
    item = next_item_for(a, campaign)
    first = submit_annotation(a, item, esa_answer(70), idempotency_key="k1")
    replay = submit_annotation(a, item, esa_answer(10), idempotency_key="k1")
    assert (first.created, replay.replayed, replay.annotation.score) == (True, True, 70.0)
    double = submit_annotation(a, item, esa_answer(70), idempotency_key="k2")
    assert double.created is False
    revision = submit_annotation(a, item, esa_answer(40), idempotency_key="k3")
    annotation = Annotation.objects.get()
    assert (annotation.score, annotation.revision, revision.created) == (40.0, 3, False)
    # A late retry of the first request replays; it does not revert the revision.
    assert submit_annotation(a, item, esa_answer(70), idempotency_key="k1").replayed
    assert Annotation.objects.get().score == 40.0
    assert Item.objects.get().completed_count == 1


def test_incomplete_submission_changes_nothing():
    campaign = esa_campaign(1)
    a = enrolled(campaign, "a")
    item = next_item_for(a, campaign)
    with pytest.raises(AnswerInvalid) as caught:
        submit_annotation(a, item, {"spans": [], "score": 20})
    assert caught.value.missing == ["confirm the score 20 although no error span is marked"]
    assert Annotation.objects.get().status == "draft"
    confirmed = {"spans": [], "score": 20, "confirmed_low_score": True}
    assert submit_annotation(a, item, confirmed).annotation.score == 20.0


def test_mqm_score_uses_campaign_weights():
    items = [esa_item(1, target="Ein Fehler, hier.")]
    campaign = create_campaign("MQM", "mqm", items, mqm_weights={"major": 4})
    a = enrolled(campaign, "a")
    item = next_item_for(a, campaign)
    major = {"severity": "major", "category": "Accuracy", "subcategory": "Mistranslation"}
    minor = {"severity": "minor", "category": "Fluency", "subcategory": "Punctuation"}
    answer = {"spans": [{"start": 0, "end": 3, **major}, {"start": 9, "end": 10, **minor}]}
    annotation = submit_annotation(a, item, answer).annotation
    assert annotation.mqm_score == 4.1
    assert annotation.score == pytest.approx(100 - 4 * 4.1)
    with pytest.raises(AnswerInvalid, match="severity must be one of minor, major"):
        submit_annotation(a, item, {"spans": [{**answer["spans"][0], "severity": "critical"}]})


def test_item_completed_is_sent_once_after_commit(django_capture_on_commit_callbacks):
    campaign = esa_campaign(1, overlap=2)
    received = []

    def receiver(sender, item, **kwargs):
        received.append((item.pk, item.completed_count))

    item_completed.connect(receiver)
    try:
        a, b = enrolled(campaign, "a"), enrolled(campaign, "b")
        with django_capture_on_commit_callbacks(execute=True):
            item = next_item_for(a, campaign)
            submit_annotation(a, item, esa_answer())
        assert received == []
        with django_capture_on_commit_callbacks(execute=True):
            submit_annotation(b, next_item_for(b, campaign), esa_answer())
            submit_annotation(b, item, esa_answer(20))  # a revision: no second signal
        assert received == [(item.pk, 2)]
    finally:
        item_completed.disconnect(receiver)


def test_reset_removes_one_annotators_work_only(admin_client):
    campaign = esa_campaign(2, overlap=2)
    a, b = enrolled(campaign, "a"), enrolled(campaign, "b")
    for annotator in (a, b):
        submit_annotation(annotator, next_item_for(annotator, campaign), esa_answer())
    save_draft(b, next_item_for(b, campaign), {"spans": []})
    b_rows = list(Annotation.objects.filter(annotator=b).values_list("id", "status", "answer"))
    enrollment = Enrollment.objects.get(annotator=a)
    response = admin_client.post(f"/annotation/enrollments/{enrollment.pk}/reset/")
    assert response.status_code == 302
    assert not Annotation.objects.filter(annotator=a).exists()
    assert not Assignment.objects.filter(annotator=a).exists()
    assert (
        list(Annotation.objects.filter(annotator=b).values_list("id", "status", "answer")) == b_rows
    )
    assert sorted(campaign.items.values_list("completed_count", flat=True)) == [0, 1]
    assert next_item_for(a, campaign).seg_id == "1"


def test_draft_survives_logout_and_login(client):
    campaign = esa_campaign(2)
    a = enrolled(campaign, "a")
    client.force_login(a.user)
    response = client.get(f"/annotation/campaigns/{campaign.pk}/next/")
    item_url = response["Location"]
    item_id = resolve(item_url).kwargs["item_id"]
    draft = {"spans": [{"start": 0, "end": 4, "severity": "major"}], "score": 35}
    saved = client.post(
        f"{item_url}draft/", json.dumps({"draft": draft}), content_type="application/json"
    )
    assert saved.status_code == 200 and saved.json()["missing"] == []
    client.post("/accounts/logout/")
    expired = client.post(
        f"{item_url}draft/", json.dumps({"draft": {}}), content_type="application/json"
    )
    assert expired.status_code == 401
    assert client.get(item_url).status_code == 302  # to the login page
    # django-axes needs the request it counts attempts by; a bare HttpRequest stands in.
    assert client.login(request=HttpRequest(), username="a", password="correct horse battery")
    page = client.get(item_url)
    assert page.status_code == 200
    data = json.loads(page.context["payload"] and json.dumps(page.context["payload"]))
    assert data["draft"] == {**draft, "confirmed_low_score": False}
    assert Annotation.objects.get(item_id=item_id).draft["score"] == 35
    # The resumed "next" is the same item, not a new claim.
    assert client.get(f"/annotation/campaigns/{campaign.pk}/next/")["Location"] == item_url


def test_form_post_without_javascript_and_double_submit(client):
    items = [choice_item(1), choice_item(2)]
    campaign = create_campaign("NoJS", "choice", items, overlap=1)
    a = enrolled(campaign, "a")
    client.force_login(a.user)
    item_url = client.get(f"/annotation/campaigns/{campaign.pk}/next/")["Location"]
    form = {
        "selected": ["1"],
        "confidence": "4",
        "comment": "<b>sure</b>",
        "idempotency_key": "same",
    }
    first = client.post(f"{item_url}submit/", form)
    second = client.post(f"{item_url}submit/", form)
    assert first.status_code == second.status_code == 303
    annotation = Annotation.objects.get()
    assert annotation.answer == {"selected": [1], "confidence": 4, "comment": "<b>sure</b>"}
    assert Item.objects.get(pk=annotation.item_id).completed_count == 1
    page = client.get(item_url).content.decode()
    assert "&lt;b&gt;sure&lt;/b&gt;" in page and "<b>sure</b>" not in page


def test_submit_json_reports_missing(client):
    campaign = esa_campaign(1)
    a = enrolled(campaign, "a")
    client.force_login(a.user)
    item_url = client.get(f"/annotation/campaigns/{campaign.pk}/next/")["Location"]
    response = client.post(
        f"{item_url}submit/", {"answer": json.dumps({"spans": []})}, HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 422
    assert response.json()["missing"] == ["give a 0–100 score"]
    assert Annotation.objects.get().status == "draft"
