"""End to end: create a study from the form, three annotators submit through the annotate view,
the results page shows Table 2, the API returns it, QC failures are left out, and the model
evaluation page gains the human reference row."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import resolve

from annotation.agreement import ATTESTED_WINS
from annotation.models import Campaign, Item
from lexical.evaluation.services import start_lexical_evaluation
from lexical.models import SelectionStudy
from lexical.studies.selection_study.selectors import study_results
from tests.annotation.campaign_builders import make_annotator, work
from tests.annotation.factories import enrolled
from tests.lexical.eval_helpers import make_engines
from tests.lexical.studies.selection_study.helpers import make_study, make_study_selection

pytestmark = pytest.mark.django_db


def _annotate_all(client, annotator, campaign, pick) -> int:
    """Take items through /next/ and submit ``pick(item)`` (an option label) with the plain
    form fields, as the page without JavaScript does; returns the number submitted."""
    client.force_login(annotator.user)
    submitted = 0
    while True:
        response = client.get(f"/annotation/campaigns/{campaign.pk}/next/")
        location = response["Location"]
        if "/items/" not in location:
            assert "/finish/" in location
            return submitted
        item = Item.objects.get(pk=resolve(location).kwargs["item_id"])
        page = client.get(location)
        assert page.status_code == 200
        form = {
            "selected": [str(item.choices.index(pick(item)))],
            "confidence": "2",
            "idempotency_key": f"{annotator.pk}-{item.pk}",
        }
        assert client.post(f"{location}submit/", form).status_code == 303
        submitted += 1


def _attested(item: Item) -> str:
    return item.meta.get("attested") or item.expected["selected"][0]


def _other(item: Item) -> str:
    if item.kind == Item.Kind.ATTENTION_CHECK:
        return item.expected["selected"][0]
    return next(c for c in item.choices if c != item.meta["attested"])


def test_full_flow_form_annotate_results_page_and_api(admin_client):
    selection = make_study_selection()
    form = {
        "selection": selection.pk,
        "name": "Farsi lexical selection",
        "overlap": 3,
        "tie_rule": "no_majority",
        "confidence_labels": "No idea\nLikely but uncertain\nCertain",
        "attention_checks": 0,
        "instructions": "",
    }
    created = admin_client.post("/lexical/selection-studies/new/", form)
    assert created.status_code == 302
    study = SelectionStudy.objects.get()
    assert created["Location"] == f"/lexical/selection-studies/{study.pk}/"
    campaign = study.campaign
    Campaign.objects.filter(pk=campaign.pk).update(qc_min_seconds_per_item=0)

    # a and b pick the attested variation except on the "trip" items; c always disagrees.
    def agree_but_trip(item):
        return _other(item) if item.meta["concept"] == "trip" else _attested(item)

    for name, pick in (("a", agree_but_trip), ("b", agree_but_trip), ("c", _other)):
        assert _annotate_all(Client(), enrolled(campaign, name), campaign, pick) == 5

    page = admin_client.get(f"/lexical/selection-studies/{study.pk}/")
    assert page.status_code == 200
    table = page.context["results"].table2
    # Pool: 5 selected + 2 unselected examples; 3 date sentences sufficient, 2 trip ones not.
    assert (table.pool_size, table.items, table.complete) == (7, 5, 5)
    assert (table.sufficient, table.dataset_size, table.sufficient_percent) == (3, 3, 60.0)
    html = page.content.decode()
    assert "60.0" in html and "5 / 5" in html
    assert "<mark>date</mark>" in html
    assert f"/annotation/dashboard/{campaign.pk}/" in html
    released = admin_client.get(f"/lexical/dtails/studies/{campaign.pk}/released.csv")
    assert f"/lexical/dtails/studies/{campaign.pk}/released.csv" in html
    # The downloadable dataset is the 3 sufficient-context sentences, in the released shape.
    lines = released.content.decode().splitlines()
    assert lines[0] == "concept,source language text,target language text,variations,label"
    assert len(lines) == 1 + 3 and all(line.startswith("date,") for line in lines[1:])

    listing = admin_client.get("/lexical/selection-studies/")
    assert listing.status_code == 200 and "Farsi lexical selection" in listing.content.decode()

    api = admin_client.get(f"/api/lexical-selection-studies/{study.pk}/")
    assert api.status_code == 200
    body = api.json()
    assert body["table2"]["sufficient_share"] == 0.6
    assert body["table2"]["dataset_size"] == 3 and body["table2"]["pool_size"] == 7
    assert len(body["results"]) == 5
    first = next(r for r in body["results"] if r["source"].startswith("We ate"))
    assert first["votes"] == {"rotab": 2, "khorma": 1}
    assert first["majority"] == "rotab" and first["sufficient"] is True
    assert first["source_highlight"] == [15, 19]
    assert {c["concept"]: c["sufficient"] for c in body["concepts"]} == {"date": 3, "trip": 0}
    listed = admin_client.get("/api/lexical-selection-studies/").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert rows[0]["table2"]["dataset_size"] == 3


def test_pages_and_api_are_staff_only(annotator_client):
    study = make_study()
    for url in (
        "/lexical/selection-studies/",
        f"/lexical/selection-studies/{study.pk}/",
        "/lexical/selection-studies/new/",
    ):
        assert annotator_client.get(url).status_code == 302
    assert annotator_client.get(f"/api/lexical-selection-studies/{study.pk}/").status_code == 403
    assert Client().get("/api/lexical-selection-studies/").status_code in (401, 403)


def test_a_refused_form_says_why_and_creates_nothing(admin_client):
    selection = make_study_selection()
    make_study(selection, name="Taken")
    form = {
        "selection": selection.pk,
        "name": "Taken",
        "overlap": 3,
        "tie_rule": "no_majority",
        "confidence_labels": "No idea\nCertain",
        "attention_checks": 0,
    }
    response = admin_client.post("/lexical/selection-studies/new/", form)
    assert response.status_code == 400
    assert "already exists" in response.content.decode()
    assert SelectionStudy.objects.count() == 1


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"selection": 999999, "name": "x"},
        {"selection": "abc", "name": "x"},
        {"selection": 1, "name": "x", "tie_rule": "coin"},
        {"selection": 1, "name": "x", "confidence_labels": ["one"]},
        {"selection": 1, "name": "x", "overlap": 10**12},
    ],
)
def test_hostile_api_bodies_are_400_and_write_nothing(admin_client, body):
    selection = make_study_selection()
    if body.get("selection") == 1:
        body = {**body, "selection": selection.pk}
    response = admin_client.post(
        "/api/lexical-selection-studies/", body, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert "errors" in response.json()
    assert SelectionStudy.objects.count() == 0 and Campaign.objects.count() == 0


def test_the_api_creates_a_study(admin_client):
    selection = make_study_selection()
    response = admin_client.post(
        "/api/lexical-selection-studies/",
        {"selection": selection.pk, "name": "Via API", "attention_checks": 2},
        content_type="application/json",
    )
    assert response.status_code == 201
    body = response.json()
    assert body["overlap"] == 3 and body["tie_rule"] == "no_majority"
    assert body["table2"]["items"] == 5 and body["table2"]["complete"] == 0
    assert body["table2"]["sufficient_share"] is None
    assert body["params"]["attention_checks"] == 2


def test_annotators_who_fail_qc_are_left_out_of_the_majority():
    study = make_study(attention_checks=1, tie_rule=ATTESTED_WINS)
    campaign = study.campaign

    def answer(pick):
        return lambda item: {"selected": [item.choices.index(pick(item))], "confidence": 2}

    def wrong_everywhere(item):
        if item.kind == Item.Kind.ATTENTION_CHECK:
            return next(c for c in item.choices if c != item.expected["selected"][0])
        return _other(item)

    work(make_annotator("good"), campaign, answer(_attested))
    work(make_annotator("differs"), campaign, answer(_other))
    work(make_annotator("careless"), campaign, answer(wrong_everywhere))

    results = study_results(study)
    # Without QC each item would be 2-1 for the other variation; with "careless" out it is a
    # 1-1 tie that attested_wins gives to the attested variation.
    assert all(len(o.votes.labels) == 2 for o in results.outcomes)
    assert all(o.tie_broken and o.sufficient for o in results.outcomes)
    assert results.table2.sufficient == 5


def test_the_evaluation_page_shows_the_human_row_over_its_examples(admin_client):
    selection = make_study_selection()
    study = make_study(selection)
    campaign = study.campaign
    make_engines("http://127.0.0.1:9/v1", "oracle")
    evaluation = start_lexical_evaluation(
        {"selection": selection.pk, "entries": ["oracle:none"]}, enqueue=False
    )
    page = admin_client.get(f"/lexical/evaluation/{evaluation.pk}/")
    assert "human (majority" not in page.content.decode()  # nothing complete yet

    def answer(pick):
        return lambda item: {"selected": [item.choices.index(pick(item))], "confidence": 2}

    for name in ("x", "y"):
        work(make_annotator(name), campaign, answer(_attested))
    work(make_annotator("z"), campaign, answer(_other))

    page = admin_client.get(f"/lexical/evaluation/{evaluation.pk}/")
    html = page.content.decode()
    assert "human (majority of 3)" in html
    human = page.context["human"]
    assert (human.accuracy.examples, human.accuracy.correct) == (5, 5)
    assert "100.0%" in html
    api = admin_client.get(f"/api/lexical-evaluations/{evaluation.pk}/results/").json()
    assert api["human"]["accuracy"] == 1.0 and api["human"]["study"] == study.pk
