"""The embed capability: the OpenAI-compatible /v1/embeddings kind against the local fake
server (batching, cache, ledger with token cost, retries, permanent errors) and the offline
hashed character n-gram kind."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
from django.core.exceptions import ValidationError

from engines.interfaces import EngineError
from engines.models import CachedResponse, Engine, EngineCall
from engines.offline.hashed_embeddings import hashed_embeddings
from engines.registry import resolve
from engines.services import check_engine
from tests.engines.factories import EngineFactory
from tests.engines.fake_openai import Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def embedder(fake_openai):
    return EngineFactory(
        name="emb", kind=Engine.Kind.OPENAI_EMBEDDINGS, capabilities=["embed"],
        model="text-embedding-test", base_url=fake_openai.base_url,
        params={"batch_size": 2}, price_in_per_1k=Decimal(2), price_out_per_1k=Decimal(0),
    )  # fmt: skip


def test_embeddings_are_sent_in_batches_and_returned_in_input_order(embedder, fake_openai):
    vectors = resolve("emb", "embed", scope="s").embed(["a b", "hello there", "xyz"])

    assert vectors == [[3.0, 1.0, 2.0], [11.0, 4.0, 2.0], [3.0, 0.0, 1.0]]
    bodies = sorted((r.body for r in fake_openai.requests), key=lambda b: len(b["input"]))
    assert [r.path for r in fake_openai.requests] == ["/v1/embeddings"] * 2
    assert bodies == [
        {"model": "text-embedding-test", "input": ["xyz"]},
        {"model": "text-embedding-test", "input": ["a b", "hello there"]},
    ]
    calls = EngineCall.objects.filter(scope="s", cache_hit=False).order_by("tokens_in")
    assert [(c.operation, c.tokens_in, c.cost) for c in calls] == [
        ("embed", 1, Decimal("0.00200000")),  # 1 token at 2 per 1k
        ("embed", 4, Decimal("0.00800000")),
    ]


def test_a_second_call_is_answered_from_the_cache(embedder, fake_openai):
    first = resolve("emb", "embed").embed(["one", "two"])
    fake_openai.reset()

    again = resolve("emb", "embed", scope="again").embed(["one", "two"])

    assert again == first
    assert fake_openai.requests == []
    assert CachedResponse.objects.filter(operation="embed").count() == 1
    hit = EngineCall.objects.get(scope="again")
    assert (hit.cache_hit, hit.items, hit.cost) == (True, 1, Decimal(0))


def test_data_out_of_order_is_put_back_by_index(embedder, fake_openai):
    body = (
        b'{"data": [{"index": 1, "embedding": [2, 2]}, {"index": 0, "embedding": [1, 1]}],'
        b' "usage": {"prompt_tokens": 3}}'
    )
    fake_openai.push(Reply(None, raw=body))

    assert resolve("emb", "embed").embed(["first", "second"]) == [[1.0, 1.0], [2.0, 2.0]]


def test_transient_errors_are_retried_a_bounded_number_of_times(embedder, fake_openai):
    fake_openai.push(Reply.error(503), Reply.error(429, headers={"Retry-After": "0"}))

    assert resolve("emb", "embed").embed(["x"]) == [[1.0, 0.0, 1.0]]
    assert len(fake_openai.requests) == 3
    assert EngineCall.objects.get(cache_hit=False).attempts == 3


def test_giving_up_on_transient_errors_is_not_permanent(embedder, fake_openai):
    fake_openai.push(*[Reply.error(500, "down")] * 4)

    with pytest.raises(EngineError) as caught:
        resolve("emb", "embed").embed(["x"])

    assert caught.value.permanent is False
    assert "gave up after 4 attempts" in caught.value.message
    assert not CachedResponse.objects.exists()


def test_a_wrong_number_of_vectors_is_reasked_then_permanent(embedder, fake_openai):
    fake_openai.push(*[Reply.embeddings([[1.0]])] * 3)

    with pytest.raises(EngineError) as caught:
        resolve("emb", "embed").embed(["x", "y"])

    assert caught.value.permanent is True
    assert "asked for 2 embeddings, got 1 (3 malformed responses)" in caught.value.message
    assert len(fake_openai.requests) == 3


def test_a_bad_request_is_permanent_at_once(embedder, fake_openai):
    fake_openai.push(Reply.error(400, "input too long"))

    with pytest.raises(EngineError) as caught:
        resolve("emb", "embed").embed(["x"])

    assert caught.value.permanent is True
    assert "input too long" in caught.value.message
    assert len(fake_openai.requests) == 1


def test_a_chat_engine_is_not_an_embedder(fake_openai):
    EngineFactory(name="chat", base_url=fake_openai.base_url)

    with pytest.raises(EngineError, match="not configured as an embeddings model"):
        resolve("chat", "embed")


def test_the_remote_kind_needs_a_model_and_url_and_valid_params():
    engine = Engine(
        name="e", kind=Engine.Kind.OPENAI_EMBEDDINGS, capabilities=["embed"],
        params={"batch_size": 0, "temperature": 1},
    )  # fmt: skip

    with pytest.raises(ValidationError) as caught:
        engine.full_clean()

    errors = caught.value.message_dict
    assert errors["model"] == ["An OpenAI-compatible engine needs a model id."]
    assert "batch_size must be an integer from 1 to 2048" in errors["params"]
    assert any("unknown parameter 'temperature'" in e for e in errors["params"])


# --- the offline kind ------------------------------------------------------------------------


def test_hashed_embeddings_are_unit_length_and_deterministic():
    rows = hashed_embeddings(["The cat sat.", "The cat sat.", "Quantum chromodynamics"], dim=64)

    assert rows.shape == (3, 64)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    assert np.array_equal(rows[0], rows[1])
    # Shared surface form is closer than none.
    assert rows[0] @ rows[1] == pytest.approx(1.0)
    assert rows[0] @ rows[2] < 0.5


def test_a_text_without_ngrams_gets_a_zero_row():
    assert not hashed_embeddings([""], dim=8, ngram=(3, 3)).any()


def test_the_offline_kind_goes_through_the_ledger():
    Engine.objects.create(
        name="hashed", kind=Engine.Kind.HASHED_EMBEDDINGS, capabilities=["embed"],
        params={"dim": 16},
    )  # fmt: skip

    vectors = resolve("hashed", "embed", scope="h").embed(["a text", "another text"])

    assert [len(v) for v in vectors] == [16, 16]
    call = EngineCall.objects.get(scope="h")
    assert (call.operation, call.items, call.cost) == ("embed", 2, Decimal(0))


def test_the_engine_check_shows_the_dimension():
    Engine.objects.create(
        name="hashed", kind=Engine.Kind.HASHED_EMBEDDINGS, capabilities=["embed"],
        params={"dim": 32},
    )  # fmt: skip

    check = check_engine("hashed")

    assert check.ok and check.operation == "embed"
    assert check.output.startswith("32 dimensions: [")
