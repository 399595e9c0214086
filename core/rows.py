"""Hand-written statements for the hottest requests, with rows read back as model instances.

The ORM compiles a queryset again on every request (filters, joins, the select list), which on
next-item and submit (and the session and user lookups of every signed-in request) costs more
CPU than running the statement (bench/README.md, "Fewer
statements and less Python per next-item and submit"). A statement written once at import time
from the models' ``_meta`` costs a fraction of that. Plain SQL that SQLite and PostgreSQL both
run, parameterised with ``%s``; vendor-only clauses are added per call (:func:`for_update`).

Rows become instances as the ORM makes them: every column goes through the database's and the
field's converters (JSON, datetimes on SQLite), then ``Model.from_db``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from django.db import connection
from django.db.models import Field, Model
from django.db.models.expressions import Col

ModelT = TypeVar("ModelT", bound=Model)

_Converters = list[tuple[int, list[Callable[..., Any]], Col]]


def quote(name: str) -> str:
    """A table or column name as the database quotes it."""
    return connection.ops.quote_name(name)


class Columns(Generic[ModelT]):
    """Every concrete column of ``model`` read through the table alias ``alias``.

    ``sql`` is their select list (in field order, as ``Model.from_db`` takes them);
    :meth:`instance` makes the model instance from the ``width`` values of a row that start at
    ``start``.
    """

    def __init__(self, model: type[ModelT], alias: str):
        fields = model._meta.concrete_fields
        self.model = model
        self.width = len(fields)
        self.sql = ", ".join(f"{alias}.{quote(field.column)}" for field in fields)
        self._attnames = [field.attname for field in fields]
        self._columns = [field.get_col(alias) for field in fields]
        self._converters: dict[str, _Converters] = {}

    def instance(self, row: Sequence[Any], start: int = 0) -> ModelT:
        values = list(row[start : start + self.width])
        for position, converters, column in self._converters_of_connection():
            value = values[position]
            for converter in converters:
                value = converter(value, column, connection)
            values[position] = value
        return self.model.from_db(connection.alias, self._attnames, values)

    def _converters_of_connection(self) -> _Converters:
        # Found once per database (the backend's converters depend on it), as the compiler
        # finds them for every query: the backend's first, then the field's.
        converters = self._converters.get(connection.alias)
        if converters is None:
            converters = []
            for position, column in enumerate(self._columns):
                found = connection.ops.get_db_converters(column) + column.get_db_converters(
                    connection
                )
                if found:
                    converters.append((position, found, column))
            self._converters[connection.alias] = converters
        return converters


def for_update(*of: str, skip_locked: bool = False) -> str:
    """The row-lock clause to append to a SELECT: ``FOR UPDATE``, limited to the table
    aliases ``of`` where the database can limit it (as the ORM's ``select_for_update(of=...)``),
    skipping rows other transactions hold with ``skip_locked``; nothing on SQLite, which
    serialises writers instead."""
    features = connection.features
    if not features.has_select_for_update:
        return ""
    clause = " FOR UPDATE"
    if of and features.has_select_for_update_of:
        clause += f" OF {', '.join(of)}"
    if skip_locked and features.has_select_for_update_skip_locked:
        clause += " SKIP LOCKED"
    return clause


def db_values(instance: Model, fields: Sequence[Field], *, add: bool) -> list[Any]:
    """The values of ``fields`` as ``save()`` sends them (``pre_save`` sets ``auto_now``)."""
    return [
        field.get_db_prep_save(field.pre_save(instance, add=add), connection) for field in fields
    ]


def _cursor():
    # On PostgreSQL, a cursor whose statements are prepared once per connection
    # (core/postgresql/base.py); elsewhere the usual one.
    prepared_cursor = getattr(connection, "prepared_cursor", None)
    return prepared_cursor() if prepared_cursor else connection.cursor()


def fetch_one(sql: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
    """The first row of a statement, or ``None``."""
    with _cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def execute(sql: str, params: Sequence[Any]) -> int:
    """Run a write; returns the number of rows it changed."""
    with _cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount
