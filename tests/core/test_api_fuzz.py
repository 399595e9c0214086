"""Generated requests against every API operation, in process: no server error, and every
response matches the OpenAPI schema (drf-spectacular's, as /api/schema/ serves it).

Schemathesis calls the Django WSGI app directly, as a staff user with an API token. Each
operation gets a few deterministic examples (``derandomize``), each sent twice: as generated
(mostly ids that do not exist) and with the path's id set to a real object seeded below, so the
detail views and actions run on data too. Everything runs inside transactions that are rolled
back; ``on_commit`` work (queued rounds) never runs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections, transaction
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from accounts.services import create_token
from annotation.services.claims import next_item_for
from annotation.services.submissions import submit_annotation
from config.wsgi import application
from difficulty.services import (
    import_difficulty_dataset,
    run_difficulty_evaluation,
    start_difficulty_evaluation,
)
from ranking.services import run_in_foreground as run_ranking
from ranking.services import start_ranking
from search.breaker.services import run_in_foreground as run_breaker
from search.breaker.services import start_breaker_run
from search.runs.services import run_in_foreground as run_search
from search.runs.services import start_search_run
from tests.annotation.factories import enrolled, esa_answer, esa_campaign
from tests.challenge_sets.conftest import make_set
from tests.difficulty.test_difficulty_pages import jsonl as difficulty_jsonl
from tests.engines.factories import SyntheticEngineFactory
from tests.factories import UserFactory
from tests.search.breaker_helpers import offline_config
from tests.search.conftest import make_corpus_tree, synthetic_run_config

schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
schema.app = application

CHECKS = [not_a_server_error, response_schema_conformance]


@pytest.fixture(scope="module")
def seeded(django_db_setup, django_db_blocker) -> Iterator[dict[str, tuple[str, object]]]:
    """Seeded once for every operation, in a transaction rolled back at the end; each test's
    own transaction (``db``) is a savepoint inside it, so what one operation writes is gone
    before the next."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield _seed()
        transaction.set_rollback(True)


def _seed() -> dict[str, tuple[str, object]]:
    """One real object per collection: the path's first segment -> (path parameter, value)."""
    campaign = esa_campaign(n_items=3)
    annotator = enrolled(campaign, "alice")
    item = next_item_for(annotator, campaign)
    submit_annotation(annotator, item, esa_answer())
    SyntheticEngineFactory(name="world", params={"n_topics": 20, "seed": 1})
    config = synthetic_run_config(budget_pulls=40, k=3, batch_size=10)
    search_run = run_search(start_search_run(config, enqueue=False).pk)
    breaker_run = run_breaker(start_breaker_run(offline_config(), enqueue=False).pk)
    dataset = import_difficulty_dataset(difficulty_jsonl().splitlines(), name="tiny")
    evaluation = start_difficulty_evaluation(dataset, ["length"], n_bootstrap=5, enqueue=False)
    run_difficulty_evaluation(evaluation.pk)
    ranking = start_ranking(input_kind="dataset", dataset=dataset, enqueue=False)
    run_ranking(ranking.pk)
    ids = {
        "campaigns": campaign.pk,
        "items": item.pk,
        "annotators": annotator.pk,
        "annotations": item.annotations.get().pk,
        "topic-trees": make_corpus_tree().pk,
        "search-runs": search_run.pk,
        "breaker-runs": breaker_run.pk,
        "difficulty-datasets": dataset.pk,
        "difficulty-evaluations": evaluation.pk,
        "challenge-sets": make_set().pk,
        "rankings": ranking.pk,
    }
    return {"engines": ("name", "world")} | {key: ("id", pk) for key, pk in ids.items()}


@pytest.fixture
def connections_kept_open():
    """Django's WSGI handler closes the database connection after each request, which would
    close the test's transaction; the test client avoids this the same way."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def token_headers(db, seeded, connections_kept_open) -> dict[str, str]:
    staff = UserFactory(username="fuzzer", is_staff=True, is_superuser=True)
    _, secret = create_token(staff, "schemathesis")
    return {"Authorization": f"Bearer {secret}"}


def _with_real_id(case, seeded: dict[str, tuple[str, object]]):
    """``case`` again with the path's id (or name) set to the seeded object's, if any."""
    collection = case.path.strip("/").split("/")[1]
    param, value = seeded.get(collection, ("", None))
    if param not in (case.path_parameters or {}):
        return None
    return case.operation.Case(
        path_parameters={**case.path_parameters, param: value},
        query=case.query,
        headers=case.headers,
        body=case.body,
        media_type=case.media_type,
    )


@schema.parametrize()
@settings(
    max_examples=5,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_server_error_and_responses_match_the_schema(case, db, seeded, token_headers):
    case.call_and_validate(headers=token_headers, checks=CHECKS)
    real = _with_real_id(case, seeded)
    if real is not None:
        real.call_and_validate(headers=token_headers, checks=CHECKS)
