"""The default batch size follows the run: its budget and its engines' concurrency (issue 19)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from search.models import SearchRun
from search.runs.config import DEFAULT_BATCH_CAP, default_batch_size, validate_config
from search.runs.services import start_search_run
from tests.engines.factories import SyntheticEngineFactory
from tests.search.conftest import (
    crowd_run_config,
    make_crowd,
    queue_rounds_settle_in_place,
    synthetic_run_config,
)
from tests.search.test_run_pages import form_data


@pytest.fixture(autouse=True)
def enqueued(monkeypatch):
    return queue_rounds_settle_in_place(monkeypatch)


@pytest.mark.parametrize(
    ("budget", "concurrency", "expected"),
    [
        (100_000, None, 1000),  # local engines: 1 % of the budget
        (500_000, None, DEFAULT_BATCH_CAP),  # ... capped
        (600, None, 10),  # ... at least 10
        (4, None, 4),  # ... never above the budget
        (3000, 4, 28),  # remote: 1 % = 30, in multiples of the limit 4
        (100_000, 4, 32),  # remote: at most 8 requests per slot
        (100_000, 16, 128),
        (100, 16, 16),  # remote: at least one request per slot
        (5, 16, 5),  # ... never above the budget
    ],
)
def test_default_batch_size(budget, concurrency, expected):
    assert default_batch_size(budget, concurrency) == expected


def test_a_config_without_batch_size_gets_the_default(db):
    SyntheticEngineFactory(name="world", params={"n_topics": 5000, "seed": 1})
    config = synthetic_run_config(budget_pulls=50_000)
    del config["batch_size"]
    assert validate_config(config)["batch_size"] == 500
    assert validate_config({**config, "batch_size": None})["batch_size"] == 500
    assert validate_config({**config, "batch_size": 7})["batch_size"] == 7


def test_a_crowd_run_follows_its_slowest_remote_engine(db, corpus_tree, fake_openai):
    make_crowd(fake_openai.base_url)  # translator and QE engines with max_concurrency 4
    config = crowd_run_config(corpus_tree, budget_pulls=3000)
    del config["batch_size"]
    assert validate_config(config)["batch_size"] == 28


def test_the_form_leaves_the_batch_to_the_run(admin_client, db):
    SyntheticEngineFactory(name="world", params={"n_topics": 5000, "seed": 1})
    page = admin_client.get(reverse("search:run_create")).content.decode()
    assert "Leave empty to follow the run" in page
    data = form_data(name="Default batch", budget_pulls="40000", batch_size="")
    response = admin_client.post(reverse("search:run_create"), data)
    assert response.status_code == 302
    assert SearchRun.objects.get().batch_size == 400


def test_an_explicit_batch_is_kept(db):
    SyntheticEngineFactory(name="world", params={"n_topics": 500, "seed": 1})
    run = start_search_run(synthetic_run_config(budget_pulls=300, batch_size=50), enqueue=False)
    assert run.batch_size == 50
