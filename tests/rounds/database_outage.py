"""A database server that drops this test's connection, as a restart or failover does."""

from __future__ import annotations

from django.db import connection, connections

from tests import databases

postgres_only = databases.postgres_only("SQLite has no server to lose")


def end_this_connection() -> int:
    """Have the server end the default connection's backend (``pg_terminate_backend`` from a
    second connection): its next statement fails as after a server restart. Returns the
    backend's pid."""
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        other.close()
    return pid


def reconnect() -> None:
    """What a worker does before the retried round: drop the dead connection."""
    connection.close()
