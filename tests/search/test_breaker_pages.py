"""Breaker pages (staff only): list, new run / compare methods, live run page, chain viewer,
comparison, charts, controls and exports; the REST API on the same runs."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from search.breaker.services import run_in_foreground, start_breaker_comparison, start_breaker_run
from search.models import BreakerRun, TextSample
from tests.search.breaker_helpers import SEED_TEXTS, jsonl_seeds, offline_config

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished_run(db):
    return run_in_foreground(start_breaker_run(offline_config(n_steps=3), enqueue=False).pk)


def test_outsiders_get_404_and_nothing_leaks(client, outsider_user, finished_run):
    client.force_login(outsider_user)
    for name in ("search:breaker_detail", "search:breaker_chart"):
        assert client.get(reverse(name, args=[finished_run.pk])).status_code in (302, 404)
    api = client.get(f"/api/breaker-runs/{finished_run.pk}/")
    assert api.status_code == 403


def test_list_detail_chain_and_chart_pages(admin_client, finished_run):
    page = admin_client.get(reverse("search:breaker_list"))
    assert page.status_code == 200 and finished_run.name in page.content.decode()
    detail = admin_client.get(reverse("search:breaker_detail", args=[finished_run.pk]))
    html = detail.content.decode()
    assert "Quality per step" in html and "Cost per engine" in html and "sim-editor" in html
    chart = admin_client.get(reverse("search:breaker_chart", args=[finished_run.pk]))
    assert chart["Content-Type"] == "image/svg+xml" and b"<svg" in chart.content
    chain = admin_client.get(reverse("search:breaker_chain", args=[finished_run.pk, 0]))
    html = chain.content.decode()
    assert "Step 0" in html and "Step 3" in html and "selected: lowest QE" in html
    assert '<ins class="diff-added">' in html and SEED_TEXTS[0] in html


def test_the_status_poll_stops_once_the_run_is_over(admin_client, finished_run):
    poll = admin_client.get(
        reverse("search:breaker_detail", args=[finished_run.pk]), headers={"HX-Request": "true"}
    )
    assert poll.status_code == 286 and poll["HX-Trigger"] == "run-changed"


def test_compare_methods_from_the_form_starts_one_run_per_method(
    admin_client, sent_tasks, django_capture_on_commit_callbacks
):
    offline_config()
    upload = "\n".join(json.dumps({"text": t}) for t in SEED_TEXTS).encode()
    from django.core.files.uploadedfile import SimpleUploadedFile

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
        reverse("search:breaker_create"),
        {
            "name": "Form comparison", "methods": ["seeds", "breaker_seeded", "zeroshot"],
            "llm": "sim-editor", "targets": ["sim-fragile-mt"], "qe": ["sim-qe"],
            "src_lang": "en", "tgt_lang": "cs", "seed_source": "jsonl",
            "jsonl": SimpleUploadedFile("seeds.jsonl", upload), "n": 4, "sample_seed": 1,
            "n_steps": 3, "k_generations": 3, "max_edit_share": 60, "seed": 0,
        },
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    runs = BreakerRun.objects.filter(comparison="Form comparison")
    assert sorted(runs.values_list("method", flat=True)) == ["breaker_seeded", "seeds", "zeroshot"]
    assert {r.chains.count() for r in runs} == {4} and {r.max_edit_share for r in runs} == {0.6}
    assert len(sent_tasks) == 3
    for run in runs:
        run_in_foreground(run.pk)
    page = admin_client.get(response["Location"])
    assert page.status_code == 200 and "MT-breaker (seeded)" in page.content.decode()
    chart = admin_client.get(reverse("search:breaker_comparison_chart") + "?name=Form+comparison")
    assert b"<svg" in chart.content


def test_a_refused_form_says_why_and_creates_nothing(admin_client):
    offline_config()
    response = admin_client.post(
        reverse("search:breaker_create"),
        {"name": "x", "methods": ["breaker_seeded"], "llm": "sim-editor",
         "targets": ["sim-fragile-mt"], "qe": ["sim-qe"], "src_lang": "en", "tgt_lang": "cs",
         "seed_source": "none", "sample_seed": 0, "n_steps": 3, "k_generations": 3,
         "max_edit_share": 75, "seed": 0},
    )  # fmt: skip
    assert response.status_code == 400 and BreakerRun.objects.count() == 0


def test_export_jsonl_and_text_samples(admin_client, finished_run):
    response = admin_client.get(reverse("search:breaker_export", args=[finished_run.pk]))
    records = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    assert len(records) == len(SEED_TEXTS)
    first = records[0]
    assert first["method"] == "breaker_seeded" and first["engines"]["targets"] == ["sim-fragile-mt"]
    assert first["provenance"]["doc_id"] == "d0" and len(first["steps"]) == 4
    assert first["text"] == first["steps"][first["selected_step"]]["source"]
    assert first["settings"]["prompt_version"] == "breaker-v1"
    admin_client.post(reverse("search:breaker_samples", args=[finished_run.pk]))
    admin_client.post(reverse("search:breaker_samples", args=[finished_run.pk]))  # idempotent
    samples = TextSample.objects.filter(origin="breaker")
    assert samples.count() == len({r["text"] for r in records})
    assert samples.first().origin_detail["run"] == finished_run.pk


def test_the_api_creates_lists_controls_and_exports(admin_client, sent_tasks):
    config = offline_config("breaker_seedless", n_steps=2, n_items=2)
    del config["seeds"]
    created = admin_client.post("/api/breaker-runs/", config, content_type="application/json")
    assert created.status_code == 201, created.content
    (run,) = created.json()
    assert run["method"] == "breaker_seedless" and run["steps_total"] == 6
    bad = admin_client.post("/api/breaker-runs/", {"name": "x"}, content_type="application/json")
    assert bad.status_code == 400 and "tgt_lang" in bad.json()["errors"]
    assert admin_client.post(f"/api/breaker-runs/{run['id']}/pause/").json()["status"] == "paused"
    assert admin_client.post(f"/api/breaker-runs/{run['id']}/pause/").status_code == 409
    admin_client.post(f"/api/breaker-runs/{run['id']}/resume/")
    run_in_foreground(run["id"])
    chains = admin_client.get(f"/api/breaker-runs/{run['id']}/chains/").json()
    assert chains["count"] == 2 and len(chains["results"][0]["steps"]) == 3
    listed = admin_client.get("/api/breaker-runs/").json()
    assert listed["results"][0]["status"] == "finished"
    export = admin_client.get(f"/api/breaker-runs/{run['id']}/export/")
    assert len(b"".join(export.streaming_content).splitlines()) == 2
    compared = admin_client.post(
        "/api/breaker-runs/",
        {**offline_config(), "methods": ["seeds", "zeroshot"], "seeds": jsonl_seeds(n=2)},
        content_type="application/json",
    )
    assert [r["method"] for r in compared.json()] == ["seeds", "zeroshot"]
    assert admin_client.post(f"/api/breaker-runs/{run['id']}/export-samples/").json() == {
        "samples": 2
    }


def test_the_nav_lists_mt_breaker(admin_client):
    assert reverse("search:breaker_list") in admin_client.get("/dashboard/").content.decode()


def test_comparisons_are_created_with_the_same_seeds():
    runs = start_breaker_comparison({**offline_config(), "methods": ["seeds", "breaker_seeded"],
                              "seeds": jsonl_seeds(n=3, sample_seed=9)}, enqueue=False)  # fmt: skip
    texts = [list(r.chains.order_by("index").values_list("seed_text", flat=True)) for r in runs]
    assert texts[0] == texts[1] and len(texts[0]) == 3
