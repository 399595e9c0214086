"""Database sessions that read the signed-in user with the session, in one statement.

Every signed-in request reads its session and then its user. Here the session row names its user
(:class:`accounts.models.Session`), and the statement that reads the session joins the user's
row: :func:`signed_in_user` hands it to the password backend (accounts/backends.py), which then
sends no query of its own. Hand-written, as Django's database backend would compile the lookup
through the ORM on every request, which costs more CPU than the query (bench/README.md,
"Annotation load"). Same encoding and expiry rule as ``django.contrib.sessions.backends.db``.
"""

from __future__ import annotations

from contextvars import ContextVar
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.sessions.backends import db
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from core.rows import Columns, fetch_one, quote

if TYPE_CHECKING:
    from accounts.models import Session

_loaded_user: ContextVar[tuple[int, Any] | None] = ContextVar("session_user", default=None)
"""(user id, user or ``None``) read with the session this thread loaded last; taken (and
cleared) by :func:`signed_in_user`."""


@cache
def user_columns() -> Columns:
    """The user's columns, read through the alias ``u``."""
    return Columns(get_user_model(), "u")


@cache
def _session_sql() -> str:
    from accounts.models import Session

    users = get_user_model()._meta
    user_id = quote(Session._meta.get_field("user").column)
    return (
        f"SELECT s.session_data, s.{user_id}, {user_columns().sql} "
        f"FROM {quote(Session._meta.db_table)} s "
        f"LEFT JOIN {quote(users.db_table)} u ON u.{quote(users.pk.column)} = s.{user_id} "
        "WHERE s.session_key = %s AND s.expire_date > %s"
    )


def signed_in_user(user_id: Any) -> tuple[bool, Any]:
    """(found, user): the user of id ``user_id`` as read with this request's session (``None``
    when the account is gone), found only when the session named that user; taken once."""
    loaded = _loaded_user.get()
    _loaded_user.set(None)
    if loaded is None or loaded[0] != user_id:
        return False, None
    return True, loaded[1]


def forget_loaded_user(**_: Any) -> None:
    """Drop what the last session read said (connected to ``request_finished``): a user read
    with one request's session is never handed to another request."""
    _loaded_user.set(None)


class SessionStore(db.SessionStore):
    @classmethod
    def get_model_class(cls):
        from accounts.models import Session

        return Session

    def create_model_instance(self, data: dict[str, Any]):
        session = cast("Session", super().create_model_instance(data))
        session.user_id = user_pk(data.get(SESSION_KEY))
        return session

    def _get_session_from_db(self):
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        row = fetch_one(_session_sql(), [self.session_key, now])
        if row is None:
            _loaded_user.set(None)
            self._session_key = None
            return None
        session_data, user_id = row[0], row[1]
        user = None if row[2] is None else user_columns().instance(row, 2)
        _loaded_user.set(None if user_id is None else (user_id, user))
        # Only the data is read back (SessionStore.load decodes it and nothing else).
        return self.model(session_data=session_data)


def user_pk(value: Any) -> Any:
    """The user's primary key from the form the session data holds it in (a string); ``None``
    when it is not one. Shared with the password backend."""
    try:
        return get_user_model()._meta.pk.to_python(value)
    except ValidationError:
        return None
