"""Rule jobs against scripted engines on the fake OpenAI server and the offline world: good
answers, re-asks that fix the keys, concepts that never fit, hostile answers, cost, rounds."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from engines.models import EngineCall
from lexical.models import Rule, RuleJob, RuleJobConcept
from lexical.rules.services import (
    ADVANCE_TASK,
    JobStateError,
    RuleConfigError,
    advance_job,
    cancel_job,
    recover_jobs,
    run_in_foreground,
    start_rule_jobs,
)
from tests.engines.fake_openai import Reply
from tests.lexical.rule_helpers import (
    concept,
    make_mining_job,
    make_selection,
    remote_engine,
    world_engine,
)

pytestmark = pytest.mark.django_db

DATE_RULES = {"khorma": "The fruit of the date palm.", "tarikh/tarikhha": "A day in the calendar."}


def _job(engine: str, concepts: list[int], **params) -> RuleJob:
    (job,) = start_rule_jobs(
        {"engines": [engine], "concepts": concepts, "params": params}, enqueue=False
    )
    return job


def _outcome(job: RuleJob) -> RuleJobConcept:
    return job.job_concepts.get()


def test_a_good_answer_writes_one_rule_per_variation_and_books_the_cost(fake_openai):
    mining = make_mining_job()
    remote_engine(fake_openai.base_url)
    fake_openai.push(Reply(json.dumps(DATE_RULES), tokens_in=1000, tokens_out=500))
    job = run_in_foreground(_job("remote", [concept(mining, "date").pk]).pk)

    assert job.status == "finished" and job.items_done == job.items_total == 1
    rules = {r.variation.label: r for r in Rule.objects.filter(job=job)}
    assert {k: r.text for k, r in rules.items()} == DATE_RULES
    assert {r.generator for r in rules.values()} == {"remote"}
    assert {r.validation_status for r in rules.values()} == {"unvalidated"}
    outcome = _outcome(job)
    assert (outcome.status, outcome.attempts, outcome.error) == ("ok", 1, "")
    # 1000 tokens in at 1/1k + 500 out at 2/1k.
    assert job.cost == Decimal("2")
    assert EngineCall.objects.filter(scope=job.scope).count() == 1
    (request,) = fake_openai.requests
    system, user = request.body["messages"]
    assert system["role"] == "system" and '["khorma", "tarikh/tarikhha"]' in system["content"]
    assert 'Concept: "date" (English → Spanish)' in user["content"]
    assert "Variation: tarikh/tarikhha" in user["content"]


def test_the_prompt_holds_the_longest_sentences_under_the_token_limit(fake_openai):
    mining = make_mining_job(per_variation=6)
    remote_engine(fake_openai.base_url)
    fake_openai.push(Reply(json.dumps(DATE_RULES)))
    # Sentence n has 8 + n tokens: under 13 tokens keeps n = 0..4, the 2 longest are 4 and 3.
    run_in_foreground(
        _job("remote", [concept(mining, "date").pk], sentences_per_variation=2,
             max_sentence_tokens=13).pk
    )  # fmt: skip
    user = fake_openai.requests[0].body["messages"][-1]["content"]
    block = user.split("Variation: khorma\n")[1].split("\n\n")[0]
    lines = [line for line in block.splitlines() if line[:1].isdigit()]
    assert [line.split("case ")[-1] for line in lines] == ["4.", "3."]


def test_system_prompt_in_user_sends_one_user_message(fake_openai):
    mining = make_mining_job()
    remote_engine(fake_openai.base_url)
    fake_openai.push(Reply(json.dumps(DATE_RULES)))
    run_in_foreground(_job("remote", [concept(mining, "date").pk], system_prompt_in_user=True).pk)
    (message,) = fake_openai.requests[0].body["messages"]
    assert message["role"] == "user"
    assert message["content"].startswith("You describe when a translator")
    assert "Variation: khorma" in message["content"]


def test_mismatching_keys_are_re_asked_with_the_problem_and_then_fixed(fake_openai):
    mining = make_mining_job()
    remote_engine(fake_openai.base_url)
    wrong = {"khorma": "Fruit.", "tarikh": "Calendar day.", "dates": "extra"}
    fake_openai.push(Reply(json.dumps(wrong)), Reply(json.dumps(DATE_RULES)))
    job = run_in_foreground(_job("remote", [concept(mining, "date").pk]).pk)

    outcome = _outcome(job)
    assert (outcome.status, outcome.attempts) == ("ok", 2)
    assert Rule.objects.filter(job=job).count() == 2
    reask = fake_openai.requests[1].body["messages"]
    assert [m["role"] for m in reask] == ["system", "user", "assistant", "user"]
    assert reask[2]["content"] == json.dumps(wrong)
    assert "unknown key(s) 'dates'" in reask[3]["content"]
    assert '["khorma", "tarikh/tarikhha"]' in reask[3]["content"]


def test_a_concept_that_never_fits_gets_its_error_and_the_job_goes_on(fake_openai, settings):
    settings.LEXICAL_RULES_ROUND_CONCEPTS = 1
    mining = make_mining_job()
    remote_engine(fake_openai.base_url)
    trip = {"viaje/viajes": "Travel.", "recorrido": "A tour.", "excursión": "An outing."}
    fake_openai.push(
        Reply('{"khorma": "only one"}'), Reply('{"khorma": "only one"}'), Reply("no json"),
        Reply(json.dumps(trip)),
    )  # fmt: skip
    job = run_in_foreground(
        _job("remote", [concept(mining, "date").pk, concept(mining, "trip").pk]).pk
    )
    assert job.status == "finished" and job.items_done == 2 and job.concepts_failed == 1
    date, trip_outcome = job.job_concepts.order_by("position")
    assert (date.status, date.attempts) == ("failed", 3)
    assert date.error == "no usable rules after 3 answer(s); the last: it contains no JSON object"
    assert date.last_answer == "no json"
    assert trip_outcome.status == "ok"
    assert set(Rule.objects.filter(job=job).values_list("concept__lemma", flat=True)) == {"trip"}


def test_max_reasks_zero_asks_once(fake_openai):
    mining = make_mining_job()
    remote_engine(fake_openai.base_url)
    fake_openai.push(Reply("{}"))
    job = run_in_foreground(_job("remote", [concept(mining, "date").pk], max_reasks=0).pk)
    outcome = _outcome(job)
    assert (outcome.status, outcome.attempts, len(fake_openai.requests)) == ("failed", 1, 1)
    assert "missing key(s) 'khorma', 'tarikh/tarikhha'" in outcome.error


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ('{"khorma": "a", "khorma": "b", "tarikh/tarikhha": "c"}', "duplicate key 'khorma'"),
        ('{"khorma": NaN, "tarikh/tarikhha": "c"}', "NaN at $.khorma is not a JSON number"),
        ('{"khorma": "x" * 3, "tarikh/tarikhha": "c"}', "not valid JSON"),
        ('{"khorma": "", "tarikh/tarikhha": "c"}', "the rule for 'khorma' is not a non-empty"),
        ('{"khorma": 3, "tarikh/tarikhha": "c"}', "the rule for 'khorma' is not a non-empty"),
        ('["khorma", "tarikh/tarikhha"]', "contains no JSON object"),
        ("x" * 60_000, "it is 60000 characters long"),
    ],
)
def test_hostile_answers_become_the_concepts_error(fake_openai, answer, problem):
    mining = make_mining_job()
    remote_engine(fake_openai.base_url)
    fake_openai.push(*[Reply(answer)] * 3)
    job = run_in_foreground(_job("remote", [concept(mining, "date").pk]).pk)
    outcome = _outcome(job)
    assert job.status == "finished" and outcome.status == "failed", outcome.error
    assert problem in outcome.error
    assert len(outcome.last_answer) <= 4000
    assert not Rule.objects.filter(job=job).exists()
    # The re-ask echoes at most the kept part of a huge answer.
    assert all(
        len(m["content"]) <= 4000
        for r in fake_openai.requests[1:]
        for m in r.body["messages"]
        if m["role"] == "assistant"
    )


def test_a_fenced_answer_with_lemma_keys_and_chatter_is_read(fake_openai):
    mining = make_mining_job()
    remote_engine(fake_openai.base_url)
    body = {" tarikh ": "A calendar day.", "khorma": "The fruit."}
    fake_openai.push(Reply("Here you go:\n```json\n" + json.dumps(body) + "\n```\nEnjoy."))
    job = run_in_foreground(_job("remote", [concept(mining, "date").pk]).pk)
    rules = dict(Rule.objects.filter(job=job).values_list("variation__lemma", "text"))
    assert rules == {"tarikh": "A calendar day.", "khorma": "The fruit."}


def test_a_transient_engine_error_retries_the_round_and_a_permanent_one_fails_the_job(
    fake_openai,
):
    mining = make_mining_job()
    remote_engine(fake_openai.base_url)
    job = _job("remote", [concept(mining, "date").pk])
    fake_openai.push(Reply.error(503))
    outcome = advance_job(job.pk, 0, worker="w1")
    assert outcome.status == "retry"
    job.refresh_from_db()
    assert (job.status, job.round_index, job.claimed_by) == ("running", 0, "")
    fake_openai.push(Reply.error(401, "bad key"))
    assert advance_job(job.pk, 0, worker="w1").status == "stopped"
    job.refresh_from_db()
    assert job.status == "failed" and "bad key" in job.error
    assert not Rule.objects.filter(job=job).exists()


def test_the_offline_world_writes_rules_from_the_context_words():
    mining = make_mining_job()
    world_engine("world")
    job = run_in_foreground(_job("world", [c.pk for c in mining.concepts.all()]).pk)
    assert job.status == "finished" and job.concepts_failed == 0
    assert job.cost == 0
    rules = dict(Rule.objects.filter(job=job).values_list("variation__lemma", "text"))
    assert rules["khorma"] == "Use «khorma» when the sentence is about: palm, sweet, fruit."
    assert rules["recorrido"] == "Use «recorrido» when the sentence is about: guided, museum, walk."
    assert len(rules) == 5


def test_one_job_per_engine_from_a_mining_job_or_a_selection():
    mining = make_mining_job()
    world_engine("world-a")
    world_engine("world-b", skill=0.9)
    jobs = start_rule_jobs(
        {"engines": ["world-a", "world-b"], "mining_job": mining.pk}, enqueue=False
    )
    assert [j.engine for j in jobs] == ["world-a", "world-b"]
    assert all(j.items_total == 2 and j.source == "mining_job" for j in jobs)
    assert jobs[0].params == {
        "sentences_per_variation": 50, "max_sentence_tokens": 50, "max_reasks": 2,
        "system_prompt_in_user": False,
    }  # fmt: skip
    date = concept(mining, "date")
    date.status = "rejected"
    date.save()
    (job,) = start_rule_jobs(
        {"engines": ["world-a"], "selection": make_selection(mining, ["date", "trip"]).pk},
        enqueue=False,
    )
    assert list(job.job_concepts.values_list("concept__lemma", flat=True)) == ["trip"]


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"engines": ["world"]}, "source"),
        ({"engines": ["world"], "mining_job": 1, "selection": 1}, "source"),
        ({"engines": ["nope"], "concepts": [1]}, "engines"),
        ({"engines": "world", "concepts": [1]}, "engines"),
        ({"engines": ["world", "world"], "concepts": [1]}, "engines"),
        ({"engines": ["world"], "concepts": [999999]}, "concepts"),
        ({"engines": ["world"], "concepts": ["1"]}, "concepts"),
        ({"engines": ["world"], "mining_job": 999999}, "mining_job"),
        ({"engines": ["world"], "mining_job": 10**30}, "mining_job"),
        ({"engines": ["world"], "concepts": [2**63]}, "concepts"),
        ({"engines": ["world"], "concepts": [1], "params": {"max_reasks": 9}}, "max_reasks"),
        ({"engines": ["world"], "concepts": [1], "params": {"bogus": 1}}, "params"),
        ({"engines": ["world"], "concepts": [1], "params": {"max_reasks": True}}, "max_reasks"),
        (
            {"engines": ["world"], "concepts": [1], "params": {"system_prompt_in_user": 1}},
            "system_prompt_in_user",
        ),
        ({"engines": ["world"], "concepts": [1], "extra": 1}, "config"),
    ],
)
def test_refused_configurations_create_nothing(config, field):
    world_engine("world")
    with pytest.raises(RuleConfigError) as caught:
        start_rule_jobs(config, enqueue=False)
    assert field in caught.value.errors
    assert not RuleJob.objects.exists()


def test_a_disabled_or_non_chat_engine_is_refused():
    mining = make_mining_job()
    world_engine("world")
    from engines.models import Engine

    Engine.objects.filter(name="world").update(enabled=False)
    with pytest.raises(RuleConfigError, match="disabled"):
        start_rule_jobs({"engines": ["world"], "mining_job": mining.pk}, enqueue=False)


def test_rounds_take_a_few_concepts_each_and_queue_on_commit(
    settings, sent_tasks, django_capture_on_commit_callbacks
):
    settings.LEXICAL_RULES_ROUND_CONCEPTS = 1
    mining = make_mining_job()
    world_engine("world")
    with django_capture_on_commit_callbacks(execute=True):
        (job,) = start_rule_jobs({"engines": ["world"], "mining_job": mining.pk})
    assert sent_tasks == [(ADVANCE_TASK, (job.pk, 0), {"queue": "slow", "countdown": None})]
    assert advance_job(job.pk, 0, worker="w").status == "more"
    job.refresh_from_db()
    assert (job.items_done, job.round_index, job.status) == (1, 1, "running")
    assert advance_job(job.pk, 0, worker="w").status == "stale"  # a duplicate message
    assert advance_job(job.pk, 1, worker="w").status == "done"
    job.refresh_from_db()
    assert (job.items_done, job.status) == (2, "finished")
    assert job.finished_at is not None


def test_a_job_held_by_another_worker_is_busy_and_recovered_after_its_lease(
    sent_tasks, django_capture_on_commit_callbacks
):
    mining = make_mining_job()
    world_engine("world")
    job = _job("world", [concept(mining, "date").pk])
    RuleJob.objects.filter(pk=job.pk).update(
        claimed_by="other", lease_expires_at=timezone.now() + timedelta(hours=1)
    )
    assert advance_job(job.pk, 0, worker="w").status == "busy"
    with pytest.raises(JobStateError, match="being run by a worker"):
        run_in_foreground(job.pk)
    RuleJob.objects.filter(pk=job.pk).update(lease_expires_at=timezone.now() - timedelta(hours=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert recover_jobs() == [job.pk]
    assert sent_tasks == [(ADVANCE_TASK, (job.pk, 0), {"queue": "slow", "countdown": None})]


def test_cancel_stops_at_the_round_boundary_and_only_once():
    mining = make_mining_job()
    world_engine("world")
    job = _job("world", [concept(mining, "date").pk])
    cancel_job(job)
    assert advance_job(job.pk, 0, worker="w").status == "stopped"
    with pytest.raises(JobStateError, match="cancelled rule job cannot be cancelled"):
        cancel_job(job)
    assert not Rule.objects.exists()


def test_a_concept_whose_variations_were_all_dropped_fails_without_an_engine_call(fake_openai):
    mining = make_mining_job()
    remote_engine(fake_openai.base_url)
    date = concept(mining, "date")
    date.variations.update(dropped=True)
    job = run_in_foreground(_job("remote", [date.pk]).pk)
    outcome = _outcome(job)
    assert outcome.status == "failed" and "all were dropped" in outcome.error
    assert outcome.attempts == 0 and not fake_openai.requests


def test_rule_jobs_are_registered_with_the_recovery_sweep():
    import rounds

    assert "lexical rule job" in rounds.registered()
