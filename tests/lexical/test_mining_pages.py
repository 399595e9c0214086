"""Mining pages: the form, the job page with its htmx status, the list; staff only."""

from __future__ import annotations

import pytest
from django.urls import reverse

from lexical.mining.services import run_in_foreground, start_mining
from lexical.models import MiningJob
from tests.lexical.mining_support import synthetic_corpus, tiny_corpus

pytestmark = pytest.mark.django_db


def test_the_form_preselects_the_corpus_and_shows_the_papers_defaults(admin_client):
    corpus = tiny_corpus()
    response = admin_client.get(f"/lexical/mining/new?corpus={corpus.pk}")
    assert response.status_code == 200
    html = response.content.decode()
    assert f'<option value="{corpus.pk}" selected>' in html
    assert 'name="min_variation_count" value="50"' in html
    assert 'name="min_entropy" value="0.69"' in html
    assert "Polysemy filter: off" in html


def test_posting_the_form_starts_a_job(
    admin_client, sent_tasks, django_capture_on_commit_callbacks
):
    corpus = tiny_corpus()
    data = {
        "corpus": corpus.pk, "min_variation_count": 3, "min_variations": 2, "min_entropy": 0.5,
        "max_examples": 10, "example_token_limit": 50, "stopword_top_n": 50,
        "chunk_size": 1000, "pos_pipeline": "",
    }  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse("lexical:mining_new"), data)
    job = MiningJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/lexical/mining/{job.pk}/"
    assert job.params["min_variation_count"] == 3 and job.params["chunk_size"] == 1000
    assert len(sent_tasks) == 1


def test_a_refused_form_names_the_field_and_starts_nothing(admin_client, sent_tasks):
    corpus = tiny_corpus()
    data = {
        "corpus": corpus.pk, "min_variation_count": 3, "min_variations": 1, "min_entropy": 0.5,
        "max_examples": 10, "example_token_limit": 50, "stopword_top_n": 50,
        "chunk_size": 1000, "pos_pipeline": "xx_missing_pipeline",
    }  # fmt: skip
    response = admin_client.post(reverse("lexical:mining_new"), data)
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was started" in html and "between 2 and 1000" in html
    assert not MiningJob.objects.exists() and sent_tasks == []


def test_a_running_job_polls_and_a_finished_one_stops_polling(admin_client):
    job = start_mining(tiny_corpus(), enqueue=False)
    url = reverse("lexical:mining_job", args=[job.pk])
    page = admin_client.get(url).content.decode()
    assert 'hx-trigger="every 2s"' in page
    assert "POS is not used: no spaCy pipeline installed" in page
    assert "Polysemy filter: off" in page
    partial = admin_client.get(url, HTTP_HX_REQUEST="true")
    assert partial.status_code == 200 and "0 / 6" in partial.content.decode()
    MiningJob.objects.filter(pk=job.pk).update(status=MiningJob.Status.CANCELLED)
    stopped = admin_client.get(url + "?seen=0", HTTP_HX_REQUEST="true")
    assert stopped.status_code == 286 and stopped["HX-Refresh"] == "true"


def test_a_finished_job_shows_the_filters_and_links_its_concepts(admin_client):
    job = run_in_foreground(start_mining(synthetic_corpus(), {"max_examples": 3}, enqueue=False).pk)
    html = admin_client.get(reverse("lexical:mining_job", args=[job.pk])).content.decode()
    assert "What each filter kept" in html and "Concepts (4)" in html
    trip = job.concepts.get(lemma="trip")
    assert f'href="/lexical/concepts/{trip.pk}/"' in html
    assert "viaje/viajes" in html and "hx-trigger" not in html
    listing = admin_client.get(reverse("lexical:mining_list")).content.decode()
    assert f'href="/lexical/mining/{job.pk}/"' in listing


def test_pages_are_staff_only(client, annotator_client):
    job = start_mining(tiny_corpus(), enqueue=False)
    for c in (client, annotator_client):
        for url in ("/lexical/mining/", "/lexical/mining/new", f"/lexical/mining/{job.pk}/"):
            assert c.get(url).status_code == 302  # to the login page
        assert c.post(f"/lexical/mining/{job.pk}/cancel/").status_code == 302
    job.refresh_from_db()
    assert job.status == MiningJob.Status.QUEUED


def test_cancel_from_the_page(admin_client):
    job = start_mining(tiny_corpus(), enqueue=False)
    response = admin_client.post(reverse("lexical:mining_cancel", args=[job.pk]))
    assert response.status_code == 302
    job.refresh_from_db()
    assert job.status == MiningJob.Status.CANCELLED
    assert admin_client.get("/lexical/mining/999999/").status_code == 404
