"""Incremental bandit state (issue 19): per-topic rows move out of ``SearchRun.policy_state``.

Forwards, each run's full state becomes its totals (in ``policy_state``) plus one
``PolicyChanges`` row holding every topic it had pulled: the old ``stats`` arrays are already
in the row format, so nothing is decoded. Backwards, the rows are merged into a full state.
"""

import secrets

import django.db.models.deletion
from django.db import migrations, models

_ROW_KEYS = ("gaps", "counts", "sums", "sumsq", "pending", "first_values")
_TOTAL_KEYS = ("n_topics", "n_scored", "n_pending", "first")


def split_states(apps, schema_editor):
    SearchRun = apps.get_model("search", "SearchRun")
    PolicyChanges = apps.get_model("search", "PolicyChanges")
    for run in SearchRun.objects.only("pk", "policy_state").iterator(chunk_size=50):
        state = run.policy_state or {}
        stats = state.get("stats") or {}
        if state.get("stats_rows") == "changes" or "gaps" not in stats:
            continue  # no state yet, or already split
        PolicyChanges.objects.create(run=run, seq=0, rows={key: stats[key] for key in _ROW_KEYS})
        run.policy_state = {
            **state,
            "stats": {key: stats[key] for key in _TOTAL_KEYS},
            "stats_rows": "changes",
            "changes": 1,
            "token": secrets.token_hex(8),
        }
        run.save(update_fields=["policy_state"])


def merge_states(apps, schema_editor):
    from search.bandit.stats import ArmStats

    SearchRun = apps.get_model("search", "SearchRun")
    PolicyChanges = apps.get_model("search", "PolicyChanges")
    for run in SearchRun.objects.only("pk", "policy_state").iterator(chunk_size=50):
        state = run.policy_state or {}
        if state.get("stats_rows") != "changes":
            continue
        stats = ArmStats.from_totals(state["stats"])
        rows = PolicyChanges.objects.filter(run=run).order_by("seq")
        for changes in rows.values_list("rows", flat=True).iterator():
            stats.apply_changes(changes)
        header = {k: v for k, v in state.items() if k not in ("stats_rows", "changes", "token")}
        run.policy_state = {**header, "stats": stats.to_dict()}
        run.save(update_fields=["policy_state"])
        rows.delete()


class Migration(migrations.Migration):
    dependencies = [
        ("search", "0008_breaker_human_results"),
    ]

    operations = [
        migrations.CreateModel(
            name="PolicyChanges",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("seq", models.PositiveIntegerField()),
                ("rows", models.JSONField()),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="search.searchrun",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("run", "seq"), name="policy_changes_unique_seq")
                ],
            },
        ),
        migrations.RunPython(split_states, merge_states),
    ]
