"""Permission matrix: annotators see only their own work; admin pages are staff-only.

Every denied request also asserts that nothing changed in the database.
"""

from __future__ import annotations

import json

import pytest

from annotation.item_refs import item_ref
from annotation.models import Annotation, Assignment, Enrollment, Item
from annotation.services.claims import next_item_for
from annotation.services.submissions import submit_annotation
from tests.annotation.factories import enrolled, esa_answer, esa_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def snapshot():
    return (
        list(Annotation.objects.order_by("id").values_list("id", "status", "draft", "answer")),
        list(Assignment.objects.order_by("id").values_list("id", "status")),
        list(Item.objects.order_by("id").values_list("id", "completed_count")),
        list(Enrollment.objects.order_by("id").values_list("id", "status", "qualified")),
    )


@pytest.fixture
def world(client):
    campaign = esa_campaign(4, name="Secret campaign")
    alice = enrolled(campaign, "alice")
    bob = enrolled(campaign, "bob")
    a_item = next_item_for(alice, campaign)
    b_item = next_item_for(bob, campaign)
    submit_annotation(bob, b_item, esa_answer(55))
    b_annotation = Annotation.objects.get(item=b_item, annotator=bob)
    other = esa_campaign(1, name="Other campaign")
    client.force_login(alice.user)
    return {
        "campaign": campaign, "other": other, "alice": alice, "bob": bob, "a_item": a_item,
        "b_item": b_item, "b_annotation": b_annotation, "client": client,
        "b_enrollment": Enrollment.objects.get(annotator=bob),
    }  # fmt: skip


def test_annotator_cannot_open_or_change_another_annotators_item(world):
    client, b_item = world["client"], world["b_item"]
    before = snapshot()
    assert client.get(f"/annotation/items/{item_ref(b_item.pk)}/").status_code == 404
    draft = {"draft": {"spans": [], "score": 1}}
    response = client.post(
        f"/annotation/items/{item_ref(b_item.pk)}/draft/",
        json.dumps(draft),
        content_type="application/json",
    )
    assert response.status_code == 404
    assert client.post(f"/annotation/items/{item_ref(b_item.pk)}/heartbeat/").status_code == 404
    response = client.post(
        f"/annotation/items/{item_ref(b_item.pk)}/submit/", {"answer": json.dumps(esa_answer(1))}
    )
    assert response.status_code == 404
    assert snapshot() == before


def test_unknown_and_foreign_ids_look_the_same(world):
    client = world["client"]
    missing = item_ref(Item.objects.order_by("-id").first().pk + 100)
    for url in (
        f"/annotation/items/{missing}/",
        f"/annotation/items/{item_ref(world['b_item'].pk)}/",
    ):
        assert client.get(url).status_code == 404
    # Not enrolled in the other campaign: its pages do not exist for alice.
    other = world["other"].pk
    for url in (f"/annotation/campaigns/{other}/next/", f"/annotation/campaigns/{other}/mine/",
                f"/annotation/campaigns/{other}/finish/"):  # fmt: skip
        assert client.get(url).status_code == 404


def test_ids_beyond_the_integer_range_are_404_for_an_annotator(world):
    """Looked up with the annotator joined in the same query, such an id would reach SQLite,
    which refuses it (OverflowError, a 500): it is answered as an id that does not exist."""
    client, huge = world["client"], 2**70
    before = snapshot()
    for url in (f"/annotation/items/{huge}/", f"/annotation/campaigns/{huge}/next/",
                f"/api/campaigns/{huge}/next-item/"):  # fmt: skip
        assert client.get(url).status_code == 404
    body = {"item": huge, "answer": esa_answer(1)}
    response = client.post("/api/annotations/", body, content_type="application/json")
    assert response.status_code == 404
    assert snapshot() == before


def test_annotator_gets_403_on_every_admin_page_and_nothing_changes(world):
    client, campaign = world["client"], world["campaign"]
    before = snapshot()
    pages = ["/annotation/campaigns/", "/annotation/campaigns/new/", "/annotation/annotators/",
             f"/annotation/campaigns/{campaign.pk}/",
             f"/annotation/campaigns/{campaign.pk}/settings/"]  # fmt: skip
    for url in pages:
        assert client.get(url).status_code == 403, url
    e = world["b_enrollment"].pk
    posts = [f"/annotation/enrollments/{e}/reset/", f"/annotation/enrollments/{e}/pause/",
             f"/annotation/enrollments/{e}/reject/",
             f"/annotation/campaigns/{campaign.pk}/checks/generate/",
             f"/annotation/campaigns/{campaign.pk}/settings/"]  # fmt: skip
    for url in posts:
        assert client.post(url, {"count": 3, "name": "hijacked"}).status_code == 403, url
    assert snapshot() == before
    assert not campaign.items.filter(kind="attention_check").exists()


def test_anonymous_users_are_sent_to_login(client, db):
    campaign = esa_campaign(1)
    item_url = f"/annotation/items/{item_ref(campaign.items.first().pk)}/"
    for url in ("/annotation/campaigns/", f"/annotation/campaigns/{campaign.pk}/",
                "/annotation/tasks/", item_url):  # fmt: skip
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    response = client.post(f"/annotation/items/{item_ref(campaign.items.first().pk)}/draft/", "{}",
                           content_type="application/json")  # fmt: skip
    assert response.status_code == 401
    assert response.json()["error"] == "session_expired"


def test_my_answers_lists_only_my_own(world):
    client = world["client"]
    submit_annotation(world["alice"], world["a_item"], esa_answer(90))
    page = client.get(f"/annotation/campaigns/{world['campaign'].pk}/mine/").content.decode()
    assert f"/annotation/items/{item_ref(world['a_item'].pk)}/" in page
    assert f"/annotation/items/{item_ref(world['b_item'].pk)}/" not in page


def test_access_helpers_hide_foreign_annotations(world):
    from django.http import Http404

    from annotation import access

    alice_user = world["alice"].user
    with pytest.raises(Http404):
        access.annotation_for_user(alice_user, world["b_annotation"].pk)
    with pytest.raises(Http404):
        access.campaign_for_admin(alice_user, world["campaign"].pk)
    assert list(access.annotations_visible_to(alice_user)) == list(
        Annotation.objects.filter(annotator=world["alice"])
    )
    admin = UserFactory(username="root", is_staff=True)
    assert access.annotation_for_user(admin, world["b_annotation"].pk) == world["b_annotation"]
    assert access.campaign_for_admin(admin, world["campaign"].pk) == world["campaign"]


def test_admin_can_open_every_page(admin_user, world):
    from django.test import Client

    admin_client = Client()
    admin_client.force_login(admin_user)
    campaign = world["campaign"]
    for url in ["/annotation/campaigns/", "/annotation/campaigns/new/", "/annotation/annotators/",
                f"/annotation/campaigns/{campaign.pk}/",
                f"/annotation/campaigns/{campaign.pk}/settings/"]:  # fmt: skip
        assert admin_client.get(url).status_code == 200, url
