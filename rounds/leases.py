"""Leases on rows that background rounds work on (search runs, DEC evaluations, ...).

A lease, not a lock: a round claims its row for a while with a conditional UPDATE and releases
it when done; a row whose lease ran out (its worker died) can be claimed by the next round. Rows
carry ``claimed_by``, ``lease_expires_at``, ``started_at`` and ``updated_at``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

__all__ = [
    "claim",
    "held_by_an_earlier_run",
    "release",
    "requeue_stalled",
    "retry_after_lease",
    "task_worker",
]

# Between a Celery task's id and the number of times it was retried, in a worker's name.
_RETRY_MARK = "#"


def task_worker(node: str, pid: int, task_id: str, retries: int) -> str:
    """The name a Celery task's run claims rows with: node, process, task id, retry number.

    The retry number tells a retry that its task asked for (after a lost database, in another
    process maybe) from the same message delivered again after its worker died."""
    return f"{node}:{pid}:{task_id}{_RETRY_MARK}{retries}"


def held_by_an_earlier_run(worker: str) -> Q | None:
    """Rows claimed by an earlier run of the task that ``worker`` is a retry of (None for a
    first run, or a name not made by :func:`task_worker`).

    Such a run has ended: a task is retried only after its run raised (``Retry``), so its
    claim is the retry's to take over at once, whichever process or node the retry landed on,
    instead of waiting out a lease that nobody holds any more. The same message delivered again
    (same retry number) is not a retry: its worker may have died of the job, so it waits."""
    head, mark, retries = worker.rpartition(_RETRY_MARK)
    if not mark or not retries.isdigit() or int(retries) == 0:
        return None
    task_id = head.rpartition(":")[2]
    same_task = Q(claimed_by__contains=f":{task_id}{_RETRY_MARK}")
    return same_task & ~Q(claimed_by__endswith=f":{task_id}{_RETRY_MARK}{retries}")


def claim(rows: QuerySet, worker: str, lease: timedelta, **changes: Any) -> bool:
    """Claim the row of ``rows`` for ``worker`` if nobody holds a live lease on it (or the
    worker itself does, or an earlier run of its task: :func:`held_by_an_earlier_run`);
    ``changes`` are written with the claim. True when claimed."""
    now = timezone.now()
    free = Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now) | Q(claimed_by=worker)
    earlier = held_by_an_earlier_run(worker)
    if earlier is not None:
        free |= earlier
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


def retry_after_lease(lease_expires_at: datetime | None) -> float:
    """Seconds until a lease held by someone else runs out, plus a second."""
    wait = (lease_expires_at - timezone.now()).total_seconds() if lease_expires_at else 0.0
    return max(1.0, wait + 1.0)


def _stalled(lease: timedelta, dead_worker_prefix: str | None) -> Q:
    """Rows nobody works on: the lease ran out, or nobody claimed the row for a lease's length
    (its message was lost). A worker starting under a node name owns nothing yet, so claims
    carrying the name were its dead predecessor's, and unclaimed rows are taken at once."""
    now = timezone.now()
    stuck = Q(lease_expires_at__lt=now) | Q(claimed_by="", updated_at__lt=now - lease)
    if dead_worker_prefix:
        stuck |= Q(claimed_by__startswith=dead_worker_prefix) | Q(claimed_by="")
    return stuck


def requeue_stalled(
    active: QuerySet,
    lease: timedelta,
    requeue: Callable[..., None],
    *,
    dead_worker_prefix: str | None = None,
    fields: tuple[str, ...] = ("pk",),
) -> list[int]:
    """Free the stalled rows of ``active`` and call ``requeue(*values of fields)`` for each.

    The first of ``fields`` is the primary key; the others (e.g. a round index) pin the row's
    state, so a row that moved on between the read and the update is left alone.
    """
    stuck = _stalled(lease, dead_worker_prefix)
    recovered = []
    for values in active.filter(stuck).values_list(*fields):
        freed = (
            active.filter(**dict(zip(fields, values, strict=True)))
            .filter(stuck)
            .update(claimed_by="", lease_expires_at=None, updated_at=timezone.now())
        )
        if freed:
            requeue(*values)
            recovered.append(values[0])
    return recovered
