"""Scenarios run by ``test_restarts.py`` in a pytest process of their own, on private servers
(``FAULTS_POSTGRES``, ``FAULTS_REDIS``) that they restart in the middle of a run.

Not named ``test_*``: collected only when ``test_restarts.py`` names this file.
"""

from __future__ import annotations

import time

import pytest
from django.db import connections

import rounds
from search.models import SearchRun
from tests.faults.kinds import (
    KIND_NAMES,
    KINDS,
    SEARCH_BATCH,
    SEARCH_BUDGET,
    check_search_run,
    search_mid_round,
)
from tests.search.test_run_worker import crowd_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.celery_worker]

# Long enough that the worker meets the outage (its next query fails), short enough for a test.
OUTAGE_S = 3


def _restart_postgres(private_postgres) -> None:
    private_postgres.stop()
    time.sleep(OUTAGE_S)  # the outage itself, not a wait for a result
    private_postgres.start()
    # This process's own sessions died with the server too.
    connections.close_all()


def _row(job):
    return type(job)._default_manager.get(pk=job.pk)


@pytest.mark.parametrize("kind", KINDS, ids=KIND_NAMES)
def test_postgres_restarted_mid_round(
    kind, celery_worker_factory, fake_openai, private_postgres, tmp_path, settings
):
    """PostgreSQL restarts while a round of the kind is under way: the round waits for it (the
    round kernel's lost-database rung), the job finishes, and nothing is written or paid twice."""
    settings.MEDIA_ROOT = tmp_path / "media"  # an import's stored upload, shared with the worker
    worker = celery_worker_factory(**kind.worker_env(tmp_path))
    job = kind.start(fake_openai, tmp_path)
    worker.wait_for(lambda: kind.mid_round(_row(job), fake_openai), timeout=120)

    _restart_postgres(private_postgres)

    worker.wait_for(lambda: _row(job).is_finished, timeout=240)
    kind.check(_row(job))
    assert "database" in worker.log().lower() or "connection" in worker.log().lower()


def test_redis_restarted_mid_search_run(
    celery_worker_factory, fake_openai, private_redis, settings
):
    """The broker keeps nothing on disk: the message of the round after the outage dies with
    it. The worker reconnects; the sweep (beat's job, called here) queues the round again."""
    fake_openai.latency = 0.4
    worker = celery_worker_factory()
    run = crowd_run(fake_openai, budget=SEARCH_BUDGET, batch=SEARCH_BATCH)
    worker.wait_for(lambda: search_mid_round(_row(run), fake_openai), timeout=120)
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
        return _row(run).is_finished

    worker.wait_for(swept_and_finished, timeout=240)
    assert run.pk in recovered
    check_search_run(_row(run))
