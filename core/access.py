"""What the apps' permission-checked accessors share (STYLE.md §9: one accessor per object
type, used by pages, API and exports alike)."""

from __future__ import annotations

from typing import Any, TypeVar

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Model, QuerySet
from django.http import Http404

M = TypeVar("M", bound=Model)


def is_active_staff(user) -> bool:
    """A signed-in, active staff account: who may see the staff areas (search, lexical,
    difficulty datasets, rankings)."""
    return bool(user and user.is_authenticated and user.is_active and user.is_staff)


def visible_or_404(rows: QuerySet[M], pk: Any, missing: str) -> M:
    """Row ``pk`` of ``rows`` (those the user may see), or a 404 that says ``missing``: a row
    the user may not see answers as one that does not exist, so existence does not leak."""
    try:
        return rows.get(pk=pk)
    except ObjectDoesNotExist:  # rows.model.DoesNotExist
        raise Http404(missing) from None
