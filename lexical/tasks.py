"""Celery tasks of the lexical app: ids in, call a service, decide the successor.

The only module of the app that queues a round's successor; services queue a job's first round
by task name through :func:`rounds.enqueue` and never import this module.
"""

from __future__ import annotations

import os

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from lexical.mining import services as mining_services

# --- Mining concepts with variations (seed 004 §2.1) ------------------------------------------


@shared_task(name=mining_services.ADVANCE_TASK, bind=True)
def advance_mining(self, job_id: int, round_index: int) -> None:
    """One round of a mining job (one chunk of pairs), then its successor.

    Foreground twin: ``python manage.py mine_concepts CORPUS --foreground``.
    """
    worker = f"{self.request.hostname or 'worker'}:{os.getpid()}:{self.request.id}"
    try:
        outcome = mining_services.advance_mining(
            job_id, round_index, worker=worker, interrupts=(SoftTimeLimitExceeded,)
        )
    except SoftTimeLimitExceeded:
        mining_services.enqueue_round(job_id, round_index)
        return
    if outcome.wants_successor:
        successor = round_index if outcome.repeats_round else round_index + 1
        mining_services.enqueue_round(job_id, successor, countdown=outcome.retry_in)
