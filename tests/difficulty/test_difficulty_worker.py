"""DEC evaluations through a real Celery worker process on Redis (both databases)."""

from __future__ import annotations

import json

import pytest

from difficulty import services
from difficulty.models import DifficultyDataset, DifficultyEvaluation

pytestmark = pytest.mark.celery_worker


def _finished(pk: int) -> bool:
    return DifficultyEvaluation.objects.filter(
        pk=pk, status__in=["done", "failed", "cancelled"]
    ).exists()


def test_an_evaluation_started_in_the_ui_runs_on_the_worker(
    celery_worker, admin_client, shared_data
):
    with (shared_data / "wmt24_esa_en-cs.jsonl").open("rb") as lines:
        dataset = services.import_difficulty_dataset(lines, name="wmt24")

    response = admin_client.post(
        f"/difficulty/{dataset.pk}/evaluate/",
        {
            "estimators": ["length", "random", "oracle-src"],
            "subset_fraction": "0.25",
            "seed": "3",
            "n_bootstrap": "40",
        },
    )
    evaluation = DifficultyEvaluation.objects.get()
    assert response["Location"] == f"/difficulty/evaluations/{evaluation.pk}/"
    celery_worker.wait_for(lambda: _finished(evaluation.pk), timeout=120)

    evaluation.refresh_from_db()
    assert evaluation.status == DifficultyEvaluation.Status.DONE, evaluation.error
    assert evaluation.progress_done == evaluation.progress_total
    assert evaluation.claimed_by == ""
    # The worker's results are the foreground's, number for number.
    again = services.start_difficulty_evaluation(
        dataset,
        ["length", "random", "oracle-src"],
        subset_fraction=0.25,
        seed=3,
        n_bootstrap=40,
        enqueue=False,
    )
    assert services.run_difficulty_evaluation(again.pk).results == evaluation.results
    poll = admin_client.get(
        f"/difficulty/evaluations/{evaluation.pk}/", headers={"HX-Request": "true"}
    )
    assert poll.status_code == 286


def test_engine_estimators_go_to_the_slow_queue(celery_worker_factory, tmp_path, shared_data):
    from tests.engines.factories import EngineFactory
    from tests.engines.fake_openai import FakeOpenAI

    rows = (shared_data / "wmt24_esa_en-cs.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    path = tmp_path / "forty.jsonl"
    path.write_text("\n".join(rows), encoding="utf-8")
    with path.open("rb") as lines:
        dataset: DifficultyDataset = services.import_difficulty_dataset(lines, name="forty")

    with FakeOpenAI() as server:
        EngineFactory(name="judge", base_url=server.base_url)
        worker = celery_worker_factory(queues="slow")
        evaluation = services.start_difficulty_evaluation(
            dataset, ["llm-judge:judge", "length"], n_bootstrap=10
        )
        worker.wait_for(lambda: _finished(evaluation.pk), timeout=120)

        evaluation.refresh_from_db()
        assert evaluation.status == DifficultyEvaluation.Status.DONE, evaluation.error
        assert len(server.requests) == len({json.loads(r)["src"] for r in rows})
    assert evaluation.results["estimators"]["llm-judge:judge"]["dec"] is not None
