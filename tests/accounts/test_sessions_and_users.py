"""Each signed-in request reads its session and its user with hand-written SQL
(accounts/sessions.py, accounts/backends.py): same answers as Django's own lookups."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from accounts.backends import ModelBackend
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"


def signed_in(user) -> Client:
    client = Client()
    assert client.post("/accounts/login/", {"username": user.username, "password": PASSWORD})
    assert client.session.get("_auth_user_id") == str(user.pk)
    return client


def is_signed_in(client: Client) -> bool:
    return client.get("/accounts/tokens/").status_code == 200


def test_the_user_read_by_hand_written_sql_is_the_one_the_orm_reads():
    user = UserFactory(first_name="Ada", is_staff=True)
    read = ModelBackend().get_user(str(user.pk))
    expected = get_user_model().objects.get(pk=user.pk)
    fields = [field.attname for field in get_user_model()._meta.concrete_fields]
    assert [getattr(read, name) for name in fields] == [getattr(expected, n) for n in fields]
    assert read.last_login is None or read.last_login.tzinfo is not None  # converted on SQLite
    assert ModelBackend().get_user("not a number") is None
    assert ModelBackend().get_user(str(user.pk + 1000)) is None


def test_a_login_keeps_working_and_ends_as_django_ends_it():
    user = UserFactory(username="ada")
    client = signed_in(user)
    assert is_signed_in(client)

    # A password change elsewhere ends the session (its hash no longer matches).
    user.set_password("another battery horse")
    user.save()
    assert not is_signed_in(client)

    # A deactivated account is signed out; an expired session is gone.
    user.set_password(PASSWORD)
    user.save()
    client = signed_in(user)
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)
    assert not is_signed_in(client)
    get_user_model().objects.filter(pk=user.pk).update(is_active=True)
    client = signed_in(user)
    Session.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    assert not is_signed_in(client)


def test_the_upgrade_keeps_sessions_signed_in_by_djangos_backend():
    """Sessions made before the password backend moved name Django's ModelBackend, which is no
    longer listed: the migration renames it in them, so nobody is signed out by the upgrade."""
    from importlib import import_module

    from django.apps import apps
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    migration = import_module("accounts.migrations.0002_sessions_name_the_hand_written_backend")
    user = UserFactory(username="ada")
    store = import_module(settings.SESSION_ENGINE).SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = store.session_key
    assert not is_signed_in(client)

    migration.forwards(apps, None)
    assert is_signed_in(client)
    migration.backwards(apps, None)
    assert not is_signed_in(client)
