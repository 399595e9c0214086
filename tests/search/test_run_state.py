"""A run's stored bandit state: incremental rows, their migration, the kept policy (issue 19)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from django.apps import apps

from search.bandit.codec import decode_array
from search.models import PolicyChanges, SearchRun
from search.runs import state
from search.runs.services import advance_run, run_in_foreground, start_search_run
from tests.engines.factories import SyntheticEngineFactory
from tests.search.conftest import queue_rounds_settle_in_place, synthetic_run_config
from tests.search.test_run_pins import PINNED, pull_digest

migration = importlib.import_module("search.migrations.0009_policy_changes")


@pytest.fixture(autouse=True)
def enqueued(monkeypatch):
    return queue_rounds_settle_in_place(monkeypatch)


@pytest.fixture
def world(db):
    return SyntheticEngineFactory(name="world", params={"n_topics": 2000, "seed": 3})


def eb_ucb_config(**overrides) -> dict:
    return (
        synthetic_run_config(
            name="pinned eb_ucb", algorithm="eb_ucb", budget_pulls=1500, batch_size=40, seed=11, k=5
        )
        | overrides
    )


def test_a_round_writes_one_row_of_the_topics_it_pulled(world):
    run = start_search_run(eb_ucb_config(), enqueue=False)
    assert not PolicyChanges.objects.filter(run=run).exists()  # a fresh policy has no rows
    advance_run(run.pk, 0, worker="w")
    advance_run(run.pk, 1, worker="w")
    run.refresh_from_db()
    rows = list(PolicyChanges.objects.filter(run=run).order_by("seq"))
    assert [r.seq for r in rows] == [0, 1] and run.policy_state["changes"] == 2
    assert "gaps" not in run.policy_state["stats"]  # totals only in the run row
    touched = [decode_array(r.rows["gaps"]).shape[0] for r in rows]
    assert all(0 < n <= 40 for n in touched)
    assert state.load_policy(run).stats.n_scored == 80


def test_a_state_saved_whole_is_split_by_the_migration_and_merged_back(world):
    run = run_in_foreground(start_search_run(eb_ucb_config(), enqueue=False).pk)
    stored = state.load_policy(run)
    whole = stored.to_dict()
    PolicyChanges.objects.filter(run=run).delete()
    SearchRun.objects.filter(pk=run.pk).update(policy_state=whole)

    migration.split_states(apps, None)
    run.refresh_from_db()
    assert run.policy_state["stats_rows"] == "changes"
    assert PolicyChanges.objects.filter(run=run).count() == 1
    split = state.load_policy(run)
    assert np.array_equal(split.stats.sums, stored.stats.sums)
    assert np.array_equal(split.stats.first_values, stored.stats.first_values)
    assert split.top_k().tolist() == stored.top_k().tolist()
    migration.split_states(apps, None)  # idempotent
    assert PolicyChanges.objects.filter(run=run).count() == 1

    migration.merge_states(apps, None)
    run.refresh_from_db()
    assert not PolicyChanges.objects.filter(run=run).exists()
    assert run.policy_state == whole


def test_a_run_saved_whole_carries_on_with_the_same_pulls(world):
    """A state from before issue 19 that the migration did not split still runs: its first
    save writes every row once, and the pulls are the pinned ones."""
    run = start_search_run(eb_ucb_config(), enqueue=False)
    whole = state.load_policy(run).to_dict()
    SearchRun.objects.filter(pk=run.pk).update(policy_state=whole)
    run = run_in_foreground(run.pk)
    assert run.status == "finished", run.error
    assert pull_digest(run) == PINNED[("eb_ucb", 2000, 1500, 40)]
    assert run.policy_state["stats_rows"] == "changes"


def test_a_kept_policy_is_not_used_once_another_process_saved_the_run(transactional_db):
    SyntheticEngineFactory(name="world", params={"n_topics": 2000, "seed": 3})
    state.forget_kept()
    run = start_search_run(eb_ucb_config(), enqueue=False)
    advance_run(run.pk, 0, worker="w")
    kept_token = SearchRun.objects.get(pk=run.pk).policy_state["token"]
    # Another worker saves round 1 (its process kept nothing): simulated by forgetting,
    # running the round, then putting the stale policy of round 0 back in this memory.
    stale = state.policy_for_round(SearchRun.objects.get(pk=run.pk))
    advance_run(run.pk, 1, worker="w")
    state._keep(run.pk, kept_token, stale)
    current = SearchRun.objects.get(pk=run.pk)
    assert state.policy_for_round(current) is not stale
    assert state.policy_for_round(current).stats.n_scored == 80


def test_received_human_scores_are_found_through_the_index(world):
    """No ORDER BY on the model ordering: SQLite seeks (run, human_status) instead of walking
    every pull of the run (issue 19)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from search.runs import human_loop

    if connection.vendor != "sqlite":
        pytest.skip("the plan checked is SQLite's")
    run = run_in_foreground(start_search_run(eb_ucb_config(budget_pulls=200), enqueue=False).pk)
    with CaptureQueriesContext(connection) as queries:
        human_loop.apply_received(run, state.load_policy(run))
    sql = next(q["sql"] for q in queries.captured_queries if "human_status" in q["sql"])
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
        plan = " ".join(str(row) for row in cursor.fetchall())
    assert "pull_run_human" in plan and "TEMP B-TREE" not in plan
