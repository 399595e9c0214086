"""Telling a lost database connection from a real failure.

A database server restarting (an upgrade, a failover, a crash) breaks every open connection:
the round in flight raises ``OperationalError`` or ``InterfaceError``. That is no reason to
fail the job, which is still whole in the database; the round is run again once the server is
back (its lease and the engine cache make that safe). Other database errors (a bad query, a
constraint) are the job's own and fail it as before.
"""

from __future__ import annotations

import contextlib
from typing import Any

import psycopg
from django.db import InterfaceError, OperationalError, connection

__all__ = ["DATABASE_RETRY_S", "database_lost", "retry_when_database_is_back"]

# How long a round waits before trying again while the database is away.
DATABASE_RETRY_S = 3.0
# Django's wrappers, and psycopg's own for the engine limiter's direct connections.
_CONNECTION_ERRORS = (
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
)


# SQLSTATEs of a server that ended the session: the connection exceptions (class 08), and the
# shutdowns of class 57 (an administrator's or a crash's, or a server still starting).
_CONNECTION_EXCEPTION_CLASS = "08"
_SERVER_GONE = frozenset({"57P01", "57P02", "57P03"})


def database_lost(exc: BaseException) -> bool:
    """Whether ``exc`` came from a database server that cannot be reached just now.

    Told by the server's own code for the error (SQLSTATE) when it sent one, else by asking the
    connection, never by the message: a server that answers ``SELECT 1`` is up, so the error was
    about the query. The code comes first because the connection may already be a new one:
    Django reconnects when it leaves an outermost ``atomic`` block whose connection broke. SQLite
    has no server to lose (and its "database is locked" is a contention the caller already waits
    out).
    """
    if not isinstance(exc, _CONNECTION_ERRORS) or connection.vendor == "sqlite":
        return False
    state = _sqlstate(exc)
    if state.startswith(_CONNECTION_EXCEPTION_CLASS) or state in _SERVER_GONE:
        return True
    raw = connection.connection
    if raw is None or getattr(raw, "closed", False) or getattr(raw, "broken", False):
        return True
    if connection.in_atomic_block:
        # A failed transaction refuses SELECT 1 too; its socket is alive, so the server is up.
        return False
    return not connection.is_usable()


def _sqlstate(exc: BaseException) -> str:
    """The SQLSTATE of psycopg's error, raised as is or under Django's wrapper ('' if none)."""
    for error in (exc, exc.__cause__):
        if isinstance(error, psycopg.Error) and error.sqlstate:
            return error.sqlstate
    return ""


def retry_when_database_is_back(task: Any, exc: BaseException) -> None:
    """For a round task's ``except`` clause: when ``exc`` is a lost database, drop the broken
    connection and queue the same task again (same id, so the round's worker name and its claim
    stay the same) by raising Celery's ``Retry``; otherwise return and let the caller re-raise.

    Retried without limit: the job waits for its database however long the outage lasts.
    """
    if not database_lost(exc):
        return
    # Closing a socket the server already dropped may fail; the connection is gone either way.
    with contextlib.suppress(Exception):
        connection.close()
    raise task.retry(countdown=DATABASE_RETRY_S, max_retries=None)
