"""Data-quality statistics of breaker runs as a job on the round kernel: the offline world end
to end, analysts and embedders on the fake OpenAI server (good answers, broken JSON, re-asks,
failures recorded per text), refusals, transient errors and recovery."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from statistics import mean

import pytest
from django.utils import timezone

from engines.models import Engine, EngineCall
from search.breaker.data_quality import (
    COMPUTE_TASK,
    StatisticsConfigError,
    compute_statistics,
    recover_statistics,
    start_statistics,
    statistics_in_foreground,
)
from search.breaker.demo import EDITOR, EMBEDDINGS
from search.breaker.services import RunStateError, run_in_foreground, start_breaker_run
from search.breaker.statistics import word_statistics
from search.models import BreakerStatistics
from tests.engines.factories import EngineFactory
from tests.engines.fake_openai import Reply
from tests.search.breaker_helpers import SEED_TEXTS, offline_config

pytestmark = pytest.mark.django_db

GOOD = {
    "grammaticality": 90, "naturalness": 70, "word rarity": 20, "syntax complexity": 40,
    "topics": ["daily life"], "error modes": ["idioms"],
}  # fmt: skip


@pytest.fixture
def finished_run(db):
    return run_in_foreground(start_breaker_run(offline_config(n_steps=3), enqueue=False).pk)


def _selected(run) -> list[str]:
    return list(run.chains.order_by("index").values_list("selected_text", flat=True))


def test_the_offline_world_yields_real_statistics_through_the_kernel(
    finished_run, sent_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        stats = start_statistics(finished_run, embedder=EMBEDDINGS, analyst=EDITOR)
    assert sent_tasks == [(COMPUTE_TASK, (stats.pk, 1), {"queue": "slow", "countdown": None})]

    assert compute_statistics(stats.pk, 1, worker="w").status == "done"
    assert compute_statistics(stats.pk, 1, worker="w").status == "stale"  # a duplicate message

    stats.refresh_from_db()
    values, texts = stats.values, _selected(finished_run)
    assert stats.status == "done" and stats.error == "" and stats.claimed_by == ""
    assert values["texts"] == values["analysed"] == len(SEED_TEXTS)
    assert {k: values[k] for k in ("unique_words", "avg_word_count", "avg_word_length")} == (
        word_statistics(texts)
    )
    assert 0 < values["diversity_embd"] < 1 and 0 < values["diversity_chrf"] < 1
    assert values["chrf_pairs"] == 6 * 5 and stats.chrf_signature.startswith("#:1|c:mixed")
    qualities = list(finished_run.chains.values_list("selected_quality", flat=True))
    assert values["quality"] == pytest.approx(mean(qualities))
    assert values["qe"] == {"sim-qe": pytest.approx(mean(qualities))}  # one target, one QE
    assert values["unique_topics"] >= 3 and 0 <= values["word_rarity"] <= 100
    assert [t["chain"] for t in stats.texts] == list(range(len(SEED_TEXTS)))
    assert all("analysis" in t for t in stats.texts)
    assert "difficulty" not in values
    booked = EngineCall.objects.filter(scope=stats.scope)
    assert set(booked.values_list("operation", flat=True)) == {"embed", "complete"}
    assert stats.cost == 0


def test_a_configured_difficulty_estimator_adds_a_source_only_estimate(finished_run):
    Engine.objects.create(name="len", kind="heuristic", capabilities=["difficulty"],
                          params={"feature": "tokens"})  # fmt: skip
    stats = start_statistics(
        finished_run, embedder=EMBEDDINGS, analyst=EDITOR, difficulty="len", enqueue=False
    )

    stats = statistics_in_foreground(stats.pk)

    difficulty = stats.values["difficulty"]
    assert difficulty["engine"] == "len" and difficulty["on_0_100_scale"] is False
    # The tokens heuristic: minus the token count (more tokens = harder).
    assert difficulty["mean"] < 0


def test_refusals_name_the_field_and_write_nothing(finished_run):
    EngineFactory(name="chat-only")
    with pytest.raises(StatisticsConfigError) as caught:
        start_statistics(finished_run, embedder="chat-only", analyst="nope", difficulty=EDITOR)
    assert caught.value.errors == {
        "embedder": "engine chat-only is not configured as an embeddings model",
        "analyst": "there is no engine named 'nope'",
        "difficulty": f"engine {EDITOR} is not configured as a difficulty estimator",
    }
    with pytest.raises(StatisticsConfigError) as caught:
        start_statistics(finished_run, embedder=None, analyst=EDITOR)
    assert caught.value.errors == {"embedder": "required: the name of an engine"}
    assert not BreakerStatistics.objects.exists()


def test_a_run_that_has_not_finished_is_refused(db):
    run = start_breaker_run(offline_config(n_steps=2), enqueue=False)
    with pytest.raises(RunStateError, match="statistics are computed once it has finished"):
        start_statistics(run, embedder=EMBEDDINGS, analyst=EDITOR)
    assert not BreakerStatistics.objects.exists()


def test_statistics_being_computed_cannot_be_started_again(finished_run):
    start_statistics(finished_run, embedder=EMBEDDINGS, analyst=EDITOR, enqueue=False)
    with pytest.raises(RunStateError, match="being computed"):
        start_statistics(finished_run, embedder=EMBEDDINGS, analyst=EDITOR, enqueue=False)


# --- remote analyst and embedder on the fake server -------------------------------------------


def _remote(base_url: str) -> None:
    EngineFactory(name="analyst", base_url=base_url, max_concurrency=1,
                  price_in_per_1k=Decimal(1), price_out_per_1k=Decimal(2))  # fmt: skip
    EngineFactory(name="emb", kind="openai_embeddings", capabilities=["embed"],
                  base_url=base_url, params={}, price_in_per_1k=Decimal(1),
                  price_out_per_1k=Decimal(0))  # fmt: skip


def test_broken_json_is_reasked_and_a_text_that_never_answers_is_recorded(
    finished_run, fake_openai
):
    _remote(fake_openai.base_url)
    answers = {text: json.dumps(GOOD) for text in _selected(finished_run)}
    first, second = _selected(finished_run)[:2]
    broken = {first: ["```json\n{\"grammaticality\": 90,,}\n```", json.dumps(GOOD)],
              second: ["I would rather not."] * 3}  # fmt: skip

    def responder(body):
        prompt = body["messages"][0]["content"]
        text = prompt.rsplit("ANALYSE THIS TEXT |||", 1)[1][:-3]
        turn = (len(body["messages"]) - 1) // 2  # 0 first ask, 1 first re-ask, ...
        script = broken.get(text)
        return Reply(script[turn] if script else answers[text], tokens_in=10, tokens_out=5)

    fake_openai.responder = responder
    stats = start_statistics(finished_run, embedder="emb", analyst="analyst", enqueue=False)

    stats = statistics_in_foreground(stats.pk)

    assert stats.status == "done"
    assert stats.values["analysed"] == len(SEED_TEXTS) - 1
    assert stats.values["grammaticality"] == 90 and stats.values["unique_topics"] == 1
    assert stats.error == f"1 of {len(SEED_TEXTS)} texts have no analysis (see each text)"
    failed = stats.texts[1]
    assert failed["chain"] == 1 and "analysis" not in failed
    assert failed["error"].startswith(
        "no usable analysis after 3 answers (the answer holds no JSON object); last answer: "
        "'I would rather not.'"
    )
    (reask,) = [
        r.body["messages"] for r in fake_openai.requests
        if len(r.body.get("messages", [])) == 3 and first in r.body["messages"][0]["content"]
    ]  # fmt: skip
    assert reask[1]["content"].startswith("```json")
    assert reask[2]["content"].startswith("I could not use that answer: the JSON object does not")
    chat_requests = [r for r in fake_openai.requests if r.path.endswith("/chat/completions")]
    assert len(chat_requests) == len(SEED_TEXTS) + 1 + 2  # one re-ask, two for the refuser
    # Booked: 9 chat requests of 10 in + 5 out tokens (1 and 2 per 1k), plus the embeddings.
    embed_tokens = sum(len(t.split()) for t in _selected(finished_run))
    expected = Decimal(9 * (10 * 1 + 5 * 2) + embed_tokens) / 1000
    assert stats.cost == expected


def test_a_permanent_analyst_error_is_recorded_per_text(finished_run, fake_openai):
    _remote(fake_openai.base_url)
    fake_openai.responder = lambda body: Reply.error(400, "content policy")
    stats = start_statistics(finished_run, embedder="emb", analyst="analyst", enqueue=False)

    stats = statistics_in_foreground(stats.pk)

    assert stats.status == "done" and stats.values["analysed"] == 0
    assert "grammaticality" not in stats.values and stats.values["diversity_embd"] > 0
    assert all("content policy" in t["error"] for t in stats.texts)


def test_a_transient_error_leaves_the_job_queued_for_a_retry(finished_run, fake_openai):
    _remote(fake_openai.base_url)
    fake_openai.embedder = lambda body: Reply.error(503, "busy")
    stats = start_statistics(finished_run, embedder="emb", analyst="analyst", enqueue=False)

    outcome = compute_statistics(stats.pk, 1, worker="w")

    assert (outcome.status, outcome.retry_in) == ("retry", 30.0)
    stats.refresh_from_db()
    assert (stats.status, stats.claimed_by, stats.values) == ("running", "", {})


def test_a_dead_workers_job_is_recovered_and_pays_nothing_twice(
    finished_run, fake_openai, sent_tasks, django_capture_on_commit_callbacks
):
    _remote(fake_openai.base_url)
    fake_openai.responder = lambda body: Reply(json.dumps(GOOD))
    stats = start_statistics(finished_run, embedder="emb", analyst="analyst", enqueue=False)
    assert compute_statistics(stats.pk, 1, worker="first").status == "done"
    paid = EngineCall.objects.filter(scope=stats.scope, cache_hit=False).count()
    requests = len(fake_openai.requests)
    # Computed again, then its worker "dies" holding the claim: the sweep re-queues it.
    stats = start_statistics(finished_run, embedder="emb", analyst="analyst", enqueue=False)
    BreakerStatistics.objects.filter(pk=stats.pk).update(
        status="running", claimed_by="dead", lease_expires_at=timezone.now() - timedelta(1)
    )

    with django_capture_on_commit_callbacks(execute=True):
        assert recover_statistics() == [stats.pk]
    assert sent_tasks[-1] == (COMPUTE_TASK, (stats.pk, 2), {"queue": "slow", "countdown": None})
    assert compute_statistics(stats.pk, 2, worker="second").status == "done"

    assert len(fake_openai.requests) == requests  # every answer came from the cache
    assert EngineCall.objects.filter(scope=stats.scope, cache_hit=False).count() == paid
