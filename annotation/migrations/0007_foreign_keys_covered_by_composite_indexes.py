"""Drop the single-column indexes Django made for six foreign keys whose column already leads a
composite index (``annotation_item_open_idx``, ``annotation_asg_mine_idx``, the unique
(item, annotator) constraints, ...): every claim and submission maintained both.

Only the indexes go. Django's own ``AlterField`` would also drop and re-add each foreign key
constraint on PostgreSQL, re-checking every row of the largest tables under an exclusive lock,
and rebuild each table on SQLite.
"""

import django.db.models.deletion
from django.db import migrations, models

COVERED = [
    ("annotation", "campaign"),
    ("annotation", "item"),
    ("assignment", "campaign"),
    ("assignment", "item"),
    ("enrollment", "campaign"),
    ("item", "campaign"),
]


def _single_column_indexes(schema_editor, table: str, column: str) -> list[str]:
    with schema_editor.connection.cursor() as cursor:
        constraints = schema_editor.connection.introspection.get_constraints(cursor, table)
    return [
        name
        for name, found in constraints.items()
        if found["index"]
        and not found["unique"]
        and not found["primary_key"]
        and found["columns"] == [column]
    ]


def drop_indexes(apps, schema_editor):
    for model_name, field_name in COVERED:
        model = apps.get_model("annotation", model_name)
        column = model._meta.get_field(field_name).column
        for name in _single_column_indexes(schema_editor, model._meta.db_table, column):
            schema_editor.execute(f"DROP INDEX {schema_editor.quote_name(name)}")


def create_indexes(apps, schema_editor):
    for model_name, field_name in COVERED:
        model = apps.get_model("annotation", model_name)
        column = model._meta.get_field(field_name).column
        table = model._meta.db_table
        if not _single_column_indexes(schema_editor, table, column):
            quote = schema_editor.quote_name
            schema_editor.execute(
                f"CREATE INDEX {quote(f'{table}_{column}_fk_idx')} ON {quote(table)} ({quote(column)})"
            )


def _without_index(model_name: str, field_name: str) -> migrations.AlterField:
    targets = {"campaign": "annotation.campaign", "item": "annotation.item"}
    related_names = {
        "annotation": "annotations",
        "assignment": "assignments",
        "enrollment": "enrollments",
        "item": "items",
    }
    return migrations.AlterField(
        model_name=model_name,
        name=field_name,
        field=models.ForeignKey(
            db_index=False,
            on_delete=django.db.models.deletion.CASCADE,
            related_name=related_names[model_name],
            to=targets[field_name],
        ),
    )


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0006_text_format"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[_without_index(model, field) for model, field in COVERED],
            database_operations=[migrations.RunPython(drop_indexes, create_indexes)],
        ),
    ]
