"""Submission's hand-written statements (``core.rows``): rows read back as the ORM
reads them, values written as ``save()`` writes them, locks where the database has them."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import Model
from django.http import Http404
from django.test.utils import CaptureQueriesContext

from annotation import access
from annotation.models import Annotation, Assignment, Campaign, Item
from annotation.services.campaigns import create_campaign
from annotation.services.claims import next_item_for
from annotation.services.submissions import submit_annotation
from tests.annotation.factories import choice_item, enrolled, esa_answer, esa_campaign

pytestmark = pytest.mark.django_db


def assert_same_row(read: Model, model: type[Model]) -> None:
    """Every concrete field of ``read`` equals the ORM's reading of the same row (a value
    the converters missed, such as JSON text or a datetime string on SQLite, differs)."""
    orm = model._default_manager.get(pk=read.pk)
    for field in model._meta.concrete_fields:
        assert getattr(read, field.attname) == getattr(orm, field.attname), field.name


def test_the_claim_is_read_with_its_item_campaign_and_annotator_in_one_query(
    django_assert_num_queries,
):
    items = [choice_item(1, meta={"domain": "art"})]
    campaign = create_campaign("Choices", "choice", items)
    annotator = enrolled(campaign, "a")
    claimed = next_item_for(annotator, campaign)
    with django_assert_num_queries(1):
        item, assignment = access.item_for_annotator(annotator.user, str(claimed.pk))
        loaded = (assignment.item, assignment.annotator, item.campaign)
    assert loaded[0] is item
    assert_same_row(item, Item)
    assert_same_row(item.campaign, Campaign)
    assert_same_row(assignment, Assignment)
    assert_same_row(assignment.annotator, type(annotator))
    assert item.choices == ["美術", "芸術", "アート"]
    assert (item.meta, item.expected) == ({"domain": "art"}, None)
    assert assignment.expires_at.tzinfo is not None


def test_a_claim_of_someone_else_or_of_nobody_is_not_found():
    campaign = esa_campaign(2)
    a, b = enrolled(campaign, "a"), enrolled(campaign, "b")
    item = next_item_for(a, campaign)
    with pytest.raises(Http404):
        access.item_for_annotator(b.user, item.pk)
    unclaimed = Item.objects.exclude(pk=item.pk).get()
    with pytest.raises(Http404):
        access.item_for_annotator(a.user, unclaimed.pk)


def test_a_submission_reads_and_writes_the_values_the_orm_would():
    campaign = esa_campaign(1)
    annotator = enrolled(campaign, "a")
    item, _ = access.item_for_annotator(annotator.user, next_item_for(annotator, campaign).pk)
    spans = [{"start": 0, "end": 6, "severity": "major"}]
    result = submit_annotation(annotator, item, esa_answer(70, spans), idempotency_key="k1")
    submitted = result.annotation
    assert_same_row(submitted, Annotation)
    assert_same_row(submitted.campaign, Campaign)
    assert submitted.answer["spans"] == [{"start": 0, "end": 6, "severity": "major"}]
    assert (submitted.status, submitted.revision) == ("submitted", 1)
    assert submitted.idempotency_key == "k1"
    assert submitted.submitted_at.tzinfo is not None
    assert Assignment.objects.get().status == Assignment.Status.SUBMITTED
    counted = Item.objects.get()
    assert (counted.completed_count, counted.live_slots) == (1, 1)


def test_submissions_without_a_key_are_neither_replays_nor_refused():
    # Annotations without a key store a blank one: a blank key must not match them.
    campaign = esa_campaign(2)
    annotator = enrolled(campaign, "a")
    results = []
    for _ in range(2):
        item = next_item_for(annotator, campaign)
        results.append(submit_annotation(annotator, item, esa_answer()))
    assert [(result.created, result.replayed) for result in results] == [(True, False)] * 2
    assert Annotation.objects.filter(status="submitted").count() == 2


def test_submission_locks_the_item_then_only_the_annotation_where_the_database_can():
    campaign = esa_campaign(1)
    annotator = enrolled(campaign, "a")
    item = next_item_for(annotator, campaign)
    with CaptureQueriesContext(connection) as captured:
        submit_annotation(annotator, item, esa_answer())
    statements = [" ".join(query["sql"].split()) for query in captured]  # one line each
    selects = [sql for sql in statements if sql.startswith("SELECT")]
    features = connection.features
    lock = " FOR UPDATE" if features.has_select_for_update else ""
    only_annotation = " OF annotation" if lock and features.has_select_for_update_of else ""
    # The item, then the annotation with its checks (not its campaign) after it.
    assert len(selects) == 2
    assert selects[0].endswith(f"item.id = {item.pk}{lock}")
    assert selects[1].endswith(f"annotation.annotator_id = {annotator.pk}{lock}{only_annotation}")
