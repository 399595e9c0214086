"""Telling a lost database from a query error (rounds.database_lost) and the task retry."""

from __future__ import annotations

import pytest
from celery.exceptions import Retry
from django.db import IntegrityError, OperationalError, connection, transaction

import rounds
from tests.rounds.database_outage import end_this_connection, postgres_only
from tests.rounds.recording_task import RecordingTask


def _query_error_on_a_live_connection() -> OperationalError:
    """An OperationalError from a server that is up: a statement timeout, a missing table."""
    with pytest.raises(OperationalError) as caught, connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL statement_timeout = 1")
            cursor.execute("SELECT pg_sleep(1)")
        else:
            cursor.execute("SELECT * FROM no_such_table")
    return caught.value


@pytest.mark.django_db
def test_errors_that_are_not_about_the_connection_are_not_a_lost_database():
    assert not rounds.database_lost(ValueError("bad"))
    assert not rounds.database_lost(IntegrityError("duplicate key"))
    assert not rounds.database_lost(_query_error_on_a_live_connection())


@pytest.mark.django_db
def test_a_query_error_is_re_raised_by_the_task_not_retried():
    task = RecordingTask()
    rounds.retry_when_database_is_back(task, _query_error_on_a_live_connection())
    assert task.retries == []


@pytest.mark.django_db(transaction=True)
def test_a_connection_that_is_gone_is_retried_on_a_server_database():
    connection.ensure_connection()
    connection.close()  # as after the server cut it: the next query must open a new one
    task = RecordingTask()
    error = OperationalError("server closed the connection unexpectedly")
    if connection.vendor == "sqlite":  # no server to lose: SQLite errors are never an outage
        assert not rounds.database_lost(error)
        rounds.retry_when_database_is_back(task, error)
        assert task.retries == []
        return
    assert rounds.database_lost(error)
    with pytest.raises(Retry):
        rounds.retry_when_database_is_back(task, error)
    assert task.retries == [{"countdown": rounds.outage.DATABASE_RETRY_S, "max_retries": None}]


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_session_the_server_ended_is_lost_even_once_django_has_reconnected():
    with pytest.raises(OperationalError) as caught, transaction.atomic():
        end_this_connection()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    # Leaving the outermost block, Django dropped the broken connection and opened another:
    # asking the connection would say the server is fine. The server's code says otherwise.
    assert connection.is_usable()
    assert rounds.database_lost(caught.value)
