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


def _copy(source, target, user_of=None) -> None:
    """Copy the live sessions of ``source`` into ``target``; with ``user_of``, each names the
    user that function finds in its data."""
    live = source.objects.filter(expire_date__gt=timezone.now()).order_by("pk").iterator(BATCH)
    batch = []
    for row in live:
        copy = target(
            session_key=row.session_key, session_data=row.session_data, expire_date=row.expire_date
        )
        if user_of is not None:
            copy.user_id = user_of(row.session_data)
        batch.append(copy)
        if len(batch) == BATCH:
            target.objects.bulk_create(batch, ignore_conflicts=True)
            batch = []
    target.objects.bulk_create(batch, ignore_conflicts=True)


def forwards(apps, schema_editor):
    User = apps.get_model(settings.AUTH_USER_MODEL)
    codec = SessionStore()  # decodes with this site's secret key and serializer
    users = set(User.objects.values_list("pk", flat=True))

    def user_of(data: str):
        named = str(codec.decode(data).get(SESSION_KEY, ""))  # {} when it does not decode
        return int(named) if named.isdigit() and int(named) in users else None

    _copy(apps.get_model("sessions", "Session"), apps.get_model("accounts", "Session"), user_of)


def backwards(apps, schema_editor):
    _copy(apps.get_model("accounts", "Session"), apps.get_model("sessions", "Session"))


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
