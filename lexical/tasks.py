"""Celery tasks of the lexical app: ids in, call a service, decide the successor.

The only module of the app that queues a round's successor; services queue a job's first round
by task name through :func:`rounds.enqueue` and never import this module.
"""

from __future__ import annotations

import os

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

import rounds
from lexical.rules import services as rule_services

# --- Rule generation (seed 004 §3) ----------------------------------------------------------


@shared_task(name=rule_services.ADVANCE_TASK, bind=True)
def advance_rule_job(self, job_id: int, round_index: int) -> None:
    """One round of a rule job (a few concepts' rules), then its successor.

    Foreground twin: ``python manage.py generate_rules --engine NAME ...``.
    """
    worker = f"{self.request.hostname or 'worker'}:{os.getpid()}:{self.request.id}"
    try:
        outcome = rule_services.advance_job(
            job_id, round_index, worker=worker, interrupts=(SoftTimeLimitExceeded,)
        )
    except SoftTimeLimitExceeded:
        rule_services.enqueue_round(job_id, round_index)
        return
    except Exception as exc:
        rounds.retry_when_database_is_back(self, exc)
        raise
    if outcome.wants_successor:
        successor = round_index if outcome.repeats_round else round_index + 1
        rule_services.enqueue_round(job_id, successor, countdown=outcome.retry_in)
