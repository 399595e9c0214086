"""MT-breaker against the fake OpenAI-compatible server: the prompts on the wire, parse
failures and re-asks, one chain failing alone, replay from the cache, and the money budget."""

from __future__ import annotations

import pytest

from engines.models import EngineCall
from search.breaker.services import advance_run, run_in_foreground, start_breaker_run
from search.breaker.stepping import plan_round, run_round
from search.models import BreakerRun, BreakerStep
from tests.engines.fake_openai import Reply, breaker_reply
from tests.search.breaker_helpers import remote_config, remote_engines

pytestmark = pytest.mark.django_db


@pytest.fixture
def server(fake_openai):
    fake_openai.responder = breaker_reply
    remote_engines(fake_openai.base_url)
    return fake_openai


def _llm_requests(server):
    return [r for r in server.requests if r.body["model"] == "model-llm"]


def test_the_chat_carries_the_seed_translations_and_scores_in_the_papers_formats(server):
    run = run_in_foreground(start_breaker_run(remote_config()).pk)
    assert run.status == "finished", run.error
    chats = [r.body["messages"] for r in _llm_requests(server)]
    assert len(chats) == 3 * 2  # 3 chains × 2 edits; step 0 is the seed (no LLM call)
    longest = max((c for c in chats if "(Request 0-0.)" in c[0]["content"]), key=len)
    first, seed, follow, answer, _ = longest
    assert "about 13 words" in first["content"] and first["content"].endswith(
        "SOURCE |||<SOURCE_TEXT>|||"
    )
    assert seed["role"] == "assistant" and seed["content"].startswith("SOURCE |||")
    assert "TRANSLATION |||[xx] " in follow["content"]
    assert "SCORE |||" in follow["content"] and "%||| (0 = bad translation" in follow["content"]
    assert "at most 75% of the best source so far" in follow["content"]
    assert answer["content"].startswith("Thinking about it.\nSOURCE |||")
    step = BreakerStep.objects.get(chain__run=run, chain__index=0, index=2)
    assert step.source.endswith("more more") and step.llm_cost > 0
    assert run.cost > 0 and run.curves[0]["chains"] == 3


def test_an_unparseable_answer_is_re_asked_and_a_hopeless_chain_fails_alone(server):
    def stubborn(body):
        first = body["messages"][0]["content"]
        if "SOURCE |||<SOURCE_TEXT>|||" in first and "Request 0-1." in first:
            return Reply("I would rather not.")
        if "Request 0-0." in first and len(body["messages"]) == 1:
            return Reply("SOURCE |||<SOURCE_TEXT>|||")  # the format quoted back: a re-ask
        return breaker_reply(body)

    server.responder = stubborn
    run = run_in_foreground(start_breaker_run(remote_config("breaker_seedless", n_steps=1)).pk)
    assert run.status == "finished"
    chains = {c.index: c for c in run.chains.all()}
    assert chains[1].status == "failed" and chains[1].steps_done == 0
    assert chains[1].error.startswith("step 0: no usable text after 3 answers (no 'SOURCE |||")
    assert "last answer: 'I would rather not.'" in chains[1].error
    assert chains[0].status == chains[2].status == "done"
    first_steps = BreakerStep.objects.filter(chain__run=run, index=0)
    assert sorted(first_steps.values_list("parse_attempts", flat=True)) == [1, 2]
    reasks = [r for r in _llm_requests(server) if len(r.body["messages"]) == 3]
    assert reasks and "I could not read a text from your answer" in reasks[0].prompt


def test_a_round_re_run_after_a_crash_is_answered_from_the_cache(server):
    run = start_breaker_run(remote_config(), enqueue=False)
    advance_run(run.pk, 0, worker="w")
    run = BreakerRun.objects.get(pk=run.pk)
    chains = list(run.chains.all())
    steps = {c.pk: list(c.steps.all()) for c in chains}
    run_round(run, plan_round(run, chains, steps))  # the worker dies before committing
    sent = len(server.requests)
    assert advance_run(run.pk, 1, worker="w2").status == "more"
    assert len(server.requests) == sent  # nothing asked twice
    paid = EngineCall.objects.filter(scope=run.scope, cache_hit=False)
    assert paid.filter(operation="complete").count() == 3


def test_the_money_budget_stops_the_run_and_its_chains(server):
    run = run_in_foreground(start_breaker_run(remote_config(budget_money=0.0001, n_steps=5)).pk)
    assert run.status == "finished" and run.error.startswith("stopped: the budget of 0.0001")
    assert run.steps_done < run.steps_total
    assert set(run.chains.values_list("status", flat=True)) == {"stopped"}
