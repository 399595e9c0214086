"""Foreign keys whose column leads a composite index keep no index of their own: the migration
drops Django's single-column indexes (and only them), and migrating back makes them again."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("annotation", "0006_text_format")]
AFTER = [("annotation", "0007_foreign_keys_covered_by_composite_indexes")]
COVERED = {
    "annotation_annotation": ["campaign_id", "item_id"],
    "annotation_assignment": ["campaign_id", "item_id"],
    "annotation_enrollment": ["campaign_id"],
    "annotation_item": ["campaign_id"],
}


@pytest.fixture(autouse=True)
def _back_to_the_latest_migrations():
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def _migrate(targets) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)


def _indexes() -> dict[str, list[list[str]]]:
    """Each table's non-unique indexes, as their column lists."""
    with connection.cursor() as cursor:
        return {
            table: sorted(
                found["columns"]
                for found in connection.introspection.get_constraints(cursor, table).values()
                if found["index"] and not found["unique"] and not found["primary_key"]
            )
            for table in COVERED
        }


def test_the_covered_single_column_indexes_go_and_come_back():
    _migrate(BEFORE)
    before = _indexes()
    for table, columns in COVERED.items():
        for column in columns:
            assert [column] in before[table]

    _migrate(AFTER)
    after = _indexes()
    for table, columns in COVERED.items():
        assert after[table] == [found for found in before[table] if found not in
                                [[column] for column in columns]]  # fmt: skip
    # What still serves those columns: composite indexes that start with them.
    assert ["campaign_id", "kind", "live_slots", "position"] in after["annotation_item"]
    assert ["annotator_id"] in after["annotation_annotation"]  # not covered: kept

    _migrate(BEFORE)
    assert _indexes() == before
