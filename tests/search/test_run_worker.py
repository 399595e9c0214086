"""Search runs on real worker processes: the round chain, and kill -9 in the middle of a round."""

from __future__ import annotations

from collections import Counter

import pytest

from engines.models import CachedResponse, EngineCall
from search.models import Pull, SearchRun
from search.runs.services import restore_policy, start_search_run
from tests.search.conftest import crowd_run_config, make_corpus_tree, make_crowd

pytestmark = pytest.mark.django_db(transaction=True)


def _finished(run_id: int) -> bool:
    return SearchRun.objects.get(pk=run_id).status in ("finished", "failed", "cancelled")


def crowd_run(fake_openai, budget: int, batch: int) -> SearchRun:
    make_crowd(fake_openai.base_url)
    tree = make_corpus_tree(n_topics=8, per_topic=6)
    return start_search_run(
        crowd_run_config(
            tree, algorithm="default", budget_pulls=budget, k=3, batch_size=batch, seed=11
        )
    )


def test_a_run_started_here_is_carried_to_the_end_by_a_worker(celery_worker, fake_openai):
    run = crowd_run(fake_openai, budget=12, batch=4)
    celery_worker.wait_for(lambda: _finished(run.pk), timeout=120)
    run.refresh_from_db()
    assert run.status == "finished", run.error
    assert run.pulls_done == Pull.objects.filter(run=run).count() == 12
    assert run.worker_memory_mb and run.worker_memory_mb > 10


def test_kill_9_mid_round_loses_nothing_and_pays_nothing_twice(celery_worker_factory, fake_openai):
    fake_openai.latency = 0.4  # rounds take a while, so the kill lands inside one
    budget, batch = 24, 4
    worker = celery_worker_factory()
    run = crowd_run(fake_openai, budget=budget, batch=batch)

    def mid_round() -> bool:
        row = SearchRun.objects.get(pk=run.pk)
        # Two requests (translate + QE) per committed pull. Past the round's translations
        # means they are answered (and cached) and its QE requests are in flight.
        in_flight = len(fake_openai.requests) > 2 * row.pulls_done + batch
        return row.pulls_done >= 2 * batch and bool(row.claimed_by) and in_flight

    worker.wait_for(mid_round, timeout=120)
    worker.kill()
    killed_at = SearchRun.objects.get(pk=run.pk)
    assert killed_at.status == "running" and killed_at.pulls_done < budget

    # A supervisor restarts the worker under the same name; it recovers the round at once.
    restarted = celery_worker_factory(hostname=worker.hostname)
    restarted.wait_for(lambda: _finished(run.pk), timeout=180)

    run.refresh_from_db()
    assert run.status == "finished", run.error
    pulls = Pull.objects.filter(run=run)
    assert run.pulls_done == pulls.count() == budget
    assert restore_policy(run).stats.n_scored == budget
    # No pull counted twice: one row per (round, slot), rounds contiguous.
    slots = Counter(pulls.values_list("round_index", "slot"))
    assert max(slots.values()) == 1
    assert sorted({r for r, _ in slots}) == list(range(run.round_index))
    # No paid call twice: each successful paid request is one cache entry and each cache
    # entry was paid for exactly once.
    paid = EngineCall.objects.filter(scope=run.scope, cache_hit=False, error="")
    for operation in ("translate", "score"):
        cached = CachedResponse.objects.filter(operation=operation).count()
        assert paid.filter(operation=operation).count() == cached
    # The re-run round was served from the cache for what the killed worker had received.
    assert EngineCall.objects.filter(scope=run.scope, cache_hit=True).exists()
