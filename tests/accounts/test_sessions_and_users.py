"""Each signed-in request reads its session and its user with one hand-written statement
(accounts/sessions.py, accounts/backends.py): same answers as Django's own lookups."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.backends import ModelBackend
from accounts.models import Session
from accounts.sessions import SessionStore, signed_in_user, user_pk
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


def _with_session(key: str) -> Client:
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = key
    return client


def test_the_session_and_its_user_are_read_with_one_statement():
    user = UserFactory(username="ada")
    client = signed_in(user)
    assert Session.objects.get().user_id == user.pk

    with CaptureQueriesContext(connection) as queries:
        assert is_signed_in(client)
    users = [q["sql"] for q in queries if get_user_model()._meta.db_table in q["sql"]]
    assert len(users) == 1 and "session_data" in users[0]
    # What the session read said is not left for another request.
    assert signed_in_user(user.pk) == (False, None)


def test_deleting_a_user_ends_their_sessions():
    user = UserFactory(username="ada")
    client = signed_in(user)
    user.delete()
    assert not Session.objects.exists()
    assert not is_signed_in(client)


def test_a_session_whose_user_id_is_not_a_key_names_no_user():
    """Only the server writes session data (Django reads it back unchecked, as here), but the
    column is filled from it on every save: a value that is no key leaves it empty."""
    session = SessionStore()
    session["_auth_user_id"] = "1 OR 1=1"
    session.save()
    assert Session.objects.get(session_key=session.session_key).user_id is None
    assert user_pk("1 OR 1=1") is None
    assert user_pk("7") == 7


def test_the_upgrades_keep_sessions_made_before_them():
    """Sessions made before the password backend moved name Django's ModelBackend, and live in
    ``django_session``: migration 0002 renames the backend in them and 0003 copies them, with
    their user, to ``accounts_session``, so nobody is signed out by the upgrade."""
    from importlib import import_module

    from django.apps import apps
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends import db

    renamed = import_module("accounts.migrations.0002_sessions_name_the_hand_written_backend")
    copied = import_module("accounts.migrations.0003_sessions_name_their_user")
    user = UserFactory(username="ada")
    old = db.SessionStore()  # Django's own store: django_session
    old[SESSION_KEY] = str(user.pk)
    old[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    old[HASH_SESSION_KEY] = user.get_session_auth_hash()
    old.create()
    expired = db.SessionStore()
    expired[SESSION_KEY] = str(user.pk)
    expired.set_expiry(-1)
    expired.create()
    assert not is_signed_in(_with_session(old.session_key))

    renamed.forwards(apps, None)
    copied.forwards(apps, None)
    assert is_signed_in(_with_session(old.session_key))
    assert list(Session.objects.values_list("session_key", "user_id")) == [
        (old.session_key, user.pk)
    ]

    # Going back, sessions made since are copied to django_session.
    since = signed_in(user).session.session_key
    copied.backwards(apps, None)
    assert db.SessionStore(since).load()[SESSION_KEY] == str(user.pk)
