"""The body of a round task, the same for every kind of long job that counts its rounds."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded

from rounds.leases import task_worker
from rounds.outage import retry_when_database_is_back
from rounds.outcome import Outcome

Advance = Callable[..., Outcome]
"""``advance(job_id, round_index, *, worker, interrupts)``: one round of the job."""
Enqueue = Callable[..., None]
"""``enqueue(job_id, round_index, *, countdown=None)``: queue a round on commit."""
JobAdvance = Callable[..., Outcome]
"""``advance(job_id, *, worker, interrupts)``: one round of a job that does not number them."""
JobEnqueue = Callable[..., None]
"""``enqueue(job_id, *, countdown=None)``: queue such a job's next round on commit."""


def worker_name(task: Any) -> str:
    """Who runs this round: the Celery node name first, so that a worker restarted under the
    same name knows that claims carrying it belonged to its dead predecessor (``rounds.sweep``),
    then the process, the task's id and its retry number (``rounds.task_worker``: a retry takes
    over its earlier run's claim)."""
    request = task.request
    return task_worker(request.hostname or "worker", os.getpid(), request.id, request.retries or 0)


def run_round(task: Any, advance: Advance, enqueue: Enqueue, job_id: int, round_index: int) -> None:
    """Run round ``round_index`` of job ``job_id`` with ``advance`` and queue its successor with
    ``enqueue``: the next round, or this one again after ``retry_in`` (a lease or a transient
    error got in the way).

    A round cut short by the task's soft time limit is queued again as it was (its work is in
    the job's rows up to the last commit); a round whose database went away is retried by
    Celery once it is back (:func:`rounds.retry_when_database_is_back`); any other error
    propagates, for the worker's log, and the sweep recovers the job later.
    """
    try:
        outcome = advance(
            job_id, round_index, worker=worker_name(task), interrupts=(SoftTimeLimitExceeded,)
        )
    except SoftTimeLimitExceeded:
        enqueue(job_id, round_index)
        return
    except Exception as exc:
        retry_when_database_is_back(task, exc)
        raise
    if outcome.wants_successor:
        successor = round_index if outcome.repeats_round else round_index + 1
        enqueue(job_id, successor, countdown=outcome.retry_in)


def run_job_round(task: Any, advance: JobAdvance, enqueue: JobEnqueue, job_id: int) -> None:
    """:func:`run_round` for a job whose rounds carry no number (a DEC evaluation, an import):
    its round is whatever its row says is left, so "the next round" and "this round again" are
    the same message."""
    run_round(
        task,
        lambda job, _round_index, **options: advance(job, **options),
        lambda job, _round_index, **options: enqueue(job, **options),
        job_id,
        0,
    )
