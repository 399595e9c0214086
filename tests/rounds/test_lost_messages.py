"""Every kind of long job whose message was lost is found by the one sweep and finished by a
real worker: search runs, DEC evaluations, topic-tree generations and breaker runs."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

import rounds
from difficulty import services as difficulty_services
from difficulty.models import DifficultyEvaluation
from search.breaker.services import start_breaker_run
from search.models import BreakerRun, SearchRun, TopicTree
from search.runs.services import start_search_run
from search.topics.generation import start_tree_generation
from tests.engines.factories import EngineFactory, SyntheticEngineFactory
from tests.engines.fake_openai import FakeOpenAI, Reply
from tests.search.breaker_helpers import offline_config
from tests.search.conftest import synthetic_run_config

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.celery_worker]


def _dataset():
    lines = [
        json.dumps(
            {
                "langs": "en-de",
                "line_id": i,
                "src": "word " * (3 + i % 9),
                "scores": {"a": float(90 - 5 * (i % 9)), "b": float(80 - 3 * (i % 7))},
            }
        )
        for i in range(24)
    ]
    return difficulty_services.import_difficulty_dataset(lines, name="lost messages")


def _tree_answer(body: dict) -> Reply:
    return Reply(json.dumps({"Law": {"Contracts": {}, "Tax": {}}}))


def _lose_messages(*querysets) -> None:
    """As if the broker had dropped them: nobody claims the rows and they stopped moving."""
    long_ago = timezone.now() - timedelta(hours=2)
    for rows in querysets:
        rows.update(updated_at=long_ago)


def test_the_sweep_finishes_every_kind_of_job_whose_message_was_lost(celery_worker):
    SyntheticEngineFactory(name="world", params={"n_topics": 200, "seed": 3})
    run = start_search_run(synthetic_run_config(budget_pulls=100, batch_size=25), enqueue=False)
    evaluation = difficulty_services.start_difficulty_evaluation(
        _dataset(), ["length", "random"], n_bootstrap=20, enqueue=False
    )
    with FakeOpenAI(_tree_answer) as server:
        EngineFactory(name="gen", base_url=server.base_url)
        tree = start_tree_generation(
            "Lost", "gen", roots=["Law"], depth=2, branching=2, language="en", enqueue=False
        )
        _lose_messages(
            SearchRun.objects.filter(pk=run.pk),
            DifficultyEvaluation.objects.filter(pk=evaluation.pk),
            TopicTree.objects.filter(pk=tree.pk),
        )

        recovered = rounds.sweep()

        assert recovered == {
            "DEC evaluation": [evaluation.pk],
            "search run": [run.pk],
            "topic tree generation": [tree.pk],
        }

        def all_finished() -> bool:
            return (
                SearchRun.objects.get(pk=run.pk).status == "finished"
                and DifficultyEvaluation.objects.get(pk=evaluation.pk).status == "done"
                and TopicTree.objects.get(pk=tree.pk).status == "ready"
            )

        celery_worker.wait_for(all_finished, timeout=120)

    assert SearchRun.objects.get(pk=run.pk).pulls_done == 100
    assert rounds.sweep() == {}  # nothing left to recover


def test_the_sweep_finishes_a_breaker_run_whose_message_was_lost(celery_worker):
    run = start_breaker_run(offline_config("breaker_seeded", n_steps=3), enqueue=False)
    _lose_messages(BreakerRun.objects.filter(pk=run.pk))

    assert rounds.sweep() == {"breaker run": [run.pk]}

    celery_worker.wait_for(
        lambda: BreakerRun.objects.get(pk=run.pk).status == "finished", timeout=120
    )
    run.refresh_from_db()
    assert run.steps_done == run.steps_total == 6 * 4
    assert rounds.sweep() == {}
