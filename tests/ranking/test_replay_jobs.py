"""Replay runs (ranking.replays): the job's rounds and result, its page and its API."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from ranking.replays import services
from tests.ranking.support import tiered_dataset

pytestmark = pytest.mark.django_db

# Small enough for a test: 6 systems × 60 segments, a handful of checkpoints.
FAST = {"n_seeds": 3, "n_checkpoints": 4, "n_resamples": 20, "batch_size": 30}
REPLAYS = "/api/replays/"


def _start(dataset=None, **settings):
    return services.start_replay(
        dataset=dataset or tiered_dataset(), enqueue=False,
        **(FAST | {"policies": ["uniform", "settle"]} | settings),
    )  # fmt: skip


def test_rounds_replay_chunks_of_seeds_and_the_result_has_curves_and_ratios(monkeypatch):
    monkeypatch.setattr(services, "RUNS_PER_ROUND", 4)  # two seeds of two policies a round
    run = _start()
    assert (run.status, run.items_total, run.state["seeds_per_round"]) == ("queued", 6, 2)

    worker = "test-worker"
    assert services.advance_replay(run.pk, 0, worker=worker).status == services.Status.MORE
    run.refresh_from_db()
    assert (run.round_index, run.items_done, run.result) == (1, 4, {})
    assert sorted({(t["policy"], t["seed"]) for t in run.state["traces"]}) == [
        ("settle", 0), ("settle", 1), ("uniform", 0), ("uniform", 1)
    ]  # fmt: skip
    # A redelivered round 0 finds the row moved on and writes nothing twice.
    assert services.advance_replay(run.pk, 0, worker=worker).status != services.Status.MORE

    run = services.run_in_foreground(run.pk)
    assert (run.status, run.items_done, run.round_index) == ("finished", 6, 2)
    result = json.loads(json.dumps(run.result, allow_nan=False))
    assert result["reference"]["top_cluster"] == ["alpha", "beta"]
    assert 0.0 <= result["reference"]["top_cluster_stability"] <= 1.0
    curve = result["curves"]["settle"]
    assert curve["budgets"][-1] == 360 and set(curve) == {"budgets", "tau", "top", "clusters"}
    # With every score revealed each seed sees the full data: the band closes on it.
    assert curve["top"]["mean"][-1] == curve["top"]["low"][-1] == 1.0
    uniform = next(row for row in result["summary"] if row["policy"] == "uniform")
    assert uniform["top_vs_uniform"] == 1.0 and uniform["seeds"] == 3


def test_refusals_name_the_field():
    dataset = tiered_dataset()
    with pytest.raises(services.JobConfigError) as refused:
        _start(dataset, policies=["uniform", "greedy"], n_seeds=0)
    assert set(refused.value.errors) == {"policies", "n_seeds"}
    assert "unknown policy 'greedy'" in refused.value.errors["policies"]
    with pytest.raises(services.JobConfigError, match="score"):
        _start(dataset, score="bleu")


def test_the_pages_show_the_form_the_status_and_the_curves(admin_client):
    run = services.run_in_foreground(_start().pk)
    listing = admin_client.get("/ranking/replays/")
    assert listing.status_code == 200 and run.name in listing.content.decode()
    assert b'name="policies"' in admin_client.get("/ranking/replays/new/").content
    page = admin_client.get(f"/ranking/replays/{run.pk}/").content.decode()
    assert "Full-data top cluster: <strong>alpha, beta</strong>" in page
    assert "% of bootstrap resamples" in page
    assert f"/ranking/replays/{run.pk}/curves.svg" in page and "× Pearmut" in page
    chart = admin_client.get(f"/ranking/replays/{run.pk}/curves.svg")
    assert chart["Content-Type"] == "image/svg+xml" and b"settle" in chart.content
    assert b"/ranking/replays/" in admin_client.get("/ranking/").content


def test_the_api_creates_refuses_by_field_and_answers_the_curves(
    admin_user, django_capture_on_commit_callbacks, sent_tasks
):
    api = APIClient()
    api.force_authenticate(admin_user)
    dataset = tiered_dataset()
    bad = api.post(REPLAYS, {"dataset": dataset.pk, "policies": ["greedy"]}, format="json")
    assert bad.status_code == 400 and "policies" in bad.json()
    missing = api.post(REPLAYS, {"dataset": dataset.pk + 99}, format="json")
    assert missing.status_code == 400 and "dataset" in missing.json()

    body = {"dataset": dataset.pk, "policies": ["uniform", "pearmut"], **FAST}
    with django_capture_on_commit_callbacks(execute=True):
        created = api.post(REPLAYS, body, format="json")
    assert created.status_code == 201, created.json()
    pk = created.json()["id"]
    assert sent_tasks == [
        ("ranking.advance_replay", (pk, 0), {"queue": "default", "countdown": None})
    ]
    services.run_in_foreground(pk)
    detail = api.get(f"{REPLAYS}{pk}/").json()
    assert detail["status"] == "finished" and set(detail["result"]["curves"]) == {
        "uniform",
        "pearmut",
    }
    assert [row["id"] for row in api.get(REPLAYS).json()["results"]] == [pk]
