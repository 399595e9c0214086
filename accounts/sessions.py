"""Database sessions, read with one hand-written statement.

Every signed-in request reads its session first; Django's database backend compiles that
lookup through the ORM each time, which costs more CPU than the query (bench/README.md,
"Annotation load"). Same table, same encoding and same expiry rule as
``django.contrib.sessions.backends.db``, so switching to this engine keeps every session.
"""

from __future__ import annotations

from functools import cache

from django.contrib.sessions.backends import db
from django.contrib.sessions.models import Session
from django.db import connection
from django.utils import timezone

from config.rows import fetch_one, quote


@cache
def _session_sql() -> str:
    return (
        f"SELECT session_data FROM {quote(Session._meta.db_table)} "
        "WHERE session_key = %s AND expire_date > %s"
    )


class SessionStore(db.SessionStore):
    def _get_session_from_db(self) -> Session | None:
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        row = fetch_one(_session_sql(), [self.session_key, now])
        if row is None:
            self._session_key = None
            return None
        # Only the data is read back (SessionStore.load decodes it and nothing else).
        return Session(session_data=row[0])
