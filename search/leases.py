"""Leases on rows that background rounds work on (search runs, difficulty evaluations).

A lease, not a lock: a round claims its row for a while with a conditional UPDATE and releases
it when done; a row whose lease ran out (its worker died) can be claimed by the next round. Rows
carry ``claimed_by``, ``lease_expires_at``, ``started_at`` and ``updated_at``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

__all__ = ["claim", "release"]


def claim(rows: QuerySet, worker: str, lease: timedelta, **changes: Any) -> bool:
    """Claim the row of ``rows`` for ``worker`` if nobody holds a live lease on it (or the
    worker itself does); ``changes`` are written with the claim. True when claimed."""
    now = timezone.now()
    free = Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now) | Q(claimed_by=worker)
    return bool(
        rows.filter(free).update(
            claimed_by=worker,
            lease_expires_at=now + lease,
            started_at=Coalesce("started_at", now),
            updated_at=now,
            **changes,
        )
    )


def release(rows: QuerySet, worker: str, **changes: Any) -> int:
    """Give up ``worker``'s lease on the row of ``rows`` (``changes`` written with it)."""
    return rows.filter(claimed_by=worker).update(
        claimed_by="", lease_expires_at=None, updated_at=timezone.now(), **changes
    )
