"""Claims keep a live-slot counter on the item: it always matches the claims, and next-item and
submit cost the same number of queries however many annotators hold items."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Count, Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from annotation import hot_sql, item_refs
from annotation.models import Annotation, Assignment, Enrollment, Item
from annotation.services.claims import next_item_for
from annotation.services.enrollment import reset_annotator_work
from annotation.services.submissions import save_draft, submit_annotation
from tests.annotation.factories import enrolled, esa_answer, esa_campaign
from tests.databases import app_statements

pytestmark = pytest.mark.django_db


def counters(campaign) -> dict[int, int]:
    return dict(campaign.items.order_by("pk").values_list("pk", "live_slots"))


def recounted(campaign) -> dict[int, int]:
    live = Q(assignments__status__in=["active", "submitted"])
    return dict(
        campaign.items.order_by("pk")
        .annotate(n=Count("assignments", filter=live))
        .values_list("pk", "n")
    )


def test_the_counter_follows_claims_through_lapse_refusal_submission_and_reset():
    campaign = esa_campaign(2, overlap=1, claim_ttl_seconds=600)
    a, b = enrolled(campaign, "a"), enrolled(campaign, "b")
    t0 = timezone.now() - timedelta(seconds=1000)
    first = next_item_for(a, campaign, now=t0)
    second = next_item_for(b, campaign, now=t0 + timedelta(seconds=300))
    assert counters(campaign) == {first.pk: 1, second.pk: 1} == recounted(campaign)

    # a's claim lapsed and nothing else is open: c's request releases it and takes the slot.
    c = enrolled(campaign, "c")
    assert next_item_for(c, campaign, now=t0 + timedelta(seconds=601)) == first
    assert Assignment.objects.get(annotator=a).status == "expired"
    assert counters(campaign) == {first.pk: 1, second.pk: 1} == recounted(campaign)

    # An autosave does not take a released slot back; the draft is still saved.
    save_draft(a, first, {"spans": [], "score": 30}, now=t0 + timedelta(seconds=602))
    assert Assignment.objects.get(annotator=a).status == "expired"
    assert Annotation.objects.get(annotator=a).draft["score"] == 30
    assert counters(campaign) == recounted(campaign)

    submit_annotation(c, first, esa_answer(70))
    # a submits late: kept above the overlap, its claim counted again.
    submit_annotation(a, first, esa_answer(20))
    submit_annotation(b, second, esa_answer(50))
    assert counters(campaign) == {first.pk: 2, second.pk: 1} == recounted(campaign)

    reset_annotator_work(Enrollment.objects.get(annotator=c))
    assert counters(campaign) == {first.pk: 1, second.pk: 1} == recounted(campaign)
    reset_annotator_work(Enrollment.objects.get(annotator=a))
    assert counters(campaign) == {first.pk: 0, second.pk: 1} == recounted(campaign)
    assert next_item_for(a, campaign) == first
    assert counters(campaign) == {first.pk: 1, second.pk: 1} == recounted(campaign)


def test_a_released_claim_that_submits_first_takes_its_slot_back():
    campaign = esa_campaign(1, overlap=1, claim_ttl_seconds=600)
    a, b = enrolled(campaign, "a"), enrolled(campaign, "b")
    t0 = timezone.now() - timedelta(seconds=1000)
    item = next_item_for(a, campaign, now=t0)
    assert next_item_for(b, campaign, now=t0 + timedelta(seconds=601)) == item
    assert counters(campaign) == {item.pk: 1} == recounted(campaign)

    assert submit_annotation(a, item, esa_answer(40)).created
    # a's submission and b's live claim: two slots, and b's answer is kept too.
    assert counters(campaign) == {item.pk: 2} == recounted(campaign)
    assert submit_annotation(b, item, esa_answer(70)).created
    assert counters(campaign) == {item.pk: 2} == recounted(campaign)
    assert Item.objects.get(pk=item.pk).completed_count == 2


def test_a_lapsed_claim_whose_slot_is_free_is_resumed_without_recounting_others():
    campaign = esa_campaign(3, overlap=2, claim_ttl_seconds=600)
    a, b = enrolled(campaign, "a"), enrolled(campaign, "b")
    t0 = timezone.now() - timedelta(seconds=2000)
    item = next_item_for(a, campaign, now=t0)
    assert next_item_for(b, campaign, now=t0) == item  # overlap 2: same first item
    # Both claims lapsed; a comes back first: b's lapsed claim is released, a's is kept.
    assert next_item_for(a, campaign, now=t0 + timedelta(seconds=700)) == item
    statuses = dict(Assignment.objects.values_list("annotator__user__username", "status"))
    assert statuses == {"a": "active", "b": "expired"}
    assert counters(campaign)[item.pk] == 1 == recounted(campaign)[item.pk]


# --- queries ----------------------------------------------------------------------------------


def _campaign_held_by_others(others: int, done: int):
    """Overlap 1; ``done`` items already submitted and ``others`` items claimed by other
    annotators, all before the free ones in position order."""
    campaign = esa_campaign(done + others + 3, overlap=1)
    for n in range(done):
        worker = enrolled(campaign, f"done-{others}-{n}")
        submit_annotation(worker, next_item_for(worker, campaign), esa_answer())
    for n in range(others):
        next_item_for(enrolled(campaign, f"other-{others}-{done}-{n}"), campaign)
    me = enrolled(campaign, f"me-{others}-{done}")
    api = APIClient()
    api.force_authenticate(me.user)
    return campaign, api


def _next_item_and_submit_queries(others: int, done: int) -> tuple[int, int]:
    campaign, api = _campaign_held_by_others(others, done)
    with CaptureQueriesContext(connection) as next_item:
        response = api.get(f"/api/campaigns/{campaign.pk}/next-item/")
    assert response.status_code == 200
    item = response.json()["item"]
    # The first item nobody holds.
    assert Item.objects.get(pk=item_refs.item_id(item["id"])).position == done + others
    with CaptureQueriesContext(connection) as submit:
        posted = api.post(
            "/api/annotations/",
            {"item": item["id"], "answer": esa_answer()},
            format="json",
            HTTP_IDEMPOTENCY_KEY="k-1",
        )
    assert posted.status_code == 201
    return statements(next_item), statements(submit)


def statements(captured: CaptureQueriesContext) -> int:
    return len(app_statements(captured))


def test_next_item_and_submit_queries_do_not_grow_with_annotators_or_items():
    few = _next_item_and_submit_queries(others=1, done=0)
    many_holding = _next_item_and_submit_queries(others=12, done=0)
    many_done = _next_item_and_submit_queries(others=1, done=12)

    assert few == many_holding == many_done
    next_item, submit = few
    # Where writes run inside WITH (PostgreSQL), a claim's counter, claim upsert and draft
    # insert are one statement, and so are a first submission's three updates.
    writes = 1 if hot_sql.writes_in_one_statement() else 3
    # next-item: the enrollment locked with its campaign and annotator, open claims and
    # tutorials together, the locking candidate query, the writes (the draft insert returns
    # the annotation for the response).
    assert next_item == 3 + writes
    # submit: claim with its item (view), item lock, the locked annotation with its checks,
    # the writes: annotation, claim, counters.
    assert submit == 3 + writes


def test_a_replayed_submission_writes_nothing():
    campaign, api = _campaign_held_by_others(others=0, done=0)
    item = api.get(f"/api/campaigns/{campaign.pk}/next-item/").json()["item"]
    body = {"item": item["id"], "answer": esa_answer()}
    api.post("/api/annotations/", body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")

    with CaptureQueriesContext(connection) as replay:
        again = api.post("/api/annotations/", body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")

    assert again.status_code == 200 and again["Idempotent-Replayed"] == "true"
    writes = [
        sql
        for sql in app_statements(replay)
        if sql.lstrip().upper().startswith(("UPDATE", "INSERT"))
    ]
    assert writes == []


def test_the_first_open_item_is_the_earliest_of_every_stream_of_candidates():
    """next-item reads one ordered stream per number of live slots below the overlap, and one
    of attention checks; the item it gives is the earliest open one in position order, whatever
    stream it is in, never one that is full or that the annotator already holds."""
    campaign = esa_campaign(5, overlap=3)
    items = list(campaign.items.order_by("position"))
    live = [3, 2, 0, 1, 0]  # full, 2 of 3, free, 1 of 3, free
    for item, slots in zip(items, live, strict=True):
        Item.objects.filter(pk=item.pk).update(live_slots=slots)
    check = Item.objects.create(
        campaign=campaign, kind="attention_check", position=0, source="Check.", target="Kontrolle.",
        src_lang="en", tgt_lang="de", doc_id="check", seg_id="0", live_slots=7,
    )  # fmt: skip
    a = enrolled(campaign, "a")

    order = []
    while (item := next_item_for(a, campaign)) is not None:
        order.append(item)
        submit_annotation(a, item, esa_answer(50))
    assert order == [check, items[1], items[2], items[3], items[4]]
