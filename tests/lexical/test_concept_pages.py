"""Concept pages and API: browse with filters, a concept with highlighted examples, edits
through forms (with and without htmx) and the API."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from lexical.models import Concept, Variation
from tests.lexical.factories import (
    ConceptExampleFactory,
    ConceptFactory,
    MiningJobFactory,
    ParallelCorpusFactory,
    VariationFactory,
    concept_with_variations,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def trip():
    concept = concept_with_variations({"viaje": 70, "recorrido": 30}, lemma="trip")
    return concept


def test_list_filters_by_language_job_status_pos_and_lemma(admin_client, trip):
    job = MiningJobFactory(corpus=ParallelCorpusFactory(tgt_lang="af"))
    reis = concept_with_variations(
        {"reis": 5, "tog": 5}, lemma="journey", mining_job=job, pos="VERB"
    )
    rejected = ConceptFactory(lemma="trap", status="rejected")
    url = reverse("lexical:concept_list")

    def listed(query: str) -> list[str]:
        page = admin_client.get(url + query).content.decode()
        return re.findall(r'<a href="/lexical/concepts/\d+/">([^<]+)</a>', page)

    assert listed("") == ["journey", "trap", "trip"]
    assert "viaje" in admin_client.get(url).content.decode()
    assert listed("?tgt_lang=af") == ["journey"]
    assert (
        listed(f"?mining_job={job.pk}")
        == ["journey"]
        == listed(f"?mining_job={reis.mining_job_id}")
    )
    assert listed("?status=rejected") == [rejected.lemma]
    assert listed("?pos=VERB") == ["journey"]
    assert listed("?q=recorr") == ["trip"] == listed("?q=TRI")
    # A bad filter value is ignored rather than an error.
    assert admin_client.get(url + "?mining_job=abc").status_code == 200


def test_list_is_paginated_and_htmx_gets_the_partial(admin_client, django_assert_max_num_queries):
    for _ in range(55):
        concept_with_variations({"a": 1, "b": 1}, examples=0)
    url = reverse("lexical:concept_list")
    with django_assert_max_num_queries(12):
        first = admin_client.get(url).content.decode()
    assert "page 1 of 2 (55 concepts)" in first
    partial = admin_client.get(url + "?page=2", headers={"HX-Request": "true"}).content.decode()
    assert "page 2 of 2" in partial and "<form" not in partial


def test_concept_page_highlights_and_escapes(admin_client):
    concept = ConceptFactory(lemma="<b>trip</b>")
    variation = VariationFactory(concept=concept, lemma="viaje", surface_forms=["<i>viaje</i>"])
    ConceptExampleFactory(variation=variation)
    page = admin_client.get(reverse("lexical:concept_detail", args=[concept.pk])).content.decode()
    assert "We talked about the <mark>&lt;b&gt;trip&lt;/b&gt;</mark> yesterday." in page
    assert "Hablamos del <mark>&lt;i&gt;viaje&lt;/i&gt;</mark> ayer." in page
    assert "<b>trip</b>" not in page


def test_stale_offsets_show_the_text_unmarked(admin_client, trip):
    example = trip.examples.first()
    example.tgt_end = 10_000
    example.save()
    page = admin_client.get(reverse("lexical:concept_detail", args=[trip.pk])).content.decode()
    assert "Hablamos del viaje ayer." in page


def test_merge_without_js_redirects_with_a_message(admin_client, trip):
    keep, absorb = trip.variations.get(lemma="viaje"), trip.variations.get(lemma="recorrido")
    response = admin_client.post(
        reverse("lexical:concept_merge", args=[trip.pk]), {"keep": keep.pk, "absorb": absorb.pk}
    )
    assert response.status_code == 302
    keep.refresh_from_db()
    assert keep.count == 100 and trip.variations.count() == 1
    page = admin_client.get(response["Location"]).content.decode()
    assert "Merged into viaje/recorrido (count 100)." in page


def test_htmx_edit_answers_the_editor_partial(admin_client, trip):
    variation = trip.variations.get(lemma="recorrido")
    response = admin_client.post(
        reverse("lexical:variation_drop", args=[trip.pk, variation.pk]),
        headers={"HX-Request": "true"},
    )
    body = response.content.decode()
    assert response.status_code == 200 and body.lstrip().startswith('<div id="editor">')
    assert "Dropped recorrido." in body and "Restore</button>" in body
    variation.refresh_from_db()
    assert variation.dropped


def test_refused_edit_changes_nothing_and_says_why(admin_client, trip):
    variation = trip.variations.get(lemma="viaje")
    response = admin_client.post(
        reverse("lexical:concept_split", args=[trip.pk]),
        {"variation": variation.pk, "surface_forms": "nope"},
        headers={"HX-Request": "true"},
    )
    assert "Nothing changed: &#x27;nope&#x27; are not surface forms" in response.content.decode()
    assert trip.variations.count() == 2
    response = admin_client.post(
        reverse("lexical:concept_merge", args=[trip.pk]), {"keep": "x", "absorb": variation.pk}
    )
    assert response.status_code == 302 and trip.variations.count() == 2


def test_reject_and_restore_pages(admin_client, trip):
    admin_client.post(reverse("lexical:concept_reject", args=[trip.pk]), {"note": "senses"})
    trip.refresh_from_db()
    assert (trip.status, trip.note) == ("rejected", "senses")
    admin_client.post(reverse("lexical:concept_restore", args=[trip.pk]))
    trip.refresh_from_db()
    assert trip.status == "active"


def test_pages_and_edits_are_staff_only(annotator_client, trip):
    detail = reverse("lexical:concept_detail", args=[trip.pk])
    assert annotator_client.get(detail).status_code == 302
    annotator_client.post(reverse("lexical:concept_reject", args=[trip.pk]))
    trip.refresh_from_db()
    assert trip.status == "active"


def test_unknown_concept_is_404(admin_client):
    assert admin_client.get(reverse("lexical:concept_detail", args=[999])).status_code == 404


# --- API ----------------------------------------------------------------------------------


def test_api_list_filter_and_detail(admin_client, trip):
    ConceptFactory(lemma="other", status="rejected")
    listed = admin_client.get(reverse("lexical-concept-list") + "?status=active").json()
    assert [c["lemma"] for c in listed["results"]] == ["trip"]
    labels = [v["label"] for v in listed["results"][0]["variations"]]
    assert labels == ["viaje", "recorrido"]
    detail = admin_client.get(reverse("lexical-concept-detail", args=[trip.pk])).json()
    assert len(detail["examples"]) == 4
    example = detail["examples"][0]
    assert example["target_text"][example["tgt_start"] : example["tgt_end"]] in {
        "viaje",
        "recorrido",
    }
    bad = admin_client.get(reverse("lexical-concept-list") + "?status=nope")
    assert bad.status_code == 400 and "status" in bad.json()


def test_api_edits(admin_client, trip):
    keep, absorb = trip.variations.get(lemma="viaje"), trip.variations.get(lemma="recorrido")
    url = lambda name: reverse(f"lexical-concept-{name}", args=[trip.pk])  # noqa: E731
    dropped = admin_client.post(
        url("drop-variation"), {"variation": absorb.pk}, content_type="application/json"
    )
    assert dropped.status_code == 200
    assert [v["dropped"] for v in dropped.json()["variations"]] == [False, True]
    admin_client.post(
        url("restore-variation"), {"variation": absorb.pk}, content_type="application/json"
    )
    split = admin_client.post(
        url("split"),
        {"variation": keep.pk, "surface_forms": ["viaje"]},
        content_type="application/json",
    )
    assert split.status_code == 400
    assert "leave at least one" in split.json()["errors"]["surface_forms"][0]
    merged = admin_client.post(
        url("merge"), {"keep": keep.pk, "absorb": absorb.pk}, content_type="application/json"
    ).json()
    assert [(v["label"], v["count"]) for v in merged["variations"]] == [("viaje/recorrido", 100)]
    rejected = admin_client.post(url("reject"), {"note": "x"}, content_type="application/json")
    assert rejected.json()["status"] == "rejected"
    assert admin_client.post(url("restore")).json()["status"] == "active"
    dup = admin_client.post(
        url("merge"), '{"keep": 1, "keep": 2, "absorb": 3}', content_type="application/json"
    )
    assert dup.status_code == 400 and "duplicate key" in dup.json()["detail"]
    assert Variation.objects.filter(concept=trip).count() == 1


def test_api_is_staff_only(annotator_client, trip):
    assert annotator_client.get(reverse("lexical-concept-list")).status_code == 403
    response = annotator_client.post(reverse("lexical-concept-reject", args=[trip.pk]))
    assert response.status_code == 403
    assert Concept.objects.get(pk=trip.pk).status == "active"


def test_home_counts_concepts_per_language_pair(admin_client, trip):
    ConceptFactory(lemma="gone", status="rejected")
    page = admin_client.get(reverse("lexical:home")).content.decode()
    row = re.search(r"en→es</a></td><td class=\"num\">(\d+)</td><td class=\"num\">(\d+)</td>", page)
    assert row is not None and row.groups() == ("1", "2")
