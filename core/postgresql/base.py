"""Django's PostgreSQL backend with two changes for the hottest requests (ADR 0038).

* :meth:`DatabaseWrapper.prepared_cursor`: a cursor that sends its parameters apart from the
  statement (server-side binding), so that psycopg prepares a statement the fifth time a
  connection runs it and PostgreSQL parses and plans it once per connection instead of on every
  request. ``core.rows`` runs the hand-written statements of next-item, submit and the
  session and user lookups through it; the ORM keeps Django's client-side binding, whose
  behaviour every other query was written against.
* :meth:`DatabaseWrapper.is_usable`: the health check before each request's first query looks at
  the socket before it spends a round trip. A server that restarted or ended the session has
  closed the socket (after a last error message), which makes it readable; only then is
  Django's ``SELECT 1`` sent, which fails and makes Django reconnect. An idle, healthy
  connection has nothing to read. Inside a transaction the check is Django's, unchanged.

``DATABASE_PREPARED_STATEMENTS=false`` (config/settings.py) turns preparing off, e.g. behind a
PgBouncer older than 1.21 in transaction mode. The query log (``DEBUG``, tests) shows prepared
statements with their values (:class:`DatabaseOperations`).
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base, operations
from psycopg import errors, pq


class DatabaseOperations(operations.DatabaseOperations):
    def last_executed_query(self, cursor, sql, params):
        # The query log (DEBUG, tests) shows a prepared statement with its values, as Django
        # does when every cursor binds on the server.
        if isinstance(cursor, base.ServerBindingCursor):
            try:
                return self.compose_sql(sql, params)
            except errors.DataError:
                return None
        return super().last_executed_query(cursor, sql, params)


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations

    def prepared_cursor(self):
        """A cursor like :meth:`cursor`, but binding its parameters on the server."""
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            return self._prepare_cursor(base.ServerBindingCursor(self.connection))

    def is_usable(self) -> bool:
        if self.connection is None or self.connection.closed:
            return False
        # Only outside a transaction, as before a request's first query. Inside one, Django's
        # SELECT 1 also says whether the transaction can go on (not after a failed statement),
        # which callers such as the test case's teardown rely on.
        idle = self.connection.info.transaction_status == pq.TransactionStatus.IDLE
        return (idle and self._nothing_to_read()) or super().is_usable()

    def _nothing_to_read(self) -> bool:
        # poll, not select: a process with many open files may hold the socket above select's
        # limit of 1,024. Anything unexpected falls back to Django's SELECT 1.
        try:
            poller = select.poll()
            poller.register(self.connection.fileno(), select.POLLIN)
            return not poller.poll(0)
        except (AttributeError, OSError, ValueError, errors.Error):
            return False
