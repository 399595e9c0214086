"""Engine factories; ``base_url`` usually comes from a FakeOpenAI server."""

from decimal import Decimal

import factory

from engines.models import Engine


class EngineFactory(factory.django.DjangoModelFactory):
    """An OpenAI-compatible engine with all four capabilities."""

    class Meta:
        model = Engine
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"llm-{n}")
    kind = Engine.Kind.OPENAI_CHAT
    capabilities = factory.LazyFunction(lambda: ["chat", "translate", "quality", "difficulty"])
    model = "test-model"
    base_url = "http://127.0.0.1:9/v1"
    params = factory.LazyFunction(lambda: {"temperature": 0})
    price_in_per_1k = Decimal("0.5")
    price_out_per_1k = Decimal("1.5")
    max_concurrency = 4
    timeout_s = 5.0
    max_retries = 3


class HeuristicEngineFactory(EngineFactory):
    name = factory.Sequence(lambda n: f"heuristic-{n}")
    kind = Engine.Kind.HEURISTIC
    capabilities = factory.LazyFunction(lambda: ["difficulty"])
    model = ""
    base_url = ""
    params = factory.LazyFunction(lambda: {"feature": "tokens"})
    price_in_per_1k = Decimal(0)
    price_out_per_1k = Decimal(0)


class SyntheticEngineFactory(HeuristicEngineFactory):
    name = factory.Sequence(lambda n: f"synthetic-{n}")
    kind = Engine.Kind.SYNTHETIC
    params = factory.LazyFunction(lambda: {"n_topics": 50, "seed": 7})


class ReplayEngineFactory(HeuristicEngineFactory):
    name = factory.Sequence(lambda n: f"replay-{n}")
    kind = Engine.Kind.REPLAY
    capabilities = factory.LazyFunction(lambda: ["translate", "quality", "difficulty"])
    params = factory.LazyFunction(dict)
