"""The password backend, with the signed-in user of each request read by hand-written SQL.

Every signed-in request loads its user; Django's ``ModelBackend.get_user`` compiles that lookup
through the ORM each time, which costs more CPU than the query (bench/README.md, "Annotation
load"). The user comes with the session where the session store read it (accounts/sessions.py),
else from one statement of its own. Everything else (passwords, permissions, who may sign in)
is Django's.
"""

from __future__ import annotations

from functools import cache

from django.contrib.auth import backends, get_user_model

from accounts.sessions import signed_in_user, user_columns, user_pk
from core.rows import fetch_one, quote


@cache
def _user_sql() -> str:
    table = quote(get_user_model()._meta.db_table)
    return f"SELECT {user_columns().sql} FROM {table} u WHERE u.id = %s"


class ModelBackend(backends.ModelBackend):
    def get_user(self, user_id):
        pk = user_pk(user_id)
        if pk is None:
            return None
        found, user = signed_in_user(pk)
        if not found:
            row = fetch_one(_user_sql(), [pk])
            user = None if row is None else user_columns().instance(row)
        return user if user is not None and self.user_can_authenticate(user) else None
