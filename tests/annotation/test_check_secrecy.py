"""Annotators cannot tell an attention check from an item: not by its ids, its address, its
number or its document context, on the pages or in the API; staff still see what is what."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.urls import resolve
from rest_framework.test import APIClient

from annotation.item_refs import item_ref
from annotation.models import Item
from annotation.services.campaigns import generate_attention_checks, import_campaign
from core.opaque_ids import OPAQUE_MIN
from tests.annotation.factories import enrolled, esa_answer

pytestmark = pytest.mark.django_db


def _appraise_item(n: int, item_type: str = "TGT", target: str = "") -> dict:
    return {
        "itemType": item_type,
        "documentID": "news-1#bad" if item_type == "BAD" else "news-1",
        "itemID": n,
        "targetID": "System-B",
        "sourceText": f"The council met on day {n} to discuss the plan.",
        "targetText": target or f"Der Rat traf sich am Tag {n}, um den Plan zu besprechen.",
        "mqm": [],
    }


@pytest.fixture
def campaign():
    """Appraise's shape: a BAD copy of segment 2 (documentID ``news-1#bad``), then a generated
    check, created after every item (so with the highest id)."""
    items = [_appraise_item(n) for n in (1, 2, 3, 4)]
    items.insert(2, _appraise_item(2, "BAD", "Der Rat Banane Tag 2, um den Plan zu besprechen."))
    data = json.dumps(
        [{"task": {"sourceLanguage": "eng", "targetLanguage": "deu"}, "items": items}]
    )
    campaign = import_campaign(data, name="Checks", protocol="esa", file_format="appraise")
    assert len(generate_attention_checks(campaign, 1, np.random.default_rng(3))) == 1
    return campaign


def _walk(client, campaign) -> list[tuple[str, Item, str]]:
    """Every item through the pages: (address, item, its page)."""
    seen = []
    while True:
        location = client.get(f"/annotation/campaigns/{campaign.pk}/next/")["Location"]
        if "/items/" not in location:
            return seen
        item = Item.objects.get(pk=resolve(location).kwargs["item_id"])
        page = client.get(location).content.decode()
        seen.append((location, item, page))
        client.post(f"{location}submit/", {"answer": json.dumps(esa_answer(60))})


def test_the_pages_show_a_check_as_they_show_an_item(client, campaign):
    annotator = enrolled(campaign, "ann")
    client.force_login(annotator.user)

    seen = _walk(client, campaign)

    kinds = [item.kind for _, item, _ in seen]
    assert kinds.count("attention_check") == 2 and kinds.count("regular") == 4
    for number, (location, item, page) in enumerate(seen, start=1):
        # Addressed by reference: never by id, and the id alone no longer opens it.
        assert location == f"/annotation/items/{item_ref(item.pk)}/"
        assert client.get(f"/annotation/items/{item.pk}/").status_code == 404
        assert f"item {number} of 6" in page
        assert "#bad" not in page and "System-B" not in page
        # A check's context never shows the segment it copies (its own text, uncorrupted).
        assert page.count(item.source) == 1
    # The Appraise check has the context its twin (segment 2) has: segment 1, then 3 and 4.
    bad = next(page for _, item, page in seen if item.meta.get("appraise_item_type") == "BAD")
    twin = next(page for _, item, page in seen if item.kind == "regular" and item.seg_id == "2")
    for page in (bad, twin):
        assert all(f"day {n} to" in page for n in (1, 3, 4))
    mine = client.get(f"/annotation/campaigns/{campaign.pk}/mine/").content.decode()
    assert "#bad" not in mine and "news-1" not in mine
    assert all(f"<td>{n}</td>" in mine for n in range(1, 7))


def test_the_api_gives_annotators_references_and_no_check_giveaways(campaign):
    annotator = enrolled(campaign, "ann")
    api = APIClient()
    api.force_authenticate(annotator.user)
    served = []

    while (response := api.get(f"/api/campaigns/{campaign.pk}/next-item/")).status_code == 200:
        item = response.json()["item"]
        served.append(item)
        posted = api.post(
            "/api/annotations/", {"item": item["id"], "answer": esa_answer(60)}, format="json"
        )
        assert posted.status_code == 201 and posted.json()["item"] == item["id"]

    assert len(served) == 6
    assert {frozenset(item) for item in served} == {
        frozenset({"id", "campaign", "src_lang", "tgt_lang", "source", "target", "question",
                   "choices", "questions", "prefill_spans"})
    }  # fmt: skip
    ids = set(campaign.items.exclude(kind="tutorial").values_list("pk", flat=True))
    assert {item["id"] for item in served} == {item_ref(pk) for pk in ids}
    assert all(item["id"] >= OPAQUE_MIN for item in served)
    listed = api.get("/api/items/").json()["results"]
    assert {item["id"] for item in listed} == {item_ref(pk) for pk in ids}
    one = served[0]["id"]
    assert api.get(f"/api/items/{one}/").json()["id"] == one
    own_id = resolve(f"/annotation/items/{one}/").kwargs["item_id"]
    assert api.get(f"/api/items/{own_id}/").status_code == 404
    mine = api.get("/api/annotations/").json()["results"]
    assert {a["item"] for a in mine} == {item_ref(pk) for pk in ids}


def test_staff_still_see_ids_and_kinds(admin_client, campaign):
    items = admin_client.get(f"/api/items/?campaign={campaign.pk}").json()["results"]

    assert sorted(item["id"] for item in items) == sorted(
        campaign.items.values_list("pk", flat=True)
    )
    bad = next(item for item in items if item["meta"].get("appraise_item_type") == "BAD")
    assert (bad["kind"], bad["doc_id"], bad["meta"]["appraise_document_id"]) == (
        "attention_check",
        "news-1",
        "news-1#bad",
    )
