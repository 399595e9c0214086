"""Sessions move to ``accounts_session``, which names the signed-in user in a column, so that a
request reads its session and its user with one statement (accounts/sessions.py). Live
sessions are copied over, each with the user its data names, so nobody is signed out by the
upgrade; going back copies them the other way."""

import django.db.models.deletion
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.db import migrations, models
from django.utils import timezone

BATCH = 1000


def _live(model):
    return model.objects.filter(expire_date__gt=timezone.now()).order_by("pk").iterator(BATCH)


def _copy(rows, model, make) -> None:
    batch = []
    for row in rows:
        batch.append(make(row))
        if len(batch) == BATCH:
            model.objects.bulk_create(batch, ignore_conflicts=True)
            batch = []
    model.objects.bulk_create(batch, ignore_conflicts=True)


def forwards(apps, schema_editor):
    Old = apps.get_model("sessions", "Session")
    New = apps.get_model("accounts", "Session")
    User = apps.get_model(settings.AUTH_USER_MODEL)
    codec = SessionStore()  # decodes with this site's secret key and serializer
    users = set(User.objects.values_list("pk", flat=True))

    def user_of(data: str):
        named = str(codec.decode(data).get(SESSION_KEY, ""))  # {} when it does not decode
        return int(named) if named.isdigit() and int(named) in users else None

    _copy(
        _live(Old),
        New,
        lambda row: New(
            session_key=row.session_key,
            session_data=row.session_data,
            expire_date=row.expire_date,
            user_id=user_of(row.session_data),
        ),
    )


def backwards(apps, schema_editor):
    Old = apps.get_model("sessions", "Session")
    New = apps.get_model("accounts", "Session")
    _copy(
        _live(New),
        Old,
        lambda row: Old(
            session_key=row.session_key,
            session_data=row.session_data,
            expire_date=row.expire_date,
        ),
    )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_sessions_name_the_hand_written_backend"),
        ("sessions", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Session",
            fields=[
                (
                    "session_key",
                    models.CharField(
                        max_length=40,
                        primary_key=True,
                        serialize=False,
                        verbose_name="session key",
                    ),
                ),
                ("session_data", models.TextField(verbose_name="session data")),
                ("expire_date", models.DateTimeField(db_index=True, verbose_name="expire date")),
                (
                    "user",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "session",
                "verbose_name_plural": "sessions",
                "db_table": "accounts_session",
                "abstract": False,
            },
        ),
        migrations.RunPython(forwards, backwards),
    ]
