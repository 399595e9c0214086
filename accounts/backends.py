"""The password backend, with the signed-in user of each request read by one hand-written
statement.

Every signed-in request loads its user; Django's ``ModelBackend.get_user`` compiles that lookup
through the ORM each time, which costs more CPU than the query (bench/README.md, "Annotation
load"). Everything else (passwords, permissions, who may sign in) is Django's.
"""

from __future__ import annotations

from functools import cache

from django.contrib.auth import backends, get_user_model
from django.core.exceptions import ValidationError

from config.rows import Columns, fetch_one, quote


@cache
def _user_columns() -> Columns:
    return Columns(get_user_model(), "u")


@cache
def _user_sql() -> str:
    table = quote(get_user_model()._meta.db_table)
    return f"SELECT {_user_columns().sql} FROM {table} u WHERE u.id = %s"


class ModelBackend(backends.ModelBackend):
    def get_user(self, user_id):
        try:
            pk = get_user_model()._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        row = fetch_one(_user_sql(), [pk])
        if row is None:
            return None
        user = _user_columns().instance(row)
        return user if self.user_can_authenticate(user) else None
