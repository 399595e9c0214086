"""Model instances read by hand-written SQL, for the few hot requests where the ORM's per-call
query compilation costs more CPU than the statement itself (bench/README.md, "Annotation load").

A :class:`Columns` names a model's concrete columns under a table alias, for the SELECT list of a
statement written once at import time, and builds the instance back from its part of a result
row, through the same database converters the ORM applies (JSON, and SQLite's datetimes and
booleans), so the instance is the one a queryset would have returned.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from django.db import connection
from django.db.models import Field, Model

M = TypeVar("M", bound=Model)


class Columns(Generic[M]):
    """The concrete columns of ``model`` as ``alias.column``, in field order."""

    def __init__(self, model: type[M], alias: str) -> None:
        self.model = model
        self.alias = alias
        self.fields: list[Field] = list(model._meta.concrete_fields)
        self._names = [field.attname for field in self.fields]
        self._converters: list[list[Callable[..., Any]]] | None = None

    def __len__(self) -> int:
        return len(self.fields)

    @property
    def sql(self) -> str:
        quote = connection.ops.quote_name
        return ", ".join(f"{self.alias}.{quote(field.column)}" for field in self.fields)

    def build(self, row: Sequence[Any], start: int = 0) -> M:
        """The instance from ``row[start:start + len(self)]``."""
        values = list(row[start : start + len(self.fields)])
        for index, converters in enumerate(self.converters()):
            for convert in converters:
                values[index] = convert(values[index], self.fields[index].cached_col, connection)
        return self.model.from_db(connection.alias, self._names, values)

    def converters(self) -> list[list[Callable[..., Any]]]:
        # Per database vendor, worked out on first use: a model module is imported before any
        # connection is opened.
        if self._converters is None:
            self._converters = [
                connection.ops.get_db_converters(field.cached_col)
                + field.get_db_converters(connection)  # type: ignore[attr-defined]  # not in the stubs
                for field in self.fields
            ]
        return self._converters


def db_values(instance: Model, fields: Sequence[Field], *, add: bool) -> list[Any]:
    """The values of ``fields`` as ``save()`` would send them (``pre_save`` runs ``auto_now``)."""
    return [
        field.get_db_prep_save(field.pre_save(instance, add=add), connection) for field in fields
    ]


def lock_clause(of: str | None = None, *, skip_locked: bool = False) -> str:
    """`` FOR UPDATE [OF alias] [SKIP LOCKED]`` where the database has row locks (PostgreSQL),
    else nothing: SQLite serialises writers (BEGIN IMMEDIATE), so a plain read is already safe."""
    features = connection.features
    if not features.has_select_for_update:
        return ""
    clause = " FOR UPDATE"
    if of and features.has_select_for_update_of:
        clause += f" OF {of}"
    if skip_locked and features.has_select_for_update_skip_locked:
        clause += " SKIP LOCKED"
    return clause
