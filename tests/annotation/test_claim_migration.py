"""The live-slot counter: a database with claims made before it migrates forward with every
item's counter set from its claims, and migrates back."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("annotation", "0002_campaign_protocol_registry")]
AFTER = [("annotation", "0003_item_live_slots")]


@pytest.fixture(autouse=True)
def _back_to_the_latest_migrations():
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


def _claims_made_before(apps) -> dict[str, int]:
    user_model = apps.get_model("auth", "User")
    annotators = [
        apps.get_model("annotation", "Annotator").objects.create(
            user=user_model.objects.create(username=name), pseudonym=name
        )
        for name in ("a", "b", "c")
    ]
    campaign = apps.get_model("annotation", "Campaign").objects.create(
        name="before", slug="before", protocol="esa", overlap=2
    )
    item_model = apps.get_model("annotation", "Item")
    items = {
        name: item_model.objects.create(campaign=campaign, source=name, position=n)
        for n, name in enumerate(("two live", "one lapsed", "none"))
    }
    later = timezone.now() + timezone.timedelta(hours=1)
    claims = [
        ("two live", 0, "submitted"),
        ("two live", 1, "active"),
        ("two live", 2, "expired"),
        ("one lapsed", 0, "active"),
        ("none", 1, "expired"),
    ]
    for item, annotator, status in claims:
        apps.get_model("annotation", "Assignment").objects.create(
            campaign=campaign,
            item=items[item],
            annotator=annotators[annotator],
            status=status,
            expires_at=later,
        )
    return {name: item.pk for name, item in items.items()}


def test_the_counter_is_filled_from_existing_claims_and_the_migration_reverses():
    ids = _claims_made_before(_migrate(BEFORE))

    after = _migrate(AFTER)

    slots = dict(after.get_model("annotation", "Item").objects.values_list("pk", "live_slots"))
    assert slots == {ids["two live"]: 2, ids["one lapsed"]: 1, ids["none"]: 0}

    before = _migrate(BEFORE)
    item_fields = {f.name for f in before.get_model("annotation", "Item")._meta.get_fields()}
    assert "live_slots" not in item_fields
    with connection.cursor() as cursor:
        columns = connection.introspection.get_table_description(cursor, "annotation_item")
    assert "live_slots" not in {column.name for column in columns}
