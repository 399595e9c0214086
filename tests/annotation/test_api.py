"""REST API: permission matrix, idempotent submission, next item, import, exports, schema."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.urls import include, path
from django.utils import timezone
from drf_spectacular.drainage import GENERATOR_STATS, reset_generator_stats
from drf_spectacular.generators import SchemaGenerator
from rest_framework.routers import DefaultRouter
from rest_framework.test import APIClient

from annotation import hot_sql
from annotation.api import routes
from annotation.item_refs import item_id
from annotation.models import Annotation, Assignment, Campaign, Item
from annotation.services.campaigns import create_campaign
from annotation.services.claims import _release_lapsed
from annotation.services.enrollment import enroll
from annotation.services.submissions import save_draft, submit_annotation
from tests.annotation.campaign_builders import esa_answer, esa_campaign, make_annotator


@pytest.fixture
def api():
    return APIClient()


def login(api: APIClient, annotator) -> APIClient:
    api.force_authenticate(annotator.user)
    return api


@pytest.fixture
def world(db):
    """An open ESA campaign (overlap 1) where alice and bob each claimed one item via the API."""
    campaign = esa_campaign("API campaign", overlap=1)
    alice, bob = make_annotator("alice"), make_annotator("bob")
    for annotator in (alice, bob):
        enroll(annotator, campaign)
    a_client, b_client = APIClient(), APIClient()
    login(a_client, alice)
    login(b_client, bob)
    a_next = a_client.get(f"/api/campaigns/{campaign.pk}/next-item/").json()
    b_next = b_client.get(f"/api/campaigns/{campaign.pk}/next-item/").json()
    return {
        "campaign": campaign, "alice": alice, "bob": bob, "a": a_client, "b": b_client,
        # Annotators know items by reference (annotation/item_refs.py); a_pk is the id.
        "a_item": a_next["item"]["id"], "b_item": b_next["item"]["id"],
        "a_pk": item_id(a_next["item"]["id"]),
    }  # fmt: skip


def snapshot():
    return (
        list(Annotation.objects.order_by("id").values_list("id", "status", "answer", "revision")),
        list(Assignment.objects.order_by("id").values_list("id", "status")),
        list(Item.objects.order_by("id").values_list("id", "completed_count")),
    )


# --- annotators: next item and submission ----------------------------------------------------


def test_next_item_gives_distinct_claims_without_qc_giveaways(world):
    assert world["a_item"] != world["b_item"]
    body = world["a"].get(f"/api/campaigns/{world['campaign'].pk}/next-item/").json()
    assert body["item"]["id"] == world["a_item"]  # resumed, not a new claim
    for hidden in ("kind", "expected", "origin", "origin_ref", "meta"):
        assert hidden not in body["item"]
    assert body["status"] == "draft" and isinstance(body["annotation"], int)


def test_next_item_answers_with_the_annotation_row_new_or_kept(world):
    """A new claim answers with the row it created; a claim taken again after it lapsed and
    was released answers with the draft kept from before, not a fresh one."""
    campaign, alice, url = world["campaign"], world["alice"], "/api/campaigns/{}/next-item/"
    mine = Annotation.objects.get(item_id=world["a_pk"], annotator=alice)
    first = world["a"].get(url.format(campaign.pk)).json()
    assert (first["annotation"], first["draft"]) == (mine.pk, mine.draft)

    save_draft(alice, mine.item, {"score": 42})
    later = timezone.now() + timedelta(seconds=campaign.claim_ttl_seconds + 1)
    assert _release_lapsed([world["a_pk"]], later) == 1

    again = world["a"].get(url.format(campaign.pk)).json()
    assert again["item"]["id"] == world["a_item"]
    assert again["annotation"] == mine.pk and again["draft"]["score"] == 42
    assert Annotation.objects.filter(item_id=world["a_pk"], annotator=alice).count() == 1

    # A new claim: the id and draft the response gives are the stored row's.
    submit_annotation(alice, mine.item, esa_answer(70))
    fresh = world["a"].get(url.format(campaign.pk)).json()
    stored = Annotation.objects.get(item_id=item_id(fresh["item"]["id"]), annotator=alice)
    assert fresh["item"]["id"] not in (world["a_item"], world["b_item"])
    assert (fresh["annotation"], fresh["draft"], fresh["option_order"], fresh["status"]) == (
        stored.pk, stored.draft, stored.option_order, stored.status,
    )  # fmt: skip


def test_submit_is_idempotent_by_header(world):
    url = "/api/annotations/"
    payload = {"item": world["a_item"], "answer": esa_answer(70)}
    first = world["a"].post(url, payload, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 201
    again = world["a"].post(url, payload, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert again.status_code == 200
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    annotation = Annotation.objects.get(pk=first.json()["id"])
    assert (annotation.status, annotation.revision, annotation.score) == ("submitted", 1, 70.0)
    assert Annotation.objects.filter(item_id=world["a_pk"]).count() == 1
    assert Item.objects.get(pk=world["a_pk"]).completed_count == 1


def test_submit_is_idempotent_by_client_id(world):
    payload = {"item": world["a_item"], "answer": esa_answer(55), "client_id": "uuid-123"}
    first = world["a"].post("/api/annotations/", payload, format="json")
    second = world["a"].post("/api/annotations/", payload, format="json")
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["id"] == second.json()["id"]
    assert Annotation.objects.get(pk=first.json()["id"]).revision == 1


def test_incomplete_answer_is_422_as_on_the_page_and_changes_nothing(world, client):
    before = snapshot()
    response = world["a"].post(
        "/api/annotations/", {"item": world["a_item"], "answer": {"spans": []}}, format="json"
    )
    client.force_login(world["alice"].user)
    page = client.post(
        f"/annotation/items/{world['a_item']}/submit/",
        {"answer": json.dumps({"spans": []})},
        HTTP_ACCEPT="application/json",
    )
    assert (response.status_code, page.status_code) == (422, 422)
    assert response.json()["missing"] == page.json()["missing"] == ["give a 0–100 score"]
    assert snapshot() == before


def test_next_item_is_204_when_done(world):
    campaign = world["campaign"]
    a = world["a"]
    while True:
        response = a.get(f"/api/campaigns/{campaign.pk}/next-item/")
        if response.status_code == 204:
            break
        item = response.json()["item"]["id"]
        assert (
            a.post(
                "/api/annotations/", {"item": item, "answer": esa_answer(80)}, format="json"
            ).status_code
            == 201
        )
    # bob holds one claim; alice did the other two of the three items.
    assert Annotation.objects.filter(annotator=world["alice"], status="submitted").count() == 2


def test_closed_campaign_refuses_with_403_as_the_page_does_and_changes_nothing(world, client):
    Campaign.objects.filter(pk=world["campaign"].pk).update(status="closed")
    before = snapshot()
    response = world["a"].post(
        "/api/annotations/", {"item": world["a_item"], "answer": esa_answer(70)}, format="json"
    )
    client.force_login(world["alice"].user)
    page = client.post(
        f"/annotation/items/{world['a_item']}/submit/", {"answer": json.dumps(esa_answer(70))}
    )
    assert (response.status_code, page.status_code) == (403, 403)
    assert "not open" in response.json()["detail"] and "not open" in page.content.decode()
    assert world["a"].get(f"/api/campaigns/{world['campaign'].pk}/next-item/").status_code == 403
    assert snapshot() == before
    assert snapshot() == before


# --- permission matrix -----------------------------------------------------------------------


def test_annotator_cannot_see_or_touch_another_annotators_work(world):
    a, b = world["a"], world["b"]
    b_post = b.post(
        "/api/annotations/", {"item": world["b_item"], "answer": esa_answer(33)}, format="json"
    )
    b_annotation = b_post.json()["id"]
    before = snapshot()
    # Items: only the ones you claimed.
    assert [i["id"] for i in a.get("/api/items/").json()["results"]] == [world["a_item"]]
    assert a.get(f"/api/items/{world['b_item']}/").status_code == 404
    # Annotations: only your own, by id too.
    assert [x["id"] for x in a.get("/api/annotations/").json()["results"]] == [
        Annotation.objects.get(item_id=world["a_pk"]).pk
    ]
    assert a.get(f"/api/annotations/{b_annotation}/").status_code == 404
    # Submitting on bob's item: 404 as if it did not exist, whatever the key.
    for key in ("", "x-1"):
        response = a.post(
            "/api/annotations/", {"item": world["b_item"], "answer": esa_answer(0)},
            format="json", HTTP_IDEMPOTENCY_KEY=key,
        )  # fmt: skip
        assert response.status_code == 404
    # Annotators: only yourself.
    assert [x["pseudonym"] for x in a.get("/api/annotators/").json()["results"]] == ["ann-alice"]
    assert a.get(f"/api/annotators/{world['bob'].pk}/").status_code == 404
    # Admin-only campaign actions.
    pk = world["campaign"].pk
    assert a.get(f"/api/campaigns/{pk}/progress/").status_code == 404
    assert a.get(f"/api/campaigns/{pk}/export/").status_code == 404
    assert (
        a.post(
            "/api/campaigns/import/", {"name": "x", "protocol": "esa", "jsonl": "{}"}, format="json"
        ).status_code
        == 403
    )
    assert snapshot() == before
    assert not Campaign.objects.filter(name="x").exists()


def test_replaying_another_annotators_key_does_not_leak(world):
    b_post = world["b"].post(
        "/api/annotations/", {"item": world["b_item"], "answer": esa_answer(33)},
        format="json", HTTP_IDEMPOTENCY_KEY="shared-key",
    )  # fmt: skip
    assert b_post.status_code == 201
    a_post = world["a"].post(
        "/api/annotations/", {"item": world["a_item"], "answer": esa_answer(44)},
        format="json", HTTP_IDEMPOTENCY_KEY="shared-key",
    )  # fmt: skip
    assert a_post.status_code == 201  # keys are per annotator
    assert a_post.json()["id"] != b_post.json()["id"]
    assert Annotation.objects.get(pk=b_post.json()["id"]).score == 33.0


def test_outsider_sees_nothing(world, outsider_user):
    world["b"].post(
        "/api/annotations/", {"item": world["b_item"], "answer": esa_answer(33)}, format="json"
    )
    before = snapshot()
    api = APIClient()
    api.force_authenticate(outsider_user)
    for url in ("/api/campaigns/", "/api/items/", "/api/annotations/", "/api/annotators/"):
        assert api.get(url).json()["results"] == [], url
    pk = world["campaign"].pk
    assert api.get(f"/api/campaigns/{pk}/").status_code == 404
    assert api.get(f"/api/campaigns/{pk}/next-item/").status_code == 404
    assert (
        api.post(
            "/api/annotations/", {"item": world["b_item"], "answer": esa_answer(1)}, format="json"
        ).status_code
        == 404
    )
    assert snapshot() == before


def test_anonymous_is_refused(world):
    api = APIClient()
    assert api.get("/api/campaigns/").status_code in (401, 403)
    assert api.post("/api/annotations/", {}, format="json").status_code in (401, 403)


# --- staff -----------------------------------------------------------------------------------


def test_staff_sees_everything_with_provenance(world, admin_user):
    api = APIClient()
    api.force_authenticate(admin_user)
    items = api.get(f"/api/items/?campaign={world['campaign'].pk}").json()["results"]
    assert len(items) == 3 and "origin_ref" in items[0] and "expected" in items[0]
    names = {a["pseudonym"] for a in api.get("/api/annotators/").json()["results"]}
    assert names == {"ann-alice", "ann-bob"}
    body = json.dumps(api.get("/api/annotators/").json())
    assert "private@example.org" not in body and "Secret" not in body and "user-alice" not in body


def test_staff_progress_and_export(world, admin_user):
    world["a"].post(
        "/api/annotations/", {"item": world["a_item"], "answer": esa_answer(70)}, format="json"
    )
    api = APIClient()
    api.force_authenticate(admin_user)
    pk = world["campaign"].pk
    body = api.get(f"/api/campaigns/{pk}/progress/").json()
    assert (body["submitted"], body["target"]) == (1, 3)
    assert {a["pseudonym"]: a["done"] for a in body["annotators"]} == {"ann-alice": 1, "ann-bob": 0}
    response = api.get(f"/api/campaigns/{pk}/export/?format=jsonl")
    assert response.status_code == 200 and response.streaming
    rows = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert [(r["annotator"], r["esa_score"]) for r in rows] == [("ann-alice", 70.0)]
    assert api.get(f"/api/campaigns/{pk}/export/?format=mqm-tsv").status_code == 400


def test_staff_import_items_and_jsonl(admin_user):
    api = APIClient()
    api.force_authenticate(admin_user)
    items = [{"source": "Pick one", "question": "Which?", "choices": ["a", "b"]}]
    response = api.post(
        "/api/campaigns/import/",
        {"name": "Choice API", "protocol": "choice", "items": items, "settings": {"overlap": 3}},
        format="json",
    )
    assert response.status_code == 201, response.json()
    campaign = Campaign.objects.get(name="Choice API")
    assert (campaign.overlap, campaign.items.count(), campaign.created_by) == (3, 1, admin_user)
    jsonl = '{"doc_id": "d", "seg_id": "1", "source": "Hi", "target": "Ahoj"}\n'
    response = api.post(
        "/api/campaigns/import/",
        {"name": "ESA API", "protocol": "esa", "jsonl": jsonl},
        format="json",
    )
    assert response.status_code == 201
    assert Campaign.objects.get(name="ESA API").items.count() == 1


def test_bad_import_reports_the_line_and_writes_nothing(admin_user):
    api = APIClient()
    api.force_authenticate(admin_user)
    jsonl = (
        '{"doc_id": "d", "seg_id": "1", "source": "Hi", "target": "Ahoj"}\n'
        '{"doc_id": "d", "seg_id": "2", "source": "Bye"}\n'
    )
    response = api.post(
        "/api/campaigns/import/",
        {"name": "Broken", "protocol": "esa", "jsonl": jsonl},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"line": 2, "reason": "target is required for esa and mqm items"}
    ]
    assert not Campaign.objects.filter(name="Broken").exists()
    assert Item.objects.count() == 0


# --- schema ----------------------------------------------------------------------------------


def test_schema_of_annotation_views_builds_without_warnings():
    router = DefaultRouter()
    routes.register(router)
    reset_generator_stats()
    schema = SchemaGenerator(patterns=[path("api/", include(router.urls))]).get_schema(
        request=None, public=True
    )
    assert not GENERATOR_STATS, "drf-spectacular warned about the annotation API"
    paths = schema["paths"]
    assert "/api/campaigns/{id}/next-item/" in paths and "/api/annotations/" in paths
    params = {p["name"] for p in paths["/api/annotations/"]["post"]["parameters"]}
    assert "Idempotency-Key" in params


@pytest.mark.django_db
def test_schema_endpoint_serves(admin_client):
    assert admin_client.get("/api/schema/").status_code == 200


def test_next_item_without_insert_returning_reads_the_row_it_created(world, monkeypatch):
    """SQLite before 3.35 cannot return columns from an INSERT: the claim inserts through the
    ORM and the response reads the row back, with the same answer."""
    monkeypatch.setattr(hot_sql, "_insert_returning_supported", lambda: False)
    campaign, alice = world["campaign"], world["alice"]
    submit_annotation(alice, Item.objects.get(pk=world["a_pk"]), esa_answer(70))
    fresh = world["a"].get(f"/api/campaigns/{campaign.pk}/next-item/").json()
    stored = Annotation.objects.get(item_id=item_id(fresh["item"]["id"]), annotator=alice)
    assert fresh["item"]["id"] not in (world["a_item"], world["b_item"])
    assert (fresh["annotation"], fresh["draft"], fresh["status"]) == (
        stored.pk,
        stored.draft,
        "draft",
    )
    assert Annotation.objects.filter(item_id=item_id(fresh["item"]["id"])).count() == 1


def test_next_item_body_is_what_its_documented_serializer_gives(world):
    """next-item builds its body directly (annotation/api/serializers.py, next_item_body): it
    must stay exactly NextItemSerializer's representation, for text and choice items alike."""
    from annotation.api.serializers import NextItemSerializer
    from tests.annotation.factories import choice_item, enrolled

    choices = create_campaign("Choices", "choice", [choice_item(1), choice_item(2)])
    carol = enrolled(choices, "carol")
    url = "/api/campaigns/{}/next-item/"
    for client, campaign in ((world["a"], world["campaign"]), (login(APIClient(), carol), choices)):
        body = client.get(url.format(campaign.pk)).json()
        annotation = Annotation.objects.get(pk=body["annotation"])
        documented = NextItemSerializer(
            {
                "item": annotation.item,
                "annotation": annotation.pk,
                "draft": annotation.draft,
                "option_order": annotation.option_order,
                "status": annotation.status,
            }
        ).data
        assert body == json.loads(json.dumps(documented))
    assert sorted(body["option_order"]) == [0, 1, 2] and body["item"]["choices"]


def test_a_submissions_body_is_what_its_documented_serializer_gives(world):
    """Submit builds its body directly (submitted_body): exactly
    AnnotatorAnnotationSerializer's representation (the item by reference), for a new
    submission, a replay and a revision."""
    from annotation.api.serializers import AnnotatorAnnotationSerializer

    body = {"item": world["a_item"], "answer": esa_answer(70)}
    for key, answer in (("k-1", esa_answer(70)), ("k-1", esa_answer(70)), ("k-2", esa_answer(40))):
        posted = world["a"].post(
            "/api/annotations/",
            body | {"answer": answer},
            format="json",
            HTTP_IDEMPOTENCY_KEY=key,
        )
        assert posted.status_code in (200, 201)
        stored = Annotation.objects.select_related("annotator").get(pk=posted.json()["id"])
        documented = AnnotatorAnnotationSerializer(stored).data
        assert posted.json() == json.loads(json.dumps(documented))
    assert posted.json()["revision"] == 2 and posted.json()["submitted_at"]
