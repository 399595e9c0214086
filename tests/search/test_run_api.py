"""REST API of search runs: list, retrieve, create, controls, top-k, pulls and exports."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from rest_framework.test import APIClient

from search.models import SearchRun
from search.runs.services import run_in_foreground, start_search_run
from tests.databases import API_THROTTLE_QUERIES
from tests.engines.factories import SyntheticEngineFactory
from tests.search.conftest import (
    make_corpus_tree,
    make_crowd,
    queue_rounds_settle_in_place,
    synthetic_run_config,
)

pytestmark = pytest.mark.django_db

RUNS = "/api/search-runs/"


@pytest.fixture(autouse=True)
def enqueued(monkeypatch) -> mock.Mock:
    return queue_rounds_settle_in_place(monkeypatch)


@pytest.fixture
def api(admin_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


@pytest.fixture
def world(db):
    return SyntheticEngineFactory(name="world", params={"n_topics": 200, "seed": 1})


def config(**overrides) -> dict:
    return synthetic_run_config(**({"name": "API run"} | overrides))


def finished_run() -> SearchRun:
    return run_in_foreground(start_search_run(config(), enqueue=False).pk)


def test_only_staff_may_use_it(client, annotator_user, world):
    run = start_search_run(config(), enqueue=False)
    annotator = APIClient()
    annotator.force_authenticate(annotator_user)
    for path in (RUNS, f"{RUNS}{run.pk}/", f"{RUNS}{run.pk}/top-k/", f"{RUNS}{run.pk}/pulls/"):
        assert annotator.get(path).status_code == 403
        assert client.get(path).status_code == 403
    assert annotator.post(RUNS, config(), format="json").status_code == 403
    assert annotator.post(f"{RUNS}{run.pk}/cancel/").status_code == 403
    assert SearchRun.objects.count() == 1
    run.refresh_from_db()
    assert run.status == "queued"


def test_list_and_retrieve_show_progress_and_links(api, world, django_assert_max_num_queries):
    run = finished_run()
    start_search_run(config(name="second"), enqueue=False)
    with django_assert_max_num_queries(6 + API_THROTTLE_QUERIES):
        listing = api.get(RUNS).json()
    assert listing["count"] == 2
    first = next(row for row in listing["results"] if row["id"] == run.pk)
    assert first["status"] == "finished"
    assert (first["pulls_done"], first["budget_pulls"], first["progress"]) == (300, 300, 1.0)
    assert first["difficulty_engine"] == "world"
    assert "history" not in first  # lists stay light
    assert first["links"]["page"] == f"http://testserver/search/runs/{run.pk}/"
    assert first["links"]["pulls_jsonl"].endswith(f"/search/runs/{run.pk}/export/pulls.jsonl")
    assert first["links"]["top_k"] == f"http://testserver{RUNS}{run.pk}/top-k/"

    detail = api.get(f"{RUNS}{run.pk}/").json()
    assert len(detail["history"]) == run.round_index
    assert detail["result"]["top_k"] == run.result["top_k"]
    assert detail["result"]["oracle_top_k_mean"] is not None
    assert api.get(f"{RUNS}999/").status_code == 404


def test_create_queues_the_first_round(
    api, admin_user, world, enqueued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = api.post(RUNS, config(params={"explore": 0.4}), format="json")
    assert response.status_code == 201
    run = SearchRun.objects.get()
    assert response.json()["id"] == run.pk
    assert response.json()["status"] == "queued"
    assert len(callbacks) == 1
    enqueued.assert_called_once_with(run.pk, 0)
    assert run.created_by == admin_user
    assert run.params == {"explore": 0.4}


def test_a_refused_config_is_a_400_listing_every_problem(api, world, enqueued):
    response = api.post(RUNS, config(name="", k=900, algorithm="nope", surprise=1), format="json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert set(errors) == {"config", "name", "k", "algorithm"}
    assert errors["config"] == "unknown key(s): surprise"
    assert errors["k"] == "must be at most the number of topics (200)"
    assert SearchRun.objects.count() == 0
    enqueued.assert_not_called()


def test_create_takes_json_only(api, world):
    response = api.post(RUNS, {"name": "form"}, format="multipart")
    assert response.status_code == 415
    assert SearchRun.objects.count() == 0


def test_pause_resume_cancel(api, world, enqueued, django_capture_on_commit_callbacks):
    run = start_search_run(config(), enqueue=False)
    paused = api.post(f"{RUNS}{run.pk}/pause/")
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    with django_capture_on_commit_callbacks(execute=True):
        resumed = api.post(f"{RUNS}{run.pk}/resume/")
    assert resumed.json()["status"] == "running"
    enqueued.assert_called_once_with(run.pk, 0)
    assert api.post(f"{RUNS}{run.pk}/cancel/").json()["status"] == "cancelled"

    refused = api.post(f"{RUNS}{run.pk}/resume/")
    assert refused.status_code == 409
    assert refused.json() == {"detail": "a cancelled run cannot be resumed"}
    run.refresh_from_db()
    assert run.status == "cancelled"


def test_top_k_lists_the_recommendation(api, world):
    run = finished_run()
    rows = api.get(f"{RUNS}{run.pk}/top-k/").json()
    assert [row["arm"] for row in rows] == run.result["top_k"]
    assert [row["rank"] for row in rows] == [1, 2, 3, 4, 5]
    assert all(row["true_mean"] is not None and row["count"] > 0 for row in rows)
    assert all(row["lower"] <= row["posterior_mean"] <= row["upper"] for row in rows)
    assert rows[0]["name"] == f"Synthetic topic #{rows[0]['arm']}"
    assert rows[0]["topic_id"] is None


def test_pulls_are_paginated_and_filter_by_arm(api, world):
    run = finished_run()
    page = api.get(f"{RUNS}{run.pk}/pulls/").json()
    assert page["count"] == 300
    assert len(page["results"]) == 100
    assert page["next"].endswith(f"{RUNS}{run.pk}/pulls/?page=2")
    assert [(p["round"], p["slot"]) for p in page["results"][:2]] == [(0, 0), (0, 1)]
    arm = run.result["top_k"][0]
    of_arm = api.get(f"{RUNS}{run.pk}/pulls/", {"arm": arm}).json()
    assert of_arm["count"] == run.pulls.filter(arm=arm).count()
    assert {p["arm"] for p in of_arm["results"]} == {arm}


def test_exports_through_the_api(api, world):
    run = finished_run()
    response = api.get(f"{RUNS}{run.pk}/export/pulls/")
    assert response["Content-Type"] == "application/x-ndjson; charset=utf-8"
    lines = b"".join(response.streaming_content).splitlines()
    assert len(lines) == run.pulls_done
    document = api.get(f"{RUNS}{run.pk}/export/top-k/")
    assert json.loads(document.content)["summary"]["pulls"] == 300


def test_a_crowd_run_through_the_api(api, fake_openai):
    make_crowd(fake_openai.base_url)
    tree = make_corpus_tree()
    body = config(
        name="crowd",
        sampler="corpus",
        tree=tree.name,
        difficulty_engine="crowd",
        tgt_lang="cs",
        budget_pulls=8,
        k=2,
        batch_size=4,
    )
    created = api.post(RUNS, body, format="json").json()
    run_in_foreground(created["id"])
    pulls = api.get(f"{RUNS}{created['id']}/pulls/").json()["results"]
    assert len(pulls) == 8
    assert pulls[0]["translations"]["mt-a"].startswith("[xx] ")
    assert pulls[0]["scores"][0]["quality_estimator"] == "qe"
    assert api.get(f"{RUNS}{created['id']}/").json()["cost"] > 0


def test_schema_documents_the_run_endpoints(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()
    for path in ("", "{id}/", "{id}/pause/", "{id}/top-k/", "{id}/pulls/", "{id}/export/pulls/"):
        assert f"{RUNS}{path}" in schema["paths"], path
