"""Scenarios run by ``test_restarts.py`` in a pytest process of their own, on private servers
(``FAULTS_POSTGRES``, ``FAULTS_REDIS``) that they restart in the middle of a run.

Not named ``test_*``: collected only when ``test_restarts.py`` names this file.
"""

from __future__ import annotations

import time
from collections import Counter

import pytest
from django.db import connections

import rounds
from engines.models import CachedResponse, EngineCall
from search.breaker.config import create_run as create_breaker_run
from search.models import BreakerRun, BreakerStep, Pull, SearchRun
from search.runs.services import restore_policy
from tests.engines.fake_openai import breaker_reply
from tests.search.breaker_helpers import remote_config, remote_engines
from tests.search.test_run_worker import crowd_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.celery_worker]

# Long enough that the worker meets the outage (its next query fails), short enough for a test.
OUTAGE_S = 3


def _search_finished(run_id: int) -> bool:
    return SearchRun.objects.get(pk=run_id).status in ("finished", "failed", "cancelled")


def _search_mid_round(fake_openai, run_id: int, batch: int):
    def mid_round() -> bool:
        row = SearchRun.objects.get(pk=run_id)
        # Two requests (translate + QE) per committed pull: past them, this round's are in flight.
        in_flight = len(fake_openai.requests) > 2 * row.pulls_done + batch
        return row.pulls_done >= 2 * batch and bool(row.claimed_by) and in_flight

    return mid_round


def _restart_postgres(private_postgres) -> None:
    private_postgres.stop()
    time.sleep(OUTAGE_S)  # the outage itself, not a wait for a result
    private_postgres.start()
    # This process's own sessions died with the server too.
    connections.close_all()


def _assert_paid_once(scope: str, operations: tuple[str, ...]) -> None:
    """Each successful paid request is one cache entry, and each cache entry was paid once."""
    paid = EngineCall.objects.filter(scope=scope, cache_hit=False, error="")
    for operation in operations:
        cached = CachedResponse.objects.filter(operation=operation).count()
        assert paid.filter(operation=operation).count() == cached, operation


def _assert_search_run_complete(run: SearchRun, budget: int) -> None:
    run.refresh_from_db()
    assert run.status == "finished", run.error
    pulls = Pull.objects.filter(run=run)
    assert run.pulls_done == pulls.count() == budget
    assert restore_policy(run).stats.n_scored == budget
    slots = Counter(pulls.values_list("round_index", "slot"))
    assert max(slots.values()) == 1  # no (round, slot) twice
    assert sorted({r for r, _ in slots}) == list(range(run.round_index))
    _assert_paid_once(run.scope, ("translate", "score"))


def test_postgres_restarted_mid_search_run(celery_worker_factory, fake_openai, private_postgres):
    fake_openai.latency = 0.4  # rounds take a while, so the outage lands inside one
    budget, batch = 24, 4
    worker = celery_worker_factory()
    run = crowd_run(fake_openai, budget=budget, batch=batch)
    worker.wait_for(_search_mid_round(fake_openai, run.pk, batch), timeout=120)

    _restart_postgres(private_postgres)

    worker.wait_for(lambda: _search_finished(run.pk), timeout=240)
    _assert_search_run_complete(run, budget)
    assert "database" in worker.log().lower() or "connection" in worker.log().lower()


def test_postgres_restarted_mid_breaker_run(celery_worker_factory, fake_openai, private_postgres):
    fake_openai.responder = breaker_reply
    fake_openai.latency = 0.3
    remote_engines(fake_openai.base_url)
    worker = celery_worker_factory()
    run = create_breaker_run(remote_config("breaker_seeded_qe", n_steps=5))

    def mid_round() -> bool:
        row = BreakerRun.objects.get(pk=run.pk)
        last = fake_openai.requests[-1].body["model"] if fake_openai.requests else ""
        in_qe = last == "model-qe" and fake_openai.in_flight > 0
        return row.round_index >= 2 and bool(row.claimed_by) and in_qe

    worker.wait_for(mid_round, timeout=120)
    _restart_postgres(private_postgres)

    worker.wait_for(
        lambda: BreakerRun.objects.get(pk=run.pk).status in ("finished", "failed", "cancelled"),
        timeout=240,
    )
    run.refresh_from_db()
    assert run.status == "finished", run.error
    steps = BreakerStep.objects.filter(chain__run=run)
    assert run.steps_done == steps.count() == run.steps_total == 3 * 6
    assert max(Counter(steps.values_list("chain_id", "index")).values()) == 1
    assert all(c.steps_done == 6 and c.status == "done" for c in run.chains.all())
    _assert_paid_once(run.scope, ("complete", "translate", "score"))


def test_redis_restarted_mid_search_run(
    celery_worker_factory, fake_openai, private_redis, settings
):
    """The broker keeps nothing on disk: the message of the round after the outage dies with
    it. The worker reconnects; the sweep (beat's job, called here) queues the round again."""
    fake_openai.latency = 0.4
    budget, batch = 24, 4
    worker = celery_worker_factory()
    run = crowd_run(fake_openai, budget=budget, batch=batch)
    worker.wait_for(_search_mid_round(fake_openai, run.pk, batch), timeout=120)
    pulls_before = SearchRun.objects.get(pk=run.pk).pulls_done

    private_redis.stop()
    # The round in flight commits while the broker is away: its successor cannot be queued.
    worker.wait_for(lambda: SearchRun.objects.get(pk=run.pk).pulls_done > pulls_before, timeout=120)
    # Started in a session of its own, it outlives this process and serves the port for the
    # next scenario; the module's fixture shuts down whichever server holds the port.
    private_redis.start()
    # The sweep takes rows nobody claimed for a lease's length; a short one for the test.
    settings.ROUND_LEASE_S = 2
    recovered: list[int] = []

    def swept_and_finished() -> bool:
        recovered.extend(rounds.sweep().get("search run", []))
        return _search_finished(run.pk)

    worker.wait_for(swept_and_finished, timeout=240)
    assert run.pk in recovered
    _assert_search_run_complete(run, budget)
