"""Rule jobs on real worker processes: queued from the service, run in rounds by a Celery
worker, and a kill -9 mid-round that loses nothing and writes no rule twice."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from engines.models import CachedResponse, EngineCall
from lexical.models import Rule, RuleJob
from lexical.rules.services import start_rule_jobs
from tests.engines.fake_openai import Reply
from tests.lexical.rule_helpers import make_mining_job, remote_engine, world_engine

pytestmark = pytest.mark.django_db(transaction=True)


def _over(job_id: int) -> bool:
    return RuleJob.objects.get(pk=job_id).status in ("finished", "failed", "cancelled")


def test_a_worker_runs_jobs_of_two_engines_to_the_end(celery_worker, settings):
    mining = make_mining_job()
    world_engine("world-a")
    world_engine("world-b", rule_words=1)
    jobs = start_rule_jobs({"engines": ["world-a", "world-b"], "mining_job": mining.pk})
    for job in jobs:
        celery_worker.wait_for(lambda job=job: _over(job.pk), timeout=120)
        job.refresh_from_db()
        assert job.status == "finished" and job.items_done == 2, job.error
    assert Rule.objects.filter(generator="world-a").count() == 5
    khorma = Rule.objects.get(generator="world-b", variation__lemma="khorma")
    assert khorma.text == "Use «khorma» when the sentence is about: palm."


def _answer(body: dict) -> Reply:
    """Rules keyed by the labels the prompt's system message lists."""
    system = body["messages"][0]["content"]
    labels = json.loads(system.split("written as given: ")[1].split(". The value")[0])
    return Reply(json.dumps({label: f"rule for {label}" for label in labels}))


def test_kill_9_mid_round_writes_no_rule_twice_and_pays_nothing_twice(
    celery_worker_factory, fake_openai
):
    fake_openai.responder = _answer
    fake_openai.latency = 0.5  # rounds take a while, so the kill lands inside one
    mining = make_mining_job()
    remote_engine(fake_openai.base_url)
    worker = celery_worker_factory(LEXICAL_RULES_ROUND_CONCEPTS="1")
    (job,) = start_rule_jobs({"engines": ["remote"], "mining_job": mining.pk})

    def mid_round() -> bool:
        row = RuleJob.objects.get(pk=job.pk)
        return bool(row.claimed_by) and fake_openai.in_flight > 0

    worker.wait_for(mid_round, timeout=120)
    worker.kill()
    killed_at = RuleJob.objects.get(pk=job.pk)
    assert killed_at.status == "running" and killed_at.items_done < 2

    restarted = celery_worker_factory(hostname=worker.hostname, LEXICAL_RULES_ROUND_CONCEPTS="1")
    restarted.wait_for(lambda: _over(job.pk), timeout=180)
    job.refresh_from_db()
    assert job.status == "finished" and job.items_done == 2 and job.concepts_failed == 0
    rules = Rule.objects.filter(job=job)
    assert rules.count() == 5
    assert max(Counter(rules.values_list("variation_id", flat=True)).values()) == 1
    paid = EngineCall.objects.filter(scope=job.scope, cache_hit=False, error="")
    assert paid.count() == CachedResponse.objects.filter(operation="complete").count()
