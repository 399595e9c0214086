"""The openai_chat kind against a real local HTTP server speaking the OpenAI chat protocol."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest

from engines import callpath
from engines.interfaces import EngineError
from engines.models import CachedResponse, EngineCall
from engines.registry import resolve
from tests.engines.factories import EngineFactory
from tests.engines.fake_openai import Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def engine(fake_openai):
    return EngineFactory(name="llm", base_url=fake_openai.base_url)


def test_translate_sends_our_prompt_and_extracts_the_text_between_the_markers(engine, fake_openai):
    fake_openai.push(
        Reply.translation("Ahoj světe"),
        Reply("Here you go:\n<START OF TRANSLATION>\n Dobrý den \n</END OF TRANSLATION>\nBye"),
    )

    out = resolve("llm", "translate", scope="t").translate(["Hello world", "Good day"], "en", "cs")

    # Two requests in flight at once: which one gets which scripted reply is a race.
    assert sorted(out) == ["Ahoj světe", "Dobrý den"]
    bodies = sorted((r.body for r in fake_openai.requests), key=lambda b: str(b["messages"]))
    assert [b["model"] for b in bodies] == ["test-model", "test-model"]
    assert all(b["temperature"] == 0 for b in bodies)
    assert "from English text into Czech" not in bodies[0]["messages"][0]["content"]
    assert "English text into Czech" in bodies[0]["messages"][0]["content"]


def test_translate_keeps_input_order_under_concurrency(engine, fake_openai):
    texts = [f"sentence {i}" for i in range(12)]

    out = resolve(engine, "translate").translate(texts, "en", "de")

    assert out == [f"[xx] sentence {i}" for i in range(12)]


def test_score_parses_the_last_score_line_and_clamps(engine, fake_openai):
    engine.max_concurrency = 1
    engine.save()
    fake_openai.push(
        Reply("SCORE |||10||| was my first guess.\nSCORE |||70.8|||"),
        Reply.score("130"),
        Reply.score("55,5"),
    )

    scores = resolve(engine, "quality").score([("a", "b"), ("c", "d"), ("e", "f")], "en", "cs")

    assert scores == [70.8, 100.0, 55.5]
    assert "SOURCE: |||a|||\nTRANSLATION: |||b|||" in fake_openai.requests[0].prompt


def test_judge_maps_proficiency_to_quality_and_names_the_target_language(engine, fake_openai):
    fake_openai.push(Reply.judge(90, "C1 (Advanced)"))

    (quality,) = resolve(engine, "difficulty").estimate(["Ein Satz."], "de", "en")

    assert quality == pytest.approx(25.0)  # 100 * (1 - 90/120)
    assert "into English" in fake_openai.requests[0].prompt


def test_judge_without_target_language_when_configured(engine, fake_openai):
    engine.params = {"judge_with_target_language": False}
    engine.save()
    fake_openai.push(Reply.judge(0))

    assert resolve(engine, "difficulty").estimate(["x"], "en", "cs") == [100.0]
    assert "Czech" not in fake_openai.requests[0].prompt


def test_complete_returns_text_and_billed_tokens(engine, fake_openai):
    fake_openai.push(Reply("Hi there", tokens_in=12, tokens_out=3))

    completion = resolve(engine, "chat").complete(
        [{"role": "user", "content": "hi"}], temperature=0.7, max_tokens=20
    )

    assert (completion.text, completion.tokens_in, completion.tokens_out) == ("Hi there", 12, 3)
    assert fake_openai.requests[0].body["temperature"] == 0.7
    assert fake_openai.requests[0].body["max_tokens"] == 20


def test_api_key_is_read_from_the_named_variable_at_call_time(engine, fake_openai, monkeypatch):
    engine.api_key_env = "HARDSET_ENGINE_KEY_TEST"
    engine.save()
    translator = resolve(engine, "translate")
    monkeypatch.setenv("HARDSET_ENGINE_KEY_TEST", "sk-first")
    translator.translate(["one"], "en", "de")
    monkeypatch.setenv("HARDSET_ENGINE_KEY_TEST", "sk-second")
    translator.translate(["two"], "en", "de")

    assert [r.headers["Authorization"] for r in fake_openai.requests] == [
        "Bearer sk-first",
        "Bearer sk-second",
    ]


def test_missing_key_variable_is_permanent_and_sends_nothing(engine, fake_openai, monkeypatch):
    engine.api_key_env = "HARDSET_ENGINE_KEY_ABSENT"
    engine.save()
    monkeypatch.delenv("HARDSET_ENGINE_KEY_ABSENT", raising=False)

    with pytest.raises(EngineError) as info:
        resolve(engine, "translate").translate(["one"], "en", "de")

    assert info.value.permanent
    assert "HARDSET_ENGINE_KEY_ABSENT" in info.value.message
    assert fake_openai.requests == []


def test_a_cache_hit_makes_no_request_and_costs_nothing(engine, fake_openai):
    fake_openai.push(Reply.translation("Hallo", tokens_in=1000, tokens_out=2000))
    resolve(engine, "translate", scope="run:1").translate(["Hello"], "en", "de")

    again = resolve(engine, "translate", scope="run:2").translate(["Hello"], "en", "de")

    assert again == ["Hallo"]
    assert len(fake_openai.requests) == 1
    paid, hit = EngineCall.objects.order_by("id")
    assert (paid.scope, paid.cache_hit, paid.tokens_in, paid.tokens_out) == (
        "run:1",
        False,
        1000,
        2000,
    )
    assert paid.cost == Decimal("3.5")  # 1k in at 0.5 + 2k out at 1.5
    assert (hit.scope, hit.cache_hit, hit.items, hit.cost, hit.tokens_in) == (
        "run:2",
        True,
        1,
        Decimal(0),
        0,
    )


def test_cache_off_sends_again(engine, fake_openai):
    resolve(engine, "translate").translate(["Hello"], "en", "de")
    resolve(engine, "translate", use_cache=False).translate(["Hello"], "en", "de")

    assert len(fake_openai.requests) == 2


def test_identical_texts_in_a_batch_are_sent_once(engine, fake_openai):
    out = resolve(engine, "translate").translate(["same", "same", "other"], "en", "de")

    assert out == ["[xx] same", "[xx] same", "[xx] other"]
    assert len(fake_openai.requests) == 2
    assert EngineCall.objects.get(cache_hit=True).items == 1


def test_changed_parameters_miss_the_cache(engine, fake_openai):
    resolve(engine, "translate").translate(["Hello"], "en", "de")
    engine.params = {"temperature": 0.3}
    engine.save()
    resolve(engine, "translate").translate(["Hello"], "en", "de")

    assert len(fake_openai.requests) == 2
    assert CachedResponse.objects.count() == 2


def test_transient_500_is_retried(engine, fake_openai):
    fake_openai.push(Reply.error(500), Reply.error(503), Reply.translation("Hallo"))

    assert resolve(engine, "translate").translate(["Hello"], "en", "de") == ["Hallo"]
    call = EngineCall.objects.get()
    assert (call.attempts, call.error) == (3, "")
    assert len(fake_openai.requests) == 3


def test_429_retry_after_is_honoured(engine, fake_openai):
    fake_openai.push(Reply.error(429, headers={"Retry-After": "1"}), Reply.translation("Hallo"))
    start = time.monotonic()

    assert resolve(engine, "translate").translate(["Hello"], "en", "de") == ["Hallo"]
    assert time.monotonic() - start >= 1.0
    assert len(fake_openai.requests) == 2


def test_retries_are_bounded_and_the_error_is_transient(engine, fake_openai):
    engine.max_retries = 2
    engine.save()
    fake_openai.push(*[Reply.error(502) for _ in range(5)])

    with pytest.raises(EngineError) as info:
        resolve(engine, "translate", scope="s").translate(["Hello"], "en", "de")

    assert not info.value.permanent
    assert "HTTP 502" in info.value.message
    assert len(fake_openai.requests) == 3
    call = EngineCall.objects.get()
    assert call.attempts == 3
    assert "HTTP 502" in call.error
    assert not CachedResponse.objects.exists()


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_are_permanent_and_not_retried(engine, fake_openai, status):
    fake_openai.push(Reply.error(status, "bad thing"))

    with pytest.raises(EngineError) as info:
        resolve(engine, "translate").translate(["Hello"], "en", "de")

    assert info.value.permanent
    assert f"HTTP {status}" in info.value.message
    assert "bad thing" in info.value.message
    assert len(fake_openai.requests) == 1


def test_timeout_is_transient_and_retried(engine, fake_openai):
    engine.timeout_s = 0.3
    engine.save()
    fake_openai.push(Reply.translation("late", delay=1.0), Reply.translation("Hallo"))

    assert resolve(engine, "translate").translate(["Hello"], "en", "de") == ["Hallo"]
    assert EngineCall.objects.get().attempts == 2


def test_persistent_timeouts_fail_transiently(engine, fake_openai):
    engine.timeout_s = 0.2
    engine.max_retries = 1
    engine.save()
    fake_openai.push(Reply(delay=0.6), Reply(delay=0.6))

    with pytest.raises(EngineError) as info:
        resolve(engine, "translate").translate(["Hello"], "en", "de")

    assert not info.value.permanent
    assert "timed out" in info.value.message


def test_dropped_connection_is_transient(engine, fake_openai):
    fake_openai.push(Reply(drop=True), Reply.translation("Hallo"))

    assert resolve(engine, "translate").translate(["Hello"], "en", "de") == ["Hallo"]
    assert EngineCall.objects.get().attempts == 2


def test_malformed_body_is_retried_then_permanent(engine, fake_openai):
    fake_openai.push(*[Reply(raw=b"<html>oops</html>") for _ in range(3)])

    with pytest.raises(EngineError) as info:
        resolve(engine, "translate").translate(["Hello"], "en", "de")

    assert info.value.permanent
    assert "not JSON" in info.value.message
    assert len(fake_openai.requests) == 3


def test_unparseable_answer_is_reasked_then_permanent(engine, fake_openai):
    fake_openai.push(Reply("I think it is good."), Reply("Quality: 80"), Reply("SCORE: 80"))

    with pytest.raises(EngineError) as info:
        resolve(engine, "quality").score([("a", "b")], "en", "de")

    assert info.value.permanent
    assert "SCORE |||x|||" in info.value.message
    call = EngineCall.objects.get()
    assert (call.attempts, call.tokens_in) == (3, 30)  # every answer was billed
    assert call.cost > 0


def test_unparseable_answer_then_a_good_one_succeeds(engine, fake_openai):
    fake_openai.push(Reply("no score"), Reply.score(42))

    assert resolve(engine, "quality").score([("a", "b")], "en", "de") == [42.0]


def test_a_partly_failed_batch_records_and_caches_what_succeeded(engine, fake_openai):
    engine.max_concurrency = 1
    engine.save()
    fake_openai.push(Reply.translation("eins"), Reply.error(400))

    with pytest.raises(EngineError, match="1 of 2 translate request"):
        resolve(engine, "translate").translate(["one", "two"], "en", "de")

    assert CachedResponse.objects.count() == 1
    assert EngineCall.objects.count() == 2


def test_a_concurrent_batch_books_every_request_once_and_caches_the_answers(engine, fake_openai):
    def answer(body):
        text = body["messages"][-1]["content"].rsplit("\n", 1)[-1]
        return Reply.error(400) if text in ("t3", "t6") else Reply.translation(f"<{text}>")

    fake_openai.responder = answer
    engine.max_concurrency = 4
    engine.save()

    with pytest.raises(EngineError, match="2 of 10 translate request"):
        resolve(engine, "translate").translate([f"t{i}" for i in range(10)], "en", "de")

    booked = EngineCall.objects.filter(cache_hit=False)
    assert booked.count() == 10 and booked.exclude(error="").count() == 2
    assert CachedResponse.objects.count() == 8
    fake_openai.reset()
    fake_openai.responder = lambda body: Reply.translation("again")
    again = resolve(engine, "translate").translate([f"t{i}" for i in range(10)], "en", "de")
    assert again[0] == "<t0>" and again[3] == again[6] == "again"
    assert len(fake_openai.requests) == 2  # only the failed ones are bought again


def test_request_threads_are_kept_per_process(monkeypatch):
    first = callpath._request_threads()
    assert callpath._request_threads() is first
    monkeypatch.setattr(callpath.os, "getpid", lambda: -1)  # as in a forked child
    assert callpath._request_threads() is not first


def test_concurrency_limit_bounds_requests_in_flight(engine, fake_openai):
    fake_openai.latency = 0.2
    engine.max_concurrency = 4
    engine.save()
    start = time.monotonic()

    resolve(engine, "translate", use_cache=False).translate(
        [f"t{i}" for i in range(16)], "en", "de"
    )

    elapsed = time.monotonic() - start
    assert fake_openai.max_in_flight == 4
    assert 0.8 <= elapsed < 2.0  # 16 requests, 4 at a time, 0.2 s each


def test_disabled_engine_and_missing_capability_are_permanent_errors(engine):
    engine.capabilities = ["chat"]
    engine.save()
    with pytest.raises(EngineError, match="not configured as a translator") as info:
        resolve(engine, "translate")
    assert info.value.permanent

    engine.enabled = False
    engine.save()
    with pytest.raises(EngineError, match="disabled"):
        resolve(engine, "chat")

    with pytest.raises(EngineError, match="no engine named 'nope'"):
        resolve("nope", "chat")
