"""Items keep their live slots (active + submitted claims) as a counter, so that next_item_for
finds an open item with one indexed query instead of recounting claims item by item."""

from django.db import migrations, models
from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce


def count_live_slots(apps, schema_editor):
    """Set every item's counter from its claims in one statement (lapsed-but-active claims
    count, as they do after the migration: next_item_for releases them when it needs them)."""
    Item = apps.get_model("annotation", "Item")
    Assignment = apps.get_model("annotation", "Assignment")
    live = (
        Assignment.objects.filter(item=OuterRef("pk"), status__in=["active", "submitted"])
        .order_by()
        .values("item")
        .annotate(n=Count("pk"))
        .values("n")
    )
    Item.objects.update(live_slots=Coalesce(Subquery(live, output_field=IntegerField()), Value(0)))


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0002_campaign_protocol_registry"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="item",
            name="annotation_item_next_idx",
        ),
        migrations.AddField(
            model_name="item",
            name="live_slots",
            field=models.PositiveIntegerField(default=0),
        ),
        # Going back drops the column, so there is nothing to undo.
        migrations.RunPython(count_live_slots, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="assignment",
            index=models.Index(
                fields=["campaign", "status", "expires_at"], name="annotation_asg_lapsed_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="item",
            index=models.Index(
                fields=["campaign", "kind", "live_slots", "position"],
                name="annotation_item_open_idx",
            ),
        ),
    ]
