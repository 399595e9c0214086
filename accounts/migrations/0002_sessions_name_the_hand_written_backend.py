"""Signed-in sessions name the backend that logged them in; the password backend moved to
accounts.backends (the user read by hand-written SQL), so live sessions are renamed to it
rather than all signed out by the upgrade."""

from django.contrib.auth import BACKEND_SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.db import migrations
from django.utils import timezone

DJANGO = "django.contrib.auth.backends.ModelBackend"
OURS = "accounts.backends.ModelBackend"


def _rename(apps, old: str, new: str) -> None:
    Session = apps.get_model("sessions", "Session")
    codec = SessionStore()  # encodes and decodes with this site's secret key and serializer
    for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator():
        data = codec.decode(session.session_data)  # {} for a session that does not decode
        if data.get(BACKEND_SESSION_KEY) == old:
            data[BACKEND_SESSION_KEY] = new
            session.session_data = codec.encode(data)
            session.save(update_fields=["session_data"])


def forwards(apps, schema_editor):
    _rename(apps, DJANGO, OURS)


def backwards(apps, schema_editor):
    _rename(apps, OURS, DJANGO)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_api_tokens"),
        ("sessions", "0001_initial"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
