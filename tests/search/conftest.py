"""Fixtures of the search tests: the fake OpenAI server, a crowd on it, a small corpus tree."""

from __future__ import annotations

from decimal import Decimal
from unittest import mock

import pytest

import rounds.queue
from engines.models import Engine
from engines.services import save_engine
from search.models import TopicTree
from search.runs import human_loop
from search.runs import services as run_services
from search.topics.services import import_corpus, import_topic_tree
from tests.engines.conftest import fake_openai  # noqa: F401  (re-exported fixture)
from tests.engines.factories import EngineFactory

WORDS = (
    "river bank ledger clause harvest engine verdict lantern quarry orbit saffron tariff "
    "meadow scaffold vintage compass glacier ferment canopy dialect"
).split()


def snippet(topic: int, number: int, words: int = 24) -> str:
    """A distinct 20–40-word text for a topic (the texts differ in length and words)."""
    body = [WORDS[(topic * 7 + number * 3 + i) % len(WORDS)] for i in range(words + number)]
    return f"Topic {topic} text {number}: " + " ".join(body) + "."


def make_corpus_tree(name: str = "Small tree", n_topics: int = 6, per_topic: int = 4):
    """A flat tree of ``n_topics`` leaves with ``per_topic`` corpus texts each."""
    tree = import_topic_tree([f"Topic {t}" for t in range(n_topics)], name=name)
    lines = [
        f'{{"topic": "Topic {t}", "text": "{snippet(t, n)}", "source_url": "https://example.org/{t}/{n}"}}'
        for t in range(n_topics)
        for n in range(per_topic)
    ]
    import_corpus(tree, "\n".join(lines), file_name="test.jsonl")
    return TopicTree.objects.get(pk=tree.pk)


def make_crowd(base_url: str, translators: tuple[str, ...] = ("mt-a",)) -> Engine:
    """An artificial crowd of OpenAI-compatible translators and one paid QE engine."""
    for name in translators:
        EngineFactory(name=name, model=f"model-{name}", base_url=base_url, max_concurrency=4)
    EngineFactory(
        name="qe",
        model="judge",
        base_url=base_url,
        price_in_per_1k=Decimal(1),
        price_out_per_1k=Decimal(0),
        max_concurrency=4,
    )
    return save_engine(
        {
            "name": "crowd",
            "kind": "artificial_crowd",
            "capabilities": ["difficulty"],
            "params": {"translators": list(translators), "quality_estimators": ["qe"]},
        }
    )


@pytest.fixture
def corpus_tree(db) -> TopicTree:
    return make_corpus_tree()


@pytest.fixture
def crowd(db, fake_openai) -> Engine:  # noqa: F811
    return make_crowd(fake_openai.base_url)


def synthetic_run_config(**overrides) -> dict:
    """A small synthetic run on an engine named "world" (see the ``world`` fixtures)."""
    return {
        "name": "Synthetic small",
        "sampler": "synthetic",
        "difficulty_engine": "world",
        "budget_pulls": 300,
        "k": 5,
        "batch_size": 50,
        "seed": 3,
    } | overrides


def crowd_run_config(tree, **overrides) -> dict:
    """A corpus run over ``tree`` scored by the ``crowd`` engine of :func:`make_crowd`."""
    return {
        "name": "Crowd run",
        "tree": tree.name,
        "sampler": "corpus",
        "difficulty_engine": "crowd",
        "tgt_lang": "cs",
        "algorithm": "epsilon_greedy",
        "budget_pulls": 16,
        "k": 2,
        "batch_size": 4,
    } | overrides


def queue_rounds_settle_in_place(monkeypatch) -> mock.Mock:
    """Patch the round kernel's sending: search rounds queued are recorded as
    ``(run_id, round_index)`` calls of the returned mock, not sent, and human scores that arrive
    settle their run in place (as the settle task would)."""
    rounds_queued = mock.Mock()

    def send(task_name, args, queue, countdown):
        if task_name == human_loop.SETTLE_TASK:
            run_services.settle(*args)
        elif task_name == run_services.ADVANCE_TASK:
            rounds_queued(*args)
        else:
            raise AssertionError(f"a search test queued an unexpected task: {task_name}")

    monkeypatch.setattr(rounds.queue, "send_task", send)
    return rounds_queued
