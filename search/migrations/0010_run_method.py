from django.db import migrations, models

# Constructor arguments every policy records that are not method choices: they come from the
# run's own fields (budget) or are bookkeeping, so they stay out of "method".
_RUN_LEVEL = {"budget"}


def record_methods(apps, schema_editor):
    """Existing runs keep the method their stored bandit state was built with."""
    SearchRun = apps.get_model("search", "SearchRun")
    for run in SearchRun.objects.only("pk", "policy_state").iterator(chunk_size=200):
        state = run.policy_state or {}
        if not state.get("policy"):
            continue
        params = {k: v for k, v in (state.get("params") or {}).items() if k not in _RUN_LEVEL}
        method = {"policy": state["policy"], "params": params}
        SearchRun.objects.filter(pk=run.pk).update(method=method)


class Migration(migrations.Migration):
    dependencies = [
        ("search", "0009_policy_changes"),
    ]

    operations = [
        migrations.AddField(
            model_name="searchrun",
            name="method",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(record_methods, migrations.RunPython.noop),
    ]
