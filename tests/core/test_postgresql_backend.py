"""The PostgreSQL backend of core/postgresql: prepared hot statements, a health check that
spends no round trip on a healthy connection and still notices one the server ended."""

from __future__ import annotations

import select
import time

import pytest
from django.db import DatabaseError, connection

from core import rows
from tests import databases
from tests.core.test_settings import start_django
from tests.rounds.database_outage import end_this_connection

postgres_only = databases.postgres_only("the backend of core/postgresql is PostgreSQL's")

HOT = "SELECT count(*) FROM django_session WHERE session_key = %s"


def _prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


@postgres_only
@pytest.mark.django_db
def test_hot_statements_are_prepared_and_orm_queries_are_not():
    for attempt in range(6):
        assert rows.fetch_one(HOT, [f"key-{attempt}"]) == (0,)
    for _ in range(6):
        list(connection.introspection.table_names())  # ORM-side cursor, client binding
    prepared = _prepared_statements()
    assert "SELECT count(*) FROM django_session WHERE session_key = $1" in prepared
    assert all("pg_catalog" not in statement for statement in prepared)


@postgres_only
@pytest.mark.django_db
def test_writes_through_the_prepared_cursor_report_their_row_count():
    sql = "UPDATE django_session SET expire_date = expire_date WHERE session_key = %s"
    assert [rows.execute(sql, ["none"]) for _ in range(7)] == [0] * 7


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_health_check_keeps_a_healthy_connection_without_a_round_trip(monkeypatch):
    connection.ensure_connection()
    sent: list[str] = []
    cursor_factory = connection.connection.cursor

    def counting_cursor(*args, **kwargs):
        sent.append("cursor")
        return cursor_factory(*args, **kwargs)

    monkeypatch.setattr(connection.connection, "cursor", counting_cursor)
    assert connection.is_usable()
    assert sent == []


@postgres_only
@pytest.mark.django_db
def test_a_transaction_after_a_failed_statement_is_not_usable():
    # As with Django's own check: the test case's teardown then skips its constraint check
    # (which would fail in the aborted transaction) and rolls back.
    with connection.cursor() as cursor, pytest.raises(DatabaseError):
        cursor.execute("SELECT 1 / 0")
    assert not connection.is_usable()


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_health_check_asks_the_server_when_the_socket_cannot_be_polled(monkeypatch):
    connection.ensure_connection()

    def no_poll():
        raise OSError("no poll here")

    monkeypatch.setattr(select, "poll", no_poll)
    assert connection.is_usable()  # Django's SELECT 1 answered


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_health_check_notices_a_connection_the_server_ended():
    pid = end_this_connection()
    deadline = time.monotonic() + 10
    while connection.is_usable() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not connection.is_usable()
    # As at the start of a request: the check fails, Django reconnects, the query runs.
    connection.close_if_unusable_or_obsolete()
    assert rows.fetch_one("SELECT 1", []) == (1,)
    assert connection.connection.info.backend_pid != pid


@pytest.mark.parametrize(("flag", "expected"), [("", "5"), ("false", "None")])
def test_prepared_statements_can_be_turned_off(flag, expected):
    shown = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.DATABASES['default']['ENGINE'], "
        "settings.DATABASES['default']['OPTIONS'].get('prepare_threshold'))"
    )
    result = start_django(
        DEBUG="true",
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/unused",
        DATABASE_PREPARED_STATEMENTS=flag,
        code=shown,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["core.postgresql", expected]
