"""Breaker runs on real worker processes: kill -9 in the middle of a round."""

from __future__ import annotations

from collections import Counter

import pytest

from engines.models import CachedResponse, EngineCall
from search.breaker.services import start_breaker_run
from search.models import BreakerRun, BreakerStep
from tests.engines.fake_openai import breaker_reply
from tests.search.breaker_helpers import remote_config, remote_engines

pytestmark = pytest.mark.django_db(transaction=True)


def _finished(run_id: int) -> bool:
    return BreakerRun.objects.get(pk=run_id).status in ("finished", "failed", "cancelled")


def test_kill_9_mid_round_writes_no_step_twice_and_pays_nothing_twice(
    celery_worker_factory, fake_openai
):
    fake_openai.responder = breaker_reply
    fake_openai.latency = 0.3  # rounds take a while, so the kill lands inside one
    remote_engines(fake_openai.base_url)
    worker = celery_worker_factory()
    run = start_breaker_run(remote_config("breaker_seeded_qe", n_steps=5))

    def mid_round() -> bool:
        row = BreakerRun.objects.get(pk=run.pk)
        last = fake_openai.requests[-1].body["model"] if fake_openai.requests else ""
        # Past the round's LLM answers (answered, cached and booked): its QE is in flight.
        in_qe = last == "model-qe" and fake_openai.in_flight > 0
        return row.round_index >= 2 and bool(row.claimed_by) and in_qe

    worker.wait_for(mid_round, timeout=120)
    worker.kill()
    killed_at = BreakerRun.objects.get(pk=run.pk)
    assert killed_at.status == "running" and killed_at.steps_done < killed_at.steps_total

    # A supervisor restarts the worker under the same name; it recovers the round at once.
    restarted = celery_worker_factory(hostname=worker.hostname)
    restarted.wait_for(lambda: _finished(run.pk), timeout=180)

    run.refresh_from_db()
    assert run.status == "finished", run.error
    steps = BreakerStep.objects.filter(chain__run=run)
    assert run.steps_done == steps.count() == run.steps_total == 3 * 6
    assert max(Counter(steps.values_list("chain_id", "index")).values()) == 1
    assert all(c.steps_done == 6 and c.status == "done" for c in run.chains.all())
    # No paid call twice: each successful paid request is one cache entry, paid once.
    paid = EngineCall.objects.filter(scope=run.scope, cache_hit=False, error="")
    for operation in ("complete", "translate", "score"):
        assert paid.filter(operation=operation).count() == (
            CachedResponse.objects.filter(operation=operation).count()
        )
    assert EngineCall.objects.filter(scope=run.scope, cache_hit=True).exists()
