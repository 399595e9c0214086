"""Difficulty became an app: a database made before the move migrates forward, rows intact."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("search", "0003_pull_human_scores"), ("engines", "0001_engines_cache_ledger_replay")]
AFTER = [("search", "0004_difficulty_moved_out"), ("difficulty", "0001_moved_from_search")]


@pytest.fixture(autouse=True)
def _back_to_the_latest_migrations():
    """The test stops at AFTER; later migrations (search 0005, engines 0002, ...) come back so
    the tests that follow see the whole schema."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def _migrate(targets, state_at):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(state_at).apps


def test_datasets_and_evaluations_made_under_search_survive_the_move():
    old = _migrate([*BEFORE, ("difficulty", None)], BEFORE)
    dataset = old.get_model("search", "DifficultyDataset").objects.create(
        name="made before the move", n_segments=0
    )
    old.get_model("search", "DifficultyEvaluation").objects.create(
        dataset_id=dataset.pk, estimators=["length"], subset_fraction=0.25
    )

    new = _migrate(AFTER, AFTER)

    moved = new.get_model("difficulty", "DifficultyDataset").objects.get()
    assert (moved.pk, moved.name) == (dataset.pk, "made before the move")
    evaluation = new.get_model("difficulty", "DifficultyEvaluation").objects.get()
    assert (evaluation.dataset_id, evaluation.estimators) == (dataset.pk, ["length"])
    content_types = new.get_model("contenttypes", "ContentType").objects
    assert not content_types.filter(app_label="search", model__startswith="difficulty").exists()
